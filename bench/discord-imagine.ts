/**
 * 100 concurrent `/imagine` jobs through the real discord.js client (inside
 * `startDiscordBot`), the real job runner and the emulator (in a child
 * process), against the fake Discord, which allows 5 edits per 5 s per
 * interaction token, as Discord does, and refuses (429) anything beyond.
 *
 * Prints whether every job got its final image, how many requests the fake
 * refused (the goal is zero: discord.js paces edits by the rate-limit headers),
 * and how long a preview took to reach Discord:
 *   - stream → edit: from the partial image event arriving from the image
 *     service to the edit carrying it arriving at Discord (includes the
 *     runner's pacing of previews, `minUpdateIntervalMs`, default 1.5 s);
 *   - sink → edit: from the runner handing the preview to the Discord surface
 *     to that edit arriving at Discord (the surface and discord.js alone).
 * Previews superseded by a newer one before they could be sent are counted,
 * not timed. Also the bytes uploaded per job: its previews and its final image.
 *
 * Light previews side by side: by default (`--light-previews both`) the jobs
 * alternate between two runners on the same client, limiter and ledger — one
 * re-encoding previews at display size (`PICTOR_LIGHT_PREVIEWS=1`, the
 * default), one uploading the partials as the service sent them — so both
 * halves run interleaved under the same load; each half is reported on its
 * own. `--light-previews on` or `off` runs every job one way. `--jobs N`
 * (default 100) and `--size` (default 1024x1024; 1536x1024 for images as large
 * as the service draws) change the load; `--pad-image-bytes N` pads every
 * image the emulator sends (partials and finals) to N bytes with a chunk
 * decoders skip, so partials weigh what the service's do.
 *
 * Bursts and memory: every interaction must get its first answer within 3 s
 * (the fake refuses a later one with 10062, as Discord does); printed are that
 * delay (median, p99; split into the gateway's part and the bot's), the
 * interactions answered too late, jobs refused at once because the runner's
 * queue was full (`--max-queued N`, default the runner's 200 per runner), CPU
 * per job, and this process's RSS (start, peak sampled every 100 ms, after the
 * run and a full GC). The fake keeps only the sizes of what
 * the bot uploads, so the RSS is the bot's with the fake's bookkeeping.
 * `--latency-ms` (default 3000) is the emulator's time per image, `--images N`
 * the images per job, `--deadline-s` how long to wait for every job to end.
 * The first answer's time in the bot is split further: the handler → discord.js
 * asked for the callback → undici's request created → its headers written on a
 * connection → arrived at the fake (undici's diagnostics channels). undici's
 * pool queues a request before it creates it on one of its connections, so
 * waiting for a free connection shows in "asked → created". Memory is printed
 * as RSS, the JS heap held (V8's `heapTotal`) and used, external and array
 * buffers, each at the start, at its peak (the RSS sampled every 100 ms, the
 * others every second) and after the run, a full GC, a second of idle and
 * another GC, with the bot still up.
 *
 * Series: `--jobs 100,400,800` runs each count in turn, each in a process of its
 * own (a fresh heap and CPU count), with the other flags passed on, then prints
 * one table side by side: finals, refusals, first answers, CPU per job and its
 * ratio to the first count's. `--compare-with DIR` runs another checkout's
 * bench too (e.g. the commit before a change; its node_modules must resolve),
 * alternating which goes first; `--compare-env NAME=VALUE` runs this checkout
 * once more with that environment variable set (e.g. `MALLOC_ARENA_MAX=2`), or
 * several at once separated by spaces; each `--compare-env` is one more variant
 * (e.g. `--compare-env MALLOC_ARENA_MAX=2 --compare-env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2`).
 *
 * `--hog` starts a CPU hog beside the bot for the whole run (or series): a busy loop in a process of its own, as
 * another program busy on the same machine would be (on 2 cores it takes one). In a series the hog runs from the
 * first run to the last, so every variant meets the same neighbour.
 *
 * The fake Discord runs in a process of its own (`helpers/bench-discord.ts`), asked over IPC: the CPU, event-loop delay
 * and memory printed for "this process" are the bot's, as against Discord, where the other side's work is not on the
 * bot's machine (the two still share the cores). `PICTOR_BENCH_FAKE_IN_PROCESS=1` runs it in the bot's process, as
 * before it had its own (its work then competes in the bot's event loop). For the first answers it also prints how
 * many were on the wire at once (the pool's bound), what else reached the fake and how many image requests began
 * before the last first answer (work that met the burst), this process's CPU until the last first answer came back (the
 * work in front of it, whatever the machine's load), and the 1-minute load average at the burst and after.
 *
 * `--ack-deadline-s S` lets the fake Discord take first answers for S seconds instead of 3: for CPU per job at counts
 * whose first answers this machine cannot give in time (a job answered too late never runs, so it would cost nothing).
 *
 * With `PICTOR_BENCH_CONSOLE=1` the key owner's console runs in the bot's process on its ledger (as `npm start`
 * serves it with `PICTOR_CONSOLE_PORT`), watched by a browser's worth of load from another process
 * (`helpers/console-watcher.ts`): its CPU counts in the bot's. `bench/console.ts` compares the two.
 *
 *   node --import tsx bench/discord-imagine.ts [--light-previews both|on|off] [--jobs N|N,N,…] [--size 1536x1024] [--images 4] [--pad-image-bytes 1500000] [--latency-ms 300] [--max-queued N] [--deadline-s S] [--compare-with DIR] [--compare-env NAME=VALUE] [--hog] [--ack-deadline-s S]
 */
import { spawn } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startDiscordBot, type DiscordJobRunner } from '../bots/discord/index.js';
import { JobRecordStore } from '../bots/discord/JobRecordStore.js';
import { botsConsoleView } from '../bots/console-view.js';
import { readRunnerConfig } from '../bots/runner/config.js';
import { startConsole } from '../src/console/index.js';
import { DEFAULT_ALERT_THRESHOLDS } from '../src/console/alerts/config.js';
import { FileQuotaStore, JobRunner } from '../bots/runner/index.js';
import { openBotState, type BotState } from '../bots/state/index.js';
import { DEV_API_KEY } from '../src/emulator/index.js';
import { ImageLimiter, isPartialEvent, PictorClient, type GenerationInput, type ImageEventStream, type RequestOptions } from '../src/index.js';
import { silentLogger } from '../src/internal.js';
import { fakeDiscordApart, fakeDiscordHere } from './helpers/bench-discord.js';
import { REPO_ROOT, startChildServer } from './helpers/child-server.js';
import { collectGarbage, percentile } from './helpers/measure.js';

const flag = (name: string): string | undefined => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? undefined : process.argv[at + 1];
};
/** One count runs here; several (`--jobs 100,400,800`) run as a series of child processes. */
const JOB_COUNTS = (flag('jobs') ?? '100').split(',').map(Number);
const JOBS = JOB_COUNTS[0]!;
const COMPARE_WITH = flag('compare-with');
/** Each `--compare-env` is one more variant of this checkout: `NAME=VALUE`, or several separated by spaces (`'LD_PRELOAD=… MALLOC_CONF=…'`). */
const COMPARE_ENVS = process.argv.flatMap((arg, i) => (arg === '--compare-env' && process.argv[i + 1] !== undefined ? [process.argv[i + 1]!] : []));
/**
 * How long the fake Discord takes a first answer (`--ack-deadline-s`): Discord's 3 s by default. Only for CPU per job
 * at counts the machine cannot answer in time: a job answered too late never runs, and costs almost nothing.
 */
const ACK_DEADLINE_MS = Number(flag('ack-deadline-s') ?? 3) * 1000;
/** A busy loop in another process beside the bot (`startHog`). */
const HOG = process.argv.includes('--hog');
/** The fake Discord in the bot's process (`PICTOR_BENCH_FAKE_IN_PROCESS=1`, as before it had a process of its own): its work then shares the bot's event loop and CPU count. */
const FAKE_IN_PROCESS = process.env.PICTOR_BENCH_FAKE_IN_PROCESS === '1';
/** What this process holds: the bot, and the fake Discord when it runs here. */
const HERE = FAKE_IN_PROCESS ? 'bot + fake Discord' : 'bot';
const SERIES = JOB_COUNTS.length > 1 || COMPARE_WITH !== undefined || COMPARE_ENVS.length > 0;
const SIZE = (flag('size') ?? '1024x1024') as '1024x1024' | '1536x1024' | '1024x1536';
const LIGHT = flag('light-previews') ?? 'both';
/** Images per job (`count`). */
const IMAGES = Number(flag('images') ?? 1);
/** Pads every image the emulator sends to at least this many bytes (the service's 1536x1024 PNGs are a few MB; the emulator's flat art far less). */
const PAD_IMAGE_BYTES = Number(flag('pad-image-bytes') ?? 0);
if (!['both', 'on', 'off'].includes(LIGHT) || !JOB_COUNTS.every((n) => Number.isInteger(n) && n > 0) || COMPARE_ENVS.some((vars) => !vars.split(/\s+/).every((v) => /^\w+=/.test(v)))) throw new Error('usage: --light-previews both|on|off --jobs N --size WxH');
/** Which way job `i` runs: light previews or the partials as sent. */
const lightFor = (i: number): boolean => (LIGHT === 'both' ? i % 2 === 0 : LIGHT === 'on');
/** Per image, spread over its previews and the final image, as the emulator does. */
const IMAGE_LATENCY_MS = Number(flag('latency-ms') ?? 3000);
/** The runners' queue bound (`PICTOR_MAX_QUEUED_JOBS`); default the runner's own. */
const MAX_QUEUED = flag('max-queued') === undefined ? undefined : Number(flag('max-queued'));
const PARTIAL_IMAGES = 2;
/** Requests the image service takes at once (the shared limiter): 100 jobs run in 4 waves, so most wait in the queue first. */
const MAX_CONCURRENT_REQUESTS = 25;
/** Discord's per-token limit for interaction webhooks. */
const EDITS_PER_WINDOW = 5;
const WINDOW_MS = 5000;
const DEADLINE_MS = Number(flag('deadline-s') ?? Math.max(100, JOBS / 10)) * 1000;

const MEMORY_KINDS = ['rss', 'heapTotal', 'heapUsed', 'external', 'arrayBuffers'] as const;
type MemoryKind = (typeof MEMORY_KINDS)[number];
const MEMORY_LABELS: Record<MemoryKind, string> = { rss: 'RSS', heapTotal: 'JS heap held', heapUsed: 'JS heap used', external: 'external', arrayBuffers: 'array buffers' };
const memoryNow = (): Record<MemoryKind, number> => {
  const m = process.memoryUsage();
  return { rss: m.rss, heapTotal: m.heapTotal, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
};
const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;

const ms = (n: number) => (Number.isFinite(n) ? `${Math.round(n)} ms` : 'n/a');
const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, median: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN };
};

/** When each preview (job prompt → partial index) arrived from the image service, and when the runner handed it to the surface. */
const streamedAt = new Map<string, number>();
const sinkAt = new Map<string, number>();
const previewKey = (prompt: string, partialIndex: number) => `${prompt}#${partialIndex}`;
/** When each job's request to the image service began. */
const imageRequestsAt: number[] = [];

/** A client that notes when each partial image event arrives. */
class TimedClient extends PictorClient {
  override generateStream(input: GenerationInput, options?: RequestOptions): ImageEventStream {
    imageRequestsAt.push(Date.now());
    const stream = super.generateStream(input, options);
    const iterate = stream[Symbol.asyncIterator].bind(stream);
    Object.defineProperty(stream, Symbol.asyncIterator, {
      value: async function* () {
        for await (const event of { [Symbol.asyncIterator]: iterate }) {
          if (isPartialEvent(event)) streamedAt.set(previewKey(input.prompt, event.partial_image_index), Date.now());
          yield event;
        }
      },
    });
    return stream;
  }
}

/** The console on the bench's ledger, and a process loading its pages as a browser would; `stop` says what it served. */
/** `tellReconciles`: as `startConsole` takes it, wired to the store's `onReconciled`. */
async function startBenchConsole(store: FileQuotaStore, runner: JobRunner, state: BotState, dataDir: string, tellReconciles: (reconciled: () => void) => void): Promise<{ stop(): Promise<string> }> {
  const token = 'bench-console-token-0123456789';
  const running = (await startConsole({
    source: {
      store,
      operator: { caps: { accountDailyUsd: 1000 }, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' },
      bots: botsConsoleView({ runner, runnerConfig: readRunnerConfig({}, {}), state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() }),
    },
    config: { port: 0, host: '127.0.0.1', token, allowChanges: false },
    alerts: { thresholds: DEFAULT_ALERT_THRESHOLDS, breaker: true, checkMs: 60_000, discord: undefined, slack: undefined, webhook: undefined },
    ledgerWhere: dataDir,
    logger: silentLogger(),
    tellReconciles,
  }))!;
  const watcher = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench/helpers/console-watcher.ts'), running.url!, token], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let said = '';
  watcher.stdout.on('data', (chunk: Buffer) => (said += chunk.toString()));
  return {
    async stop() {
      const exited = new Promise((resolve) => watcher.on('exit', resolve));
      watcher.kill('SIGTERM');
      await exited;
      await running.close();
      const counts = JSON.parse(said.trim() || '{}') as { spendPages?: number; jobsPages?: number; liveEvents?: number };
      return `${counts.spendPages ?? 0} spend pages, ${counts.jobsPages ?? 0} jobs pages and ${counts.liveEvents ?? 0} live updates served`;
    },
  };
}

/** A CPU hog: a busy loop in a process of its own, until `stop` (or until this process is gone: it looks now and then). */
function startHog(): { stop(): Promise<void> } {
  const loop = 'const parent = process.ppid; for (let i = 1; ; i++) if (i % 1e8 === 0 && process.ppid !== parent) process.exit(0);';
  const hog = spawn(process.execPath, ['-e', loop], { stdio: 'ignore' });
  return {
    async stop() {
      if (hog.exitCode !== null || hog.signalCode !== null) return;
      const gone = new Promise((done) => hog.once('exit', done));
      hog.kill('SIGKILL');
      await gone;
    },
  };
}

/** One run of `JOBS` jobs in this process. */
async function runOnce(): Promise<void> {
  const hog = HOG ? startHog() : undefined;
  const started = Date.now();
  const dataDir = await mkdtemp(join(tmpdir(), 'pictor-discord-bench-'));
  // The fake keeps only the sizes of what the bot uploads; in a process of its own unless PICTOR_BENCH_FAKE_IN_PROCESS=1.
  const discord = await (FAKE_IN_PROCESS ? fakeDiscordHere : fakeDiscordApart)({ messageRateLimit: { limit: EDITS_PER_WINDOW, windowMs: WINDOW_MS }, ackDeadlineMs: ACK_DEADLINE_MS, images: IMAGES });
  const emulator = await startChildServer('./emulator-server.ts', [JSON.stringify({ latencyMs: IMAGE_LATENCY_MS, defaultPartialImages: PARTIAL_IMAGES, padImageBytes: PAD_IMAGE_BYTES })]);
  const limiter = new ImageLimiter({ maxConcurrent: MAX_CONCURRENT_REQUESTS });
  /** Set once the console runs (PICTOR_BENCH_CONSOLE=1): its usage index reads what a reconcile wrote. */
  let reconciled: (() => void) | undefined;
  const store = new FileQuotaStore({ dir: dataDir, onReconciled: () => reconciled?.() });
  // What the buttons need later, in the data folder, as `npm start` keeps it without Redis.
  const state = await openBotState({ dataDir, ledger: store, logger: silentLogger() });
  const client = new TimedClient({ baseURL: emulator.url, apiKey: DEV_API_KEY, limiter });
  const runners = {
    light: new JobRunner({ client, store, limits: {}, partialImages: PARTIAL_IMAGES, lightPreviews: true, maxQueuedJobs: MAX_QUEUED }),
    raw: new JobRunner({ client, store, limits: {}, partialImages: PARTIAL_IMAGES, lightPreviews: false, maxQueuedJobs: MAX_QUEUED }),
  };
  /** Each prompt's runner: `bench job <i>` runs on the light one when `lightFor(i)`. */
  const runnerOf = (prompt: string): JobRunner => (lightFor(Number(/\d+$/.exec(prompt)?.[0] ?? 0)) ? runners.light : runners.raw);
  /** The runners as the bot sees them, noting when each preview is handed over. */
  const timedRunner: DiscordJobRunner = {
    request: (intent, answers) =>
      runnerOf(intent.prompt).request(intent, {
        ...answers,
        accept: async (job) => {
          const accepted = await answers.accept(job);
          if (!accepted) return undefined;
          return {
            ...accepted,
            sink: (update) => {
              if (update.type === 'partial') sinkAt.set(previewKey(intent.prompt, update.partialIndex), Date.now());
              return accepted.sink(update);
            },
          };
        },
      }),
    requestForm: (requester, answers) => runners.light.requestForm(requester, answers),
    cancel: (jobId, by) => runners.light.cancel(jobId, by) || runners.raw.cancel(jobId, by),
    get: (jobId) => runners.light.get(jobId) ?? runners.raw.get(jobId),
    budgets: runners.light.budgets,
    policy: runners.light.policy,
    history: runners.light.history,
    styles: runners.light.styles,
    members: runners.light.members,
    audit: runners.light.audit,
    recordEnded: (requester, job, final, link) => runners.light.recordEnded(requester, job, final, link),
  };
  const bot = await startDiscordBot({
    token: discord.botToken,
    apiBaseUrl: discord.apiBaseUrl,
    runner: timedRunner,
    state,
    allowedAttachmentHosts: [discord.cdnHost],
    logger: silentLogger(),
  });

  /** discord.js waiting for a rate limit before sending: its own global cap (50/s by default) or a route's bucket. */
  const waits = { global: 0, bucket: 0, globalMs: 0, bucketMs: 0 };
  for (const rest of [bot.client!.rest, bot.rest, bot.webhookRest]) {
    rest.on('rateLimited', (info) => {
      if (info.global) {
        waits.global++;
        waits.globalMs += info.timeToReset;
      } else {
        waits.bucket++;
        waits.bucketMs += info.timeToReset;
      }
    });
  }

  /** When the bot (discord.js) emitted each interaction, by token: splits the first answer's delay into the gateway's part and the bot's. */
  const receivedAt = new Map<string, number>();
  bot.client!.on('interactionCreate', (interaction) => {
    receivedAt.set(interaction.token, Date.now());
  });
  /** When the bot asked discord.js for each first answer, when its request reached undici (created) and was written on a connection (headers sent), by token. */
  const callbackAskedAt = new Map<string, number>();
  const restRequest = bot.client!.rest.request.bind(bot.client!.rest);
  bot.client!.rest.request = (options) => {
    const token = /\/interactions\/\d+\/([^/]+)\/callback/.exec(options.fullRoute)?.[1];
    if (token !== undefined && !callbackAskedAt.has(token)) callbackAskedAt.set(token, Date.now());
    return restRequest(options);
  };
  const callbackCreatedAt = new Map<string, number>();
  const callbackSentAt = new Map<string, number>();
  const callbackToken = (request: unknown) => /\/interactions\/\d+\/([^/]+)\/callback/.exec((request as { path?: string }).path ?? '')?.[1];
  const onCreate = (message: unknown) => {
    const token = callbackToken((message as { request: unknown }).request);
    if (token !== undefined && !callbackCreatedAt.has(token)) callbackCreatedAt.set(token, Date.now());
  };
  const onSend = (message: unknown) => {
    const token = callbackToken((message as { request: unknown }).request);
    if (token !== undefined && !callbackSentAt.has(token)) callbackSentAt.set(token, Date.now());
  };
  /** First answers on the wire at once (created, no answer's headers yet): whether the pool of connections was full. */
  const callbacksInFlight = { now: 0, max: 0 };
  /** This process's CPU count when the last first answer came back: the work done in front of it, whatever the machine's load. */
  let cpuAtLastAnswer: NodeJS.CpuUsage | undefined;
  const onCallbackCreate = (message: unknown) => {
    if (callbackToken((message as { request: unknown }).request) === undefined) return;
    callbacksInFlight.now++;
    callbacksInFlight.max = Math.max(callbacksInFlight.max, callbacksInFlight.now);
  };
  const onCallbackAnswered = (message: unknown) => {
    if (callbackToken((message as { request: unknown }).request) === undefined) return;
    callbacksInFlight.now--;
    cpuAtLastAnswer = process.cpuUsage();
  };
  subscribe('undici:request:create', onCreate);
  subscribe('undici:request:create', onCallbackCreate);
  subscribe('undici:request:headers', onCallbackAnswered);
  subscribe('undici:client:sendHeaders', onSend);

  // The owner's console on the same ledger, in this process, watched from another (PICTOR_BENCH_CONSOLE=1).
  const consoleRun = process.env.PICTOR_BENCH_CONSOLE === '1' ? await startBenchConsole(store, runners.light, state, dataDir, (tell) => void (reconciled = tell)) : undefined;

  /** How late timers ran in this process (bot, runner and fake Discord share it; the emulator has its own). */
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  const cpuBefore = process.cpuUsage();
  /** This process's memory (bot + fake Discord, which keeps only the sizes of the files it was sent), sampled every 100 ms. */
  collectGarbage();
  const memoryAtStart = memoryNow();
  const memoryPeak = { ...memoryAtStart };
  // The RSS every 100 ms; the heap's figures (dearer to read: about a millisecond each time) every second.
  let samples = 0;
  const memorySampler = setInterval(() => {
    const now: Partial<Record<MemoryKind, number>> = samples++ % 10 === 0 ? memoryNow() : { rss: process.memoryUsage.rss() };
    for (const key of MEMORY_KINDS) memoryPeak[key] = Math.max(memoryPeak[key], now[key] ?? 0);
  }, 100);

  /** The machine's load (1-minute average) as the burst starts: the bench shares its cores with whatever else runs. */
  const loadAtStart = loadavg()[0]!;
  const commands = Array.from({ length: JOBS }, (_, i) => ({ prompt: `bench job ${i}`, quality: 'low', size: SIZE, ...(IMAGES > 1 ? { count: IMAGES } : {}) }));
  const sent = await discord.burst(commands);
  const jobs = sent.map((ix, i) => ({ prompt: commands[i]!.prompt, light: lightFor(i), ix, sentAt: ix.createdAt }));
  let timedOut = false;
  let progress: NodeJS.Timeout | undefined;
  try {
    progress = setInterval(() => {
      void discord.progress().then((now) =>
        console.log(`  … ${((Date.now() - started) / 1000).toFixed(0)} s: ${now.acknowledged} acknowledged, ${now.tooLate} too late (10062), ${now.finals} finals, ${now.refused} refused (queue full)`),
      );
    }, 10_000);
    progress.unref();
    let deadline: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      deadline = setTimeout(() => reject(new Error(`timed out after ${DEADLINE_MS} ms waiting for all ${JOBS} final images or refusals`)), DEADLINE_MS);
    });
    // The fake says when every job has ended; the bench does not ask it again and again.
    await Promise.race([discord.ended(), late]).finally(() => clearTimeout(deadline));
  } catch {
    timedOut = true;
  }

  clearInterval(progress);
  loopDelay.disable();
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(memorySampler);
  const report = await discord.report();
  const outcome = (ix: { token: string }) => report.interactions[ix.token]!;
  /** What the fake Discord holds: every file it was sent (counted apart from the bot's memory). */
  const fakeHeldBytes = report.heldFileBytes;

  // Join the fake's records of edits with the times noted above, per way of showing previews.
  interface Half {
    streamToEdit: number[];
    sinkToEdit: number[];
    jobTimes: number[];
    editsPerJob: number[];
    previewBytes: number[];
    finalBytes: number[];
    previewsSent: number;
    jobs: number;
  }
  const halves = new Map<boolean, Half>();
  for (const job of jobs) {
    let half = halves.get(job.light);
    if (!half) halves.set(job.light, (half = { streamToEdit: [], sinkToEdit: [], jobTimes: [], editsPerJob: [], previewBytes: [], finalBytes: [], previewsSent: 0, jobs: 0 }));
    half.jobs++;
    const requests = report.requests.filter((r) => r.token === job.ix.token && r.route === 'webhook-message' && r.method === 'PATCH' && r.status === 200);
    half.editsPerJob.push(requests.length);
    let previewBytes = 0;
    let finalBytes = 0;
    for (const r of requests) {
      const preview = r.files.map((f) => /^preview-1-(\d+)\.(png|jpg|webp)$/.exec(f.filename)).find(Boolean);
      previewBytes += r.files.filter((f) => f.filename.startsWith('preview-')).reduce((sum, f) => sum + f.size, 0);
      finalBytes += r.files.filter((f) => f.filename.startsWith('pictor-')).reduce((sum, f) => sum + f.size, 0);
      if (preview) {
        half.previewsSent++;
        const key = previewKey(job.prompt, Number(preview[1]) - 1);
        const fromStream = streamedAt.get(key);
        const fromSink = sinkAt.get(key);
        if (fromStream !== undefined) half.streamToEdit.push(r.at - fromStream);
        if (fromSink !== undefined) half.sinkToEdit.push(r.at - fromSink);
      }
      if (r.files.some((f) => /^pictor-/.test(f.filename))) half.jobTimes.push(r.at - job.sentAt);
    }
    half.previewBytes.push(previewBytes);
    half.finalBytes.push(finalBytes);
  }
  const finals = jobs.filter((j) => outcome(j.ix).final).length;
  const refusedQueueFull = jobs.filter((j) => outcome(j.ix).refused).length;
  /** From the interaction's creation (its dispatch on the gateway) to its first answer (callback) arriving at the fake, and callbacks refused as too late (10062). */
  const callbackLatency: number[] = [];
  const gatewayLatency: number[] = [];
  const handlerLatency: number[] = [];
  /** The bot's part split: handler → discord.js asked, asked → undici's request created (the pool's wait for a connection), created → written on it, written → at the fake. */
  const toAsked: number[] = [];
  const toCreated: number[] = [];
  const createdToSent: number[] = [];
  const sentToArrived: number[] = [];
  let callbacksExpired = 0;
  const jobTokens = new Set(jobs.map((j) => j.ix.token));
  for (const r of report.requests) {
    if (r.route !== 'interaction-callback' || !r.token || !jobTokens.has(r.token)) continue;
    const ix = jobs.find((j) => j.ix.token === r.token)!.ix;
    callbackLatency.push(r.at - ix.createdAt);
    const received = receivedAt.get(r.token);
    if (received !== undefined) {
      gatewayLatency.push(received - ix.createdAt);
      handlerLatency.push(r.at - received);
    }
    const created = callbackCreatedAt.get(r.token);
    const sent = callbackSentAt.get(r.token);
    const asked = callbackAskedAt.get(r.token);
    if (received !== undefined && asked !== undefined && created !== undefined && sent !== undefined) {
      toAsked.push(asked - received);
      toCreated.push(created - asked);
      createdToSent.push(sent - created);
      sentToArrived.push(r.at - sent);
    }
    if (r.code === 10062) callbacksExpired++;
  }
  /** What else reached the fake from the first interaction sent to the last first answer: the wire's work the first answers met. */
  const burstStart = jobs[0]?.sentAt ?? started;
  const lastFirstAnswer = Math.max(...report.requests.filter((r) => r.route === 'interaction-callback' && r.token !== undefined && jobTokens.has(r.token)).map((r) => r.at));
  const otherDuringBurst = new Map<string, number>();
  for (const r of report.requests) {
    if (r.route === 'interaction-callback' || r.at < burstStart || r.at > lastFirstAnswer) continue;
    const key = `${r.method} ${r.route}${r.multipart ? ' (multipart)' : ''}`;
    otherDuringBurst.set(key, (otherDuringBurst.get(key) ?? 0) + 1);
  }
  const unanswered = jobs.filter((j) => !outcome(j.ix).acknowledged).length;
  const refused = report.rejectedByLimit;
  const retried429 = report.requests.filter((r) => r.status === 429).length;
  const kb = (n: number) => (Number.isFinite(n) ? `${(n / 1024).toFixed(0)} KB` : 'n/a');

  console.log(`discord-imagine: ${JOBS} concurrent /imagine jobs at ${SIZE}, ${PARTIAL_IMAGES} previews each, ${IMAGE_LATENCY_MS} ms per image, ${MAX_CONCURRENT_REQUESTS} requests at once upstream; light previews: ${LIGHT}${HOG ? '; a CPU hog beside the bot' : ''}${ACK_DEADLINE_MS !== 3000 ? `; first answers taken for ${ACK_DEADLINE_MS / 1000} s` : ''}`);
  console.log(`  fake Discord limit: ${EDITS_PER_WINDOW} edits per ${WINDOW_MS / 1000} s per interaction token (429 beyond)`);
  console.log(`  final images delivered:      ${finals} / ${JOBS}${timedOut ? ' (TIMED OUT)' : ''}`);
  console.log(`  refused at once, queue full:  ${refusedQueueFull}`);
  const ack = summary(callbackLatency);
  console.log(`  first answer (callback) after the interaction: median ${ms(ack.median)}, p99 ${ms(ack.p99)}, max ${ms(ack.max)} (n=${ack.n}); refused as too late (10062): ${callbacksExpired}; never acknowledged: ${unanswered}`);
  const gw = summary(gatewayLatency);
  const hl = summary(handlerLatency);
  console.log(`    of which: interaction → bot (gateway) median ${ms(gw.median)}, p99 ${ms(gw.p99)}; bot → first answer median ${ms(hl.median)}, p99 ${ms(hl.p99)}`);
  const [ta, tc, cs, sa] = [summary(toAsked), summary(toCreated), summary(createdToSent), summary(sentToArrived)];
  console.log(
    `    bot → first answer, split (n=${tc.n}): handler → discord.js asked median ${ms(ta.median)}, p99 ${ms(ta.p99)}; asked → request created median ${ms(tc.median)}, p99 ${ms(tc.p99)}; created → written on a connection median ${ms(cs.median)}, p99 ${ms(cs.p99)}; written → at the fake median ${ms(sa.median)}, p99 ${ms(sa.p99)}`,
  );
  console.log(
    `    first answers on the wire at once: at most ${callbacksInFlight.max}; until the last first answer (${ms(lastFirstAnswer - burstStart)} after the first interaction), other requests at the fake: ${[...otherDuringBurst].map(([k, n]) => `${n} ${k}`).join(', ') || 'none'}; image requests begun: ${imageRequestsAt.filter((at) => at <= lastFirstAnswer).length}`,
  );
  if (cpuAtLastAnswer) {
    const used = (cpuAtLastAnswer.user + cpuAtLastAnswer.system - cpuBefore.user - cpuBefore.system) / 1000;
    console.log(`    this process's CPU from the burst to the last first answer: ${used.toFixed(0)} ms (${((used / JOBS) * 1000).toFixed(0)} µs per interaction)`);
  }
  console.log(`  load average (1 min) at the burst: ${loadAtStart.toFixed(1)}; after the run: ${loadavg()[0]!.toFixed(1)}`);
  console.log(`  requests refused by the fake: ${refused} (429s of any kind: ${retried429})`);
  console.log(`  discord.js waited for a rate limit: ${waits.bucket}× per token (${ms(waits.bucketMs)} in all), ${waits.global}× its global cap (${ms(waits.globalMs)} in all)`);
  console.log(`  previews: ${streamedAt.size} streamed, ${sinkAt.size} handed to the surface`);
  for (const [light, half] of [...halves].sort(([a], [b]) => Number(b) - Number(a))) {
    const s2e = summary(half.streamToEdit);
    const k2e = summary(half.sinkToEdit);
    const total = summary(half.jobTimes);
    const edits = summary(half.editsPerJob);
    const pb = summary(half.previewBytes);
    const fb = summary(half.finalBytes);
    console.log(`  ${light ? 'light previews (re-encoded at display size)' : 'previews as sent (the partial PNGs)'}: ${half.jobs} jobs`);
    console.log(`    previews shown: ${half.previewsSent}; edits per job: median ${edits.median}, max ${edits.max}`);
    console.log(`    bytes uploaded per job: previews median ${kb(pb.median)} (max ${kb(pb.max)}), final image median ${kb(fb.median)}`);
    console.log(`    stream → edit: median ${ms(s2e.median)}, p99 ${ms(s2e.p99)}, max ${ms(s2e.max)} (n=${s2e.n})`);
    console.log(`    sink → edit:   median ${ms(k2e.median)}, p99 ${ms(k2e.p99)}, max ${ms(k2e.max)} (n=${k2e.n})`);
    console.log(`    command → final image: median ${ms(total.median)}, p99 ${ms(total.p99)}`);
  }
  console.log(`  this process (${HERE}): CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms; event-loop delay median ${ms(loopDelay.percentile(50) / 1e6)}, p99 ${ms(loopDelay.percentile(99) / 1e6)}, max ${ms(loopDelay.max / 1e6)}`);
  if (report.fakeCpuMs !== undefined) console.log(`  the fake Discord (a process of its own): CPU ${report.fakeCpuMs.toFixed(0)} ms`);
  console.log(`  CPU per job: ${((cpu.user + cpu.system) / 1000 / JOBS).toFixed(1)} ms`);
  // The bot is still up, as a long-running one would be: what it keeps after a burst, not after shutting down.
  collectGarbage();
  await new Promise((r) => setTimeout(r, 1000));
  collectGarbage();
  const after = memoryNow();
  console.log(`  RSS (${HERE}): start ${mb(memoryAtStart.rss)}, peak ${mb(memoryPeak.rss)}, after the run ${mb(after.rss)} (of which JS heap used ${mb(after.heapUsed)}, buffers ${mb(after.arrayBuffers)}); the fake holds ${mb(fakeHeldBytes)} of files it was sent`);
  const allocatorEnv = ['LD_PRELOAD', 'MALLOC_ARENA_MAX', 'MALLOC_CONF'].filter((name) => process.env[name] !== undefined).map((name) => `${name}=${process.env[name]}`);
  console.log(`  memory, start / peak / after the run and a GC:${allocatorEnv.length ? ` (${allocatorEnv.join(' ')})` : ''}`);
  for (const key of MEMORY_KINDS) console.log(`    ${MEMORY_LABELS[key].padEnd(14)} ${mb(memoryAtStart[key])} / ${mb(memoryPeak[key])} / ${mb(after[key])}`);
  console.log(`  wall time: ${((Date.now() - started) / 1000).toFixed(1)} s`);

  if (consoleRun) console.log(`  console: ${await consoleRun.stop()}`);
  await runners.light.shutdown({ graceMs: 0 });
  await runners.raw.shutdown({ graceMs: 0 });
  await bot.stop();
  await state.close();
  await store.close();
  await discord.close();
  await emulator.close();
  await rm(dataDir, { recursive: true, force: true });
  await hog?.stop();
  if (timedOut || finals + refusedQueueFull !== JOBS || unanswered !== 0 || refused !== 0) process.exitCode = 1;
}

interface SeriesRow {
  variant: string;
  jobs: number;
  exitCode: number | null;
  finals?: number;
  refused?: number;
  tooLate?: number;
  firstAnswer?: { median: number; p99: number };
  cpuPerJobMs?: number;
  rss?: { start: number; peak: number; after: number };
}

/** The numbers a run prints (this checkout's bench or an older one's: the same lines). */
function parseRun(output: string): Omit<SeriesRow, 'variant' | 'jobs' | 'exitCode'> {
  const num = (re: RegExp, group = 1) => {
    const m = re.exec(output);
    return m ? Number(m[group]) : undefined;
  };
  const answer = /first answer \(callback\) after the interaction: median (\d+) ms, p99 (\d+) ms/.exec(output);
  const rss = /RSS \(bot(?: \+ fake Discord)?\): start (\d+) MB, peak (\d+) MB, after the run (\d+) MB/.exec(output);
  return {
    finals: num(/final images delivered:\s+(\d+) \//),
    refused: num(/refused at once, queue full:\s+(\d+)/),
    tooLate: num(/refused as too late \(10062\): (\d+)/),
    firstAnswer: answer ? { median: Number(answer[1]), p99: Number(answer[2]) } : undefined,
    cpuPerJobMs: num(/CPU per job: ([\d.]+) ms/),
    rss: rss ? { start: Number(rss[1]), peak: Number(rss[2]), after: Number(rss[3]) } : undefined,
  };
}

/** The command line without `--jobs` and the series' own flags (each child gets one count). */
function argsForChild(): string[] {
  const own = new Set(['--jobs', '--compare-with', '--compare-env']);
  const args = process.argv.slice(2);
  const kept: string[] = [];
  for (let i = 0; i < args.length; i++) {
    // The series runs the hog itself, from its first run to its last.
    if (args[i] === '--hog') continue;
    if (own.has(args[i]!)) i++;
    else kept.push(args[i]!);
  }
  return kept;
}

async function runChild(dir: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ output: string; exitCode: number | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(dir, 'bench/discord-imagine.ts'), ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    process.stdout.write(chunk);
  });
  const exitCode = await new Promise<number | null>((done) => child.on('exit', done));
  return { output, exitCode };
}

/** Every count of `--jobs` (and each variant to compare) in a process of its own, then one table side by side. */
async function runSeries(): Promise<void> {
  const variants = [
    { name: 'this checkout', dir: REPO_ROOT, env: process.env },
    ...(COMPARE_WITH ? [{ name: `other (${COMPARE_WITH})`, dir: resolve(COMPARE_WITH), env: process.env }] : []),
    ...COMPARE_ENVS.map((vars) => ({
      name: `this checkout, ${vars}`,
      dir: REPO_ROOT,
      env: { ...process.env, ...Object.fromEntries(vars.split(/\s+/).map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)])) },
    })),
  ];
  const rows: SeriesRow[] = [];
  const hog = HOG ? startHog() : undefined;
  for (const [round, jobs] of JOB_COUNTS.entries()) {
    // Which variant goes first rotates from one count to the next.
    const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
    for (const variant of order) {
      console.log(`\n=== ${variant.name}: ${jobs} jobs ===`);
      const { output, exitCode } = await runChild(variant.dir, [...argsForChild(), '--jobs', String(jobs)], variant.env);
      rows.push({ variant: variant.name, jobs, exitCode, ...parseRun(output) });
    }
  }
  await hog?.stop();
  const n = (v: number | undefined, unit = '') => (v === undefined ? 'n/a' : `${v}${unit}`);
  console.log(`\ndiscord-imagine series: ${argsForChild().join(' ')}${HOG ? ' (a CPU hog beside every run)' : ''}`);
  console.log('| variant | jobs | finals | refused at once | too late (10062) | first answer median / p99 | CPU per job | ÷ first count | RSS start / peak / after |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const row of rows) {
    const base = rows.find((r) => r.variant === row.variant)!.cpuPerJobMs;
    const ratio = row.cpuPerJobMs !== undefined && base ? (row.cpuPerJobMs / base).toFixed(2) : 'n/a';
    const answer = row.firstAnswer ? `${row.firstAnswer.median} ms / ${row.firstAnswer.p99} ms` : 'n/a';
    const rss = row.rss ? `${row.rss.start} / ${row.rss.peak} / ${row.rss.after} MB` : 'n/a';
    console.log(`| ${row.variant} | ${row.jobs} | ${n(row.finals)} | ${n(row.refused)} | ${n(row.tooLate)} | ${answer} | ${n(row.cpuPerJobMs, ' ms')} | ${ratio} | ${rss} |`);
  }
  if (rows.some((r) => r.exitCode !== 0)) process.exitCode = 1;
}

if (SERIES) await runSeries();
else await runOnce();
