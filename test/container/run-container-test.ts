/**
 * `npm run test:container`: builds the image of the repository's Dockerfile
 * with podman and tests the running container:
 *
 * - the image runs as a non-root user, keeps its HEALTHCHECK, starts Node
 *   itself (exec form) and holds the production dependencies only; it runs
 *   with a read-only root file system;
 * - `npm start` in it, with a (fake) Discord and a Redis (as compose.yaml runs
 *   it: limiter and ledger in Redis), starts its embedded emulator and answers
 *   `/healthz` (Discord and Redis checked) and the image's HEALTHCHECK, and runs
 *   on jemalloc (the allocator the image preloads, seen in the process's maps);
 *   the image's jemalloc takes the shorter decay docs/deploying.md offers
 *   (`-e MALLOC_CONF=…`: in its statistics, with its background threads);
 * - the `pictor` CLI inside the container makes an image file;
 * - SIGTERM with a chat job running: new jobs are refused, the running one
 *   finishes and is shown within the grace, and the container exits 0;
 * - with podman-compose on PATH (Debian 12's 1.0.3 in CI): compose.yaml, alone
 *   and with compose.monitoring.yaml, as podman-compose reads it (`--dry-run
 *   up`: the containers it would start, since Redis, Prometheus and Grafana
 *   cannot be pulled here).
 *
 * Needs root, podman, runc and debootstrap (Debian: apt-get install podman
 * runc debootstrap), and redis-server on PATH (a throwaway one is started). No container registry is used: the Node.js base image is
 * made with debootstrap from Debian's packages (deploy/node-base-image.sh through `npm run image:base`,
 * kept between runs, made afresh when CI=true) and the build's `npm ci` reaches the npm registry through
 * the host's network (with the CA file of NODE_EXTRA_CA_CERTS, when set, as the build secret extra_ca), taking
 * what it can from the host's npm cache first.
 *
 * Settings (all optional): PICTOR_TEST_PODMAN (default "podman --runtime runc"),
 * PICTOR_TEST_NODE_IMAGE (the base image; default localhost/pictor-node-base:20,
 * built when missing), PICTOR_TEST_IMAGE (default localhost/pictor:test).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buttonsOf, FakeDiscord } from '../fakes/discord/FakeDiscord.js';
import { freeLoopbackPort } from '../helpers/free-port.js';
import { startThrowawayRedis } from '../setup/redis-server.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const podman = (process.env.PICTOR_TEST_PODMAN ?? 'podman --runtime runc').split(/\s+/).filter(Boolean);
const baseImage = process.env.PICTOR_TEST_NODE_IMAGE ?? 'localhost/pictor-node-base:20';
const image = process.env.PICTOR_TEST_IMAGE ?? 'localhost/pictor:test';
const container = `pictor-container-test-${process.pid}`;

/** The whole run, the base image's first build included, ends within this or fails. */
const RUN_LIMIT_MS = 13 * 60_000;
/** The service's grace on SIGTERM in the test (the image's default is 300 s). */
const GRACE_SECONDS = 90;

interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, its output kept (and shown when `show`), failing after `timeoutMs`. */
function run(command: string[], options: { timeoutMs: number; show?: boolean; env?: NodeJS.ProcessEnv; allowFailure?: boolean }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = command;
    const child = spawn(file!, args, { cwd: root, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (options.show) process.stdout.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (options.show) process.stderr.write(chunk);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command.join(' ')}: no end after ${options.timeoutMs / 1000} s`));
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const result = { code: code ?? 1, stdout, stderr };
      if (result.code !== 0 && !options.allowFailure) {
        reject(new Error(`${command.join(' ')} exited ${result.code}:\n${stderr.slice(-4000) || stdout.slice(-4000)}`));
      } else resolve(result);
    });
  });
}

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`failed: ${what}`);
}

function step(what: string): () => void {
  const started = Date.now();
  console.log(`== ${what}`);
  return () => console.log(`   done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function waitUntil<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Width and height from a PNG's IHDR chunk, or undefined when the bytes are not a PNG. */
function pngSize(bytes: Buffer): { width: number; height: number } | undefined {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(signature) || bytes.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

/**
 * What podman-compose would run for compose.yaml, alone and with compose.monitoring.yaml: Redis and Pictor (with .env
 * and the compose file's settings), then Prometheus and Grafana. Skipped, saying so, without podman-compose on PATH.
 */
async function composePlans(work: string, env: NodeJS.ProcessEnv): Promise<void> {
  const version = await run(['podman-compose', 'version'], { timeoutMs: 60_000, env, allowFailure: true }).catch(() => undefined);
  if (!version || version.code !== 0) {
    console.log('   skipped: no podman-compose on PATH (Debian: apt-get install podman-compose)');
    return;
  }
  console.log(`   ${version.stdout.split('\n').find((line) => /podman-compose/i.test(line))?.trim() ?? 'podman-compose'}`);
  const dir = join(work, 'compose');
  await mkdir(dir);
  for (const file of ['compose.yaml', 'compose.monitoring.yaml', 'Dockerfile']) await copyFile(join(root, file), join(dir, file));
  await writeFile(join(dir, '.env'), '');
  const plan = async (files: string[]) => {
    const ran = await new Promise<RunResult>((resolve, reject) => {
      execFile('podman-compose', ['--dry-run', ...files.flatMap((f) => ['-f', f]), 'up', '-d'], { cwd: dir, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
        error && typeof error.code !== 'number' ? reject(error) : resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr }),
      );
    });
    const said = ran.stdout + ran.stderr;
    check(ran.code === 0 && !said.includes('Traceback'), `podman-compose ${files.join(' + ')} runs (exit ${ran.code}): ${said.slice(-1500)}`);
    const runs = said.split('\n').filter((line) => line.startsWith('podman run '));
    return { said, services: runs.map((line) => /--label com\.docker\.compose\.service=(\S+)/.exec(line)?.[1]), runs };
  };
  const base = await plan(['compose.yaml']);
  check(JSON.stringify(base.services) === JSON.stringify(['redis', 'pictor']), `compose.yaml starts Redis, then Pictor, and nothing else (${JSON.stringify(base.services)})`);
  const pictor = base.runs.find((line) => line.includes('service=pictor'))!;
  check(pictor.includes(`--env-file ${join(dir, '.env')}`) && pictor.includes('-e PICTOR_DATA_DIR=/data') && pictor.includes('--restart unless-stopped'), `Pictor gets .env, the compose file's settings and its restart policy (${pictor})`);
  check(base.said.includes('podman build -t pictor:local'), 'the image is built from the Dockerfile');
  const monitored = await plan(['compose.yaml', 'compose.monitoring.yaml']);
  check(JSON.stringify(monitored.services) === JSON.stringify(['redis', 'pictor', 'prometheus', 'grafana']), `with compose.monitoring.yaml Prometheus and Grafana too (${JSON.stringify(monitored.services)})`);
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const work = await mkdtemp(join(tmpdir(), 'pictor-container-test-'));
  const cleanups: (() => Promise<unknown>)[] = [() => rm(work, { recursive: true, force: true })];
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (!env.CONTAINERS_CONF) {
    // Containers inherit no default ulimits: raising RLIMIT_NOFILE is refused in some sandboxes and VMs.
    env.CONTAINERS_CONF = join(work, 'containers.conf');
    await writeFile(env.CONTAINERS_CONF, '[containers]\ndefault_ulimits = []\n');
  }
  const pod = (args: string[], options: { timeoutMs?: number; show?: boolean; allowFailure?: boolean } = {}) =>
    run([...podman, ...args], { timeoutMs: options.timeoutMs ?? 60_000, show: options.show ?? false, allowFailure: options.allowFailure ?? false, env });

  const limit = setTimeout(() => {
    console.error(`container test: over its limit of ${RUN_LIMIT_MS / 60_000} min; stopping`);
    void cleanUp().finally(() => process.exit(1));
  }, RUN_LIMIT_MS);
  let cleaned = false;
  async function cleanUp(): Promise<void> {
    if (cleaned) return;
    cleaned = true;
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error(`clean-up: ${String(error)}`));
  }

  try {
    let done = step('compose.yaml as podman-compose reads it (podman-compose --dry-run up)');
    await composePlans(work, env);
    done();

    done = step(`base image ${baseImage}`);
    // In CI the base image is made afresh, as on a fresh machine: a copy left by an earlier run proves nothing.
    const rebuild = process.env.CI === 'true' ? ['--rebuild'] : [];
    // The operators' recipe (docs/deploying.md, "Without a container registry"): the npm script.
    await run(['npm', 'run', '-s', 'image:base', '--', ...rebuild, baseImage], { timeoutMs: 8 * 60_000, show: true, env: { ...env, PODMAN: podman.join(' ') } });
    done();

    done = step(`build ${image} from the Dockerfile (FROM ${baseImage})`);
    const ca = process.env.NODE_EXTRA_CA_CERTS;
    // A TLS proxy's CA for the build's npm ci, as the Dockerfile takes it: the build secret extra_ca.
    const caArgs = ca ? ['--secret', `id=extra_ca,src=${ca}`] : [];
    // The build's npm ci takes packages from this machine's npm cache (filled by npm install) before the registry.
    const npmCache = (await run(['npm', 'config', 'get', 'cache'], { timeoutMs: 30_000 })).stdout.trim();
    const cacheArgs = npmCache && existsSync(npmCache) ? ['--volume', `${npmCache}:/root/.npm`] : [];
    await pod(['build', '--format', 'docker', '--network', 'host', '--build-arg', `NODE_IMAGE=${baseImage}`, ...caArgs, ...cacheArgs, '--tag', image, '--file', 'Dockerfile', '.'], {
      timeoutMs: 8 * 60_000,
      show: true,
    });
    done();

    done = step('the image: a non-root user, a HEALTHCHECK, Node started directly, production dependencies only');
    const [inspected] = JSON.parse((await pod(['image', 'inspect', image])).stdout) as {
      Config: { User?: string; Cmd?: string[]; Entrypoint?: string[] | null; Healthcheck?: { Test?: string[] } };
      /** Where Podman reports the image's HEALTHCHECK (Docker reports it in Config). */
      Healthcheck?: { Test?: string[] };
    }[];
    check(inspected, `podman image inspect ${image} answers`);
    check(inspected.Config.User === 'pictor', `the image runs as the user pictor (it runs as ${JSON.stringify(inspected.Config.User)})`);
    check(!inspected.Config.Entrypoint?.length, 'the image has no entrypoint wrapping Node');
    check(JSON.stringify(inspected.Config.Cmd) === JSON.stringify(['node', 'dist/bots/main.js']), `CMD is exec-form node dist/bots/main.js (it is ${JSON.stringify(inspected.Config.Cmd)})`);
    check((inspected.Healthcheck ?? inspected.Config.Healthcheck)?.Test?.join(' ').includes('/healthz'), 'the image keeps its HEALTHCHECK on /healthz');
    // What package-lock.json marks "dev" is needed only by devDependencies; none of it may be in the image.
    const installed = await pod([
      'run',
      '--rm',
      image,
      'node',
      '-e',
      "const fs = require('fs'); const { packages } = require('./package-lock.json'); " +
        "const paths = Object.keys(packages).filter((path) => path.startsWith('node_modules/') && !path.includes('/node_modules/')); " +
        'const here = (dev) => paths.filter((path) => packages[path].dev === dev && fs.existsSync(path)); ' +
        'console.log(JSON.stringify({ production: here(undefined).length, dev: here(true) }))',
    ]);
    const modules = JSON.parse(installed.stdout.trim().split('\n').at(-1)!) as { production: number; dev: string[] };
    check(modules.production > 100 && modules.dev.length === 0, `the image holds the production dependencies and nothing only devDependencies need (${installed.stdout.trim()})`);
    done();

    done = step('start the container against a fake Discord and a Redis on the host, with the embedded emulator');
    const redis = await startThrowawayRedis();
    check(redis, 'a throwaway redis-server starts (redis-server on PATH; Debian: apt-get install redis-server)');
    cleanups.push(() => redis.stop());
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    cleanups.push(() => discord.close());
    const metricsPort = await freeLoopbackPort();
    cleanups.push(async () => {
      const logs = await pod(['logs', container], { allowFailure: true });
      if (process.exitCode) console.log(`--- container output\n${logs.stdout}${logs.stderr}---`);
      await pod(['rm', '--force', '--volumes', container], { allowFailure: true });
    });
    await pod([
      'run',
      '--detach',
      '--name',
      container,
      '--network',
      'host',
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--env',
      `PICTOR_METRICS_PORT=${metricsPort}`,
      '--env',
      // A medium image takes 6 s, a high one 12 s: the chat job is still running when SIGTERM comes, even on a loaded machine.
      'PICTOR_EMULATOR_LATENCY_MS=6000',
      '--env',
      `PICTOR_SHUTDOWN_GRACE_SECONDS=${GRACE_SECONDS}`,
      '--env',
      'PICTOR_UPDATE_INTERVAL_MS=100',
      '--env',
      `DISCORD_TOKEN=${discord.botToken}`,
      '--env',
      `DISCORD_APPLICATION_ID=${discord.applicationId}`,
      '--env',
      `DISCORD_API_BASE_URL=${discord.apiBaseUrl}`,
      '--env',
      `REDIS_URL=${redis.url}`,
      image,
    ]);
    const health = await waitUntil('/healthz to answer 200', 90_000, async () => {
      const response = await fetch(`http://127.0.0.1:${metricsPort}/healthz`);
      return response.status === 200 ? ((await response.json()) as { status: string; checks: Record<string, boolean> }) : undefined;
    });
    check(health.checks.discord === true, `/healthz checks the Discord session (${JSON.stringify(health)})`);
    check(health.checks.redis === true, `/healthz checks Redis (${JSON.stringify(health)})`);
    const logs = await pod(['logs', container]);
    check(logs.stdout.includes('Image service emulator listening on'), 'npm start runs the embedded emulator (no PICTOR_BASE_URL)');
    check(logs.stdout.includes('Discord bot is online.'), 'npm start says the Discord bot is online');
    // The allocator docs/deploying.md promises (it gives memory back after a burst): jemalloc, mapped into Node itself.
    // /proc/1/maps is its owner's to read, so it is read as the service's user.
    const maps = (await pod(['exec', '--user', 'pictor', container, 'cat', '/proc/1/maps'])).stdout;
    check(/\/libjemalloc\.so\.2$/m.test(maps), 'the service (PID 1) runs on jemalloc, preloaded by the image');
    // The one-second decay docs/deploying.md offers operators: the image's jemalloc takes it (it would warn
    // "<jemalloc>: Invalid conf pair" on stderr and go on with its defaults), as its statistics at exit show.
    const decay = 'background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0';
    const tuned = await pod(['run', '--rm', '--env', `MALLOC_CONF=${decay},stats_print:true`, image, 'node', '-e', '0']);
    const stats = tuned.stdout + tuned.stderr;
    const option = (name: string) => new RegExp(`^\\s*opt\\.${name}: (\\S+)`, 'm').exec(stats)?.[1];
    const taken = { background_thread: option('background_thread'), dirty_decay_ms: option('dirty_decay_ms'), muzzy_decay_ms: option('muzzy_decay_ms') };
    check(
      !stats.includes('<jemalloc>:') && JSON.stringify(taken) === JSON.stringify({ background_thread: 'true', dirty_decay_ms: '1000', muzzy_decay_ms: '0' }),
      `the image's jemalloc takes MALLOC_CONF=${decay} (it runs with ${JSON.stringify(taken)}${stats.includes('<jemalloc>:') ? `, and says ${/<jemalloc>:.*/.exec(stats)?.[0]}` : ''})`,
    );
    check(Number(/^Background threads: (\d+)/m.exec(stats)?.[1]) > 0, `with MALLOC_CONF=${decay} jemalloc runs its background threads (${/^Background threads: .*/m.exec(stats)?.[0]})`);
    const healthcheck = await pod(['healthcheck', 'run', container], { allowFailure: true });
    check(healthcheck.code === 0, `the image's HEALTHCHECK passes (podman healthcheck run: ${healthcheck.code} ${healthcheck.stdout}${healthcheck.stderr})`);
    done();

    done = step('a CLI job inside the container');
    const cli = await pod(
      ['exec', container, 'node', 'dist/cli/pictor.js', 'generate', '--prompt', 'a lighthouse in a container', '--quality', 'low', '--out', '/data/cli/lighthouse.png', '--json'],
      { timeoutMs: 120_000 },
    );
    const result = JSON.parse(cli.stdout.trim().split('\n').at(-1)!) as { ok: boolean; files: string[]; size: string };
    check(result.ok && result.files.length === 1 && result.files[0] === '/data/cli/lighthouse.png', `the CLI wrote /data/cli/lighthouse.png (${cli.stdout})`);
    const png = await new Promise<Buffer>((resolve, reject) =>
      execFile(podman[0]!, [...podman.slice(1), 'exec', container, 'cat', result.files[0]!], { env, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 }, (error, stdout) =>
        error ? reject(error) : resolve(stdout),
      ),
    );
    const size = pngSize(png);
    check(size?.width === 1024 && size.height === 1024, `the file is a 1024x1024 PNG (${png.length} bytes, ${JSON.stringify(size)})`);
    done();

    done = step('SIGTERM with a chat job running');
    const running = discord.slashCommand('imagine', { prompt: 'a lighthouse through a deploy', quality: 'high' });
    await discord.waitFor(() => (discord.original(running)?.content.includes('Drawing') ? true : undefined), 'the job to start', 60_000);
    check(discord.original(running)!.attachments.length === 0, 'the job has not finished before the signal');
    const signalledAt = Date.now();
    await pod(['kill', '--signal', 'TERM', container]);
    // A command sent once Node has taken the signal (podman kill returns when it is sent; a command already on its
    // way may be taken, as before the signal).
    await waitUntil('Node to take the SIGTERM', 30_000, async () => ((await pod(['logs', container])).stdout.includes('SIGTERM: taking no new jobs') ? true : undefined));
    const late = discord.slashCommand('imagine', { prompt: 'one more during the deploy' });
    await discord.waitFor(() => (/restarting/.test(discord.original(late)?.content ?? '') ? true : undefined), 'the refusal of a job sent after SIGTERM', 30_000);
    const exit = await pod(['wait', container], { timeoutMs: (GRACE_SECONDS + 30) * 1000 });
    const seconds = (Date.now() - signalledAt) / 1000;
    check(exit.stdout.trim() === '0', `the container exits 0 after the drain (it exited ${exit.stdout.trim()})`);
    check(seconds < GRACE_SECONDS, `the container stopped within the grace (${seconds.toFixed(1)} s)`);
    const finished = discord.original(running)!;
    check(finished.attachments.length === 1, `the running job finished and its image was shown (${finished.content})`);
    check(
      buttonsOf(finished).some((b) => b.custom_id.startsWith('pictor:reroll:')),
      'the finished job has its buttons',
    );
    const stopped = await pod(['logs', container]);
    check(stopped.stdout.includes('SIGTERM: taking no new jobs'), 'SIGTERM reached Node (PID 1)');
    console.log(`   the job finished and the container exited 0 ${seconds.toFixed(1)} s after SIGTERM`);
    done();

    console.log(`== container test passed in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`);
  } catch (error) {
    process.exitCode = 1;
    console.error(`container test: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    clearTimeout(limit);
    await cleanUp();
  }
}

await main();
process.exit(process.exitCode ?? 0);
