import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Manifest {
  kind: string;
  metadata: { name: string };
  stringData?: Record<string, string>;
  data?: Record<string, string>;
  spec?: {
    replicas?: number;
    strategy?: { type: string };
    template: {
      spec: {
        terminationGracePeriodSeconds: number;
        securityContext: { runAsUser: number; fsGroup: number };
        containers: {
          envFrom: ({ secretRef: { name: string } } | { configMapRef: { name: string } })[];
          ports: { name: string; containerPort: number }[];
          readinessProbe?: { httpGet: { path: string; port: string | number } };
          livenessProbe?: unknown;
          volumeMounts: { name: string; mountPath: string }[];
        }[];
      };
    };
  };
}

async function manifests(): Promise<Manifest[]> {
  const documents = parseAllDocuments(await readFile(join(root, 'deploy/kubernetes/pictor.yaml'), 'utf8'));
  return (Array.isArray(documents) ? documents : [documents]).map((document) => document.toJS() as Manifest);
}

/** The settings Pictor reads, as .env.example lists them. */
async function settings(): Promise<Set<string>> {
  const example = await readFile(join(root, '.env.example'), 'utf8');
  return new Set([...example.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1]!));
}

describe('the Kubernetes example (deploy/kubernetes/pictor.yaml)', () => {
  it('keeps the tokens in a Secret and sets only settings Pictor reads', async () => {
    const all = await manifests();
    const secret = all.find((m) => m.kind === 'Secret')!;
    const config = all.find((m) => m.kind === 'ConfigMap')!;
    expect(Object.keys(secret.stringData!)).toEqual(expect.arrayContaining(['PICTOR_API_KEY', 'DISCORD_TOKEN', 'REDIS_URL']));
    expect(Object.keys(config.data!).filter((name) => /TOKEN|KEY|SECRET/.test(name))).toEqual([]);
    const known = await settings();
    for (const name of [...Object.keys(secret.stringData!), ...Object.keys(config.data!)]) expect(known, name).toContain(name);
    const [container] = all.find((m) => m.kind === 'Deployment')!.spec!.template.spec.containers;
    expect(container!.envFrom).toEqual([{ secretRef: { name: secret.metadata.name } }, { configMapRef: { name: config.metadata.name } }]);
  });

  it('runs replicas that roll one at a time, are ready on /healthz, have no liveness probe, and outlast the shutdown grace', async () => {
    const all = await manifests();
    const deployment = all.find((m) => m.kind === 'Deployment')!;
    const config = all.find((m) => m.kind === 'ConfigMap')!;
    expect(deployment.spec!.replicas).toBeGreaterThan(1);
    // Replicas share their state through Redis: without REDIS_URL two pods would each keep their own.
    expect(Object.keys(all.find((m) => m.kind === 'Secret')!.stringData!)).toContain('REDIS_URL');
    expect(deployment.spec!.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    const pod = deployment.spec!.template.spec;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(Number(config.data!.PICTOR_SHUTDOWN_GRACE_SECONDS));
    const [container] = pod.containers;
    expect(container!.readinessProbe!.httpGet.path).toBe('/healthz');
    const port = container!.ports.find((p) => p.name === container!.readinessProbe!.httpGet.port)!;
    expect(port.containerPort).toBe(9464); // the image's PICTOR_METRICS_PORT
    expect(container!.livenessProbe).toBeUndefined();
  });

  it('runs as the image’s user with a data folder of its own that it can write', async () => {
    const all = await manifests();
    const pod = all.find((m) => m.kind === 'Deployment')!.spec!.template.spec;
    const dockerfile = await readFile(join(root, 'Dockerfile'), 'utf8');
    const uid = Number(/useradd[^\n]*--uid (\d+)/.exec(dockerfile)![1]);
    expect(pod.securityContext).toMatchObject({ runAsUser: uid, fsGroup: uid });
    expect(pod.containers[0]!.volumeMounts).toContainEqual({ name: 'data', mountPath: '/data' });
    // Never one claim shared by the replicas: each pod's folder is its own.
    expect(all.some((m) => m.kind === 'PersistentVolumeClaim')).toBe(false);
    expect((pod as { volumes?: { name: string; emptyDir?: object }[] }).volumes).toContainEqual({ name: 'data', emptyDir: {} });
  });
});
