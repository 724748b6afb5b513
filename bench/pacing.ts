/**
 * Pacing at the account's limit: how much of what the service allows each
 * surface's way to the service uses, at 6, 20 and 120 images per minute, side
 * by side in one run, and how many 429s the service answered.
 *
 * - The service is emulated in a child process (this script with `--child`):
 *   one emulator, so one account, per tier and contender, each enforcing the
 *   tier with its own token bucket (full at the start, refilled continuously,
 *   counting a request when it arrives) and answering after `--latency` ms
 *   (default 300). Rendering the images there keeps it off the clients' event
 *   loop.
 * - Every contender at every tier runs at once (one run of about `--seconds`,
 *   not one after another): each queues `ipm × (1 + seconds / 60)` one-image
 *   requests at once, through a real PictorClient:
 *     CLI      `createImageLimiter({ imagesPerMinute })` and
 *              `client.generate` — what `pictor` builds through src/connect.ts;
 *     runner   the bots' JobRunner (`submit`, streamed, file ledger in a
 *              temporary directory) over the same limiter — what `npm start`
 *              runs for Discord and Slack;
 *     n8n node the node's limiter registry (`limiterFor`) and `generate`, as
 *              a workflow execution gets them;
 *     2 × redis two limiters sharing one Redis prefix (two processes, or n8n
 *              main + worker, or bot replicas), requests split between them —
 *              only with PICTOR_BENCH_REDIS_URL or PICTOR_TEST_REDIS_URL.
 * - `allowed` is when the last image may be answered at the earliest: the
 *   bucket starts full (ipm images at once), then one image every 60/ipm s, so
 *   the last one leaves at `seconds` and is answered one latency later.
 *   `allowed / took` is the share of the service's pace achieved (1.00 is the
 *   service's own limit; goal ≥ 0.95 with zero 429s).
 *
 * Usage: node --import tsx bench/pacing.ts [--tiers 6,20,120] [--seconds 30] [--latency 300]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FileQuotaStore, JobRunner } from '../bots/runner/index.js';
import { limiterFor } from '../nodes/nodes/PictorImage/limiter-registry.js';
import { PictorClient } from '../src/client/PictorClient.js';
import type { ImageLimiter } from '../src/core/image-limiter.js';
import { createImageLimiter } from '../src/core/shared-limiter.js';
import { createEmulator, DEV_API_KEY, type Emulator } from '../src/emulator/index.js';
import { printTable } from './helpers/measure.js';

type ToChild = { type: 'start'; accounts: { imagesPerMinute: number; latencyMs: number }[] } | { type: 'stats' };
type FromChild = { type: 'urls'; urls: string[] } | { type: 'stats'; rateLimited: number[] };

const SELF = fileURLToPath(import.meta.url);
/** One prompt for every request: the emulator renders it once and serves the rest from its cache, so rendering does not load the machine. */
const PROMPT = 'a lighthouse at the account limit';

/** The emulated service: one emulator per account, stats on request, gone when the parent is. */
function child(): void {
  const emulators: Emulator[] = [];
  process.on('message', (message: ToChild) => {
    void (async () => {
      if (message.type === 'start') {
        const urls: string[] = [];
        for (const options of message.accounts) {
          const emulator = createEmulator(options);
          emulators.push(emulator);
          urls.push((await emulator.listen({ port: 0, host: '127.0.0.1' })).url);
        }
        process.send!({ type: 'urls', urls } satisfies FromChild);
      } else {
        process.send!({ type: 'stats', rateLimited: emulators.map((e) => e.stats().rateLimited) } satisfies FromChild);
      }
    })();
  });
  process.on('disconnect', () => process.exit(0));
}

function ask(proc: ChildProcess, message: ToChild): Promise<FromChild> {
  return new Promise((resolve) => {
    proc.once('message', (reply: FromChild) => resolve(reply));
    proc.send(message);
  });
}

interface Contender {
  name: string;
  /**
   * Sends `total` one-image requests at once to `baseURL` and waits for every one to settle: how many
   * failed, and the seconds from queuing them to the last one settling (set-up and clean-up left out).
   */
  run(ipm: number, baseURL: string, total: number): Promise<Outcome>;
}

interface Outcome {
  failed: number;
  took: number;
}

/** Runs `total` requests at once; the time is from the start to the last one settling. */
async function timeAll(total: number, request: (i: number) => Promise<unknown>): Promise<Outcome> {
  const t0 = performance.now();
  let last = t0;
  const results = await Promise.allSettled(Array.from({ length: total }, (_, i) => request(i).finally(() => (last = Math.max(last, performance.now())))));
  return { failed: results.filter((r) => r.status === 'rejected').length, took: (last - t0) / 1000 };
}

async function throughClients(limiters: ImageLimiter[], baseURL: string, total: number): Promise<Outcome> {
  const clients = limiters.map((limiter) => new PictorClient({ apiKey: DEV_API_KEY, baseURL, limiter, maxRetries: 5 }));
  try {
    return await timeAll(total, (i) => clients[i % clients.length]!.generate({ prompt: PROMPT, size: '1024x1024', quality: 'low' }));
  } finally {
    await Promise.all(limiters.map((l) => l.stop()));
  }
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      tiers: { type: 'string', default: '6,20,120' },
      seconds: { type: 'string', default: '30' },
      latency: { type: 'string', default: '300' },
    },
  });
  const tiers = args.tiers.split(',').map(Number);
  const seconds = Number(args.seconds);
  const latencyMs = Number(args.latency);
  const redisUrl = process.env.PICTOR_BENCH_REDIS_URL || process.env.PICTOR_TEST_REDIS_URL;

  const contenders: Contender[] = [
    { name: 'CLI (client + limiter)', run: async (ipm, baseURL, total) => throughClients([await createImageLimiter({ imagesPerMinute: ipm, maxConcurrent: 100 })], baseURL, total) },
    {
      name: 'bots (JobRunner)',
      run: async (ipm, baseURL, total) => {
        const dir = await mkdtemp(join(tmpdir(), 'pictor-pacing-'));
        const limiter = await createImageLimiter({ imagesPerMinute: ipm, maxConcurrent: 100 });
        const client = new PictorClient({ apiKey: DEV_API_KEY, baseURL, limiter, maxRetries: 5 });
        const runner = new JobRunner({ client, store: new FileQuotaStore({ dir }), limits: {}, partialImages: 0, maxQueuedJobs: total + 1 });
        try {
          return await timeAll(total, async (i) => {
            const requester = { platform: 'slack' as const, userId: `U${i}`, channelId: `C${i % 5}`, scopeId: 'T1' };
            const handle = await runner.submit({ kind: 'generate', prompt: PROMPT, options: { size: '1024x1024', quality: 'low' }, requester }, () => undefined);
            const final = await handle.done;
            if (final.type !== 'completed') throw new Error(`job ${final.type}`);
          });
        } finally {
          await runner.shutdown();
          await limiter.stop();
          await rm(dir, { recursive: true, force: true });
        }
      },
    },
    {
      name: 'n8n node',
      run: async (ipm, baseURL, total) =>
        throughClients([await limiterFor({ apiKey: `bench-${ipm}-${Math.random()}`, baseURL, imagesPerMinute: ipm, maxConcurrent: 100 })], baseURL, total),
    },
  ];
  if (redisUrl) {
    contenders.push({
      name: '2 × redis (shared)',
      run: async (ipm, baseURL, total) => {
        const redis = { url: redisUrl, prefix: `pictor-bench-pacing-${process.pid}-${ipm}-${Date.now()}` };
        return throughClients(
          [await createImageLimiter({ imagesPerMinute: ipm, maxConcurrent: 50, redis }), await createImageLimiter({ imagesPerMinute: ipm, maxConcurrent: 50, redis })],
          baseURL,
          total,
        );
      },
    });
  }

  const cells = tiers.flatMap((ipm) => contenders.map((contender) => ({ ipm, contender })));
  const service = fork(SELF, ['--child'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const started = await ask(service, { type: 'start', accounts: cells.map(({ ipm }) => ({ imagesPerMinute: ipm, latencyMs })) });
  if (started.type !== 'urls') throw new Error('the emulator child did not start');

  console.log(
    `Pacing: ipm × ${(1 + seconds / 60).toFixed(2)} one-image requests queued at once per account, ${cells.length} accounts at once, ` +
      `emulator latency ${latencyMs} ms${redisUrl ? '' : ' (no Redis: the shared row is left out)'}`,
  );
  const wall = performance.now();
  const measured = await Promise.all(
    cells.map(async ({ ipm, contender }, i) => {
      const total = Math.round(ipm * (1 + seconds / 60));
      return { ipm, name: contender.name, total, ...(await contender.run(ipm, started.urls[i]!, total)) };
    }),
  );
  const stats = await ask(service, { type: 'stats' });
  service.disconnect();
  if (stats.type !== 'stats') throw new Error('the emulator child did not answer');

  const allowed = seconds + latencyMs / 1000;
  const rows = measured.map((m, i) => [String(m.ipm), m.name, String(m.total), m.took.toFixed(1), allowed.toFixed(1), (allowed / m.took).toFixed(3), String(stats.rateLimited[i]), String(m.failed)]);
  printTable(['ipm', 'path', 'images', 'took s', 'allowed s', 'allowed / took', '429s', 'failed'], rows);
  console.log(`wall ${((performance.now() - wall) / 1000).toFixed(1)} s`);
  process.exit(0);
}

if (process.argv[2] === '--child') child();
else await main();
