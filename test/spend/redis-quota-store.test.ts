import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { RedisQuotaStore, type RedisQuotaStoreOptions } from '../../src/spend/RedisQuotaStore.js';
import type { QuotaStore, SpendLimits } from '../../src/spend/types.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const redis = testRedis();
/** 2030-01-02 10:00 UTC. */
const T = Date.UTC(2030, 0, 2, 10, 0, 0);
const MIDNIGHT = Date.UTC(2030, 0, 3);

describe.skipIf(redis.skipReason)(`the Redis quota store ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
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

  function store(options: Partial<RedisQuotaStoreOptions> = {}): RedisQuotaStore {
    const prefix = options.prefix ?? uniquePrefix('quota');
    if (!prefixes.includes(prefix)) prefixes.push(prefix);
    const s = new RedisQuotaStore({ redis: client, prefix, ...options });
    stores.push(s);
    return s;
  }
  const reserve = (s: QuotaStore, jobId: string, estimateUsd: number, limits: SpendLimits, extra: { userKey?: string; scopeKey?: string; now?: number } = {}) =>
    s.reserve({ jobId, userKey: extra.userKey ?? 'discord:alice', scopeKey: extra.scopeKey ?? 'discord:guild', estimateUsd, limits, now: extra.now ?? T });

  it('reserves within the budget and refuses the job that would pass it, saying what is used and when it resets', async () => {
    const s = store();
    expect(await reserve(s, 'j1', 0.6, { userDailyUsd: 1 })).toEqual({ ok: true });
    expect(await reserve(s, 'j2', 0.5, { userDailyUsd: 1 })).toEqual({ ok: false, code: 'budget_user_daily', limit: 1, used: 0.6, resetsAt: MIDNIGHT });
    expect(await reserve(s, 'j3', 0.4, { userDailyUsd: 1 })).toEqual({ ok: true });
    expect(await s.spentToday('discord:alice', T)).toBe(1);
  });

  it('keeps the breaker’s numbers only for the scopes it watches: a chat scope’s charge, not the CLI’s', async () => {
    const prefix = uniquePrefix('quota-breaker');
    const s = store({ prefix });
    expect(await reserve(s, 'chat', 0.2, {})).toEqual({ ok: true });
    expect(await reserve(s, 'cli', 0.2, {}, { userKey: 'cli', scopeKey: 'cli' })).toEqual({ ok: true });
    await s.settle('chat', 0.2);
    await s.settle('cli', 0.2);
    const keys = (await client.keys(`${prefix}*brk:*`)).map((k) => k.slice(k.indexOf('brk:')));
    expect(keys).toEqual(['brk:discord:guild']);
  });

  it('counts a server budget across all of its users', async () => {
    const s = store();
    const limits = { scopeDailyUsd: 1 };
    expect(await reserve(s, 'a', 0.7, limits, { userKey: 'discord:alice' })).toEqual({ ok: true });
    expect(await reserve(s, 'b', 0.7, limits, { userKey: 'discord:bob' })).toMatchObject({ ok: false, code: 'budget_scope_daily', used: 0.7 });
    expect(await reserve(s, 'c', 0.7, limits, { userKey: 'discord:bob', scopeKey: 'discord:other-guild' })).toEqual({ ok: true });
  });

  it('replaces a reservation with the real cost when the job settles, and charges it only once', async () => {
    const s = store();
    await reserve(s, 'j1', 0.6, {});
    expect(await s.settle('j1', 0.25)).toBe(true);
    expect(await s.settle('j1', 0.25)).toBe(false);
    expect(await s.spentToday('discord:alice', T)).toBe(0.25);
    expect(await s.spentToday('discord:guild', T)).toBe(0.25);
  });

  it('drops a released reservation without charging anything', async () => {
    const s = store();
    await reserve(s, 'j1', 0.6, {});
    await s.release('j1');
    expect(await s.spentToday('discord:alice', T)).toBe(0);
  });

  it('refuses a user with too many jobs at once until one of them ends', async () => {
    const s = store();
    const limits = { userConcurrentJobs: 2 };
    await reserve(s, 'j1', 0.1, limits);
    await reserve(s, 'j2', 0.1, limits, { now: T + 1000 });
    expect(await reserve(s, 'j3', 0.1, limits, { now: T + 2000 })).toEqual({
      ok: false,
      code: 'user_concurrency',
      limit: 2,
      used: 2,
      resetsAt: T + 2000,
    });
    await s.settle('j1', 0.1);
    expect(await reserve(s, 'j3', 0.1, limits, { now: T + 3000 })).toEqual({ ok: true });
  });

  it('refuses a job within the cooldown of the previous one', async () => {
    const s = store();
    const limits = { userCooldownSeconds: 30 };
    await reserve(s, 'j1', 0.1, limits);
    await s.settle('j1', 0.1);
    expect(await reserve(s, 'j2', 0.1, limits, { now: T + 10_000 })).toEqual({
      ok: false,
      code: 'user_cooldown',
      limit: 30,
      used: 10,
      resetsAt: T + 30_000,
    });
    expect(await reserve(s, 'j2', 0.1, limits, { now: T + 30_000 })).toEqual({ ok: true });
  });

  it('charges a job to the day it was reserved for, even when it settles after midnight', async () => {
    const s = store();
    await reserve(s, 'late', 0.5, {}, { now: MIDNIGHT - 1000 });
    expect(await s.spentToday('discord:alice', MIDNIGHT + 1000)).toBe(0);
    await s.settle('late', 0.4);
    expect(await s.spentToday('discord:alice', MIDNIGHT - 1)).toBe(0.4);
    expect(await s.spentToday('discord:alice', MIDNIGHT + 1000)).toBe(0);
  });

  it('treats the same reservation sent twice as one, and a different one under the same job id as an error', async () => {
    const s = store();
    expect(await reserve(s, 'j1', 0.6, { userDailyUsd: 1 })).toEqual({ ok: true });
    expect(await reserve(s, 'j1', 0.6, { userDailyUsd: 1 })).toEqual({ ok: true });
    expect(await s.spentToday('discord:alice', T)).toBe(0.6);
    await expect(reserve(s, 'j1', 0.2, { userDailyUsd: 1 })).rejects.toThrow(/already has a reservation/);
  });

  it('ends the reservations of a process that died (no renewal): a sent one is charged at its estimate, a queued one released', async () => {
    const prefix = uniquePrefix('quota-dead');
    const dead = store({ prefix, leaseMs: 300 });
    // A lease of its own long enough that a busy machine cannot let it lapse: only the dead one's is to.
    const alive = store({ prefix, leaseMs: 60_000 });
    const now = () => Date.now();
    await dead.reserve({ jobId: 'd-sent', userKey: 'u', scopeKey: 's', estimateUsd: 0.5, limits: {}, now: now() });
    await dead.markSent('d-sent');
    await dead.reserve({ jobId: 'd-queued', userKey: 'u', scopeKey: 's', estimateUsd: 0.4, limits: {}, now: now() });
    await dead.close(); // stops renewing, like a process that was killed
    await alive.reserve({ jobId: 'a1', userKey: 'u2', scopeKey: 's', estimateUsd: 0.05, limits: {}, now: now() });
    expect(await alive.spentToday('s', now())).toBeCloseTo(0.95, 9);
    // Once the dead one's lease has lapsed in Redis (a1 is renewed by its live store): its sent job stays charged, its
    // queued one is gone. A reconcile before that ends nothing.
    await vi.waitFor(async () => expect(await alive.reconcile(now())).toMatchObject({ released: ['d-queued'], settledAtEstimate: ['d-sent'] }), { timeout: 15_000 });
    expect(await alive.spentToday('s', now())).toBeCloseTo(0.55, 9);
    expect(await alive.spentThisMonth('u', now())).toBeCloseTo(0.5, 9);
    expect(await alive.reserve({ jobId: 'a2', userKey: 'u', scopeKey: 's', estimateUsd: 0.4, limits: { scopeDailyUsd: 1, userConcurrentJobs: 1 }, now: now() })).toEqual({ ok: true });
    // Settling the dead job later (nobody should) changes nothing: it was ended once.
    await alive.settle('d-sent', 0.1);
    expect(await alive.spentToday('u', now())).toBeCloseTo(0.9, 9);
  });

  it('does not charge twice a job a reconcile charged after its process’s lease lapsed: that process’s late settle finds it ended, not lost', async () => {
    const prefix = uniquePrefix('quota-lapsed');
    const lost: unknown[] = [];
    const slow = store({ prefix, onReservationLost: (l) => lost.push(l) });
    const other = store({ prefix });
    await slow.reserve({ jobId: 'slow-job', userKey: 'u', scopeKey: 's', estimateUsd: 0.5, limits: {}, now: Date.now() });
    await slow.markSent('slow-job');
    // Its lease lapses (Redis was out of its reach longer than the lease): the key is gone, and another process meets the job.
    for (const key of await client.keys(`${prefix}:quota:owner:*`)) await client.del(key);
    expect(await other.reconcile(Date.now())).toMatchObject({ settledAtEstimate: ['slow-job'] });
    expect(await slow.settle('slow-job', 0.2)).toBe(false);
    expect(await other.spentToday('u', Date.now())).toBeCloseTo(0.5, 9);
    expect(await other.usage({})).toHaveLength(1);
    expect(lost).toEqual([]);
  });

  it('keeps counting a reservation past 30 minutes while its process lives (the clock moved on)', async () => {
    const s = store();
    const limits = { accountDailyUsd: 1, userConcurrentJobs: 1 };
    await reserve(s, 'long', 0.8, limits);
    const later = T + 31 * 60_000;
    expect(await s.spentToday('account', later)).toBeCloseTo(0.8, 9);
    expect(await reserve(s, 'second', 0.5, { accountDailyUsd: 1 }, { userKey: 'discord:bob', now: later })).toMatchObject({ ok: false, code: 'budget_account_daily', used: 0.8 });
    expect(await reserve(s, 'third', 0.1, limits, { now: later })).toMatchObject({ ok: false, code: 'user_concurrency' });
  });

  it('refuses at the account, user and scope caps, daily and monthly, and starts each month from zero', async () => {
    const s = store();
    await reserve(s, 'a', 0.9, {});
    await s.settle('a', 0.9);
    const dayEnd = Date.UTC(2030, 0, 3);
    const monthEnd = Date.UTC(2030, 1, 1);
    expect(await reserve(s, 'b', 0.2, { accountDailyUsd: 1 }, { userKey: 'discord:u2' })).toEqual({ ok: false, code: 'budget_account_daily', limit: 1, used: 0.9, resetsAt: dayEnd });
    expect(await reserve(s, 'c', 0.2, { accountMonthlyUsd: 1 }, { userKey: 'discord:u2', now: T + 2 * 86_400_000 })).toEqual({
      ok: false,
      code: 'budget_account_monthly',
      limit: 1,
      used: 0.9,
      resetsAt: monthEnd,
    });
    expect(await reserve(s, 'd', 0.2, { userMonthlyUsd: 1 }, { now: T + 86_400_000 })).toMatchObject({ ok: false, code: 'budget_user_monthly', used: 0.9 });
    expect(await reserve(s, 'e', 0.2, { scopeMonthlyUsd: 1 }, { userKey: 'discord:u3', now: T + 86_400_000 })).toMatchObject({ ok: false, code: 'budget_scope_monthly' });
    expect(await reserve(s, 'f', 0.2, { accountMonthlyUsd: 1, userMonthlyUsd: 1 }, { now: monthEnd })).toEqual({ ok: true });
    expect(await s.spentThisMonth('account', T)).toBeCloseTo(0.9, 9);
  });

  it('gives the same answers as the file store for the same story', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-quota-parity-'));
    const file = new FileQuotaStore({ dir });
    const shared = store();
    const limits: SpendLimits = { userDailyUsd: 1, scopeDailyUsd: 1.5, accountDailyUsd: 1.4, scopeMonthlyUsd: 5, userConcurrentJobs: 2, userCooldownSeconds: 5 };
    const story = async (s: QuotaStore) => {
      const out: unknown[] = [];
      const r = (jobId: string, usd: number, userKey: string, now: number) =>
        s.reserve({ jobId, userKey, scopeKey: 'guild', estimateUsd: usd, limits, now }).then((x) => out.push(x));
      await r('1', 0.4, 'alice', T);
      await r('2', 0.4, 'alice', T + 1000); // cooldown
      await r('3', 0.4, 'alice', T + 6000);
      await r('4', 0.1, 'alice', T + 12_000); // two at once
      await s.settle('1', 0.3);
      await r('5', 0.4, 'alice', T + 18_000);
      await r('6', 0.4, 'alice', T + 24_000); // user budget: 0.3 + 0.4 + 0.4 > 1
      await r('7', 0.9, 'bob', T + 24_000); // scope budget: 0.3 + 0.4 + 0.9 > 1.5
      await s.release('3');
      await r('8', 0.2, 'bob', T + 30_000);
      out.push(await s.spentToday('alice', T + 31_000), await s.spentToday('guild', T + 31_000), await s.spentToday('bob', T + 31_000));
      return out;
    };
    try {
      const expected = await story(file);
      expect(await story(shared)).toEqual(expected);
    } finally {
      await file.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('deletes nothing of an older version’s when its connection closes while the caller writes it into the bots’ state (a process stopped midway): the next store hands over all of it', async () => {
    const prefix = uniquePrefix('quota-legacy');
    prefixes.push(prefix);
    const entry = (value: unknown) => JSON.stringify({ value, by: 'discord:admin', at: 1 });
    await client.hset(`${prefix}:quota:settings:discord:g1`, 'maxImages', entry(2));
    await client.hset(`${prefix}:quota:settings:slack:T1`, 'defaultQuality', entry('low'));
    await client.set(`${prefix}:quota:seen:e1`, '1', 'PX', 60_000);
    const legacyKeys = async () => (await client.keys(`${prefix}:quota:*`)).filter((key) => /:quota:(settings|seen):/.test(key)).sort();
    const kept = await legacyKeys();
    expect(kept).toHaveLength(3);
    const all = {
      settings: {
        'discord:g1': { maxImages: { value: 2, by: 'discord:admin', at: 1 } },
        'slack:T1': { defaultQuality: { value: 'low', by: 'discord:admin', at: 1 } },
      },
      seen: ['e1'],
    };

    // A store owning its connection (as `connect` makes it), closed — QUIT — while the caller writes what it took.
    const stopping = await RedisQuotaStore.connect({ url, prefix });
    stores.push(stopping);
    await expect(stopping.takeLegacy(async (records) => {
      expect(records).toEqual(all);
      await stopping.close();
    })).rejects.toThrow();
    expect(await legacyKeys()).toEqual(kept);

    const next = await RedisQuotaStore.connect({ url, prefix });
    stores.push(next);
    const taken: unknown[] = [];
    await next.takeLegacy(async (records) => void taken.push(records));
    expect(taken).toEqual([all]);
    expect(await legacyKeys()).toEqual([]);
  });

  it('reads its usage again whole for a cursor without a rewrite count, and takes all after the first / as the stream id', async () => {
    const s = store();
    await reserve(s, 'j1', 0.1, {}, { now: Date.now() });
    await s.settle('j1', 0.1);
    const read = await s.usageSince(undefined);
    expect(read).toMatchObject({ records: [expect.objectContaining({ jobId: 'j1' })], reset: false });
    // '0' is the rewrite count the stream has, but a cursor without '/' is an older version's stream id.
    expect(await s.usageSince('0')).toMatchObject({ records: [expect.objectContaining({ jobId: 'j1' })], reset: true, cursor: read.cursor });
    await expect(s.usageSince(`${read.cursor}/zz`)).rejects.toThrow(/stream ID/i);
    expect(await s.usageSince(read.cursor)).toEqual({ records: [], reset: false, cursor: read.cursor });
  });

  it("hands the scripts a held job's details as its JSON, and without the prompt once that is erased", async () => {
    const s = store();
    const job = { operation: 'generate' as const, n: 2, size: '1024x1024', quality: 'high', prompt: 'a red fox' };
    const scripts = client as unknown as Record<'pictorSpendReserve' | 'pictorSpendMarkSent' | 'pictorSpendSettle', (...args: unknown[]) => Promise<unknown>>;
    const [reserved, sent, settled] = (['pictorSpendReserve', 'pictorSpendMarkSent', 'pictorSpendSettle'] as const).map((name) => vi.spyOn(scripts, name));
    try {
      const ask = (jobId: string) => ({ jobId, userKey: 'discord:alice', scopeKey: 'discord:guild', estimateUsd: 0.2, limits: {}, now: T, job });
      await s.reserve(ask('fox'));
      await s.markSent('fox');
      await s.settle('fox', 0.1);
      // The copy's arguments: userKey, scopeKey, day, month, nanos, the job's JSON, when it was reserved.
      const copy = (text: string) => ['discord:alice', 'discord:guild', '2030-01-02', '2030-01', 200_000_000, text, T];
      expect(reserved!.mock.calls[0]![15]).toBe(JSON.stringify(job));
      expect(sent!.mock.calls[0]!.slice(5, 12)).toEqual(copy(JSON.stringify(job)));
      expect(settled!.mock.calls[0]!.slice(10, 17)).toEqual(copy(JSON.stringify(job)));
      await s.reserve(ask('owl'));
      await s.forgetPrompts('discord:alice');
      await s.markSent('owl');
      await s.settle('owl', 0.1);
      const { prompt: _, ...withoutPrompt } = job;
      expect(sent!.mock.calls[1]!.slice(5, 12)).toEqual(copy(JSON.stringify(withoutPrompt)));
      expect(settled!.mock.calls[1]!.slice(10, 17)).toEqual(copy(JSON.stringify(withoutPrompt)));
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('lets exactly one of two processes racing for the last of a budget win, every time', async () => {
    const prefix = uniquePrefix('quota-race');
    prefixes.push(prefix);
    const script = fileURLToPath(new URL('../helpers/shared-limits-ledger-child.ts', import.meta.url));
    const racers = ['left', 'right'].map((name) => fork(script, [url, prefix, name], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    const message = (child: (typeof racers)[number], type: string) =>
      new Promise<{ type: string; won: boolean[] }>((resolve, reject) => {
        child.on('message', (m: { type: string; won: boolean[] }) => m.type === type && resolve(m));
        child.once('exit', (code) => reject(new Error(`a racer exited with ${code} before "${type}"`)));
      });
    try {
      await Promise.all(racers.map((r) => message(r, 'ready')));
      const results = racers.map((r) => message(r, 'results'));
      const rounds = 60;
      // Both fire round i at the same moment (startAt + i × 20 ms), so each round is a real race.
      const startAt = Date.now() + 300;
      for (const racer of racers) racer.send({ type: 'go', rounds, estimateUsd: 0.6, userDailyUsd: 1, startAt, spacingMs: 20 });
      const [left, right] = await Promise.all(results);
      console.info(`[shared-limits] ledger race, rounds won: left ${left!.won.filter(Boolean).length}, right ${right!.won.filter(Boolean).length}`);
      const winners = Array.from({ length: rounds }, (_, i) => Number(left!.won[i]) + Number(right!.won[i]));
      expect(winners).toEqual(Array.from({ length: rounds }, () => 1));
    } finally {
      for (const racer of racers) racer.kill('SIGKILL');
    }
  });
});
