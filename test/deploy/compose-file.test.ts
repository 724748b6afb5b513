import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { botSpaces } from '../../bots/state/index.js';
import { stateBytesBound } from '../../bots/state/redis-memory.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Service {
  image?: string;
  command?: string[];
  build?: { context: string; args?: Record<string, string> };
  profiles?: string[];
  environment?: Record<string, string>;
  env_file?: string | string[] | { path: string; required?: boolean }[];
  volumes?: string[];
  stop_grace_period?: string;
  depends_on?: Record<string, { condition: string }> | string[];
}
interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/** Compose's own interpolation, as `docker compose config` does it with nothing set: `${NAME:-default}` → default. */
function interpolate(text: string): string {
  return text.replace(/\$\{([A-Z0-9_]+)(?::?-([^}]*))?\}/g, (_, _name: string, fallback: string | undefined) => fallback ?? '');
}

async function composeFile(name = 'compose.yaml'): Promise<ComposeFile> {
  return parse(interpolate(await readFile(join(root, name), 'utf8'))) as ComposeFile;
}

/** compose.yaml with compose.monitoring.yaml, merged as `-f compose.yaml -f compose.monitoring.yaml` does (no service in both). */
async function withMonitoring(): Promise<ComposeFile> {
  const [base, monitoring] = await Promise.all([composeFile(), composeFile('compose.monitoring.yaml')]);
  return { services: { ...base.services, ...monitoring.services }, volumes: { ...base.volumes, ...monitoring.volumes } };
}

/** The Compose Specification's JSON schema (github.com/compose-spec/compose-spec, schema/compose-spec.json; Apache-2.0). */
let compiled: ReturnType<Ajv['compile']> | undefined;
async function composeValidator() {
  if (compiled) return compiled;
  const schema = JSON.parse(await readFile(join(root, 'test/deploy/compose-spec/compose-spec.json'), 'utf8')) as object;
  // The schema names its draft-07 meta-schema by an https URL Ajv does not know; its keywords are draft-07's.
  compiled = new Ajv({ strict: false, allErrors: true, validateSchema: false }).compile(schema);
  return compiled;
}

describe('compose.yaml', () => {
  it('is a valid Compose file by the Compose Specification’s schema, as is compose.monitoring.yaml', async () => {
    const validate = await composeValidator();
    for (const name of ['compose.yaml', 'compose.monitoring.yaml']) {
      const valid = validate(await composeFile(name));
      expect(validate.errors ?? [], name).toEqual([]);
      expect(valid, name).toBe(true);
    }
  }, 120_000); // compiling the schema takes seconds

  it('uses nothing podman-compose 1.0.3 (Debian 12’s) breaks on or ignores: the short env_file form, no profiles', async () => {
    const { services } = await withMonitoring();
    for (const [name, service] of Object.entries(services)) {
      expect(service.profiles, name).toBeUndefined();
      if (service.env_file !== undefined) expect(typeof service.env_file, name).toBe('string');
    }
    // The overlay adds services of its own only: merged, nothing of compose.yaml is replaced.
    const [base, monitoring] = await Promise.all([composeFile(), composeFile('compose.monitoring.yaml')]);
    expect(Object.keys(monitoring.services).filter((name) => name in base.services)).toEqual([]);
  });

  it('would fail that check with a misspelt or mistyped setting', async () => {
    const validate = await composeValidator();
    const file = await composeFile();
    expect(validate({ ...file, services: { ...file.services, pictor: { ...file.services.pictor, stop_grace_perod: '330s' } } })).toBe(false);
    expect(validate({ ...file, services: { ...file.services, pictor: { ...file.services.pictor, environment: [{ REDIS_URL: 1 }] } } })).toBe(false);
  }, 120_000);

  it('starts Pictor and Redis, Pictor on the redis service, and Prometheus and Grafana only with compose.monitoring.yaml', async () => {
    const { services } = await composeFile();
    expect(Object.keys(services)).toEqual(['pictor', 'redis']);
    expect(Object.keys((await composeFile('compose.monitoring.yaml')).services)).toEqual(['prometheus', 'grafana']);
    const pictor = services.pictor!;
    expect(new URL(pictor.environment!.REDIS_URL!).hostname).toBe('redis');
    expect(pictor.depends_on).toMatchObject({ redis: { condition: 'service_healthy' } });
    expect(pictor.build).toMatchObject({ context: '.', args: { NODE_IMAGE: 'node:20-bookworm-slim' } });
  });

  it('gives Redis a maxmemory with room for all the bots may keep, and never lets it evict (a lease or a reservation)', async () => {
    const command = (await composeFile()).services.redis!.command!;
    const setting = (name: string) => command[command.indexOf(name) + 1];
    expect(setting('--maxmemory-policy')).toBe('noeviction');
    const [, amount, unit] = /^(\d+)(mb|gb)$/.exec(setting('--maxmemory')!)!;
    const maxmemory = Number(amount) * (unit === 'gb' ? 1024 ** 3 : 1024 ** 2);
    expect(maxmemory).toBeGreaterThan(stateBytesBound(botSpaces()) + 64 * 1024 ** 2);
  });

  it('keeps Pictor’s data on a volume, reads .env, and waits longer than the shutdown grace', async () => {
    const { services, volumes } = await composeFile();
    const pictor = services.pictor!;
    expect(pictor.environment!.PICTOR_DATA_DIR).toBe('/data');
    const dataVolume = pictor.volumes!.find((v) => v.endsWith(':/data'))!.split(':')[0]!;
    expect(volumes).toHaveProperty(dataVolume);
    expect(pictor.env_file).toBe('.env');
    const grace = Number(/^(\d+)s$/.exec(pictor.stop_grace_period!)![1]);
    expect(grace).toBeGreaterThan(300); // PICTOR_SHUTDOWN_GRACE_SECONDS' default
  });

  it('has Prometheus scrape the port Pictor serves /metrics on, and mounts only files that exist', async () => {
    const { services } = await withMonitoring();
    const prometheus = parse(await readFile(join(root, 'deploy/prometheus/prometheus.yml'), 'utf8')) as {
      scrape_configs: { metrics_path: string; static_configs: { targets: string[] }[] }[];
    };
    const [scrape] = prometheus.scrape_configs;
    expect(scrape!.metrics_path).toBe('/metrics');
    expect(scrape!.static_configs[0]!.targets).toEqual([`pictor:${services.pictor!.environment!.PICTOR_METRICS_PORT}`]);
    expect(services.pictor!.environment!.PICTOR_METRICS_HOST).toBe('0.0.0.0');
    const bindMounts = Object.values(services).flatMap((s) => (s.volumes ?? []).filter((v) => v.startsWith('./')).map((v) => v.split(':')[0]!));
    expect(bindMounts.length).toBeGreaterThan(0);
    for (const path of bindMounts) expect(existsSync(join(root, path)), path).toBe(true);
  });

  it('mounts the dashboards folder where Grafana’s provisioning reads it, and opens on the Pictor dashboard', async () => {
    const { services } = await withMonitoring();
    const grafana = services.grafana!;
    const provider = parse(await readFile(join(root, 'deploy/grafana/provisioning/dashboards/pictor.yaml'), 'utf8')) as {
      providers: { options: { path: string } }[];
    };
    const folder = provider.providers[0]!.options.path;
    expect(grafana.volumes).toContain(`./deploy/grafana/dashboards:${folder}:ro`);
    expect(grafana.environment!.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH).toBe(`${folder}/pictor.json`);
  });
});
