/**
 * What the bot gives back after a burst, in the container image, with each
 * memory allocator side by side, and the CPU each one costs: jemalloc as the
 * image preloads it (see the Dockerfile) with jemalloc's own defaults, jemalloc
 * with its background threads only (`MALLOC_CONF=background_thread:true`: the
 * default decay of ten seconds, kept up while the bot is idle), jemalloc with a
 * one-second decay and its background threads (`MALLOC_CONF`
 * `background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0`), the same image
 * on glibc's malloc with `MALLOC_ARENA_MAX=2`, and on glibc's malloc as it comes.
 *
 * - One container per variant and round, from the same image (`--image`,
 *   default localhost/pictor:test, which `npm run test:container` builds): the
 *   real `npm start` (discord.js, the job runner, Node's own build in the
 *   image), the allocator switched by the environment only (`LD_PRELOAD=`
 *   empty turns the image's jemalloc off; `MALLOC_CONF` is set in every
 *   jemalloc variant, empty for jemalloc's defaults, so the image's own
 *   setting does not decide). Variants run in a rotating order.
 * - The Discord fake and the emulator run on the host (127.0.0.1, the
 *   container on the host's network), so the container's memory is the bot's
 *   alone. The workload is `discord-imagine.ts`'s memory run: `--jobs` /imagine
 *   at once, 4 images of 1536x1024 each, every image padded to 1.5 MB as the
 *   service's weigh, 2 previews per image, 300 ms per image, 25 requests
 *   upstream at once.
 * - The bot's memory is read through Node's inspector (`NODE_OPTIONS=--inspect`
 *   on the container's loopback): `process.memoryUsage()`, and full garbage
 *   collections (HeapProfiler.collectGarbage). *Start*: after start-up and
 *   two full GCs; *peak*: the RSS sampled every 250 ms during the burst;
 *   *after*: once every job has ended, a full GC, one second idle, another
 *   GC; and again after `--idle-s` (default 10) seconds idle, with a GC.
 * - The bot's CPU (`process.cpuUsage()`: user and system time of all its
 *   threads, jemalloc's background threads included) is read at the start of
 *   the burst, when every job has ended, and after the idle time (which
 *   includes the bench's full GCs, the same in every variant).
 * - The allocator in use is read from the bot's `/proc/1/maps`, and
 *   jemalloc's background threads from its threads' names (`jemalloc_bg_thd`).
 *
 * Needs podman (and runc: `podman --runtime runc`, `PICTOR_BENCH_PODMAN` to
 * change), the image, and root. Linux only.
 *
 * Usage: node --import tsx bench/container-memory.ts [--image localhost/pictor:test] [--jobs 100] [--rounds 2] [--variants jemalloc,jemalloc-decay1s,glibc-arena2,glibc (the default; jemalloc-bg on request)] [--idle-s 10]
 */
import { execFile } from 'node:child_process';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { DEV_API_KEY } from '../src/emulator/index.js';
import { freeLoopbackPort } from '../test/helpers/free-port.js';
import { fakeDiscordHere } from './helpers/bench-discord.js';
import { startChildServer } from './helpers/child-server.js';
import { listOf, positiveInt, printTable, ratio } from './helpers/measure.js';

const { values: args } = parseArgs({
  options: {
    image: { type: 'string', default: 'localhost/pictor:test' },
    jobs: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '2' },
    variants: { type: 'string', default: 'jemalloc,jemalloc-decay1s,glibc-arena2,glibc' },
    'idle-s': { type: 'string', default: '10' },
  },
});
const JOBS = positiveInt('jobs', args.jobs);
const ROUNDS = positiveInt('rounds', args.rounds);
const IDLE_S = positiveInt('idle-s', args['idle-s']);
const IMAGES = 4;
const SIZE = '1536x1024';

/**
 * How each variant sets the allocator: the image preloads jemalloc unless LD_PRELOAD is emptied; jemalloc reads
 * MALLOC_CONF (empty: its defaults, a 10 s decay of dirty pages and no background thread).
 */
const VARIANTS = {
  jemalloc: { MALLOC_CONF: '' },
  'jemalloc-bg': { MALLOC_CONF: 'background_thread:true' },
  'jemalloc-decay1s': { MALLOC_CONF: 'background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0' },
  'glibc-arena2': { LD_PRELOAD: '', MALLOC_ARENA_MAX: '2' },
  glibc: { LD_PRELOAD: '' },
} as const satisfies Record<string, Record<string, string>>;
type Variant = keyof typeof VARIANTS;
const variants = listOf('variants', args.variants, Object.keys(VARIANTS)) as Variant[];

const podman = (process.env.PICTOR_BENCH_PODMAN ?? 'podman --runtime runc').split(/\s+/).filter(Boolean);
const exec = promisify(execFile);
const work = await mkdtemp(join(tmpdir(), 'pictor-container-memory-'));
const env: NodeJS.ProcessEnv = { ...process.env };
if (!env.CONTAINERS_CONF) {
  // As the container test: no default ulimits (raising RLIMIT_NOFILE is refused in some sandboxes).
  env.CONTAINERS_CONF = join(work, 'containers.conf');
  await writeFile(env.CONTAINERS_CONF, '[containers]\ndefault_ulimits = []\n');
}
const pod = async (podArgs: string[]): Promise<string> => (await exec(podman[0]!, [...podman.slice(1), ...podArgs], { env, maxBuffer: 64 * 1024 * 1024 })).stdout;

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}
/** CPU time of the bot's process so far (all its threads), in microseconds. */
interface Cpu {
  user: number;
  system: number;
}
interface RunResult {
  variant: Variant;
  round: number;
  finals: number;
  start: Memory;
  peakRss: number;
  after: Memory;
  afterIdle: Memory;
  /** CPU of the burst: from its start until every job had ended. */
  burstCpu: Cpu;
  /** CPU from the burst's end until after the idle time (the bench's full GCs included). */
  idleCpu: Cpu;
  burstSeconds: number;
  allocator: string;
}

/** One container of `variant`: start, a burst, the memory at each point. */
async function runOnce(variant: Variant, round: number, emulatorUrl: string): Promise<RunResult> {
  // The fake keeps only the sizes of what the bot uploads, and says when every job of the burst has ended.
  const discord = await fakeDiscordHere({ messageRateLimit: { limit: 5, windowMs: 5000 }, heartbeatIntervalMs: 1000, images: IMAGES });
  const name = `pictor-memory-bench-${process.pid}-${variant}-${round}`;
  const metricsPort = await freeLoopbackPort();
  const inspectPort = await freeLoopbackPort();
  const settings: Record<string, string> = {
    DISCORD_TOKEN: discord.botToken,
    DISCORD_APPLICATION_ID: discord.applicationId,
    DISCORD_API_BASE_URL: discord.apiBaseUrl,
    PICTOR_BASE_URL: emulatorUrl,
    PICTOR_API_KEY: DEV_API_KEY,
    PICTOR_MAX_CONCURRENT: '25',
    // Every command comes from the fake's one member: no per-member limit gets in the way of the burst.
    PICTOR_USER_CONCURRENT_JOBS: String(JOBS),
    PICTOR_METRICS_PORT: String(metricsPort),
    NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}`,
    ...VARIANTS[variant],
  };
  let inspector: Inspector | undefined;
  try {
    await pod(['run', '--detach', '--name', name, '--network', 'host', ...Object.entries(settings).flatMap(([k, v]) => ['--env', `${k}=${v}`]), args.image]);
    await waitFor(`the bot in ${name} to be healthy`, 120_000, async () => {
      const response = await fetch(`http://127.0.0.1:${metricsPort}/healthz`).catch(() => undefined);
      return response?.status === 200;
    });
    inspector = await Inspector.connect(inspectPort);
    // The allocator the process runs on, from its own memory map (read as its user: /proc/1/maps is the owner's to read).
    const maps = await pod(['exec', '--user', 'pictor', name, 'cat', '/proc/1/maps']);
    const threads = await pod(['exec', '--user', 'pictor', name, 'sh', '-c', 'cat /proc/1/task/*/comm']);
    const backgroundThreads = threads.split('\n').filter((thread) => thread.trim() === 'jemalloc_bg_thd').length;
    const allocator = /libjemalloc/.test(maps) ? `jemalloc${backgroundThreads ? `, ${backgroundThreads} background threads` : ''}` : 'glibc';

    await inspector.collectGarbage();
    await inspector.collectGarbage();
    const start = await inspector.memory();
    const startCpu = await inspector.cpu();
    const burstStarted = Date.now();
    let peakRss = start.rss;
    const sampler = setInterval(() => {
      void inspector!
        .memory()
        .then((m) => (peakRss = Math.max(peakRss, m.rss)))
        .catch(() => undefined);
    }, 250);

    await discord.burst(Array.from({ length: JOBS }, (_, i) => ({ prompt: `memory bench job ${i}`, quality: 'low', size: SIZE, count: IMAGES })));
    let deadline: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      deadline = setTimeout(() => reject(new Error(`timed out after 600 s waiting for all ${JOBS} jobs to end`)), 10 * 60_000);
    });
    await Promise.race([discord.ended(), late]).finally(() => clearTimeout(deadline));
    clearInterval(sampler);
    const burstEndCpu = await inspector.cpu();
    const burstSeconds = (Date.now() - burstStarted) / 1000;
    const { finals } = await discord.progress();

    await inspector.collectGarbage();
    await sleep(1000);
    await inspector.collectGarbage();
    const after = await inspector.memory();
    await sleep(Math.max(0, IDLE_S * 1000 - 1000));
    await inspector.collectGarbage();
    const afterIdle = await inspector.memory();
    const idleEndCpu = await inspector.cpu();
    return { variant, round, finals, start, peakRss, after, afterIdle, burstCpu: cpuBetween(startCpu, burstEndCpu), idleCpu: cpuBetween(burstEndCpu, idleEndCpu), burstSeconds, allocator };
  } finally {
    inspector?.close();
    await pod(['rm', '--force', name]).catch(() => undefined);
    await discord.close();
  }
}

/** The bot's Node inspector (Chrome DevTools Protocol over a WebSocket): its memory, and full GCs. */
class Inspector {
  #socket: WebSocket;
  #next = 1;
  #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString('utf8')) as { id?: number; result?: unknown; error?: { message: string } };
      const waiting = message.id === undefined ? undefined : this.#pending.get(message.id);
      if (!waiting) return;
      this.#pending.delete(message.id!);
      if (message.error) waiting.reject(new Error(message.error.message));
      else waiting.resolve(message.result);
    });
  }

  static async connect(port: number): Promise<Inspector> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
    const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return new Inspector(socket);
  }

  #call(method: string, params: object = {}): Promise<unknown> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }

  async collectGarbage(): Promise<void> {
    await this.#call('HeapProfiler.collectGarbage');
  }

  async memory(): Promise<Memory> {
    return (await this.#evaluate('JSON.stringify(process.memoryUsage())')) as Memory;
  }

  async cpu(): Promise<Cpu> {
    return (await this.#evaluate('JSON.stringify(process.cpuUsage())')) as Cpu;
  }

  /** The JSON value of an expression evaluated in the bot. */
  async #evaluate(expression: string): Promise<unknown> {
    const { result } = (await this.#call('Runtime.evaluate', { expression, returnByValue: true })) as { result: { value: string } };
    return JSON.parse(result.value);
  }

  close(): void {
    this.#socket.close();
  }
}

/** Polls the bot's container (a process: no event of its own reaches the bench). */
async function waitFor(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(250);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}

/** MiB with its sign: +12, -3. */
function signed(bytes: number): string {
  return `${bytes < 0 ? '−' : '+'}${mib(Math.abs(bytes))}`;
}

function cpuBetween(from: Cpu, to: Cpu): Cpu {
  return { user: to.user - from.user, system: to.system - from.system };
}

/** User + system seconds. */
function cpuSeconds(cpu: Cpu): number {
  return (cpu.user + cpu.system) / 1e6;
}

/** Every variant and round, then the table and the goal. */
async function main(): Promise<void> {
  try {
    await pod(['image', 'exists', args.image]).catch(() => {
      throw new Error(`no image ${args.image}: build it first (npm run test:container builds localhost/pictor:test)`);
    });
    const emulator = await startChildServer('./emulator-server.ts', [JSON.stringify({ latencyMs: 300, defaultPartialImages: 2, padImageBytes: 1_500_000 })]);
    const results: RunResult[] = [];
    try {
      console.log(`# Bot memory after a burst, in the container image ${args.image}: ${variants.join(', ')}`);
      console.log(`${JOBS} /imagine at once (${IMAGES} × ${SIZE}, images padded to 1.5 MB, 300 ms per image, 25 requests upstream), ${ROUNDS} rounds in rotating order; emulator in child process ${emulator.pid}\n`);
      for (let round = 0; round < ROUNDS; round++) {
        for (let i = 0; i < variants.length; i++) {
          const variant = variants[(i + round) % variants.length]!;
          const result = await runOnce(variant, round + 1, emulator.url);
          results.push(result);
          console.log(
            `- ${variant}, round ${round + 1}: ${result.finals}/${JOBS} finals; RSS start ${mib(result.start.rss)}, peak ${mib(result.peakRss)}, after ${mib(result.after.rss)}, after ${IDLE_S} s idle ${mib(result.afterIdle.rss)}; CPU burst ${cpuSeconds(result.burstCpu).toFixed(1)} s (${result.burstSeconds.toFixed(0)} s long), idle ${cpuSeconds(result.idleCpu).toFixed(2)} s; allocator ${result.allocator}`,
          );
        }
      }
    } finally {
      await emulator.close();
    }

    console.log(`\n## RSS of the bot process (MiB): start / peak / after the burst and a GC / after ${IDLE_S} s idle and a GC\n`);
    printTable(
      [
        'variant',
        'round',
        'allocator (maps, threads)',
        'RSS start / peak / after / after idle',
        'above start after / after idle',
        'JS heap used after',
        'external / array buffers after',
        'CPU burst, s (user / system)',
        `CPU after the burst to ${IDLE_S} s idle, s (user / system)`,
      ],
      results.map((r) => [
        r.variant,
        String(r.round),
        r.allocator,
        `${mib(r.start.rss)} / ${mib(r.peakRss)} / ${mib(r.after.rss)} / ${mib(r.afterIdle.rss)}`,
        `${signed(r.after.rss - r.start.rss)} / ${signed(r.afterIdle.rss - r.start.rss)}`,
        mib(r.after.heapUsed),
        `${mib(r.after.external)} / ${mib(r.after.arrayBuffers)}`,
        `${cpuSeconds(r.burstCpu).toFixed(1)} (${(r.burstCpu.user / 1e6).toFixed(1)} / ${(r.burstCpu.system / 1e6).toFixed(1)})`,
        `${cpuSeconds(r.idleCpu).toFixed(2)} (${(r.idleCpu.user / 1e6).toFixed(2)} / ${(r.idleCpu.system / 1e6).toFixed(2)})`,
      ]),
    );
    if (variants.includes('jemalloc') && variants.includes('glibc-arena2')) {
      const above = (variant: Variant, key: 'after' | 'afterIdle') => results.filter((r) => r.variant === variant).map((r) => r[key].rss - r.start.rss);
      const worst = (values: number[]) => Math.max(...values);
      console.log(
        `\nGoal: jemalloc keeps at most half of what glibc (MALLOC_ARENA_MAX=2) keeps above start, and at most +50 MiB: ` +
          `after ${mib(worst(above('jemalloc', 'after')))} vs ${mib(worst(above('glibc-arena2', 'after')))} MiB (worst runs), ` +
          `after ${IDLE_S} s idle ${mib(worst(above('jemalloc', 'afterIdle')))} vs ${mib(worst(above('glibc-arena2', 'afterIdle')))} MiB`,
      );
    }
    if (variants.includes('jemalloc') && variants.includes('jemalloc-decay1s')) {
      const of = (variant: Variant) => results.filter((r) => r.variant === variant);
      const worstAfter = Math.max(...of('jemalloc-decay1s').map((r) => r.after.rss - r.start.rss));
      const burstCpu = (variant: Variant) => of(variant).reduce((sum, r) => sum + cpuSeconds(r.burstCpu), 0);
      const idleCpu = (variant: Variant) => of(variant).reduce((sum, r) => sum + cpuSeconds(r.idleCpu), 0);
      const perRound = of('jemalloc-decay1s').map((r) => {
        const beside = of('jemalloc').find((j) => j.round === r.round)!;
        return `${ratio(cpuSeconds(r.burstCpu), cpuSeconds(beside.burstCpu))} in round ${r.round}`;
      });
      console.log(
        `\nGoal: jemalloc-decay1s at most +50 MiB above start one second after the burst in every round, at a CPU cost within a few percent of jemalloc's defaults: ` +
          `worst ${signed(worstAfter)} MiB (${worstAfter <= 50 * 1024 * 1024 ? 'met' : 'not met'}); ` +
          `CPU of the bursts ${burstCpu('jemalloc-decay1s').toFixed(1)} s against ${burstCpu('jemalloc').toFixed(1)} s, ${ratio(burstCpu('jemalloc-decay1s'), burstCpu('jemalloc'))} (${perRound.join(', ')}); ` +
          `after the bursts ${idleCpu('jemalloc-decay1s').toFixed(2)} s against ${idleCpu('jemalloc').toFixed(2)} s`,
      );
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
