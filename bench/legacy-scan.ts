/**
 * What a start pays on Redis to take what a 0.1 process left in the ledger (docs/shared-limits.md, "Upgrading from
 * 0.1"): `RedisQuotaStore.takeLegacy` looks with one SCAN matching `<p>:quota:se*`, and a SCAN walks every key of the
 * Redis whatever it matches, so its time grows with the size of the Redis, not with what it finds.
 *
 * One throwaway redis-server per `--keys` count (from PATH, on a free loopback port, nothing persisted, each in its own
 * process), all running at once: each filled (pipelined) with that many unrelated keys (`other:<i>`, short strings).
 * Each round plants a few 0.1-layout records in each Redis (`--scopes` `<p>:quota:settings:<scope>` hashes of two
 * settings and `--seen` `<p>:quota:seen:<id>` keys, for the account's ledger `pictor` and an emulator's
 * `pictor:emulator`), then times, in every Redis in turn (the order rotating each round), a take of the account's
 * ledger with an accept that takes everything, then the emulator's (a start with an emulator's ledger beside the
 * account's takes both); each take is checked to have found and deleted what was planted. Printed: median of
 * `--rounds` rounds (after one warm-up round) per count, the IQR/median, the ratio to the first count (default 0 keys),
 * and the time per 100,000 keys, plus the load average.
 *
 * Usage: node --import tsx bench/legacy-scan.ts [--keys 0,100000,1000000] [--rounds 7] [--scopes 5] [--seen 20]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import { connectRedis } from '../src/core/redis-connection.js';
import { RedisQuotaStore } from '../src/spend/RedisQuotaStore.js';
import { startThrowawayRedis, type ThrowawayRedis } from '../test/setup/redis-server.js';
import { median, ms, positiveInt, printTable, ratio, relativeIqr, timed } from './helpers/measure.js';

const { values } = parseArgs({
  options: {
    keys: { type: 'string', default: '0,100000,1000000' },
    rounds: { type: 'string', default: '7' },
    scopes: { type: 'string', default: '5' },
    seen: { type: 'string', default: '20' },
  },
});
const counts = values.keys.split(',').map((text) => {
  const n = Number(text.trim());
  if (!Number.isInteger(n) || n < 0 || n > 5_000_000) throw new RangeError(`--keys takes whole numbers from 0 to 5000000, comma-separated; got ${JSON.stringify(values.keys)}`);
  return n;
});
const rounds = positiveInt('rounds', values.rounds);
const scopes = positiveInt('scopes', values.scopes);
const seen = positiveInt('seen', values.seen);
const LEDGERS = ['pictor', 'pictor:emulator'] as const;
const FILL_BATCH = 10_000;

/** `count` unrelated keys, pipelined. */
async function fill(redis: Redis, count: number): Promise<void> {
  for (let start = 0; start < count; start += FILL_BATCH) {
    const step = redis.pipeline();
    for (let i = start; i < Math.min(count, start + FILL_BATCH); i++) step.set(`other:${i}`, 'x');
    await step.exec();
  }
}

/** What a 0.1 process left under `prefix`: `scopes` settings hashes and `seen` signatures. */
async function plant(redis: Redis, prefix: string): Promise<void> {
  const step = redis.pipeline();
  for (let s = 0; s < scopes; s++) {
    const entry = (value: unknown) => JSON.stringify({ value, by: 'admin', at: 1_700_000_000_000 + s });
    step.hset(`${prefix}:quota:settings:discord:guild-${s}`, 'maxImages', entry(4), 'defaultQuality', entry('low'));
  }
  for (let i = 0; i < seen; i++) step.set(`${prefix}:quota:seen:sig-${i}`, '1', 'PX', 600_000);
  await step.exec();
}

/** One take of `prefix`'s ledger, everything accepted; throws unless it found and deleted what `plant` left. */
async function take(redis: Redis, prefix: string): Promise<number> {
  const store = new RedisQuotaStore({ redis, prefix });
  try {
    let found = { settings: 0, seen: 0 };
    const { wallMs } = await timed(() => store.takeLegacy(async (records) => {
      found = { settings: Object.keys(records.settings).length, seen: records.seen.length };
    }));
    if (found.settings !== scopes || found.seen !== seen) throw new Error(`the take of ${prefix} found ${found.settings} scopes and ${found.seen} signatures, not ${scopes} and ${seen}`);
    const left = await redis.keys(`${prefix}:quota:se*`);
    if (left.length > 0) throw new Error(`the take of ${prefix} left ${left.length} keys behind`);
    return wallMs;
  } finally {
    await store.close();
  }
}

const servers: { n: number; server: ThrowawayRedis; redis: Redis }[] = [];
try {
  for (const n of counts) {
    const server = await startThrowawayRedis();
    if (!server) throw new Error('redis-server is needed on PATH');
    const redis = await connectRedis(server.url);
    servers.push({ n, server, redis });
    const filled = await timed(() => fill(redis, n));
    console.log(`filled a Redis with ${n} keys in ${ms(filled.wallMs)} (dbsize ${await redis.dbsize()})`);
  }
  const version = /redis_version:(\S+)/.exec(await servers[0]!.redis.info('server'))?.[1] ?? '?';
  const loadAtStart = loadavg()[0]!;
  const times = servers.map(() => ({ account: [] as number[], both: [] as number[] }));
  for (let round = 0; round <= rounds; round++) {
    for (let k = 0; k < servers.length; k++) {
      const i = (k + round) % servers.length;
      const { redis } = servers[i]!;
      for (const prefix of LEDGERS) await plant(redis, prefix);
      const account = await take(redis, LEDGERS[0]);
      const emulator = await take(redis, LEDGERS[1]);
      if (round === 0) continue; // warm-up
      times[i]!.account.push(account);
      times[i]!.both.push(account + emulator);
    }
  }
  const base = times[0]!;
  const per100k = (n: number, value: number, baseValue: number) => (n === counts[0] ? '' : ms(((value - baseValue) / (n - counts[0]!)) * 100_000));
  console.log(`\nA take of the 0.1 layout (${scopes} settings hashes, ${seen} signatures a ledger) on Redis ${version} (loopback), medians of ${rounds} rounds:\n`);
  printTable(
    ['keys in the Redis', 'take, account ledger', 'IQR/median', `ratio to ${counts[0]} keys`, 'per 100,000 keys', 'take, account + emulator ledgers', `ratio to ${counts[0]} keys`],
    servers.map(({ n }, i) => {
      const account = median(times[i]!.account);
      const both = median(times[i]!.both);
      return [String(n), ms(account), `${(relativeIqr(times[i]!.account) * 100).toFixed(0)} %`, ratio(account, median(base.account)), per100k(n, account, median(base.account)), ms(both), ratio(both, median(base.both))];
    }),
  );
  console.log(`\nload average (1 min) at the first round: ${loadAtStart.toFixed(1)}; at the end: ${loadavg()[0]!.toFixed(1)}`);
} finally {
  for (const { redis, server } of servers) {
    redis.disconnect();
    await server.stop();
  }
}
