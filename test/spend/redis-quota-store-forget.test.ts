import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import type { JobDetails } from '../../src/spend/types.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { deleteKeys, dumpKey, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { startThrowawayRedis } from '../setup/redis-server.js';

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

/** Every value kept under `prefix`, as text (to look for a prompt anywhere). */
async function everything(client: Redis, prefix: string): Promise<string> {
  const keys = await client.keys(`${prefix}:*`);
  return JSON.stringify(await Promise.all(keys.map(async (key) => [key, await dumpKey(client, key)])));
}

/** The commands Redis ran (scripts' too) on `key` while `act` ran: MONITOR, up to an ECHO sent after it. */
async function commandsOn(client: Redis, key: string, act: () => Promise<unknown>): Promise<string[]> {
  const monitor = await client.monitor();
  const seen: string[] = [];
  const end = `end-${Math.random()}`;
  const ended = new Promise<void>((resolve) => {
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'echo' && args[1] === end) resolve();
      else if (args.slice(1).includes(key)) seen.push(args[0]!.toLowerCase());
    });
  });
  try {
    await act();
    await client.echo(end);
    await ended;
    return seen;
  } finally {
    monitor.disconnect();
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

  async function open(prefix = uniquePrefix('forget')): Promise<RedisQuotaStore> {
    if (!prefixes.includes(prefix)) prefixes.push(prefix);
    const s = await RedisQuotaStore.connect({ url, prefix });
    stores.push(s);
    return s;
  }

  it('forgets a member without reading the usage stream: prompts off, a member with none, and one with prompts kept', async () => {
    const s = await open();
    for (let i = 0; i < 5; i++) await settled(s, `quiet-${i}`, 'discord:alice');
    await settled(s, 'kept', 'discord:bob', 'a lighthouse');
    const usage = `${s.prefix}:quota:usage`;
    expect(await commandsOn(client, usage, () => s.forgetPrompts('discord:alice'))).toEqual([]);
    expect(await commandsOn(client, usage, () => s.forgetPrompts('discord:nobody'))).toEqual([]);
    expect(await commandsOn(client, usage, () => s.forgetPrompts('discord:bob'))).toEqual([]);
    expect((await s.usage({})).map((r) => [r.jobId, r.costUsd, r.prompt])).toContainEqual(['kept', 0.1, undefined]);
  });

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

  it('drops a member’s prompts past the retention as their next record is written, as the stream’s trim drops records', async () => {
    const s = await open();
    const [texts, at] = ['prompts', 'prompts-at'].map((name) => `${s.prefix}:quota:${name}:discord:alice`);
    // A prompt kept 401 days ago (the retention is 400), by the entry ids' clock.
    const old = `${Date.now() - 401 * 86_400_000}-0`;
    await client.hset(texts!, old, 'an EXPIRED prompt');
    await client.zadd(at!, Number.parseInt(old, 10), old);
    await settled(s, 'fresh', 'discord:alice', 'a FRESH prompt');
    expect(Object.values(await client.hgetall(texts!))).toEqual(['a FRESH prompt']);
    expect(await client.zcard(at!)).toBe(1);
  });

  it('tells once, and forgets all the same, when Redis refuses to rewrite its append-only file (a managed Redis may)', async () => {
    const own = await connectRedis(url);
    const prefix = uniquePrefix('forget-aof-refused');
    prefixes.push(prefix);
    const errors: Error[] = [];
    const s = new RedisQuotaStore({ redis: own, prefix, onError: (error) => errors.push(error as Error) });
    try {
      vi.spyOn(own, 'info').mockResolvedValue('# Persistence\r\naof_enabled:1\r\n');
      const refused = vi.spyOn(own, 'bgrewriteaof').mockRejectedValue(new Error("ERR unknown command 'BGREWRITEAOF'"));
      for (const jobId of ['one', 'two']) {
        await settled(s, jobId, 'discord:alice', `a ${jobId.toUpperCase()} prompt`);
        await s.forgetPrompts('discord:alice');
      }
      expect(refused).toHaveBeenCalledTimes(2);
      expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/append-only file/)]);
      expect(await everything(client, prefix)).not.toMatch(/ONE|TWO/);
    } finally {
      vi.restoreAllMocks();
      await s.close();
      own.disconnect();
    }
  });

  it('erases the prompts an older version wrote inside the stream’s entries, and stops looking once none is left', async () => {
    const prefix = uniquePrefix('forget-upgrade');
    prefixes.push(prefix);
    const usage = `${prefix}:quota:usage`;
    // Entries as versions before kept them: the job's details, prompt included, inside the record.
    const legacy = (jobId: string, userKey: string, prompt?: string) =>
      JSON.stringify({ jobId, time: T, day: '2030-01-02', month: '2030-01', userKey, scopeKey: 'discord:guild', nanos: 100_000_000, basis: 'table', job: JSON.stringify(job(prompt)) });
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

    // Once the older entries were looked through, a member without a prompt in them is forgotten without the stream.
    await vi.waitFor(async () => expect(await client.exists(`${prefix}:quota:usage:legacy-scanned`)).toBe(1), { interval: 5, timeout: 5_000 });
    expect(await commandsOn(client, usage, () => s.forgetPrompts('discord:carol'))).toEqual([]);
    await s.forgetPrompts('discord:bob');
    expect(await everything(client, prefix)).not.toContain('OWL');
    // No older prompt left: the mark of older entries is gone, forget never reads the stream again.
    expect(await client.exists(`${prefix}:quota:usage:legacy`)).toBe(0);
    expect(await commandsOn(client, usage, () => s.forgetPrompts('discord:bob'))).toEqual([]);
  });

  it('has Redis rewrite its append-only file after a forget, so the erased prompt leaves the disk too', async () => {
    const server = await startThrowawayRedis('redis-server', 3, ['--appendonly', 'yes']);
    if (!server) throw new Error('redis-server is needed');
    const own = await connectRedis(server.url);
    try {
      const s = await RedisQuotaStore.connect({ url: server.url, prefix: 'aof' });
      stores.push(s);
      await settled(s, 'fox', 'discord:alice', 'a MARKER prompt');
      const [, dir] = (await own.config('GET', 'dir')) as [string, string];
      const [, folder] = (await own.config('GET', 'appenddirname')) as [string, string];
      const onDisk = async () => {
        const files = await readdir(join(dir, folder));
        return (await Promise.all(files.map((f) => readFile(join(dir, folder, f), 'latin1')))).join('\n');
      };
      await vi.waitFor(async () => expect(await onDisk()).toContain('MARKER'), { interval: 5, timeout: 5_000 });
      const rewritesBefore = Number(/aof_rewrites:(\d+)/.exec(await own.info('persistence'))?.[1] ?? 0);
      await s.forgetPrompts('discord:alice');
      await vi.waitFor(
        async () => {
          const info = await own.info('persistence');
          expect(Number(/aof_rewrites:(\d+)/.exec(info)?.[1])).toBeGreaterThan(rewritesBefore);
          expect(info).toMatch(/aof_rewrite_in_progress:0/);
          expect(info).toMatch(/aof_rewrite_scheduled:0/);
        },
        { interval: 10, timeout: 10_000 },
      );
      expect(await onDisk()).not.toContain('MARKER');
    } finally {
      own.disconnect();
      await Promise.all(stores.splice(0).map((st) => st.close()));
      await server.stop();
    }
  });
});
