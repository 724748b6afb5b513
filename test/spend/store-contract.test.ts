import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectRedis } from '../../src/core/redis-connection.js';
import { cutOffCostUsd } from '../../src/spend/charge-rules.js';
import { QuotaStoreClosedError } from '../../src/spend/errors.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import type { LegacyBotRecords, LostReservation, QuotaStore, ReconcileReport, ReserveInput, ScopeSettingEntry, SpendLimits } from '../../src/spend/types.js';
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

interface StoreOptions {
  leaseMs?: number;
  clock?: () => number;
  onReservationLost?: (lost: LostReservation) => void;
  onError?: (error: unknown) => void;
  onReconciled?: (report: ReconcileReport) => void;
}

interface Maker {
  /** A store standing for one process; stores of one `group` share their storage, as processes share a ledger. */
  open(group: string, options?: StoreOptions): Promise<QuotaStore>;
  /** A store standing for another process on the group's storage while the group's first store stays open. */
  beside(group: string, options?: StoreOptions): Promise<QuotaStore>;
  /** The group's storage loses everything, as a Redis restarted without persistence (or a ledger file deleted). */
  wipe(group: string): Promise<void>;
  /**
   * The leases of the group's processes lapse, as when none was renewed for its `leaseMs`: Redis drops their owner
   * keys (which it expires by its own clock); the file ledger's leases lapse by the stores' clock, which the test moves.
   */
  lapseLeases(group: string): Promise<void>;
  /** The group's storage fails every renewal of a lease (the ledger file damaged, Redis refusing) until `restore` is called. */
  failRenewals(group: string): Promise<() => Promise<void>>;
  /** The group's storage holds what an older version kept for the bots there: `LEGACY`'s settings, and its seen mark for a minute. */
  keepLegacy(group: string): Promise<void>;
  /** The group's storage gains one chat setting as an older version's process writes it (beside what it holds). */
  keepLegacySetting(group: string, scopeKey: string, name: string, entry: ScopeSettingEntry): Promise<void>;
  /** The group's storage gains one Slack signature seen as an older version's process notes it (beside what it holds). */
  keepLegacySeen(group: string, id: string): Promise<void>;
  /** The group's storage holds a reservation an older version made: no owner, and whether it was sent unknown. */
  keepOwnerless(group: string, jobId: string, r: { userKey: string; scopeKey: string; usd: number; at: number }): Promise<void>;
  cleanup(): Promise<void>;
}

/** What `keepLegacy` keeps, as `takeLegacy` hands it over. */
const LEGACY: LegacyBotRecords = {
  settings: {
    'discord:g1': { maxImages: { value: 2, by: 'discord:admin', at: 1 } },
    'slack:T1': { defaultQuality: { value: 'low', by: 'slack:admin', at: 1 } },
  },
  seen: ['e1'],
};

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
        return new FileQuotaStore({ dir, ...options });
      },
      beside: async (group, options = {}) => {
        // One store per file per process: another process's store opens the folder through a link of its own.
        const alias = `${dirs.get(group)!}-beside-${Math.random()}`;
        await symlink(dirs.get(group)!, alias);
        dirs.set(alias, alias);
        return new FileQuotaStore({ dir: alias, ...options });
      },
      wipe: async (group) => {
        const dir = dirs.get(group)!;
        for (const name of ['quota-ledger.json', 'quota-ledger.json.bak']) await unlink(join(dir, name)).catch(() => undefined);
        await rm(join(dir, 'usage'), { recursive: true, force: true });
      },
      lapseLeases: async () => undefined,
      failRenewals: async (group) => {
        // Its backup copy too, when there is one: a damaged ledger alone is put back from it by the next step.
        const paths = ['quota-ledger.json', 'quota-ledger.json.bak'].map((name) => join(dirs.get(group)!, name)).filter((path) => existsSync(path));
        const texts = await Promise.all(paths.map((path) => readFile(path, 'utf8')));
        for (const path of paths) await writeFile(path, '{"version":');
        return async () => {
          for (const [i, path] of paths.entries()) await writeFile(path, texts[i]!);
        };
      },
      keepLegacy: async (group) => {
        const dir = dirs.get(group) ?? (await mkdtemp(join(tmpdir(), 'pictor-contract-')));
        dirs.set(group, dir);
        await writeFile(join(dir, 'cap-overrides.json'), JSON.stringify({ version: 1, scopes: {}, settings: LEGACY.settings }));
        await writeFile(join(dir, 'slack-replay.json'), JSON.stringify({ version: 1, seen: Object.fromEntries(LEGACY.seen.map((id) => [id, Date.now() + 60_000])) }));
      },
      keepLegacySetting: async (group, scopeKey, name, entry) => {
        const file = join(dirs.get(group)!, 'cap-overrides.json');
        const kept = JSON.parse(await readFile(file, 'utf8')) as { settings?: Record<string, Record<string, ScopeSettingEntry>> };
        kept.settings = { ...kept.settings, [scopeKey]: { ...kept.settings?.[scopeKey], [name]: entry } };
        await writeFile(file, JSON.stringify(kept));
      },
      keepLegacySeen: async (group, id) => {
        const file = join(dirs.get(group)!, 'slack-replay.json');
        const kept = JSON.parse(await readFile(file, 'utf8').catch(() => '{"version":1,"seen":{}}')) as { seen: Record<string, number> };
        await writeFile(file, JSON.stringify({ version: 1, seen: { ...kept.seen, [id]: Date.now() + 60_000 } }));
      },
      keepOwnerless: async (group, jobId, { at, ...r }) => {
        const dir = dirs.get(group) ?? (await mkdtemp(join(tmpdir(), 'pictor-contract-')));
        dirs.set(group, dir);
        // The first ledger format kept no owner (nor whether a job was sent).
        const ledger = { version: 1, spent: {}, reservations: { [jobId]: { ...r, day: dayOf(at), at } }, lastJobAt: {} };
        await writeFile(join(dir, 'quota-ledger.json'), JSON.stringify(ledger));
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
        return new RedisQuotaStore({ redis: redisClient!, prefix, ...options });
      },
      beside: async (group, options = {}) => new RedisQuotaStore({ redis: redisClient!, prefix: prefixes.get(group)!, ...options }),
      wipe: (group) => deleteKeys(redis.url!, prefixes.get(group)!),
      lapseLeases: async (group) => {
        const owners = await redisClient!.keys(`${prefixes.get(group)!}:quota:owner:*`);
        if (owners.length > 0) await redisClient!.del(...owners);
      },
      failRenewals: async () => {
        // The renewal is one script sent as it is (`EVAL`), not one of the ledger's defined commands.
        const renewal = vi.spyOn(redisClient!, 'eval').mockRejectedValue(new Error('ERR the lease was not renewed'));
        return async () => renewal.mockRestore();
      },
      keepLegacy: async (group) => {
        const prefix = prefixes.get(group) ?? uniquePrefix('contract');
        prefixes.set(group, prefix);
        for (const [scopeKey, entries] of Object.entries(LEGACY.settings))
          for (const [name, entry] of Object.entries(entries)) await redisClient!.hset(`${prefix}:quota:settings:${scopeKey}`, name, JSON.stringify(entry));
        for (const id of LEGACY.seen) await redisClient!.set(`${prefix}:quota:seen:${id}`, '1', 'PX', 60_000);
      },
      keepLegacySetting: async (group, scopeKey, name, entry) => {
        await redisClient!.hset(`${prefixes.get(group)!}:quota:settings:${scopeKey}`, name, JSON.stringify(entry));
      },
      keepLegacySeen: async (group, id) => {
        await redisClient!.set(`${prefixes.get(group)!}:quota:seen:${id}`, '1', 'PX', 60_000);
      },
      keepOwnerless: async (group, jobId, { userKey, scopeKey, usd, at }) => {
        const prefix = prefixes.get(group) ?? uniquePrefix('contract');
        prefixes.set(group, prefix);
        // An older version's reservation: no owner, no month, no sent mark.
        await redisClient!.hset(`${prefix}:quota:res:${jobId}`, { userKey, scopeKey, nanos: Math.round(usd * 1e9), day: dayOf(at), at });
        for (const key of [userKey, scopeKey, 'account']) await redisClient!.zadd(`${prefix}:quota:active:${key}`, at, jobId);
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
  const open = async (group = `t-${Math.random()}`, options: StoreOptions = {}) => {
    const store = await maker.open(group, options);
    stores.push(store);
    return store;
  };
  /**
   * A live process on a ledger whose other process queued d-queued ($0.40, discord:alice) and sent d-sent ($0.50,
   * discord:bob) in discord:guild, then was killed; its lease has lapsed by `time`, the stores' clock.
   */
  const besideDeadProcess = async (name: string) => {
    const group = `${name}-${Math.random()}`;
    const time = { now: Date.now() };
    const lease = { leaseMs: 60_000, clock: () => time.now };
    const dead = await open(group, lease);
    await dead.reserve(ask('d-queued', 0.4, {}, { userKey: 'discord:alice', scopeKey: 'discord:guild', now: time.now }));
    await dead.reserve(ask('d-sent', 0.5, {}, { userKey: 'discord:bob', scopeKey: 'discord:guild', now: time.now }));
    await dead.markSent('d-sent');
    await dead.close(); // stops renewing, as a killed process does
    const alive = await open(group, lease);
    time.now += 60_001;
    await maker.lapseLeases(group);
    return { alive, time };
  };
  const openBeside = async (group: string, options: StoreOptions = {}) => {
    const store = await maker.beside(group, options);
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

  it('charges a job whose reservation the ledger lost (Redis restarted empty, the ledger file deleted) from its process’s copy, once, and says so; a queued one gets it back before it is sent', async () => {
    const group = `lost-${Math.random()}`;
    const lost: LostReservation[] = [];
    const s = await open(group, { onReservationLost: (l) => lost.push(l) });
    await s.reserve(ask('at-the-service', 0.6, {}));
    await s.markSent('at-the-service');
    await s.reserve(ask('queued', 0.4, {}));
    await maker.wipe(group);
    expect(await s.spentToday('account', D)).toBe(0);

    await s.markSent('queued');
    expect(await s.spentToday('account', D)).toBe(0.4);
    expect(await s.settle('at-the-service', 0.25, { requestId: 'req_lost' })).toBe(true);
    expect(await s.settle('at-the-service', 0.25)).toBe(false);
    expect(await s.settle('queued', 0.3)).toBe(true);

    expect(await s.spentToday('account', D)).toBe(0.55);
    expect(await s.spentToday('discord:alice', D)).toBe(0.55);
    expect(await s.spentThisMonth('discord:guild', D)).toBe(0.55);
    const records = await s.usage({});
    expect(records.map((r) => [r.jobId, r.costUsd, r.day])).toEqual([
      ['at-the-service', 0.25, dayOf(D)],
      ['queued', 0.3, dayOf(D)],
    ]);
    expect(lost).toEqual([
      { jobId: 'queued', userKey: 'discord:alice', scopeKey: 'discord:guild', day: dayOf(D), foundAt: 'send', chargedUsd: undefined },
      { jobId: 'at-the-service', userKey: 'discord:alice', scopeKey: 'discord:guild', day: dayOf(D), foundAt: 'settle', chargedUsd: 0.25 },
    ]);
  });

  it('charges a job once when two settles of it arrive together: the first answers true, the second false and charges nothing', async () => {
    const s = await open();
    await s.reserve(ask('twice', 0.6, {}));
    await s.markSent('twice');
    expect(await Promise.all([s.settle('twice', 0.25, { requestId: 'req_1' }), s.settle('twice', 0.25)])).toEqual([true, false]);
    expect(await s.spentToday('account', D)).toBe(0.25);
    expect((await s.usage({})).map((r) => [r.jobId, r.costUsd])).toEqual([['twice', 0.25]]);
  });

  it('charges a job whose reservation the ledger lost once when two settles of it arrive together, and says so once', async () => {
    const group = `lost-twice-${Math.random()}`;
    const lost: LostReservation[] = [];
    const s = await open(group, { onReservationLost: (l) => lost.push(l) });
    await s.reserve(ask('lost-twice', 0.6, {}));
    await s.markSent('lost-twice');
    await maker.wipe(group);
    expect(await Promise.all([s.settle('lost-twice', 0.25), s.settle('lost-twice', 0.25)])).toEqual([true, false]);
    expect(await s.spentToday('account', D)).toBe(0.25);
    expect((await s.usage({})).map((r) => [r.jobId, r.costUsd])).toEqual([['lost-twice', 0.25]]);
    expect(lost.map((l) => [l.jobId, l.foundAt, l.chargedUsd])).toEqual([['lost-twice', 'settle', 0.25]]);
  });

  it('refuses to send a job settled just before it, even in the same step: its reservation is not put back', async () => {
    const group = `settled-then-sent-${Math.random()}`;
    const s = await open(group);
    await s.reserve(ask('done', 0.6, {}));
    await maker.wipe(group);
    const [settled, sent] = await Promise.allSettled([s.settle('done', 0.25), s.markSent('done')]);
    expect(settled).toEqual({ status: 'fulfilled', value: true });
    expect(sent).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/no reservation/) }) });
    expect(await s.activeJobs()).toEqual([]);
    expect(await s.spentToday('account', D)).toBe(0.25);
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

  it('records the size and quality a settle gives (what the service reported) in place of those asked, and those asked without', async () => {
    const s = await open();
    const job = { operation: 'generate' as const, n: 1, size: 'auto', quality: 'low' };
    await s.reserve(ask('reported', 0.3, {}, { job }));
    await s.settle('reported', 0.2, { size: '1024x1536', quality: 'high' });
    await s.reserve(ask('not-reported', 0.3, {}, { job }));
    await s.settle('not-reported', 0.3, { basis: 'estimate' });
    const records = await s.usage({});
    expect(records.find((r) => r.jobId === 'reported')).toMatchObject({ operation: 'generate', n: 1, size: '1024x1536', quality: 'high' });
    expect(records.find((r) => r.jobId === 'not-reported')).toMatchObject({ size: 'auto', quality: 'low' });
  });

  it('answers many keys’ day and month at once, as spentToday and spentThisMonth answer each: settled and reserved', async () => {
    const s = await open();
    await s.reserve(ask('settled', 0.6, {}, { now: D }));
    await s.settle('settled', 0.25);
    await s.reserve(ask('running', 0.6, {}, { userKey: 'discord:bob', now: D }));
    const keys = ['discord:alice', 'discord:bob', 'discord:guild', 'account', 'discord:nobody'];
    const many = await s.spentMany(keys, D);
    expect([...many.keys()]).toEqual(keys);
    expect(many.get('discord:guild')).toEqual({ day: 0.85, month: 0.85 });
    expect(many.get('discord:nobody')).toEqual({ day: 0, month: 0 });
    for (const key of keys) expect(many.get(key), key).toEqual({ day: await s.spentToday(key, D), month: await s.spentThisMonth(key, D) });
    expect((await s.spentMany(keys, startOfToday + 1000)).get('discord:bob')).toEqual({ day: 0, month: await s.spentThisMonth('discord:bob', startOfToday + 1000) });
  });

  it('lists the keys with an amount settled in the month, each once, without those only reserved or settled in another month', async () => {
    const s = await open();
    await s.reserve(ask('settled', 0.6, {}, { now: D }));
    await s.settle('settled', 0.25);
    await s.reserve(ask('again', 0.1, {}, { now: D }));
    await s.settle('again', 0.1);
    await s.reserve(ask('running', 0.6, {}, { userKey: 'discord:bob', now: D }));
    expect((await s.settledKeys(D)).sort()).toEqual(['account', 'discord:alice', 'discord:guild']);
    expect(await s.settledKeys(D + 40 * DAY)).toEqual([]);
  });

  it('answers many keys as spentToday and spentThisMonth answer each once a process’s lease lapsed, its queued and sent reservations alike', async () => {
    const { alive, time } = await besideDeadProcess('many-dead');
    const keys = ['discord:alice', 'discord:bob', 'discord:guild', 'account'];
    const many = await alive.spentMany(keys, time.now);
    for (const key of keys) expect(many.get(key), key).toEqual({ day: await alive.spentToday(key, time.now), month: await alive.spentThisMonth(key, time.now) });
  });

  it('counts a dead process’s reservations as their end will, before anything ended them: the queued one not at all, the sent one at its estimate', async () => {
    const { alive, time } = await besideDeadProcess('dead-figures');
    const expected = { 'discord:alice': 0, 'discord:bob': 0.5, 'discord:guild': 0.5, account: 0.5 };
    const many = await alive.spentMany(Object.keys(expected), time.now);
    for (const [key, usd] of Object.entries(expected)) expect(many.get(key), key).toEqual({ day: usd, month: usd });
    for (const [key, usd] of Object.entries(expected)) expect([await alive.spentToday(key, time.now), await alive.spentThisMonth(key, time.now)], key).toEqual([usd, usd]);
  });

  it('lists a dead process’s reservations as held until a step ends them (what tells the console a reconcile is due), and none once a reconcile did', async () => {
    const { alive, time } = await besideDeadProcess('dead-active');
    expect((await alive.activeJobs()).map((j) => [j.jobId, j.sent])).toEqual([
      ['d-queued', false],
      ['d-sent', true],
    ]);
    expect(await alive.reconcile(time.now)).toEqual({ released: ['d-queued'], settledAtEstimate: ['d-sent'], chargedUsd: 0.5 });
    expect(await alive.activeJobs()).toEqual([]);
  });

  it('counts a dead process’s jobs in a reserve as their end will: its queued job not at all, its sent one at its estimate', async () => {
    const { alive, time } = await besideDeadProcess('dead-check');
    const cap = { userDailyUsd: 0.5 };
    expect(await alive.reserve(ask('a', 0.5, cap, { userKey: 'discord:alice', now: time.now }))).toEqual({ ok: true });
    expect(await alive.reserve(ask('b', 0.1, cap, { userKey: 'discord:bob', now: time.now }))).toMatchObject({ ok: false, code: 'budget_user_daily', used: 0.5 });
  });

  // The file ledger's alone: Redis sees no pids, so a lapsed lease there is a gone process (`LedgerOptions.leaseMs`), the case above.
  it.runIf(kind === 'file')('counts the jobs of a process whose lease lapsed while it lives in what is spent and in a reserve alike: the queued one not at all, the sent one at its estimate', async () => {
    const group = `lapsed-alive-${Math.random()}`;
    const holder = await open(group, { leaseMs: 60_000 });
    await holder.reserve(ask('l-queued', 0.4, {}, { userKey: 'discord:alice', now: Date.now() }));
    await holder.reserve(ask('l-sent', 0.5, {}, { userKey: 'discord:bob', now: Date.now() }));
    await holder.markSent('l-sent');
    // Another process a lease on: the holder still runs (its store open) but renewed nothing meanwhile.
    const time = { now: Date.now() + 60_001 };
    const other = await openBeside(group, { leaseMs: 60_000, clock: () => time.now });
    await maker.lapseLeases(group);
    const cap = { userDailyUsd: 0.5 };
    const expected = { 'discord:alice': 0, 'discord:bob': 0.5, 'discord:guild': 0.5, account: 0.5 };
    const many = await other.spentMany(Object.keys(expected), time.now);
    for (const [key, usd] of Object.entries(expected)) expect([many.get(key), await other.spentToday(key, time.now)], key).toEqual([{ day: usd, month: usd }, usd]);
    expect(await other.reserve(ask('a', 0.5, cap, { userKey: 'discord:alice', now: time.now }))).toEqual({ ok: true });
    expect(await other.reserve(ask('b', 0.1, cap, { userKey: 'discord:bob', now: time.now }))).toMatchObject({ ok: false, code: 'budget_user_daily', used: 0.5 });
    expect(await other.reserve(ask('a2', 0.1, cap, { userKey: 'discord:alice', now: time.now }))).toMatchObject({ ok: false, code: 'budget_user_daily', used: 0.5 });
  });

  it('charges a dead process’s job whose settle was recorded what it cost, once, and only its unsettled sent job at its estimate', async () => {
    const group = `settled-then-dead-${Math.random()}`;
    const time = { now: Date.now() };
    const lease = { leaseMs: 60_000, clock: () => time.now };
    const on = { userKey: 'u', scopeKey: 's' };
    const dead = await open(group, lease);
    await dead.reserve(ask('settled', 0.5, {}, { ...on, now: time.now }));
    await dead.markSent('settled');
    await dead.reserve(ask('cut', 0.3, {}, { ...on, now: time.now }));
    await dead.markSent('cut');
    await dead.settle('settled', 0.04, { requestId: 'req-settled' });
    await dead.close(); // stops renewing, as a killed process does
    const alive = await open(group, lease);
    time.now += 60_001;
    await maker.lapseLeases(group);
    expect(await alive.reconcile(time.now)).toEqual({ released: [], settledAtEstimate: ['cut'], chargedUsd: 0.3 });
    expect(await alive.spentToday('s', time.now)).toBe(0.34);
    expect((await alive.usage({})).map((r) => [r.jobId, r.costUsd, r.basis, r.requestId])).toEqual([['settled', 0.04, 'table', 'req-settled'], ['cut', 0.3, 'uncertain', undefined]]);
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

  /** What each `takeLegacy` of `s` hands over, one entry a take. */
  const takeAll = async (s: QuotaStore, times = 1) => {
    const taken: LegacyBotRecords[] = [];
    for (let i = 0; i < times; i++) await s.takeLegacy(async (records) => void taken.push(records));
    return taken;
  };

  it('has nothing of an older version’s to hand over when it never held any', async () => {
    const s = await open();
    expect(await takeAll(s, 2)).toEqual([{ settings: {}, seen: [] }, { settings: {}, seen: [] }]);
  });

  it('deletes what an older version kept only once the caller has accepted it: a hand-over that fails leaves all of it for the next take', async () => {
    const group = `legacy-${Math.random()}`;
    await maker.keepLegacy(group);
    const s = await open(group);
    const offered: LegacyBotRecords[] = [];
    await expect(s.takeLegacy(async (records) => {
      offered.push(records);
      throw new Error('the bots’ state did not answer');
    })).rejects.toThrow('the bots’ state did not answer');
    expect(offered).toEqual([LEGACY]);
    expect(await takeAll(s, 2)).toEqual([LEGACY, { settings: {}, seen: [] }]);
  });

  it('deletes only what it handed over: a setting or a signature an older version’s process writes while the caller accepts stays for the next take', async () => {
    const group = `legacy-later-${Math.random()}`;
    await maker.keepLegacy(group);
    const s = await open(group);
    const [newer, added] = [{ value: 5, by: 'discord:admin', at: 2 }, { value: ['C1'], by: 'discord:admin', at: 2 }];
    await s.takeLegacy(async () => {
      await maker.keepLegacySetting(group, 'discord:g1', 'maxImages', newer);
      await maker.keepLegacySetting(group, 'discord:g1', 'channels', added);
      await maker.keepLegacySeen(group, 'e2');
    });
    expect(await takeAll(s, 2)).toEqual([{ settings: { 'discord:g1': { maxImages: newer, channels: added } }, seen: ['e2'] }, { settings: {}, seen: [] }]);
  });

  it('keeps the settings of the scopes the caller says it left (it could not take them) for the next take, and deletes the rest', async () => {
    const group = `legacy-left-${Math.random()}`;
    await maker.keepLegacy(group);
    const s = await open(group);
    await s.takeLegacy(async () => ({ settingsOf: ['discord:g1'] }));
    expect(await takeAll(s, 2)).toEqual([{ settings: { 'discord:g1': LEGACY.settings['discord:g1'] }, seen: [] }, { settings: {}, seen: [] }]);
  });

  it('ends the reservations of a process that died, once its lease has lapsed: the sent one charged at its estimate (uncertain), the queued one released', async () => {
    const group = `dead-${Math.random()}`;
    const time = { now: Date.now() };
    const lease = { leaseMs: 60_000, clock: () => time.now };
    const dead = await open(group, lease);
    await dead.reserve(ask('d-sent', 0.5, {}, { userKey: 'u', scopeKey: 's', now: time.now }));
    await dead.markSent('d-sent');
    await dead.reserve(ask('d-queued', 0.4, {}, { userKey: 'u', scopeKey: 's', now: time.now }));
    await dead.close(); // stops renewing, as a killed process does
    const alive = await open(group, lease);
    // A reconcile while its lease holds ends nothing.
    expect(await alive.reconcile(time.now)).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    time.now += 60_001;
    await maker.lapseLeases(group);
    expect(await alive.reconcile(time.now)).toEqual({ released: ['d-queued'], settledAtEstimate: ['d-sent'], chargedUsd: 0.5 });
    expect(await alive.spentToday('s', time.now)).toBe(0.5);
    expect(await alive.settle('d-sent', 0.1)).toBe(false);
    expect(await alive.usage({})).toEqual([expect.objectContaining({ jobId: 'd-sent', basis: 'uncertain', costUsd: 0.5 })]);
  });

  it('charges a job its dead process cut off exactly what the money rule says it may cost (cutOffCostUsd): its estimate once sent, nothing while queued', async () => {
    const group = `cut-off-${Math.random()}`;
    const time = { now: Date.now() };
    const lease = { leaseMs: 60_000, clock: () => time.now };
    const on = { userKey: 'u', scopeKey: 's' };
    const dead = await open(group, lease);
    // An amount with nano-dollar digits, as a real estimate has them.
    const sent = { usd: 0.123456789, sent: true };
    const queued = { usd: 0.2, sent: false };
    await dead.reserve(ask('cut-sent', sent.usd, {}, { ...on, now: time.now }));
    await dead.markSent('cut-sent');
    await dead.reserve(ask('cut-queued', queued.usd, {}, { ...on, now: time.now }));
    await dead.close();
    const alive = await open(group, lease);
    time.now += 60_001;
    await maker.lapseLeases(group);
    const report = await alive.reconcile(time.now);
    expect(cutOffCostUsd(queued)).toBeUndefined();
    expect(report).toEqual({ released: ['cut-queued'], settledAtEstimate: ['cut-sent'], chargedUsd: cutOffCostUsd(sent) });
    expect(await alive.usage({})).toEqual([expect.objectContaining({ jobId: 'cut-sent', basis: 'uncertain', costUsd: cutOffCostUsd(sent) })]);
    expect(await alive.spentToday('s', time.now)).toBe(cutOffCostUsd(sent));
  });

  it('ends a reservation an older version made (no owner, sent or not unknown) as the money rule says of an unknown (cutOffCostUsd)', async () => {
    const group = `ownerless-${Math.random()}`;
    const old = { userKey: 'u', scopeKey: 's', usd: 0.123456789, at: D - 60_000 };
    await maker.keepOwnerless(group, 'older', old);
    const s = await open(group);
    const charged = cutOffCostUsd({ usd: old.usd, sent: undefined });
    expect(charged).toBe(old.usd);
    expect(await s.reconcile(D)).toEqual({ released: [], settledAtEstimate: ['older'], chargedUsd: charged });
    expect(await s.spentToday('s', D)).toBe(charged);
    expect(await s.usage({})).toEqual([expect.objectContaining({ jobId: 'older', basis: 'uncertain', costUsd: charged })]);
    expect(await s.settle('older', 0.1)).toBe(false);
  });

  it('goes on ending a dead process’s reservations once per lease after its first reconcile, though no reserve meets them', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const group = `each-lease-${Math.random()}`;
      const time = { now: Date.now() };
      const lease = { leaseMs: 60_000, clock: () => time.now };
      const dead = await open(group, lease);
      await dead.reserve(ask('d-sent', 0.5, {}, { userKey: 'u', scopeKey: 's', now: time.now }));
      await dead.markSent('d-sent');
      await dead.close(); // stops renewing, as a killed process does
      let told!: () => void;
      const reconciled = new Promise<void>((resolve) => (told = resolve));
      const alive = await open(group, { ...lease, onReconciled: () => told() });
      await alive.reconcile(time.now); // a long-running process's start, while the dead one's lease holds
      time.now += 60_001;
      await maker.lapseLeases(group);
      expect(await alive.usage({})).toEqual([]);
      await vi.advanceTimersByTimeAsync(60_000);
      await reconciled; // the lease's reconcile wrote what it ended
      expect(await alive.usage({})).toEqual([expect.objectContaining({ jobId: 'd-sent', basis: 'uncertain', costUsd: 0.5 })]);
      expect((await alive.activeJobs()).map((j) => j.jobId)).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('tells onReconciled once what each reconcile charged, at start as once per lease after, and nothing when it ended nothing', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const group = `told-${Math.random()}`;
      const time = { now: Date.now() };
      const reports: ReconcileReport[] = [];
      const lease = { leaseMs: 60_000, clock: () => time.now };
      const first = await open(group, lease);
      await first.reserve(ask('d-first', 0.25, {}, { userKey: 'u', scopeKey: 's', now: time.now }));
      await first.markSent('d-first');
      await first.close();
      time.now += 60_001;
      await maker.lapseLeases(group);
      let toldTwice!: () => void;
      const secondReport = new Promise<void>((resolve) => (toldTwice = resolve));
      const tell = { onReconciled: (report: ReconcileReport) => reports.push(report) === 2 && toldTwice() };
      const started = await open(group, { ...lease, ...tell });
      const atStart = await started.reconcile(time.now); // a start that meets a dead process's job
      expect(reports).toEqual([{ released: [], settledAtEstimate: ['d-first'], chargedUsd: 0.25 }]);
      expect(reports[0]).toEqual(atStart);
      await started.close();
      const dead = await open(group, lease);
      await dead.reserve(ask('d-sent', 0.5, {}, { userKey: 'u', scopeKey: 's', now: time.now }));
      await dead.markSent('d-sent');
      await dead.close(); // stops renewing, as a killed process does
      const alive = await open(group, { ...lease, ...tell });
      await alive.reconcile(time.now); // its lease holds: this start ends nothing, tells nothing
      expect(reports).toHaveLength(1);
      time.now += 60_001;
      await maker.lapseLeases(group);
      await vi.advanceTimersByTimeAsync(60_000);
      await secondReport; // the lease's reconcile told what it ended
      expect(reports).toHaveLength(2);
      expect(reports[1]).toEqual({ released: [], settledAtEstimate: ['d-sent'], chargedUsd: 0.5 });
      await vi.advanceTimersByTimeAsync(60_000);
      expect(reports).toHaveLength(2);
      await alive.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('tells onReconciled what every step that ends a dead process’s reservations charged — a reserve, a settle, a read of what is spent — once, so the reports add up to the ledger’s charges at estimate', async () => {
    const group = `met-${Math.random()}`;
    const time = { now: Date.now() };
    const lease = { leaseMs: 60_000, clock: () => time.now };
    const reports: ReconcileReport[] = [];
    const tell = { ...lease, onReconciled: (report: ReconcileReport) => reports.push(report) };
    const on = { userKey: 'discord:alice', scopeKey: 'discord:guild' };
    /** A process that sent one job and queued another, then was killed; its lease lapses unless `lapse` is false. Every process tells. */
    const dies = async (jobId: string, usd: number, lapse = true) => {
      const dead = await open(group, tell);
      await dead.reserve(ask(jobId, usd, {}, { ...on, now: time.now }));
      await dead.markSent(jobId);
      await dead.reserve(ask(`${jobId}-queued`, 0.1, {}, { ...on, now: time.now }));
      await dead.close();
      if (!lapse) return;
      time.now += 60_001;
      await maker.lapseLeases(group);
    };
    /** A live process takes one step, then stops (one store per ledger file per process). */
    const meets = async (step: (store: QuotaStore) => Promise<unknown>) => {
      const store = await open(group, tell);
      await step(store);
      await store.close();
    };
    await dies('d-reserve', 0.25);
    // A reserve and a reconcile written in one commit (the file ledger's group commit) report the one end once.
    await meets((store) => Promise.all([store.reserve(ask('own-1', 0.1, {}, { ...on, now: time.now })).then(() => store.release('own-1')), store.reconcile(time.now)]));
    await dies('d-many', 0.75);
    await meets((store) => store.spentMany([on.userKey], time.now));
    await dies('d-today', 1);
    await meets((store) => store.spentToday(on.userKey, time.now));
    await dies('d-settle', 1.25, false);
    await meets(async (store) => {
      await store.reserve(ask('own-2', 0.1, {}, { ...on, now: time.now }));
      await store.markSent('own-2');
      time.now += 60_001;
      await maker.lapseLeases(group);
      await store.settle('own-2', 0.1);
    });
    await meets((store) => store.reconcile(time.now)); // what no step met yet
    const reader = await open(group, tell);
    const atEstimate = (await reader.usage({})).filter((record) => record.basis === 'uncertain');
    const dead = ['d-many', 'd-reserve', 'd-settle', 'd-today'];
    expect(atEstimate.map((record) => record.jobId).sort()).toEqual(dead);
    expect(reports.flatMap((report) => report.settledAtEstimate).sort()).toEqual(dead);
    expect(reports.flatMap((report) => report.released).sort()).toEqual(dead.map((jobId) => `${jobId}-queued`));
    expect(reports.every((report) => report.released.length + report.settledAtEstimate.length > 0)).toBe(true);
    const told = reports.reduce((sum, report) => sum + report.chargedUsd, 0);
    expect(told).toBeCloseTo(atEstimate.reduce((sum, record) => sum + record.costUsd, 0), 9);
    expect(told).toBeCloseTo(3.25, 9);
  });

  it('keeps a step that ended a dead process’s reservations when onReconciled throws: the reserve is written and answered, the hook’s error goes to onError', async () => {
    const group = `hook-${Math.random()}`;
    const time = { now: Date.now() };
    const lease = { leaseMs: 60_000, clock: () => time.now };
    const on = { userKey: 'discord:alice', scopeKey: 'discord:guild' };
    const dead = await open(group, lease);
    await dead.reserve(ask('d-sent', 0.25, {}, { ...on, now: time.now }));
    await dead.markSent('d-sent');
    await dead.close();
    time.now += 60_001;
    await maker.lapseLeases(group);
    const errors: unknown[] = [];
    const hookError = new Error('a broken hook');
    const store = await open(group, { ...lease, onReconciled: () => { throw hookError; }, onError: (error: unknown) => errors.push(error) });
    await expect(store.reserve(ask('own', 0.1, {}, { ...on, now: time.now }))).resolves.toBeDefined();
    expect(errors).toEqual([hookError]);
    await store.release('own');
    await store.close();
  });

  it('releases at reconcile a job marked not sent again (an attempt answered with an error that bills nothing), and leaves an ended one ended', async () => {
    const group = `unsent-${Math.random()}`;
    const time = { now: Date.now() };
    const lease = { leaseMs: 60_000, clock: () => time.now };
    const dead = await open(group, lease);
    await dead.reserve(ask('d-waiting', 0.5, {}, { userKey: 'u', scopeKey: 's', now: time.now }));
    await dead.markSent('d-waiting');
    await dead.markUnsent('d-waiting');
    await dead.reserve(ask('d-resent', 0.4, {}, { userKey: 'u', scopeKey: 's', now: time.now }));
    await dead.markSent('d-resent');
    await dead.markUnsent('d-resent');
    await dead.markSent('d-resent');
    await dead.reserve(ask('d-ended', 0.3, {}, { userKey: 'u', scopeKey: 's', now: time.now }));
    await dead.markSent('d-ended');
    await dead.settle('d-ended', 0.2);
    await dead.markUnsent('d-ended');
    expect(Object.fromEntries((await dead.activeJobs()).map((j) => [j.jobId, j.sent]))).toEqual({ 'd-waiting': false, 'd-resent': true });
    await dead.close();
    const alive = await open(group, lease);
    time.now += 60_001;
    await maker.lapseLeases(group);
    expect(await alive.reconcile(time.now)).toEqual({ released: ['d-waiting'], settledAtEstimate: ['d-resent'], chargedUsd: 0.4 });
    expect(await alive.spentToday('s', time.now)).toBe(0.6);
  });

  it('renews its lease every third of it while it holds a reservation, and stops once it holds none', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const s = (await open(undefined, { leaseMs: 300 })) as QuotaStore & { renewLease(): Promise<void> };
      let renewals = 0;
      s.renewLease = async () => void renewals++;
      await vi.advanceTimersByTimeAsync(1000);
      expect(renewals).toBe(0);
      await s.reserve(ask('j1', 0.04, {}));
      await vi.advanceTimersByTimeAsync(300);
      expect(renewals).toBe(3);
      await s.release('j1');
      await vi.advanceTimersByTimeAsync(1000);
      expect(renewals).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not pile renewals up on a storage that does not answer: at most two wait unanswered, and renewing goes on once one is', async () => {
    // The renewal's answer bound (a third of the lease) runs on the fake clock too: it runs out, a second renewal is
    // sent, and with two unanswered no third.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    try {
      const s = (await open(undefined, { leaseMs: 300 })) as QuotaStore & { renewLease(): Promise<void> };
      let renewals = 0;
      const answers: (() => void)[] = [];
      s.renewLease = () => new Promise<void>((resolve) => ((renewals += 1), answers.push(resolve)));
      await s.reserve(ask('j1', 0.04, {}));
      await vi.advanceTimersByTimeAsync(1000);
      const sent = renewals;
      expect(sent).toBe(2);
      for (const answer of answers.splice(0)) answer();
      await vi.advanceTimersByTimeAsync(100);
      expect(renewals).toBe(sent + 1);
      for (const answer of answers.splice(0)) answer();
      await s.release('j1');
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports renewals that fail once per streak: three failing in a row are one report, and one failing after a renewal that passed is another', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const group = `renewal-${Math.random()}`;
    try {
      const errors: unknown[] = [];
      const s = (await open(group, { leaseMs: 300, onError: (error) => errors.push(error) })) as QuotaStore & { renewLease(): Promise<void> };
      const renewLease = s.renewLease.bind(s);
      const sent: Promise<unknown>[] = [];
      s.renewLease = () => {
        const renewal = renewLease();
        sent.push(renewal.catch(() => undefined));
        return renewal;
      };
      /** One tick of the renewal (a third of the lease), waited for until its renewal is answered. */
      const tick = async () => {
        const before = sent.length;
        await vi.advanceTimersByTimeAsync(100);
        expect(sent).toHaveLength(before + 1);
        await sent.at(-1);
      };
      await s.reserve(ask('j1', 0.04, {}));
      let restore = await maker.failRenewals(group);
      for (let i = 0; i < 3; i += 1) await tick();
      expect(errors).toHaveLength(1);
      await restore();
      await tick();
      expect(errors).toHaveLength(1);
      restore = await maker.failRenewals(group);
      await tick();
      expect(errors).toHaveLength(2);
      await restore();
      await s.release('j1');
    } finally {
      vi.useRealTimers();
    }
  });

  it('renews nothing once closed, not even for a reservation answered as it closed (the timer stops at close)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const s = (await open(undefined, { leaseMs: 300 })) as QuotaStore & { renewLease(): Promise<void> };
      const renewLease = s.renewLease.bind(s);
      let renewals = 0;
      s.renewLease = () => ((renewals += 1), renewLease());
      await s.reserve(ask('held-as-it-closes', 0.04, {}));
      // Its refusal is awaited from the start: it may come while the close is still under way.
      const refused = expect(s.reserve(ask('as-it-closes', 0.04, {}))).rejects.toMatchObject({ code: 'quota_store_closed' });
      await s.close();
      renewals = 0;
      await refused;
      await vi.advanceTimersByTimeAsync(1000);
      expect(renewals).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not hand out a reservation answered as its store closed (the closed error), and counts it no longer than the lease', async () => {
    const group = `closing-${Math.random()}`;
    const time = { now: Date.now() };
    const lease = { leaseMs: 60_000, clock: () => time.now };
    const closing = await open(group, lease);
    const refused = expect(closing.reserve(ask('as-it-closes', 0.5, {}, { now: time.now }))).rejects.toMatchObject({ code: 'quota_store_closed' });
    await closing.close();
    await refused;
    const other = await open(group, lease);
    expect((await other.reconcile(time.now)).released).toEqual([]);
    time.now += 60_001;
    await maker.lapseLeases(group);
    // Redis ran the command already sent, so the reconcile releases it; the file store, closed before its turn under
    // the lock, wrote none.
    expect((await other.reconcile(time.now)).released).toEqual(kind === 'redis' ? ['as-it-closes'] : []);
    expect(await other.activeJobs()).toEqual([]);
  });

  it('answers a settle under way as it closes, and keeps its charge (trimming old usage records may not throw it away)', async () => {
    const group = `settling-${Math.random()}`;
    const s = await open(group);
    await s.reserve(ask('settling', 0.3, {}, { now: Date.now() }));
    const settled = s.settle('settling', 0.2);
    await s.close();
    expect(await settled).toBe(true);
    const next = await open(group);
    expect(await next.spentToday('discord:alice', Date.now())).toBeCloseTo(0.2, 9);
  });

  it('lets exactly one of many concurrent reservations take the last of a cap', async () => {
    const s = await open();
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => s.reserve(ask(`race-${i}`, 0.6, { scopeDailyUsd: 1 }, { userKey: `discord:u${i}` }))));
    expect(answers.filter((a) => a.ok)).toHaveLength(1);
  });

  describe('the breaker', () => {
    const HOUR = 60 * 60_000;
    const T0 = Math.floor(Date.now() / HOUR) * HOUR + 30 * 60_000;
    const breaker = { factor: 10, floorUsd: 0.5 };
    /** A store whose clock the test sets, with `usd` settled in `scopeKey` two days before T0 (its trailing average: usd / 168 an hour). */
    const withHistory = async (usd: number, scopeKey = 'discord:guild') => {
      const time = { now: T0 - 2 * DAY };
      const s = await open(undefined, { clock: () => time.now });
      if (usd > 0) {
        expect(await s.reserve(ask('old', usd, {}, { scopeKey, now: time.now }))).toEqual({ ok: true });
        await s.markSent('old');
        await s.settle('old', usd);
      }
      time.now = T0;
      return s;
    };
    const at = (jobId: string, usd: number, extra: Partial<ReserveInput> = {}) => ask(jobId, usd, { breaker }, { now: T0, ...extra });

    it('pauses a scope whose last hour would pass its factor times its trailing hourly average and the floor, refusing that job and every later one', async () => {
      const s = await withHistory(1.68); // $0.01 an hour: the floor ($0.50) is the larger
      expect(await s.reserve(at('a', 0.3))).toEqual({ ok: true });
      expect(await s.reserve(at('b', 0.3))).toEqual({ ok: false, code: 'scope_paused', limit: 0.5, used: 0.6, resetsAt: Number.POSITIVE_INFINITY, tripped: true });
      expect(await s.reserve(at('c', 0.01))).toEqual({ ok: false, code: 'scope_paused', limit: 0.5, used: 0.6, resetsAt: Number.POSITIVE_INFINITY });
      // Another server is not touched; the paused one is kept for every process sharing the ledger.
      expect(await s.reserve(at('d', 0.01, { scopeKey: 'discord:other' }))).toEqual({ ok: true });
      expect(await s.breakerStates()).toEqual({ 'discord:guild': { pausedAt: T0, pausedUsd: 0.6, limitUsd: 0.5 } });
    });

    it('counts what was settled in the last hour with what is reserved, against factor × average when that is above the floor', async () => {
      const s = await withHistory(168); // $1 an hour: 10 × $1 = $10 an hour
      expect(await s.reserve(at('a', 6))).toEqual({ ok: true });
      await s.markSent('a');
      await s.settle('a', 6);
      expect(await s.reserve(at('b', 3.5))).toEqual({ ok: true });
      expect(await s.reserve(at('c', 0.6))).toMatchObject({ ok: false, code: 'scope_paused', limit: 10, used: 10.1, tripped: true });
    });

    it('never pauses a scope with no spend in the 7 days before (a cold start), nor one it does not watch (the CLI’s), nor with the breaker off', async () => {
      const s = await withHistory(0);
      expect(await s.reserve(at('a', 50))).toEqual({ ok: true });
      const t = await withHistory(1.68, 'cli');
      expect(await t.reserve(at('b', 50, { scopeKey: 'cli', userKey: 'cli:me' }))).toEqual({ ok: true });
      const u = await withHistory(1.68);
      expect(await u.reserve(ask('c', 50, {}, { now: T0 }))).toEqual({ ok: true });
      expect(await s.breakerStates()).toEqual({});
    });

    it('refuses by a cap checked before the breaker without pausing anything, then refuses a paused scope’s every job, even one that costs nothing, with the limit it passed', async () => {
      const s = await withHistory(1.68);
      expect(await s.reserve(at('capped', 0.3, { limits: { breaker, userDailyUsd: 0.2 } }))).toMatchObject({ ok: false, code: 'budget_user_daily' });
      expect(await s.breakerStates()).toEqual({});
      expect(await s.activeJobs()).toEqual([]);
      expect(await s.reserve(at('a', 0.3))).toEqual({ ok: true });
      expect(await s.reserve(at('b', 0.3))).toMatchObject({ ok: false, code: 'scope_paused', limit: 0.5, used: 0.6, tripped: true });
      const paused = await s.reserve(at('c', 0, { userKey: 'discord:bob' }));
      expect(paused).toEqual({ ok: false, code: 'scope_paused', limit: 0.5, used: 0.6, resetsAt: Number.POSITIVE_INFINITY });
    });

    it('resumes a paused scope once: its jobs are taken again and its last hour counts from zero', async () => {
      const s = await withHistory(1.68);
      expect(await s.reserve(at('a', 0.3))).toEqual({ ok: true });
      await s.markSent('a');
      await s.settle('a', 0.3);
      expect(await s.reserve(at('b', 0.3))).toMatchObject({ code: 'scope_paused', tripped: true });
      expect(await s.resumeScope('discord:guild', 'console', T0 + 1000)).toEqual({ pausedAt: T0, pausedUsd: 0.6, limitUsd: 0.5 });
      expect(await s.resumeScope('discord:guild', 'console', T0 + 2000)).toBeUndefined();
      expect(await s.reserve(at('b', 0.3))).toEqual({ ok: true });
      expect(await s.breakerStates()).toEqual({ 'discord:guild': { resumedAt: T0 + 1000, resumedBy: 'console' } });
    });
  });

  it('lists the jobs reserved and not ended, of every process, queued or in flight', async () => {
    const s = await open();
    expect(await s.activeJobs()).toEqual([]);
    expect(await s.reserve(ask('q', 0.2, {}, { job: { operation: 'generate', n: 2, size: '1024x1024', quality: 'low' } }))).toEqual({ ok: true });
    expect(await s.reserve(ask('f', 0.3, {}, { now: D - 30_000, userKey: 'slack:U1', scopeKey: 'slack:T1' }))).toEqual({ ok: true });
    await s.markSent('f');
    expect(await s.activeJobs()).toEqual([
      { jobId: 'q', userKey: 'discord:alice', scopeKey: 'discord:guild', usd: 0.2, at: D - 60_000, sent: false, owner: expect.any(String), job: { operation: 'generate', n: 2, size: '1024x1024', quality: 'low' } },
      { jobId: 'f', userKey: 'slack:U1', scopeKey: 'slack:T1', usd: 0.3, at: D - 30_000, sent: true, owner: expect.any(String) },
    ]);
    await s.settle('f', 0.1);
    expect((await s.activeJobs()).map((j) => j.jobId)).toEqual(['q']);
  });

  it('hands a reader the usage records written since its cursor, with how each job ended and when it was reserved', async () => {
    const s = await open();
    const first = await s.usageSince(undefined);
    expect(first).toMatchObject({ records: [], reset: false });
    expect(await s.reserve(ask('a', 0.2, {}))).toEqual({ ok: true });
    await s.markSent('a');
    await s.settle('a', 0.1, { outcome: 'completed', images: 1 });
    const second = await s.usageSince(first.cursor);
    expect(second.records).toEqual([expect.objectContaining({ jobId: 'a', costUsd: 0.1, outcome: 'completed', images: 1, reservedAt: D - 60_000 })]);
    expect(second.reset).toBe(false);
    expect(await s.reserve(ask('b', 0.2, {}))).toEqual({ ok: true });
    await s.markSent('b');
    await s.settle('b', 0.2, { outcome: 'cancelled', images: 0, basis: 'estimate' });
    const third = await s.usageSince(second.cursor);
    expect(third.records.map((r) => [r.jobId, r.outcome])).toEqual([['b', 'cancelled']]);
    expect((await s.usageSince(third.cursor)).records).toEqual([]);
    expect((await s.usageSince(undefined)).records.map((r) => r.jobId)).toEqual(['a', 'b']);
  });

  it('keeps the usage record of a job it just settled when the process’s clock is ahead of the ledger’s by more than the retention', async () => {
    // Two years ahead, past the 400 days records are kept: the records' own times are the process's, as the job's day is.
    const ahead = Date.now() + 2 * 366 * DAY;
    const s = await open(undefined, { clock: () => ahead });
    expect(await s.reserve(ask('ahead', 0.2, {}, { now: ahead }))).toEqual({ ok: true });
    await s.markSent('ahead');
    await s.settle('ahead', 0.1, { outcome: 'completed', images: 1 });
    expect((await s.usageSince(undefined)).records.map((r) => r.jobId)).toEqual(['ahead']);
  });

  it.each([
    ['ahead of', 2 * 366 * DAY],
    ['behind', -2 * 366 * DAY],
  ])('finds a job it just settled in the usage of today when the process’s clock is %s the ledger’s by two years', async (_, offset) => {
    const now = Date.now() + offset;
    const today = Math.floor(now / DAY) * DAY;
    const s = await open(undefined, { clock: () => now });
    expect(await s.reserve(ask('skewed', 0.2, {}, { now }))).toEqual({ ok: true });
    await s.markSent('skewed');
    await s.settle('skewed', 0.1, { outcome: 'completed', images: 1 });
    expect((await s.usage({ since: today })).map((r) => [r.jobId, r.day])).toEqual([['skewed', dayOf(now)]]);
    expect((await s.usage({ since: now, until: today + DAY, userKey: 'discord:alice' })).map((r) => r.jobId)).toEqual(['skewed']);
    expect(await s.usage({ since: today + DAY })).toEqual([]);
  });

  it('hands a reader every record again, without the prompts, once a member’s prompts were erased (what it kept must go too)', async () => {
    const s = await open();
    const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', prompt: 'a ZEBRA at noon' };
    expect(await s.reserve(ask('z', 0.2, {}, { job }))).toEqual({ ok: true });
    await s.markSent('z');
    await s.settle('z', 0.1, { outcome: 'completed', images: 1 });
    const read = await s.usageSince(undefined);
    expect(read.records.map((r) => r.prompt)).toEqual(['a ZEBRA at noon']);
    // Nothing of bob's to erase: Redis rewrites no record, the reader goes on from its cursor. The file ledger cannot
    // tell it from a forget asked again after one that stopped once it removed the files: the reader reads again.
    await s.forgetPrompts('discord:bob');
    const after = await s.usageSince(read.cursor);
    expect([after.reset, after.records.map((r) => r.jobId)]).toEqual(kind === 'file' ? [true, ['z']] : [false, []]);
    await s.forgetPrompts('discord:alice');
    const again = await s.usageSince(read.cursor);
    expect(again.reset).toBe(true);
    expect(again.records.map((r) => [r.jobId, r.prompt, r.costUsd])).toEqual([['z', undefined, 0.1]]);
    expect(await s.usageSince(again.cursor)).toMatchObject({ records: [], reset: false });
  });

  it('tells a reader to read again from the start once the records after its cursor are gone (the storage lost them)', async () => {
    const group = `t-${Math.random()}`;
    const s = await open(group);
    expect(await s.reserve(ask('a', 0.2, {}))).toEqual({ ok: true });
    await s.markSent('a');
    await s.settle('a', 0.1);
    const read = await s.usageSince(undefined);
    expect(read.records.map((r) => r.jobId)).toEqual(['a']);
    await maker.wipe(group);
    const again = await s.usageSince(read.cursor);
    expect(again).toMatchObject({ records: [], reset: true });
    expect(await s.usageSince(again.cursor)).toMatchObject({ records: [], reset: false });
  });

  it('counts refusals per day and code, for every store on the same storage', async () => {
    const s = await open();
    await s.countRefusals({ budget_user_daily: 2, queue_full: 1 }, D);
    await s.countRefusals({ budget_user_daily: 1, nothing: 0 }, D);
    await s.countRefusals({ scope_paused: 1 }, D + 2000);
    expect(await s.refusals(dayOf(D))).toEqual({ [dayOf(D)]: { budget_user_daily: 3, queue_full: 1 }, [dayOf(D + 2000)]: { scope_paused: 1 } });
    expect(await s.refusals(dayOf(D + 2000))).toEqual({ [dayOf(D + 2000)]: { scope_paused: 1 } });
    // Asked from a day before any count is kept: every day kept, the latest too.
    expect(await s.refusals('2000-01-01')).toEqual(await s.refusals(dayOf(D)));
  });

  it('answers the refusals of the days kept, today and the 91 before it, and none older', async () => {
    const s = await open(undefined, { clock: () => D });
    const [oldest, dropped] = [D - 91 * DAY, D - 92 * DAY];
    await s.countRefusals({ queue_full: 1 }, dropped);
    await s.countRefusals({ queue_full: 2 }, oldest);
    await s.countRefusals({ scope_paused: 1 }, D);
    expect(await s.refusals('2000-01-01')).toEqual({ [dayOf(oldest)]: { queue_full: 2 }, [dayOf(D)]: { scope_paused: 1 } });
    expect(await s.refusals(dayOf(dropped))).toEqual(await s.refusals(dayOf(oldest)));
  });

  it('lists every scope whose caps chat admins changed', async () => {
    const s = await open();
    expect(await s.allCapOverrides()).toEqual({});
    await s.setCapOverride('discord:g1', 'userDailyUsd', 2, 'discord:admin', 1000);
    await s.setCapOverride('slack:T1', 'scopeMonthlyUsd', 40, 'slack:U9', 2000);
    expect(await s.allCapOverrides()).toEqual({
      'discord:g1': { userDailyUsd: { usd: 2, by: 'discord:admin', at: 1000 } },
      'slack:T1': { scopeMonthlyUsd: { usd: 40, by: 'slack:U9', at: 2000 } },
    });
  });

  it('refuses every call once closed, saying so', async () => {
    const s = await open();
    await s.close();
    const calls: [string, () => Promise<unknown>][] = [
      ['reserve', () => s.reserve(ask('late', 0.1, {}))],
      ['markSent', () => s.markSent('late')],
      ['markUnsent', () => s.markUnsent('late')],
      ['settle', () => s.settle('late', 0.1)],
      ['release', () => s.release('late')],
      ['spentToday', () => s.spentToday('discord:alice', D)],
      ['spentThisMonth', () => s.spentThisMonth('discord:alice', D)],
      ['spentMany', () => s.spentMany(['discord:alice'], D)],
      ['reconcile', () => s.reconcile(D)],
      ['usage', () => s.usage({})],
      ['capOverrides', () => s.capOverrides('discord:guild')],
      ['setCapOverride', () => s.setCapOverride('discord:guild', 'userDailyUsd', 1, 'discord:admin', D)],
      ['forgetPrompts', () => s.forgetPrompts('discord:alice')],
      ['takeLegacy', () => s.takeLegacy(async () => undefined)],
      ['activeJobs', () => s.activeJobs()],
      ['usageSince', () => s.usageSince(undefined)],
      ['countRefusals', () => s.countRefusals({ queue_full: 1 }, D)],
      ['countRefusals of none', () => s.countRefusals({}, D)],
      ['refusals', () => s.refusals(dayOf(D))],
      ['breakerStates', () => s.breakerStates()],
      ['resumeScope', () => s.resumeScope('discord:guild', 'discord:admin', D)],
    ];
    for (const [name, call] of calls) {
      await expect(call(), name).rejects.toBeInstanceOf(QuotaStoreClosedError);
      await expect(call(), name).rejects.toMatchObject({ name: 'QuotaStoreClosedError', code: 'quota_store_closed' });
    }
  });
});

function firstOfNextMonth(at: number): number {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

describe('a file store whose process’s lease lapsed where no other process can see it live (another machine)', () => {
  it('does not charge twice a job a reconcile charged meanwhile: its late settle finds it ended (uncertain), not lost', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-lapsed-'));
    // A second process on the same ledger: one store per file per process, so the other opens it through a link.
    const alias = `${dir}-other-process`;
    await symlink(dir, alias);
    const lost: LostReservation[] = [];
    const now = Date.now();
    const slow = new FileQuotaStore({ dir, onReservationLost: (l) => lost.push(l) });
    const later = new FileQuotaStore({ dir: alias, clock: () => now + 10 * 60_000 });
    try {
      await slow.reserve({ jobId: 'slow-job', userKey: 'u', scopeKey: 's', estimateUsd: 0.5, limits: {}, now });
      await slow.markSent('slow-job');
      // Its lease names another machine: no pid there to ask, so a lapsed lease is a gone process's (on this one, whose
      // pid lives, it would be dropped uncharged and charged by this settle: file-ledger-leases.test.ts).
      const ledger = JSON.parse(await readFile(slow.path, 'utf8')) as { owners: Record<string, { host: string }> };
      for (const owner of Object.values(ledger.owners)) owner.host = 'another-machine';
      await writeFile(slow.path, JSON.stringify(ledger));
      expect(await later.reconcile(now + 10 * 60_000)).toMatchObject({ settledAtEstimate: ['slow-job'] });
      expect(await slow.settle('slow-job', 0.2)).toBe(false);
      expect(await later.spentToday('u', now)).toBeCloseTo(0.5, 9);
      expect(lost).toEqual([]);
    } finally {
      await slow.close();
      await later.close();
      await rm(alias, { force: true });
      await rm(dir, { recursive: true, force: true });
    }
  });
});
