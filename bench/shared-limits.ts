/**
 * Shared limits through Redis: how close 1, 2 and 4 processes sharing one
 * account (one `REDIS_URL` + prefix) get to the account's images-per-minute
 * limit together, without going over it.
 *
 * - One emulator in this process enforces `--ipm` images per minute with its
 *   own token bucket (full at the start, refilled continuously), and answers
 *   each request after `latencyMs` 100.
 * - Each process is a child (this script with `--child`) that makes its
 *   limiter with `createImageLimiter({ redis })` and sends its jobs through a
 *   real PictorClient; jobs ask for n = 1, 2, 3, 1, 2, 3, … images, and there
 *   are about 1.5 times as many images as the window allows, split between the
 *   processes, all queued at once.
 * - For `--seconds` after the start, images the emulator accepted are counted
 *   (the processes run on 2 s more, so requests near the end get their answer).
 *   `allowed` is what its bucket lets through in that window (one full bucket
 *   plus the refill); `achieved / allowed` is the share used (goal ≥ 0.95).
 *   `second half / limit` is the rate in the window's second half (after the
 *   initial burst of a full bucket) against the limit itself.
 *   429s are the emulator's own count (the clients would retry them).
 *
 * Needs a Redis: PICTOR_BENCH_REDIS_URL or PICTOR_TEST_REDIS_URL (skipped,
 * saying so, when neither is set).
 *
 * Usage: node --import tsx bench/shared-limits.ts [--ipm 120] [--seconds 30] [--processes 1,2,4]
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PictorClient } from '../src/client/PictorClient.js';
import { connectRedis } from '../src/core/redis-connection.js';
import { createImageLimiter } from '../src/core/shared-limiter.js';
import { createEmulator, DEV_API_KEY } from '../src/emulator/index.js';
import { printTable } from './helpers/measure.js';

interface ChildConfig {
  redisUrl: string;
  prefix: string;
  baseURL: string;
  imagesPerMinute: number;
  maxConcurrent: number;
}
type ToChild = { type: 'run'; sizes: number[] } | { type: 'stop' };
type FromChild = { type: 'ready' } | { type: 'fatal'; message: string } | { type: 'counts'; done: number; failed: number; retried429: number };

const SELF = fileURLToPath(import.meta.url);
const LATENCY_MS = 100;
const MAX_CONCURRENT = 8;
const ANSWER_GRACE_MS = 2000;

if (process.argv[2] === '--child') await child(JSON.parse(process.argv[3]!) as ChildConfig);
else await main();

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      ipm: { type: 'string', default: '120' },
      seconds: { type: 'string', default: '30' },
      processes: { type: 'string', default: '1,2,4' },
    },
  });
  const ipm = positive('ipm', args.ipm);
  const seconds = positive('seconds', args.seconds);
  const counts = args.processes.split(',').map((p) => positive('processes', p));
  const redisUrl = process.env.PICTOR_BENCH_REDIS_URL || process.env.PICTOR_TEST_REDIS_URL;
  if (!redisUrl) {
    console.log('skipped: set PICTOR_BENCH_REDIS_URL (or PICTOR_TEST_REDIS_URL), e.g. redis://127.0.0.1:6390, to run the shared-limits benchmark');
    return;
  }

  const emulator = createEmulator({ imagesPerMinute: ipm, latencyMs: LATENCY_MS, maxRecordedRequests: 20_000 });
  const server = await emulator.listen({ port: 0, host: '127.0.0.1' });
  const windowMs = seconds * 1000;
  const allowed = ipm + (ipm * windowMs) / 60_000;
  const steadyFromMs = windowMs / 2;
  const steadyAllowed = (ipm * (windowMs - steadyFromMs)) / 60_000;
  console.log(`Shared limits (Redis): ${ipm} images/min, ${seconds} s per run, ${MAX_CONCURRENT} requests at once per account, emulator latency ${LATENCY_MS} ms`);

  const rows: string[][] = [];
  try {
    for (const processes of counts) {
      emulator.reset();
      const prefix = `pictor-bench:${randomUUID().slice(0, 8)}`;
      const children = await startChildren(processes, { redisUrl, prefix, baseURL: server.url, imagesPerMinute: ipm, maxConcurrent: MAX_CONCURRENT });
      const wanted = Math.ceil((1.5 * allowed) / processes);
      const start = Date.now();
      for (const c of children) c.send({ type: 'run', sizes: jobSizes(wanted) });
      // Run on a little past the window, so what arrived inside it has its answer before the children stop.
      await new Promise((resolve) => setTimeout(resolve, windowMs + ANSWER_GRACE_MS));
      const results = await Promise.all(children.map((c) => c.stop()));
      await deleteKeys(redisUrl, prefix);

      const accepted = emulator.requests.filter((r) => r.status === 200 && r.receivedAt <= start + windowMs);
      const images = sum(accepted.map((r) => Number(r.parsed?.n ?? 1)));
      const steady = sum(accepted.filter((r) => r.receivedAt > start + steadyFromMs).map((r) => Number(r.parsed?.n ?? 1)));
      rows.push([
        String(processes),
        String(images),
        allowed.toFixed(0),
        (images / allowed).toFixed(3),
        (steady / steadyAllowed).toFixed(3),
        String(emulator.stats().rateLimited),
        String(sum(results.map((r) => r.retried429))),
        String(sum(results.map((r) => r.failed))),
      ]);
    }
  } finally {
    await server.close();
  }
  printTable(['processes', 'images accepted', 'allowed', 'achieved / allowed', 'second half / limit', 'emulator 429s', 'client retries after 429', 'failed jobs'], rows);
}

/** n = 1, 2, 3, 1, 2, 3, … adding up to at least `images`. */
function jobSizes(images: number): number[] {
  const sizes: number[] = [];
  for (let total = 0; total < images; total += sizes.at(-1)!) sizes.push((sizes.length % 3) + 1);
  return sizes;
}

interface RunningChild {
  send(message: ToChild): void;
  stop(): Promise<{ done: number; failed: number; retried429: number }>;
}

async function startChildren(count: number, config: ChildConfig): Promise<RunningChild[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const proc = fork(SELF, ['--child', JSON.stringify(config)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      const next = (type: FromChild['type']) =>
        new Promise<FromChild>((resolve, reject) => {
          const onMessage = (m: FromChild) => {
            if (m.type === 'fatal') reject(new Error(m.message));
            else if (m.type === type) resolve(m);
          };
          proc.on('message', onMessage);
          proc.once('exit', (code) => reject(new Error(`a child exited (${String(code)}) before "${type}"`)));
        });
      await next('ready');
      return {
        send: (message: ToChild) => proc.send(message),
        async stop() {
          const counts = next('counts');
          proc.send({ type: 'stop' } satisfies ToChild);
          const result = (await counts) as Extract<FromChild, { type: 'counts' }>;
          await new Promise((resolve) => (proc.exitCode !== null ? resolve(undefined) : proc.once('exit', resolve)));
          return result;
        },
      };
    }),
  );
}

async function child(config: ChildConfig): Promise<void> {
  const send = (message: FromChild) => process.send?.(message);
  const limiter = await createImageLimiter({
    imagesPerMinute: config.imagesPerMinute,
    maxConcurrent: config.maxConcurrent,
    redis: { url: config.redisUrl, prefix: config.prefix },
  }).catch((error: unknown) => {
    send({ type: 'fatal', message: (error as Error).message });
    process.exit(1);
  });
  const client = new PictorClient({ baseURL: config.baseURL, apiKey: DEV_API_KEY, limiter, maxRetries: 4 });
  const controller = new AbortController();
  // One signal cancels every job of this process when the run ends.
  setMaxListeners(0, controller.signal);
  const counts = { done: 0, failed: 0, retried429: 0 };
  process.on('message', (message: ToChild) => {
    if (message.type === 'run') {
      for (const n of message.sizes) {
        client
          .generate(
            { prompt: 'a lighthouse at dusk', n, size: '1024x1024', quality: 'low' },
            { signal: controller.signal, onRetry: ({ error }) => void (error.code === 'rate_limited' && counts.retried429++) },
          )
          .then(
            () => void counts.done++,
            (error: unknown) => void ((error as { code?: string }).code !== 'aborted' && counts.failed++),
          );
      }
    } else {
      controller.abort();
      send({ type: 'counts', ...counts });
      void limiter.stop().finally(() => process.exit(0));
    }
  });
  send({ type: 'ready' });
}

async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis = await connectRedis(url);
  try {
    for (const pattern of [`${prefix}:*`, `b_${prefix}:*`]) {
      const keys = await redis.keys(pattern);
      if (keys.length > 0) await redis.del(...keys);
    }
  } finally {
    redis.disconnect();
  }
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function positive(name: string, value: string): number {
  const n = Number(value);
  if (!(Number.isFinite(n) && n > 0)) throw new Error(`--${name} must be a number above 0, got ${JSON.stringify(value)}`);
  return n;
}
