import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/core/redis-connection.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import type { QuotaStore, ReserveInput, SpendLimits } from '../../src/spend/types.js';
import { deleteKeys, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

/**
 * One contract for every store: the file ledger and Redis (against the test
 * run's throwaway Redis) answer every question alike, because the
 * rules are the rulebook's and the stores only keep the numbers.
 *
 * Times are recent (the Redis stream and leases run on the real clock): `D` is
 * the last second of yesterday (UTC), `M` the last second of last month.
 */
const DAY = 24 * 60 * 60_000;
const startOfToday = Math.floor(Date.now() / DAY) * DAY;
const D = startOfToday - 1000;
const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);
const monthOf = (at: number) => new Date(at).toISOString().slice(0, 7);
const firstOfThisMonth = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1);
const M = firstOfThisMonth - 1000;

interface Maker {
  /** A store standing for one process; stores of one `group` share their storage, as processes share a ledger. */
  open(group: string, options?: { leaseMs?: number }): Promise<QuotaStore>;
  cleanup(): Promise<void>;
}

const redis = testRedis();
let redisClient: Redis | undefined;

const makers: Record<string, () => Maker> = {
  file: () => {
    const dirs = new Map<string, string>();
    return {
      open: async (group, options = {}) => {
        const dir = dirs.get(group) ?? (await mkdtemp(join(tmpdir(), 'pictor-contract-')));
        dirs.set(group, dir);
        // One store per file per process: a test opens a group's second store once the first is closed (a restart).
        return new FileQuotaStore({ dir, leaseMs: options.leaseMs });
      },
      cleanup: async () => {
        for (const dir of dirs.values()) await rm(dir, { recursive: true, force: true });
      },
    };
  },
  redis: () => {
    const prefixes = new Map<string, string>();
    return {
      open: async (group, options = {}) => {
        const prefix = prefixes.get(group) ?? uniquePrefix('contract');
        prefixes.set(group, prefix);
        return new RedisQuotaStore({ redis: redisClient!, prefix, leaseMs: options.leaseMs });
      },
      cleanup: async () => {
        for (const prefix of prefixes.values()) await deleteKeys(redis.url!, prefix);
      },
    };
  },
};

const kinds = Object.keys(makers).filter((kind) => kind !== 'redis' || !redis.skipReason);

beforeAll(async () => {
  if (kinds.includes('redis') && redis.url) redisClient = await connectRedis(redis.url);
});
afterAll(() => {
  redisClient?.disconnect();
});

describe.each(kinds)('the %s quota store', (kind) => {
  let maker: Maker;
  const stores: QuotaStore[] = [];

  /** Each test has storage of its own (a group) unless it names one to share. */
  const open = async (group = `t-${Math.random()}`, options: { leaseMs?: number } = {}) => {
    const store = await maker.open(group, options);
    stores.push(store);
    return store;
  };
  const ask = (jobId: string, estimateUsd: number, limits: SpendLimits, extra: Partial<ReserveInput> = {}): ReserveInput => ({
    jobId,
    userKey: 'discord:alice',
    scopeKey: 'discord:guild',
    estimateUsd,
    limits,
    now: D - 60_000,
    ...extra,
  });

  beforeAll(() => {
    maker = makers[kind]!();
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await maker.cleanup();
  });

  it('reserves within a cap and refuses the job that would pass it, with the cap, what is used and when it resets', async () => {
    const s = await open();
    expect(await s.reserve(ask('j1', 0.6, { userDailyUsd: 1 }))).toEqual({ ok: true });
    expect(await s.reserve(ask('j2', 0.5, { userDailyUsd: 1 }))).toEqual({ ok: false, code: 'budget_user_daily', limit: 1, used: 0.6, resetsAt: startOfToday });
    expect(await s.reserve(ask('j3', 0.4, { userDailyUsd: 1 }))).toEqual({ ok: true });
    expect(await s.spentToday('discord:alice', D)).toBe(1);
  });

  it('checks the caps in the rulebook order: the user’s before the scope’s before the account’s, daily before monthly', async () => {
    const s = await open();
    expect(await s.reserve(ask('a', 0.5, {}))).toEqual({ ok: true });
    const all = { userDailyUsd: 0.6, userMonthlyUsd: 0.6, scopeDailyUsd: 0.6, scopeMonthlyUsd: 0.6, accountDailyUsd: 0.6, accountMonthlyUsd: 0.6 };
    expect(await s.reserve(ask('b', 0.2, all))).toMatchObject({ ok: false, code: 'budget_user_daily' });
    expect(await s.reserve(ask('b', 0.2, { ...all, userDailyUsd: undefined }))).toMatchObject({ ok: false, code: 'budget_user_monthly', resetsAt: firstOfNextMonth(D) });
    expect(await s.reserve(ask('b', 0.2, { scopeMonthlyUsd: 0.6, accountDailyUsd: 0.6 }))).toMatchObject({ ok: false, code: 'budget_scope_monthly' });
    expect(await s.reserve(ask('b', 0.2, { accountMonthlyUsd: 0.6 }, { userKey: 'discord:bob', scopeKey: 'discord:other' }))).toMatchObject({
      ok: false,
      code: 'budget_account_monthly',
      used: 0.5,
    });
  });

  it('replaces a reservation by its real cost once, and drops a released one without charging it', async () => {
    const s = await open();
    await s.reserve(ask('j1', 0.6, {}));
    await s.markSent('j1');
    expect(await s.settle('j1', 0.25, { requestId: 'req_1' })).toBe(true);
    expect(await s.settle('j1', 0.25)).toBe(false);
    await s.reserve(ask('j2', 0.6, {}));
    await s.release('j2');
    expect(await s.spentToday('discord:alice', D)).toBe(0.25);
    expect(await s.spentToday('discord:guild', D)).toBe(0.25);
    expect(await s.spentToday('account', D)).toBe(0.25);
    const records = await s.usage({});
    expect(records).toEqual([expect.objectContaining({ jobId: 'j1', costUsd: 0.25, basis: 'table', requestId: 'req_1', surface: 'discord' })]);
  });

  it('refuses a job it has no reservation for at markSent', async () => {
    const s = await open();
    await expect(s.markSent('ghost')).rejects.toThrow(/no reservation/);
  });

  it('records the basis a settle gives, and flags a charge above its reservation with what was reserved', async () => {
    const s = await open();
    await s.reserve(ask('est', 0.3, {}));
    await s.settle('est', 0.3, { basis: 'estimate' });
    await s.reserve(ask('over', 0.1, {}));
    await s.settle('over', 2.2);
    const records = await s.usage({});
    expect(records.find((r) => r.jobId === 'est')).toMatchObject({ basis: 'estimate', costUsd: 0.3 });
    expect(records.find((r) => r.jobId === 'est')).not.toHaveProperty('reservedUsd');
    expect(records.find((r) => r.jobId === 'over')).toMatchObject({ basis: 'table', costUsd: 2.2, reservedUsd: 0.1 });
    // Real spend: counted, past the cap.
    expect(await s.spentToday('account', D)).toBe(2.5);
  });

  it('counts a job reserved at 23:59:59 and settled after midnight on its day, in the ledger and the usage records alike', async () => {
    const s = await open();
    await s.reserve(ask('late', 0.4, {}, { now: D }));
    await s.settle('late', 0.3);
    expect(await s.spentToday('account', D)).toBe(0.3);
    expect(await s.spentToday('account', startOfToday + 1000)).toBe(0);
    const yesterday = await s.usage({ since: startOfToday - DAY, until: startOfToday });
    expect(yesterday).toEqual([expect.objectContaining({ jobId: 'late', day: dayOf(D), month: monthOf(D) })]);
    expect(await s.usage({ since: startOfToday, until: startOfToday + DAY })).toEqual([]);
  });

  it('counts a job reserved in the last second of a month in that month, whenever it settles', async () => {
    const s = await open();
    await s.reserve(ask('month-end', 0.7, { accountMonthlyUsd: 1 }, { now: M }));
    await s.settle('month-end', 0.5);
    expect(await s.spentThisMonth('account', M)).toBe(0.5);
    expect(await s.spentThisMonth('account', firstOfThisMonth + 1000)).toBe(0);
    expect(await s.usage({ since: firstOfThisMonth - DAY, until: firstOfThisMonth })).toEqual([expect.objectContaining({ jobId: 'month-end', month: monthOf(M) })]);
    expect(await s.reserve(ask('next', 0.9, { accountMonthlyUsd: 1 }, { now: firstOfThisMonth + 1000 }))).toEqual({ ok: true });
  });

  it('refuses a user with too many jobs at once until one ends, and one within the cooldown until it has passed', async () => {
    const s = await open();
    const limits = { userConcurrentJobs: 1 };
    expect(await s.reserve(ask('c1', 0.1, limits))).toEqual({ ok: true });
    const now = D - 60_000;
    expect(await s.reserve(ask('c2', 0.1, limits))).toEqual({ ok: false, code: 'user_concurrency', limit: 1, used: 1, resetsAt: now });
    await s.settle('c1', 0.1);
    expect(await s.reserve(ask('c2', 0.1, limits))).toEqual({ ok: true });

    const cooldown = { userCooldownSeconds: 30 };
    expect(await s.reserve(ask('k1', 0.1, cooldown, { userKey: 'discord:carol', now }))).toEqual({ ok: true });
    expect(await s.reserve(ask('k2', 0.1, cooldown, { userKey: 'discord:carol', now: now + 10_000 }))).toEqual({
      ok: false,
      code: 'user_cooldown',
      limit: 30,
      used: 10,
      resetsAt: now + 30_000,
    });
    expect(await s.reserve(ask('k3', 0.1, cooldown, { userKey: 'discord:carol', now: now + 30_000 }))).toEqual({ ok: true });
  });

  it('keeps the caps chat admins set per scope, with who set them, and clears them', async () => {
    const s = await open();
    expect(await s.capOverrides('discord:guild')).toEqual({});
    expect(await s.setCapOverride('discord:guild', 'userDailyUsd', 0.5, 'discord:admin', 1000)).toEqual({ previousUsd: undefined });
    expect(await s.setCapOverride('discord:guild', 'userDailyUsd', 0.25, 'discord:admin', 2000)).toEqual({ previousUsd: 0.5 });
    expect(await s.capOverrides('discord:guild')).toEqual({ userDailyUsd: { usd: 0.25, by: 'discord:admin', at: 2000 } });
    expect(await s.capOverrides('discord:other')).toEqual({});
    await s.setCapOverride('discord:guild', 'userDailyUsd', undefined, 'discord:admin', 3000);
    expect(await s.capOverrides('discord:guild')).toEqual({});
    await expect(s.setCapOverride('discord:guild', 'accountDailyUsd' as never, 1, 'discord:admin', 1)).rejects.toThrow(/cannot be changed from chat/);
  });

  it('erases a user’s prompts from their usage records and open reservations, keeping every amount, for every store on the same storage', async () => {
    const group = `forget-${Math.random()}`;
    const a = await open(group);
    const now = Date.now();
    const job = (prompt: string) => ({ operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', prompt });
    await a.reserve(ask('f-done', 0.2, {}, { now, job: job('a ZEBRA at noon') }));
    await a.markSent('f-done');
    await a.settle('f-done', 0.011);
    await a.reserve(ask('f-open', 0.2, {}, { now, job: job('a ZEBRA at night') }));
    await a.reserve(ask('f-other', 0.2, {}, { now, userKey: 'discord:bob', job: job('a ZEBRA of bob') }));
    await a.markSent('f-other');
    await a.settle('f-other', 0.011);
    const spent = await a.spentToday('discord:guild', now);

    await a.forgetPrompts('discord:alice');
    await a.markSent('f-open');
    await a.settle('f-open', 0.011);
    await a.close();
    const b = await open(group);
    const records = await b.usage({});
    expect(records.map((r) => [r.jobId, r.prompt, r.costUsd])).toEqual([
      ['f-done', undefined, 0.011],
      ['f-other', 'a ZEBRA of bob', 0.011],
      ['f-open', undefined, 0.011],
    ]);
    expect(await b.spentToday('discord:guild', now)).toBeCloseTo(spent - 0.2 + 0.011, 9);
  });

  it('has nothing of an older version’s to hand over when it never held any', async () => {
    const s = await open();
    expect(await s.takeLegacy()).toEqual({ settings: {}, seen: [] });
    expect(await s.takeLegacy()).toEqual({ settings: {}, seen: [] });
  });

  it('ends the reservations of a process that died: the sent one charged at its estimate (uncertain), the queued one released', async () => {
    const group = `dead-${Math.random()}`;
    const dead = await open(group, { leaseMs: 300 });
    const now = Date.now();
    await dead.reserve(ask('d-sent', 0.5, {}, { userKey: 'u', scopeKey: 's', now }));
    await dead.markSent('d-sent');
    await dead.reserve(ask('d-queued', 0.4, {}, { userKey: 'u', scopeKey: 's', now }));
    await dead.close(); // stops renewing, as a killed process does
    const alive = await open(group, { leaseMs: 300 });
    await new Promise((r) => setTimeout(r, 700));
    const report = await alive.reconcile(Date.now());
    expect(report).toEqual({ released: ['d-queued'], settledAtEstimate: ['d-sent'], chargedUsd: 0.5 });
    expect(await alive.spentToday('s', Date.now())).toBe(0.5);
    expect(await alive.settle('d-sent', 0.1)).toBe(false);
    expect(await alive.usage({})).toEqual([expect.objectContaining({ jobId: 'd-sent', basis: 'uncertain', costUsd: 0.5 })]);
  });

  it('lets exactly one of many concurrent reservations take the last of a cap', async () => {
    const s = await open();
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => s.reserve(ask(`race-${i}`, 0.6, { scopeDailyUsd: 1 }, { userKey: `discord:u${i}` }))));
    expect(answers.filter((a) => a.ok)).toHaveLength(1);
  });
});

function firstOfNextMonth(at: number): number {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}
