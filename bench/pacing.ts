/**
 * Pacing at the account's limit: how much of what the service allows each
 * surface's limiter uses, at 6, 20 and 120 images per minute, side by side in
 * one run, and how many 429s the service answered.
 *
 * - One emulator per tier enforces the tier with its own bucket (full at the
 *   start, refilled continuously, counting a request when it arrives), each
 *   request answered after `--latency` ms (default 300).
 * - Each contender gets a fresh account (`emulator.reset()` between runs, so
 *   the bucket starts full) and queues 2 × ipm one-image requests at once,
 *   through a real PictorClient:
 *     core     `createImageLimiter({ imagesPerMinute })` — what `pictor` and
 *              `npm start` (both bots) build through `src/connect.ts`;
 *     n8n      the n8n node's limiter registry (`limiterFor`), as a workflow
 *              execution gets it;
 *     2 × redis two limiters sharing one Redis prefix (two processes, or
 *              replicas of `npm start`), requests split between them — only
 *              with PICTOR_BENCH_REDIS_URL or PICTOR_TEST_REDIS_URL.
 * - `ideal` is when the last image may leave at the earliest: the bucket
 *   starts full (ipm images at once), then one image every 60/ipm s, so the
 *   2·ipm-th image at 60 s, plus one request's latency for its answer.
 *   `ideal / took` is the share of the allowed pace achieved (1.00 is the
 *   service's own limit; goal ≥ 0.95 with zero 429s).
 *
 * Usage: node --import tsx bench/pacing.ts [--tiers 6,20,120] [--latency 300]
 */
import { parseArgs } from 'node:util';
import { PictorClient } from '../src/client/PictorClient.js';
import type { ImageLimiter } from '../src/core/image-limiter.js';
import { createImageLimiter } from '../src/core/shared-limiter.js';
import { createEmulator, DEV_API_KEY } from '../src/emulator/index.js';
import { limiterFor } from '../nodes/nodes/PictorImage/limiter-registry.js';
import { printTable } from './helpers/measure.js';

const { values: args } = parseArgs({
  options: {
    tiers: { type: 'string', default: '6,20,120' },
    latency: { type: 'string', default: '300' },
  },
});
const tiers = args.tiers.split(',').map(Number);
const LATENCY_MS = Number(args.latency);
const redisUrl = process.env.PICTOR_BENCH_REDIS_URL || process.env.PICTOR_TEST_REDIS_URL;

interface Contender {
  name: string;
  limiters: (ipm: number) => Promise<ImageLimiter[]>;
}

const contenders: Contender[] = [
  { name: 'core (CLI, bots)', limiters: async (ipm) => [await createImageLimiter({ imagesPerMinute: ipm, maxConcurrent: 100 })] },
  {
    name: 'n8n node',
    limiters: async (ipm) => [await limiterFor({ apiKey: `bench-${ipm}-${Math.random()}`, baseURL: 'http://127.0.0.1', imagesPerMinute: ipm, maxConcurrent: 100 })],
  },
];
if (redisUrl) {
  contenders.push({
    name: '2 × redis',
    limiters: async (ipm) => {
      const redis = { url: redisUrl, prefix: `pictor-bench-pacing-${process.pid}-${ipm}-${Date.now()}` };
      return [await createImageLimiter({ imagesPerMinute: ipm, maxConcurrent: 50, redis }), await createImageLimiter({ imagesPerMinute: ipm, maxConcurrent: 50, redis })];
    },
  });
}

console.log(`Pacing: 2 × ipm one-image requests queued at once, emulator latency ${LATENCY_MS} ms${redisUrl ? '' : ' (no Redis: the shared row is left out)'}`);

const rows: string[][] = [];
await Promise.all(
  tiers.map(async (ipm) => {
    for (const contender of contenders) {
      const emulator = createEmulator({ imagesPerMinute: ipm, latencyMs: LATENCY_MS });
      const server = await emulator.listen({ port: 0, host: '127.0.0.1' });
      const limiters = await contender.limiters(ipm);
      const clients = limiters.map((limiter) => new PictorClient({ apiKey: DEV_API_KEY, baseURL: server.url, limiter, maxRetries: 5 }));
      const total = 2 * ipm;
      const started = performance.now();
      const results = await Promise.allSettled(
        Array.from({ length: total }, (_, i) => clients[i % clients.length]!.generate({ prompt: `pace ${i}`, size: '1024x1024', quality: 'low' })),
      );
      const took = (performance.now() - started) / 1000;
      const failed = results.filter((r) => r.status === 'rejected').length;
      const answered429 = emulator.stats().rateLimited;
      const ideal = 60 + LATENCY_MS / 1000;
      rows.push([String(ipm), contender.name, String(total), took.toFixed(1), ideal.toFixed(1), (ideal / took).toFixed(3), String(answered429), String(failed)]);
      await Promise.all(limiters.map((l) => l.stop()));
      await server.close();
    }
  }),
);
rows.sort((a, b) => Number(a[0]) - Number(b[0]) || a[1]!.localeCompare(b[1]!));
printTable(['ipm', 'limiter', 'images', 'took s', 'ideal s', 'ideal / took', '429s', 'failed'], rows);
process.exit(0);
