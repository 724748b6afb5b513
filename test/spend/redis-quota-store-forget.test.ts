import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import { LedgerLookFailedError } from '../../src/spend/errors.js';
import type { JobDetails } from '../../src/spend/types.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { deleteKeys, dumpKey, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { startThrowawayRedis } from '../setup/redis-server.js';
import { monitoredWords, redisMonitor } from '../helpers/redis-monitor.js';

const redis = testRedis();
/** 2030-01-02 10:00 UTC. */
const T = Date.UTC(2030, 0, 2, 10, 0, 0);
const job = (prompt?: string): JobDetails => ({ operation: 'generate', n: 1, size: '1024x1024', quality: 'low', ...(prompt !== undefined && { prompt }) });

/** Settles one job of `userKey` (with `prompt` kept in its record when given). */
async function settled(s: RedisQuotaStore, jobId: string, userKey: string, prompt?: string): Promise<void> {
  expect(await s.reserve({ jobId, userKey, scopeKey: 'discord:guild', estimateUsd: 0.2, limits: {}, now: T, job: job(prompt) })).toEqual({ ok: true });
  await s.markSent(jobId);
  await s.settle(jobId, 0.1, { outcome: 'completed', images: 1 });
}

/** An entry as versions before wrote it: the job's details, prompt included, inside the record. */
const legacy = (jobId: string, userKey: string, prompt?: string): string =>
  JSON.stringify({ jobId, time: T, day: '2030-01-02', month: '2030-01', userKey, scopeKey: 'discord:guild', nanos: 100_000_000, basis: 'table', job: JSON.stringify(job(prompt)) });

/** What a forget may run on the stream `usage`: reads of the entries after `last` (the last one looked through) alone. */
function onlyAfter(usage: string, last: string): unknown {
  return expect.toSatisfy((seen: string[]) => seen.every((c) => c.startsWith(`xrange ${usage} (${last} +`)));
}

/** Every value kept under `prefix`, as text (to look for a prompt anywhere). */
async function everything(client: Redis, prefix: string): Promise<string> {
  const keys = await client.keys(`${prefix}:*`);
  return JSON.stringify(await Promise.all(keys.map(async (key) => [key, await dumpKey(client, key)])));
}

/**
 * The commands Redis ran (scripts' too) on `key` while `act` ran, each as its words joined by spaces: MONITOR over a
 * socket of its own (`redisMonitor`), up to an ECHO sent after it.
 */
async function commandsOn(client: Redis, url: string, key: string, act: () => Promise<unknown>): Promise<string[]> {
  const cleanups: (() => Promise<void>)[] = [];
  const seen: string[] = [];
  const end = `end-${Math.random()}`;
  let ended!: () => void;
  const done = new Promise<void>((resolve) => (ended = resolve));
  try {
    await redisMonitor(url, (cleanup) => void cleanups.push(cleanup), (line) => {
      const words = monitoredWords(line);
      if (words[0] === 'echo' && words[1] === end) ended();
      else if (words.slice(1).includes(key)) seen.push(words.join(' '));
    });
    await act();
    await client.echo(end);
    await done;
    return seen;
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
}

describe.skipIf(redis.skipReason)(`forgetting prompts on the Redis ledger ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  let url: string;
  let client: Redis;
  const prefixes: string[] = [];
  const stores: RedisQuotaStore[] = [];

  beforeAll(async () => {
    url = requireRedisUrl(redis);
    client = await connectRedis(url);
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    client?.disconnect();
    if (url) for (const prefix of prefixes) await deleteKeys(url, prefix);
  });

  async function open(prefix = uniquePrefix('forget'), options: { clock?: () => number } = {}): Promise<RedisQuotaStore> {
    if (!prefixes.includes(prefix)) prefixes.push(prefix);
    const s = await RedisQuotaStore.connect({ url, prefix }, options);
    stores.push(s);
    return s;
  }

  it('forgets a member reading only the stream’s entries since its last look: prompts off, a member with none, and one with prompts kept', async () => {
    const s = await open();
    for (let i = 0; i < 5; i++) await settled(s, `quiet-${i}`, 'discord:alice');
    await settled(s, 'kept', 'discord:bob', 'a lighthouse');
    const usage = `${s.prefix}:quota:usage`;
    const last = (await client.xrevrange(usage, '+', '-', 'COUNT', 1))[0]![0];
    await s.lookThroughOlderEntries();
    expect(await commandsOn(client, url, usage, () => s.forgetPrompts('discord:alice'))).toEqual(onlyAfter(usage, last));
    expect(await commandsOn(client, url, usage, () => s.forgetPrompts('discord:nobody'))).toEqual(onlyAfter(usage, last));
    expect(await commandsOn(client, url, usage, () => s.forgetPrompts('discord:bob'))).toEqual(onlyAfter(usage, last));
    expect((await s.usage({})).map((r) => [r.jobId, r.costUsd, r.prompt])).toContainEqual(['kept', 0.1, undefined]);
  });

  /** The usage stream of `s`, and Alice's prompts and their index beside it. */
  const keptOf = (s: RedisQuotaStore) => ({
    usage: `${s.prefix}:quota:usage`,
    texts: `${s.prefix}:quota:prompts:discord:alice`,
    at: `${s.prefix}:quota:prompts-at:discord:alice`,
  });

  /** Adds Alice's record of `daysAgo` days ago (by the entry ids' clock, Redis's) with its prompt `text` kept beside it. */
  async function keep(s: RedisQuotaStore, daysAgo: number, text: string): Promise<string> {
    const { usage, texts, at } = keptOf(s);
    const record = { jobId: text, time: T, day: '2030-01-02', userKey: 'discord:alice', scopeKey: 'discord:guild', nanos: 1, basis: 'table', prompted: 1 };
    const id = (await client.xadd(usage, `${Date.now() - daysAgo * 86_400_000}-*`, 'r', JSON.stringify(record)))!;
    await client.hset(texts, id, text);
    await client.zadd(at, Number.parseInt(id, 10), id);
    return id;
  }

  it('keeps a prompt beside the usage stream, joined back by every read, and erases it with the member’s keys', async () => {
    const s = await open();
    await settled(s, 'fox', 'discord:alice', 'a red FOX');
    await settled(s, 'owl', 'discord:bob', 'a grey OWL');
    await settled(s, 'none', 'discord:alice');
    const entries = await client.xrange(`${s.prefix}:quota:usage`, '-', '+');
    expect(entries).toHaveLength(3);
    expect(JSON.stringify(entries)).not.toMatch(/FOX|OWL/);
    expect((await s.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([['fox', 'a red FOX'], ['owl', 'a grey OWL'], ['none', undefined]]);
    const read = await s.usageSince(undefined);
    expect(read.records.map((r) => r.prompt)).toEqual(['a red FOX', 'a grey OWL', undefined]);
    // An idle member's prompts go with the retention (400 days by default), as their records do.
    const ttl = await client.pttl(`${s.prefix}:quota:prompts:discord:alice`);
    expect(ttl).toBeGreaterThan(399 * 86_400_000);
    expect(ttl).toBeLessThanOrEqual(400 * 86_400_000);

    await s.forgetPrompts('discord:alice');
    const kept = await everything(client, s.prefix);
    expect(kept).not.toContain('FOX');
    expect(kept).toContain('OWL');
    expect(await client.xlen(`${s.prefix}:quota:usage`)).toBe(3);
    expect((await s.usage({})).map((r) => [r.jobId, r.costUsd, r.prompt])).toEqual([['fox', 0.1, undefined], ['owl', 0.1, 'a grey OWL'], ['none', 0.1, undefined]]);
    // A reader that kept the prompt reads everything again.
    expect((await s.usageSince(read.cursor)).reset).toBe(true);
  });

  it('drops a prompt in the same trim as its record, whoever settles next, so it never outlives the retention', async () => {
    const s = await open();
    const { usage, texts, at } = keptOf(s);
    // Alice's record and prompt of 401 days ago (the retention is 400), by the entry ids' clock, and one of a day ago.
    await keep(s, 401, 'an EXPIRED prompt');
    const recent = await keep(s, 1, 'a RECENT prompt');
    // Bob's job is the next record: the hourly trim drops Alice's old record, and its prompt with it.
    await settled(s, 'bob', 'discord:bob', 'a BOB prompt');
    expect(await client.hgetall(texts)).toEqual({ [recent]: 'a RECENT prompt' });
    expect(await client.zrange(at, 0, -1)).toEqual([recent]);
    expect((await client.xrange(usage, '-', '+')).map(([id]) => id)[0]).toBe(recent);
  });

  it('trims again at the first settle after its clock jumped a day ahead and was set back, so nothing outlives the retention by the jump', async () => {
    let now = T + 86_400_000;
    const s = await open(undefined, { clock: () => now });
    const { usage, texts, at } = keptOf(s);
    // The first settle trims, a day ahead; then the clock is set back, and the next settle comes minutes later. (The
    // stream is emptied between, so that records older than the retention can be written after the first trim.)
    await settled(s, 'ahead', 'discord:bob');
    await client.del(usage);
    now = T + 10 * 60_000;
    await keep(s, 401, 'an EXPIRED prompt');
    const recent = await keep(s, 1, 'a RECENT prompt');
    await settled(s, 'back', 'discord:bob', 'a BOB prompt');
    expect(await client.hgetall(texts)).toEqual({ [recent]: 'a RECENT prompt' });
    expect(await client.zrange(at, 0, -1)).toEqual([recent]);
    expect((await client.xrange(usage, '-', '+')).map(([id]) => id)[0]).toBe(recent);
  });

  it('drops a member’s prompts past the retention whose records something else dropped (an older replica’s trim) when it keeps their next one', async () => {
    const s = await open();
    const [texts, at] = ['prompts', 'prompts-at'].map((name) => `${s.prefix}:quota:${name}:discord:alice`);
    // Prompts of 401 days ago (the retention is 400) with no record left in the stream: more than one write drops.
    const old = Array.from({ length: 150 }, (_, i) => `${Date.now() - 401 * 86_400_000 + i}-0`);
    for (const id of old) {
      await client.hset(texts!, id, 'an ORPHANED prompt');
      await client.zadd(at!, Number.parseInt(id, 10), id);
    }
    await settled(s, 'one', 'discord:alice', 'a FIRST prompt');
    await settled(s, 'two', 'discord:alice', 'a SECOND prompt');
    const kept = (await client.hvals(texts!)).sort();
    expect(kept).toEqual(['a FIRST prompt', 'a SECOND prompt']);
    expect(await client.zcard(at!)).toBe(2);
  });

  it('tells once, and forgets all the same, when Redis refuses to rewrite its append-only file (a managed Redis may)', async () => {
    const server = await startThrowawayRedis('redis-server', 3, ['--appendonly', 'yes', '--rename-command', 'BGREWRITEAOF', '']);
    if (!server) throw new Error('redis-server is needed');
    const own = await connectRedis(server.url);
    const errors: Error[] = [];
    const s = new RedisQuotaStore({ redis: own, prefix: 'refused', onError: (error) => errors.push(error as Error) });
    try {
      for (const jobId of ['one', 'two']) {
        await settled(s, jobId, 'discord:alice', `a ${jobId.toUpperCase()} prompt`);
        await s.forgetPrompts('discord:alice');
      }
      expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/append-only file/)]);
      expect(await everything(own, 'refused')).not.toMatch(/ONE|TWO/);
    } finally {
      await s.close();
      own.disconnect();
      await server.stop();
    }
  });

  it('erases the prompts an older version wrote inside the stream’s entries, and stops looking once none is left', async () => {
    const prefix = uniquePrefix('forget-upgrade');
    prefixes.push(prefix);
    const usage = `${prefix}:quota:usage`;
    await client.xadd(usage, '*', 'r', legacy('old-fox', 'discord:alice', 'an old FOX'));
    await client.xadd(usage, '*', 'r', legacy('old-owl', 'discord:bob', 'an old OWL'));
    await client.xadd(usage, '*', 'r', legacy('old-plain', 'discord:carol'));
    const ids = (await client.xrange(usage, '-', '+')).map(([id]) => id);
    const s = await open(prefix);
    await settled(s, 'new-fox', 'discord:alice', 'a new FOX');

    await s.forgetPrompts('discord:alice');
    expect((await client.xrange(usage, '-', '+')).map(([id]) => id).slice(0, 3)).toEqual(ids);
    const kept = await everything(client, prefix);
    expect(kept).not.toContain('FOX');
    expect(kept).toContain('an old OWL');
    expect((await s.usage({})).map((r) => [r.jobId, r.costUsd, r.prompt]).sort()).toEqual([
      ['new-fox', 0.1, undefined],
      ['old-fox', 0.1, undefined],
      ['old-owl', 0.1, 'an old OWL'],
      ['old-plain', 0.1, undefined],
    ]);

    // The older entries were looked through: only Bob is listed, and a member without a prompt in them is forgotten
    // reading only the entries written since.
    expect(await client.smembers(`${prefix}:quota:usage:legacy-members`)).toEqual(['discord:bob']);
    const last = (await client.xrevrange(usage, '+', '-', 'COUNT', 1))[0]![0];
    expect(await commandsOn(client, url, usage, () => s.forgetPrompts('discord:carol'))).toEqual(onlyAfter(usage, last));
    await s.forgetPrompts('discord:bob');
    expect(await everything(client, prefix)).not.toContain('OWL');
    // No older prompt left: no member listed, forget reads only what was written since the last look.
    expect(await client.exists(`${prefix}:quota:usage:legacy-members`)).toBe(0);
    expect(await commandsOn(client, url, usage, () => s.forgetPrompts('discord:bob'))).toEqual(onlyAfter(usage, last));
  });

  it('erases a prompt an older version still running wrote inside an entry after this version looked (a replica mid-restart)', async () => {
    const s = await open();
    const usage = `${s.prefix}:quota:usage`;
    await settled(s, 'new', 'discord:carol', 'a NEW carol prompt');
    await s.lookThroughOlderEntries();
    // What an older replica's settle writes: the prompt inside the entry.
    await client.xadd(usage, '*', 'r', legacy('old', 'discord:carol', 'a CAROL SECRET'));
    await s.forgetPrompts('discord:carol');
    expect(await everything(client, s.prefix)).not.toMatch(/CAROL/);
    expect((await s.usage({})).map((r) => [r.jobId, r.costUsd, r.prompt])).toEqual([['new', 0.1, undefined], ['old', 0.1, undefined]]);
    // A later look lists no one: the erased member is not rebuilt for again.
    await client.xadd(usage, '*', 'r', legacy('plain', 'discord:dave'));
    await s.lookThroughOlderEntries();
    expect(await client.exists(`${s.prefix}:quota:usage:legacy-members`)).toBe(0);
  });

  it('erases a prompt holding half a surrogate pair (the look reads it, as JavaScript does; Redis’s JSON cannot): inside entries, an open reservation and a record kept now', async () => {
    const prefix = uniquePrefix('forget-surrogate');
    prefixes.push(prefix);
    const usage = `${prefix}:quota:usage`;
    /** An older entry of Alice's with `prompt`, and beside it a pair (🦊, escaped) and an escaped backslash that must come through whole. */
    const half = (jobId: string, prompt: string): string =>
      JSON.stringify({ ...JSON.parse(legacy(jobId, 'discord:alice')), job: JSON.stringify({ ...job(prompt), style: '🦊 \\ud800' }).replace('🦊', '\\ud83e\\udd8a') });
    await client.xadd(usage, '*', 'r', half('listed', 'a LISTED \ud800 FOX'));
    const s = await open(prefix);
    await settled(s, 'kept', 'discord:alice', 'a KEPT \udc00 FOX');
    await s.lookThroughOlderEntries();
    await client.xadd(usage, '*', 'r', half('tail', 'a TAIL \udbff FOX 🦊'));
    expect(await s.reserve({ jobId: 'open', userKey: 'discord:alice', scopeKey: 'discord:guild', estimateUsd: 0.2, limits: {}, now: T, job: job('an OPEN \ud800 FOX') })).toEqual({ ok: true });

    await s.forgetPrompts('discord:alice');
    expect(await everything(client, prefix)).not.toContain('FOX');
    const records = await s.usage({});
    expect(records.map((r) => [r.jobId, r.costUsd, r.prompt]).sort()).toEqual([['kept', 0.1, undefined], ['listed', 0.1, undefined], ['tail', 0.1, undefined]]);
    const details = (await client.xrange(usage, '-', '+')).map(([, [, r]]) => JSON.parse(JSON.parse(r!).job) as { style?: string; prompt?: string });
    expect(details.map((d) => d.style)).toEqual(['🦊 \\ud800', undefined, '🦊 \\ud800']);
  });

  /**
   * Runs `act` with a PING sent beside it on another connection, and answers how long each took by the test's own
   * clock: a script that held Redis would hold the PING as long.
   */
  async function beside(act: () => Promise<unknown>): Promise<{ actMs: number; pingMs: number }> {
    const started = performance.now();
    const [actMs, pingMs] = await Promise.all([act().then(() => performance.now() - started), client.ping().then(() => performance.now() - started)]);
    return { actMs, pingMs };
  }

  it('settles and forgets a longest prompt of backslashes ending in half a surrogate pair in one pass, Redis answering others meanwhile', async () => {
    const s = await open(uniquePrefix('forget-backslashes'));
    const usage = `${s.prefix}:quota:usage`;
    const prompt = `${'\\'.repeat(31_990)}\ud800`;
    /** Far within the time a quadratic read of it took (50 s), far above a linear one (milliseconds) even on a busy machine: a bound, not a benchmark. */
    const quick = { actMs: expect.toSatisfy((ms: number) => ms < 10_000), pingMs: expect.toSatisfy((ms: number) => ms < 10_000) };

    // Sent by this version: the half pair reaches Redis as U+FFFD.
    expect(await s.reserve({ jobId: 'sent', userKey: 'discord:alice', scopeKey: 'discord:guild', estimateUsd: 0.2, limits: {}, now: T, job: job(prompt) })).toEqual({ ok: true });
    const kept = `${'\\'.repeat(31_990)}\ufffd`;
    expect(JSON.parse((await client.hget(`${s.prefix}:quota:res:sent`, 'job'))!)).toEqual(job(kept));
    expect(await beside(() => s.settle('sent', 0.1, { outcome: 'completed', images: 1 }))).toEqual(quick);
    // A reservation an older version wrote, its details holding the escape as JavaScript writes it.
    expect(await s.reserve({ jobId: 'older', userKey: 'discord:alice', scopeKey: 'discord:guild', estimateUsd: 0.2, limits: {}, now: T, job: job() })).toEqual({ ok: true });
    await client.hset(`${s.prefix}:quota:res:older`, 'job', JSON.stringify(job(prompt)));
    expect(await beside(() => s.settle('older', 0.1, { outcome: 'completed', images: 1 }))).toEqual(quick);
    expect((await s.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([['sent', kept], ['older', kept]]);

    // An entry an older version wrote, the prompt inside it.
    await client.xadd(usage, '*', 'r', legacy('entry', 'discord:alice', prompt));
    expect(await beside(() => s.forgetPrompts('discord:alice'))).toEqual(quick);
    expect(await everything(client, s.prefix)).not.toContain('\\\\\\\\');
    const details = (await client.xrange(usage, '-', '+')).map(([, [, r]]) => JSON.parse(JSON.parse(r!).job) as JobDetails);
    expect(details).toEqual([job(), job(), job()]);
  });

  /** A store on a connection of the test's own, each step of its look (`LOOKED_THROUGH`) answered by `step`, which gets the real one. */
  /** The connection of the store `withLookStep` made last. */
  let lookConnection: Redis | undefined;
  async function withLookStep(step: (real: (...args: unknown[]) => Promise<number>, ...args: unknown[]) => Promise<number>): Promise<RedisQuotaStore> {
    const mine = await connectRedis(url);
    lookConnection = mine;
    const prefix = uniquePrefix('forget-look');
    prefixes.push(prefix);
    const s = new RedisQuotaStore({ redis: mine, prefix });
    stores.push({ close: async () => void (await s.close(), mine.disconnect()) } as RedisQuotaStore);
    const steps = mine as unknown as { pictorSpendLookedThrough: (...args: unknown[]) => Promise<number> };
    const real = steps.pictorSpendLookedThrough.bind(mine);
    vi.spyOn(steps, 'pictorSpendLookedThrough').mockImplementation((...args) => step(real, ...args));
    return s;
  }

  it('reads the cursor again when another process’s look moved it, and looks on to the stream’s end: the forget’s script reads only what came after', async () => {
    let other: ((real: (...args: unknown[]) => Promise<number>, prefix: unknown) => Promise<unknown>) | undefined;
    const s = await withLookStep(async (real, ...args) => {
      // Another replica's look steps first (once): this one's step finds the cursor moved.
      const first = other;
      other = undefined;
      await first?.(real, args[0]);
      return real(...args);
    });
    const usage = `${s.prefix}:quota:usage`;
    await settled(s, 'fox', 'discord:alice', 'a FOX prompt');
    await s.lookThroughOlderEntries();
    await client.xadd(usage, '*', 'r', legacy('old-owl', 'discord:bob', 'an old OWL'));
    await settled(s, 'cat', 'discord:carol', 'a CAT prompt');
    const ids = (await client.xrange(usage, '-', '+')).map(([id]) => id);
    other = (real, prefix) => real(prefix, ids[0], ids[1], 'discord:bob');

    // Its own look reads batches of 1 000; the script, what came after the look's end alone.
    const seen = await commandsOn(client, url, usage, () => s.forgetPrompts('discord:alice'));
    expect(seen.filter((c) => !c.endsWith(' COUNT 1000'))).toEqual([`xrange ${usage} (${ids[2]} + COUNT 1001`]);
    expect(other).toBeUndefined();
    expect(await client.get(`${usage}:looked`)).toBe(ids[2]);
    expect(await client.smembers(`${usage}:legacy-members`)).toEqual(['discord:bob']);
    expect(await everything(client, s.prefix)).not.toContain('FOX');
  });

  it('reads at most a bounded tail after the look in its script: a longer one written meanwhile is looked through first', async () => {
    let burst: (() => Promise<void>) | undefined;
    const s = await withLookStep(async (real, ...args) => {
      const answer = await real(...args);
      // Other processes write many records between this look's last step and the forget's script.
      const first = burst;
      burst = undefined;
      await first?.();
      return answer;
    });
    const usage = `${s.prefix}:quota:usage`;
    await settled(s, 'fox', 'discord:alice', 'a FOX prompt');
    await s.lookThroughOlderEntries();
    burst = async () => {
      const step = client.pipeline();
      for (let i = 0; i < 1_500; i++) step.xadd(usage, '*', 'r', legacy(`burst-${i}`, 'discord:dave'));
      step.xadd(usage, '*', 'r', legacy('old-owl', 'discord:bob', 'an old OWL'));
      await step.exec();
    };

    const seen = await commandsOn(client, url, usage, () => s.forgetPrompts('discord:bob'));
    expect(seen.filter((c) => c.startsWith(`xrange ${usage} (`) && !c.includes(' COUNT '))).toEqual([]);
    expect(await everything(client, s.prefix)).not.toContain('OWL');
  });

  it('takes only a string as a prompt inside an older entry, in the look and the forget alike: a number, an object or null is left as written', async () => {
    let between: (() => Promise<unknown>) | undefined;
    const s = await withLookStep(async (real, ...args) => {
      const answer = await real(...args);
      // Written between the look's last step and the forget's script, which reads these itself.
      const first = between;
      between = undefined;
      await first?.();
      return answer;
    });
    const usage = `${s.prefix}:quota:usage`;
    /** An older entry of Alice's whose job's details hold `prompt` as given (not a string). */
    const odd = (jobId: string, prompt: unknown): string => JSON.stringify({ ...JSON.parse(legacy(jobId, 'discord:alice')), job: JSON.stringify({ ...job(), prompt }) });
    const write = (tag: string) => Promise.all([42, { text: 'an ODD one' }, null].map((prompt, i) => client.xadd(usage, '*', 'r', odd(`${tag}-${i}`, prompt))));
    await write('looked');
    await s.lookThroughOlderEntries();
    await settled(s, 'fox', 'discord:alice', 'a red FOX');
    expect(await client.exists(`${usage}:legacy-members`)).toBe(0);
    between = () => write('tail');
    let before: unknown;
    const forgetting = lookConnection as unknown as { pictorSpendForget: (...args: unknown[]) => Promise<number> };
    const real = forgetting.pictorSpendForget.bind(lookConnection);
    vi.spyOn(forgetting, 'pictorSpendForget').mockImplementation(async (...args) => {
      before = await client.xrange(usage, '-', '+');
      return real(...args);
    });

    await s.forgetPrompts('discord:alice');
    expect(before).toHaveLength(7);
    expect(await client.exists(`${s.prefix}:quota:prompts:discord:alice`, `${s.prefix}:quota:prompts-at:discord:alice`)).toBe(0);
    expect(await client.xrange(usage, '-', '+')).toEqual(before);
  });

  it('fails a forget retryably (ledger_busy) after three looks, each followed by more records than its script reads, erasing nothing', async () => {
    const s = await withLookStep((real, ...args) => real(...args));
    const usage = `${s.prefix}:quota:usage`;
    await settled(s, 'fox', 'discord:alice', 'a FOX prompt');
    // Other processes write more than a batch between every look and the forget's script.
    let scripts = 0;
    const forgetting = lookConnection as unknown as { pictorSpendForget: (...args: unknown[]) => Promise<number> };
    const real = forgetting.pictorSpendForget.bind(lookConnection);
    vi.spyOn(forgetting, 'pictorSpendForget').mockImplementation(async (...args) => {
      scripts++;
      const step = client.pipeline();
      for (let i = 0; i < 1_001; i++) step.xadd(usage, '*', 'r', legacy(`burst-${scripts}-${i}`, 'discord:dave'));
      await step.exec();
      return real(...args);
    });

    const failure = await s.forgetPrompts('discord:alice').then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(LedgerLookFailedError);
    expect(failure).toMatchObject({ code: 'ledger_busy', retryable: true });
    expect(scripts).toBe(3);
    expect(await everything(client, s.prefix)).toContain('FOX');
  });

  it('fails a forget retryably (ledger_busy), erasing nothing, when its look through the stream fails: the script never reads the stream whole', async () => {
    let failing = true;
    const s = await withLookStep(async (real, ...args) => {
      if (failing) throw new Error('the connection dropped');
      return real(...args);
    });
    const usage = `${s.prefix}:quota:usage`;
    await settled(s, 'fox', 'discord:alice', 'a FOX prompt');

    let failure: unknown;
    const seen = await commandsOn(client, url, usage, async () => {
      failure = await s.forgetPrompts('discord:alice').then(() => undefined, (error: unknown) => error);
    });
    expect(failure).toMatchObject({ code: 'ledger_busy', retryable: true });
    expect(seen.filter((c) => c === `xrange ${usage} - +`)).toEqual([]);
    expect(await everything(client, s.prefix)).toContain('FOX');
    // Asked again once the look ends, it forgets.
    failing = false;
    await s.forgetPrompts('discord:alice');
    expect(await everything(client, s.prefix)).not.toContain('FOX');
  });

  it('closes by the stop’s deadline while a rewrite runs (a close begun before without one too), telling that the rewrite after the forget was not asked', async () => {
    // Each key takes Redis 0.1 s to write in a rewrite: one asked now outlasts what follows.
    const server = await startThrowawayRedis('redis-server', 3, ['--appendonly', 'yes', '--rdb-key-save-delay', '100000']);
    if (!server) throw new Error('redis-server is needed');
    const own = await connectRedis(server.url);
    const errors: Error[] = [];
    const s = await RedisQuotaStore.connect({ url: server.url, prefix: 'slow' }, { onError: (error) => errors.push(error as Error) });
    try {
      for (let i = 0; i < 20; i++) await own.set(`filler:${i}`, 'x');
      await settled(s, 'fox', 'discord:alice', 'a MARKER prompt');
      const rewrites = async () => Number(/aof_rewrites:(\d+)/.exec(await own.info('persistence'))?.[1] ?? 0);
      // Redis's own first rewrite (at its start) has ended: the one asked now is the only one.
      await vi.waitFor(async () => expect(await own.info('persistence')).toMatch(/aof_rewrite_in_progress:0[^]*aof_rewrite_scheduled:0/), { interval: 5, timeout: 5_000 });
      await own.bgrewriteaof();
      await vi.waitFor(async () => expect(await own.info('persistence')).toMatch(/aof_rewrite_in_progress:1/), { interval: 5, timeout: 5_000 });
      // Redis counts a rewrite as it starts.
      const before = await rewrites();

      await s.forgetPrompts('discord:alice');
      // A close begun without a deadline (a forget's of the other ledger) ends by the one a stop gives it later.
      const closing = s.close();
      await s.close({ until: Date.now() });
      await closing;
      // Closed while the running rewrite still runs, and the owner is told the second one was not asked.
      expect(await own.info('persistence')).toMatch(/aof_rewrite_in_progress:1/);
      expect(await rewrites()).toBe(before);
      expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/not asked/)]);
    } finally {
      await s.close();
      own.disconnect();
      await server.stop();
    }
  });

  /**
   * Runs `act` on a throwaway Redis keeping an append-only file, each key written to disk slowly by a rewrite (so a
   * rewrite is still running when the next forget comes), with what that file holds and the rewrites' count.
   */
  async function withAppendOnlyFile(act: (s: RedisQuotaStore, disk: { text(): Promise<string>; rewrites(): Promise<number>; settledDown(atLeast: number): Promise<void> }) => Promise<void>): Promise<void> {
    const server = await startThrowawayRedis('redis-server', 3, ['--appendonly', 'yes', '--rdb-key-save-delay', '20000']);
    if (!server) throw new Error('redis-server is needed');
    const own = await connectRedis(server.url);
    const s = await RedisQuotaStore.connect({ url: server.url, prefix: 'aof' });
    try {
      const [, dir] = (await own.config('GET', 'dir')) as [string, string];
      const [, folder] = (await own.config('GET', 'appenddirname')) as [string, string];
      const rewrites = async () => Number(/aof_rewrites:(\d+)/.exec(await own.info('persistence'))?.[1] ?? 0);
      await act(s, {
        text: async () => (await Promise.all((await readdir(join(dir, folder))).map((f) => readFile(join(dir, folder, f), 'latin1')))).join('\n'),
        rewrites,
        // Waits on Redis's own account of its rewrites: at least `atLeast` done, none running or scheduled.
        settledDown: (atLeast) =>
          vi.waitFor(
            async () => {
              const info = await own.info('persistence');
              expect(Number(/aof_rewrites:(\d+)/.exec(info)?.[1])).toBeGreaterThanOrEqual(atLeast);
              expect(info).toMatch(/aof_rewrite_in_progress:0/);
              expect(info).toMatch(/aof_rewrite_scheduled:0/);
            },
            { interval: 10, timeout: 20_000 },
          ),
      });
    } finally {
      await s.close();
      own.disconnect();
      await server.stop();
    }
  }

  it('has Redis rewrite its append-only file after a forget, so the erased prompt leaves the disk too', async () => {
    await withAppendOnlyFile(async (s, disk) => {
      await settled(s, 'fox', 'discord:alice', 'a MARKER prompt');
      await vi.waitFor(async () => expect(await disk.text()).toContain('MARKER'), { interval: 5, timeout: 5_000 });
      const before = await disk.rewrites();
      await s.forgetPrompts('discord:alice');
      await disk.settledDown(before + 1);
      expect(await disk.text()).not.toContain('MARKER');
    });
  });

  it('has Redis rewrite its append-only file again after a forget that came while a rewrite was running', async () => {
    await withAppendOnlyFile(async (s, disk) => {
      for (let i = 0; i < 20; i++) await settled(s, `quiet-${i}`, `discord:member-${i}`);
      await settled(s, 'fox', 'discord:alice', 'a FIRST-MARKER prompt');
      await settled(s, 'owl', 'discord:bob', 'a SECOND-MARKER prompt');
      await vi.waitFor(async () => expect(await disk.text()).toContain('SECOND-MARKER'), { interval: 5, timeout: 5_000 });
      const before = await disk.rewrites();
      await s.forgetPrompts('discord:alice');
      await s.forgetPrompts('discord:bob');
      await disk.settledDown(before + 2);
      expect(await disk.text()).not.toMatch(/FIRST-MARKER|SECOND-MARKER/);
    });
  });

  it('has Redis rewrite its append-only file after a forget that erased a prompt from an open reservation alone', async () => {
    await withAppendOnlyFile(async (s, disk) => {
      expect(await s.reserve({ jobId: 'running', userKey: 'discord:alice', scopeKey: 'discord:guild', estimateUsd: 0.2, limits: {}, now: T, job: job('a RUNNING-MARKER prompt') })).toEqual({ ok: true });
      await vi.waitFor(async () => expect(await disk.text()).toContain('RUNNING-MARKER'), { interval: 5, timeout: 5_000 });
      const before = await disk.rewrites();
      await s.forgetPrompts('discord:alice');
      await disk.settledDown(before + 1);
      expect(await disk.text()).not.toContain('RUNNING-MARKER');
    });
  });
});
