/**
 * The spend guard's own cost: reserve + settle per job, 50 jobs, measured
 * side by side in one run (round-robin, several rounds, medians):
 *
 * - `file, one at a time`: the file ledger with each job awaited before the
 *   next — one locked read-modify-write and one fsync per step, what every
 *   submit paid before group commit;
 * - `file, 50 concurrent`: the same 50 jobs submitted at once — changes that
 *   arrive while the ledger is busy are committed together (group commit: one
 *   write, one fsync, answered only after it);
 * - `redis, 50 concurrent`: the Redis ledger (one Lua script per step), when
 *   PICTOR_BENCH_REDIS_URL or PICTOR_TEST_REDIS_URL is set.
 *
 * Usage: node --import tsx bench/spend-guard.ts [--jobs 50] [--rounds 5]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { connectRedis } from '../src/core/redis-connection.js';
import { FileQuotaStore } from '../src/spend/FileQuotaStore.js';
import { RedisQuotaStore } from '../src/spend/RedisQuotaStore.js';
import type { QuotaStore } from '../src/spend/types.js';
import { median, ms, printTable, ratio } from './helpers/measure.js';

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '50' }, rounds: { type: 'string', default: '5' } } });
const jobs = Number(values.jobs);
const rounds = Number(values.rounds);
const redisUrl = process.env.PICTOR_BENCH_REDIS_URL ?? process.env.PICTOR_TEST_REDIS_URL;

let seq = 0;
async function job(store: QuotaStore): Promise<void> {
  const jobId = `bench-${seq++}`;
  const result = await store.reserve({ jobId, userKey: `u${seq % 7}`, scopeKey: 'g', estimateUsd: 0.05, limits: { accountDailyUsd: 1e6 }, now: Date.now() });
  if (!result.ok) throw new Error('refused');
  await store.markSent(jobId);
  await store.settle(jobId, 0.04);
}

const variants: { name: string; open: () => Promise<{ store: QuotaStore; done: () => Promise<void> }>; run: (s: QuotaStore) => Promise<void> }[] = [
  {
    name: 'file, one at a time',
    open: fileStore,
    run: async (s) => {
      for (let i = 0; i < jobs; i++) await job(s);
    },
  },
  { name: 'file, 50 concurrent', open: fileStore, run: (s) => Promise.all(Array.from({ length: jobs }, () => job(s))).then(() => undefined) },
];
const prefix = `pictor-bench:spend:${randomUUID().slice(0, 8)}`;
if (redisUrl) {
  variants.push({
    name: 'redis, 50 concurrent',
    open: async () => {
      const store = await RedisQuotaStore.connect({ url: redisUrl, prefix });
      return { store, done: () => store.close() };
    },
    run: (s) => Promise.all(Array.from({ length: jobs }, () => job(s))).then(() => undefined),
  });
} else {
  console.log('(no PICTOR_BENCH_REDIS_URL / PICTOR_TEST_REDIS_URL: the Redis ledger is skipped)');
}

async function fileStore() {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-bench-ledger-'));
  const store = new FileQuotaStore({ dir });
  return { store, done: async () => (await store.close(), await rm(dir, { recursive: true, force: true })) };
}

const times = new Map<string, number[]>(variants.map((v) => [v.name, []]));
for (let round = 0; round < rounds + 1; round++) {
  const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
  for (const variant of order) {
    const { store, done } = await variant.open();
    const started = performance.now();
    await variant.run(store);
    const elapsed = performance.now() - started;
    await done();
    if (round > 0) times.get(variant.name)!.push(elapsed); // round 0 warms up
  }
}

if (redisUrl) {
  const redis = await connectRedis(redisUrl);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
}

const base = median(times.get('file, one at a time')!);
console.log(`\nSpend guard: ${jobs} jobs, each reserve + markSent + settle; median of ${rounds} rounds`);
printTable(
  ['ledger', 'all jobs', 'per job', 'vs file one at a time'],
  variants.map((v) => {
    const m = median(times.get(v.name)!);
    return [v.name, ms(m), ms(m / jobs), ratio(m, base)];
  }),
);
