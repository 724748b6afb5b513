/**
 * Forgetting a member's prompts on the Redis ledger, and reading the usage back, on a redis-server this script starts
 * on a free loopback port (from PATH; nothing persisted, removed at the end). Two streams of `--records` records of
 * `--members` members, each with a prompt, written directly:
 *
 * - `inside`: the prompt inside each entry, as versions before kept it — a forget rebuilds the stream in one script;
 * - `beside`: the prompt beside the stream (`prompts:<user>`), as kept now — a forget deletes the member's keys and
 *   reads only the entries written since the last look through the stream.
 *
 * Printed side by side: the first look through the stream (batches of 1 000), a forget of a member with a prompt (and
 * the worst PING answered meanwhile, a second connection pinging every 50 ms), a forget of a member with none, and
 * Redis's memory. Then a usage read of one member's records at `--one` and 4 × `--one` records: it grows as the
 * records do (4×); the join of prompts as it was (the member's id list copied per record) grew as their square (16×),
 * printed beside the join as it is now for the same ids. That row is a model of the old code, not the old code: its
 * id-list copy rewritten here alone (no Redis, no parsing), so it shows how that step grew, not what the old read took. The join as it was runs only up to 20,000 ids (the default
 * `--one`'s 4×, seconds): above, its square would take minutes to hours, and its cells say skipped.
 *
 * Usage: node --import tsx bench/redis-forget.ts [--records 50000] [--members 500] [--one 5000]
 */
import { parseArgs } from 'node:util';
import type { Redis } from 'ioredis';
import { connectRedis } from '../src/core/redis-connection.js';
import { RedisQuotaStore } from '../src/spend/RedisQuotaStore.js';
import { startThrowawayRedis } from '../test/setup/redis-server.js';
import { mb, ms, positiveInt, printTable, ratio, timed } from './helpers/measure.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '50000' }, members: { type: 'string', default: '500' }, one: { type: 'string', default: '5000' } } });
const records = Math.min(positiveInt('records', values.records), 1_000_000);
const members = Math.min(positiveInt('members', values.members), records);
const one = Math.min(positiveInt('one', values.one), 250_000);

/** The most ids the join as it was is run for: its time grows as their square. */
const OLD_JOIN_MAX_IDS = 20_000;
/** The old join's cells: its two times and their ratio, or skipped where it was not run. */
const oldJoin = (small: number, large: number): string[] =>
  [Number.isNaN(small) ? 'skipped' : ms(small), Number.isNaN(large) ? 'skipped' : ms(large), Number.isNaN(small) || Number.isNaN(large) ? 'skipped' : ratio(large, small)];

const job = (prompt?: string) => JSON.stringify({ operation: 'generate', n: 1, size: '1024x1024', quality: 'low', ...(prompt !== undefined && { prompt }) });
const record = (i: number, userKey: string, inside: boolean) =>
  JSON.stringify({
    jobId: `job-${i}`, time: Date.now(), day: '2030-01-02', month: '2030-01', userKey, scopeKey: 'discord:guild', nanos: 100_000_000, basis: 'table',
    ...(inside ? { job: job(`prompt number ${i} of ${userKey}`) } : { job: job(), prompted: 1 }),
  });

/** Writes `count` records (member `i % members`, or `only` for each) under `prefix`, prompts inside or beside the entries. */
async function fill(redis: Redis, prefix: string, count: number, inside: boolean, only?: string): Promise<void> {
  const usage = `${prefix}:quota:usage`;
  for (let start = 0; start < count; start += 1000) {
    const step = redis.pipeline();
    for (let i = start; i < Math.min(count, start + 1000); i++) {
      const userKey = only ?? `discord:member-${i % members}`;
      const id = `${1_800_000_000_000 + i}-0`;
      step.xadd(usage, id, 'r', record(i, userKey, inside));
      if (!inside) step.hset(`${prefix}:quota:prompts:${userKey}`, id, `prompt number ${i} of ${userKey}`).zadd(`${prefix}:quota:prompts-at:${userKey}`, 1_800_000_000_000 + i, id);
    }
    await step.exec();
  }
}

/** The worst time a PING took to be answered while `act` ran (one every 50 ms on its own connection). */
async function worstPing(url: string, act: () => Promise<void>): Promise<{ actMs: number; pingMs: number }> {
  const pinger = await connectRedis(url);
  let worst = 0;
  let running = true;
  const pinging = (async () => {
    while (running) {
      const start = performance.now();
      await pinger.ping().catch(() => undefined);
      worst = Math.max(worst, performance.now() - start);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const { wallMs } = await timed(act);
  running = false;
  await pinging;
  pinger.disconnect();
  return { actMs: wallMs, pingMs: worst };
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
}

const server = await startThrowawayRedis();
if (!server) throw new Error('redis-server is needed on PATH');
const redis = await connectRedis(server.url);
try {
  const rows: Record<'inside' | 'beside', string[]> = { inside: [], beside: [] };
  const numbers: Record<'inside' | 'beside', number[]> = { inside: [], beside: [] };
  for (const layout of ['inside', 'beside'] as const) {
    await redis.flushall();
    const before = await usedMemory(redis);
    await fill(redis, layout, records, layout === 'inside');
    const memory = (await usedMemory(redis)) - before;
    const store = new RedisQuotaStore({ redis, prefix: layout });
    const look = await timed(() => store.lookThroughOlderEntries());
    const forget = await worstPing(server.url, () => store.forgetPrompts('discord:member-1'));
    const none = await timed(() => store.forgetPrompts('discord:nobody'));
    numbers[layout] = [look.wallMs, forget.actMs, forget.pingMs, none.wallMs];
    rows[layout] = [layout === 'inside' ? 'prompts inside the entries (as versions before kept them)' : 'prompts beside the stream (now)', ms(look.wallMs), ms(forget.actMs), ms(forget.pingMs), ms(none.wallMs), mb(memory)];
    await store.close();
  }
  console.log(`\n${records} records of ${members} members, each with a prompt:\n`);
  printTable(['', 'first look through', 'forget, member with prompts', 'worst PING meanwhile', 'forget, member with none', 'memory'], [
    rows.inside,
    rows.beside,
    ['inside / beside', ...numbers.inside.slice(0, 4).map((n, i) => ratio(n, numbers.beside[i]!)), ''],
  ]);

  // One member's usage read: linear in its records.
  const reads: number[] = [];
  for (const count of [one, 4 * one]) {
    await redis.flushall();
    await fill(redis, 'one', count, false, 'discord:alice');
    const store = new RedisQuotaStore({ redis, prefix: 'one' });
    const read = await timed(() => store.usage({}));
    if (read.value.length !== count || read.value.some((r) => r.prompt === undefined)) throw new Error('the usage read lost records or prompts');
    reads.push(read.wallMs);
    await store.close();
  }
  // The join's list of one member's ids, as it was (copied per record) and as it is (pushed).
  const joins = [one, 4 * one].map((count) => {
    const ids = Array.from({ length: count }, (_, i) => `${i}-0`);
    const copied = performance.now();
    const before = new Map<string, string[]>();
    if (count <= OLD_JOIN_MAX_IDS) for (const id of ids) before.set('alice', [...(before.get('alice') ?? []), id]);
    const pushed = performance.now();
    const now = new Map<string, string[]>();
    for (const id of ids) {
      const list = now.get('alice');
      if (list) list.push(id);
      else now.set('alice', [id]);
    }
    return [count <= OLD_JOIN_MAX_IDS ? pushed - copied : Number.NaN, performance.now() - pushed] as const;
  });
  console.log(`\nOne member's usage read (\`usage({})\`), ${one} and ${4 * one} records. The join "as it was" is a model of the old code (its id-list copy rewritten here alone), not the old code run:\n`);
  printTable(['', `${one} records`, `${4 * one} records`, 'ratio (4× the records)'], [
    ['usage read, now', ms(reads[0]!), ms(reads[1]!), ratio(reads[1]!, reads[0]!)],
    ['join of prompts, as it was: a model (id list copied per record)', ...oldJoin(joins[0]![0], joins[1]![0])],
    ['join of prompts, now (pushed)', ms(joins[0]![1]), ms(joins[1]![1]), ratio(joins[1]![1], joins[0]![1])],
  ]);
} finally {
  redis.disconnect();
  await server.stop();
}
