import type { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FileQuotaStore, memberLimits, RedisQuotaStore, type QuotaStore, type RoleBudget, type SpendLimits } from '../../src/internal.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { useTempDirs } from '../helpers/runner-harness.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const NOON = Date.UTC(2030, 5, 15, 12, 0, 0);
const newDir = useTempDirs();
const redis = testRedis();

const designers: RoleBudget = { roleId: 'designers', userDailyUsd: 5 };
const interns: RoleBudget = { roleId: 'interns', userDailyUsd: 0.5, userMonthlyUsd: 4 };
const leads: RoleBudget = { roleId: 'leads', userMonthlyUsd: 80 };
const roles = [designers, interns, leads];
/** The scope's limits: the operator's, lowered by its chat admins (`effectiveLimits`). */
const scope: SpendLimits = { userDailyUsd: 1, userMonthlyUsd: 20, scopeDailyUsd: 30, accountMonthlyUsd: 500, userConcurrentJobs: 2 };

describe('a member’s own caps with role budgets', () => {
  it.each([
    ['no role with a budget: the scope’s cap of each member', [], { userDailyUsd: 1, userMonthlyUsd: 20 }, { userDailyUsd: 'scope', userMonthlyUsd: 'scope' }],
    ['one role: its budget in place of the scope’s, above it', ['designers'], { userDailyUsd: 5, userMonthlyUsd: 20 }, { userDailyUsd: 'role designers', userMonthlyUsd: 'scope' }],
    ['one role: its budget in place of the scope’s, below it', ['interns'], { userDailyUsd: 0.5, userMonthlyUsd: 4 }, { userDailyUsd: 'role interns', userMonthlyUsd: 'role interns' }],
    ['several roles: the most generous of each period, independently', ['interns', 'designers', 'leads'], { userDailyUsd: 5, userMonthlyUsd: 80 }, { userDailyUsd: 'role designers', userMonthlyUsd: 'role leads' }],
    ['roles of other servers or without a budget count for nothing', ['someone-else', 'designers'], { userDailyUsd: 5, userMonthlyUsd: 20 }, { userDailyUsd: 'role designers', userMonthlyUsd: 'scope' }],
    ['roles unknown: the least generous that could apply, per period', 'unknown', { userDailyUsd: 0.5, userMonthlyUsd: 4 }, { userDailyUsd: 'unknown_roles interns', userMonthlyUsd: 'unknown_roles interns' }],
  ] as const)('%s', (_what, held, caps, from) => {
    const member = memberLimits({}, scope, roles, held);
    expect(member.limits).toEqual({ ...scope, ...caps });
    expect(Object.fromEntries(Object.entries(member.from).map(([cap, source]) => [cap, 'roleId' in source ? `${source.kind} ${source.roleId}` : source.kind]))).toEqual(from);
  });

  it.each([['holding a role', ['designers']], ['holding none', []], ['roles unknown', 'unknown']] as const)(
    'role budgets unreadable (a damaged record), %s: nothing of either period, whatever the scope’s cap and the roles held',
    (_what, held) => {
      const member = memberLimits({ userDailyUsd: 10 }, scope, 'unreadable', held);
      expect(member.limits).toEqual({ ...scope, userDailyUsd: 0, userMonthlyUsd: 0 });
      expect(member.from).toEqual({ userDailyUsd: { kind: 'unreadable_budgets' }, userMonthlyUsd: { kind: 'unreadable_budgets' } });
    },
  );

  it('bounds a role’s budget by the operator’s cap of each member, as every chat admin’s cap, and never widens past it', () => {
    const operator: SpendLimits = { userDailyUsd: 2, userMonthlyUsd: 50 };
    expect(memberLimits(operator, scope, roles, ['designers', 'leads']).limits).toMatchObject({ userDailyUsd: 2, userMonthlyUsd: 50 });
    // Where the operator set none, the role's budget applies as it is.
    expect(memberLimits({ userMonthlyUsd: 50 }, scope, roles, ['designers']).limits).toMatchObject({ userDailyUsd: 5 });
  });

  it('leaves the server’s and the account’s caps (and pace) binding: a role never lifts them', () => {
    const { limits } = memberLimits({}, scope, [{ roleId: 'whales', userDailyUsd: 1000, userMonthlyUsd: 1000 }], ['whales']);
    expect(limits).toEqual({ ...scope, userDailyUsd: 1000, userMonthlyUsd: 1000 });
    expect(limits.scopeDailyUsd).toBe(30);
    expect(limits.accountMonthlyUsd).toBe(500);
    expect(limits.userConcurrentJobs).toBe(2);
  });

  it('keeps the scope’s cap when the roles are unknown but every role budget is more generous, or none is set', () => {
    expect(memberLimits({}, scope, [designers], 'unknown')).toEqual({ limits: scope, from: { userDailyUsd: { kind: 'scope' }, userMonthlyUsd: { kind: 'scope' } } });
    expect(memberLimits({}, scope, [], 'unknown').limits).toEqual(scope);
    // No cap of each member at all: an unknown member still gets the smallest role budget, never no cap.
    expect(memberLimits({}, {}, [designers], 'unknown').limits).toEqual({ userDailyUsd: 5 });
  });
});

/** Both ledgers take the member's limits as data: a member of a small role is refused where one of a big role is not. */
function refusesByRole(open: () => Promise<QuotaStore>) {
  it('reserves under each member’s own limits and refuses the one whose role budget is spent', async () => {
    const store = await open();
    const scopeKey = 'discord:g1';
    const ask = (userKey: string, held: string[], jobId: string) =>
      store.reserve({ jobId, userKey, scopeKey, estimateUsd: 0.3, limits: memberLimits({}, { userDailyUsd: 1, scopeDailyUsd: 10 }, [interns, designers], held).limits, now: NOON });
    expect(await ask('discord:intern', ['interns'], 'j1')).toMatchObject({ ok: true });
    expect(await ask('discord:intern', ['interns'], 'j2')).toMatchObject({ ok: false, code: 'budget_user_daily', limit: 0.5 });
    expect(await store.reserve({ jobId: 'j3', userKey: 'discord:intern', scopeKey, estimateUsd: 0.3, limits: memberLimits({}, { userDailyUsd: 1 }, [interns], ['interns']).limits, now: NOON })).toMatchObject({ ok: false, code: 'budget_user_daily' });
    for (const jobId of ['d1', 'd2', 'd3', 'd4']) expect(await ask('discord:designer', ['designers'], jobId)).toMatchObject({ ok: true });
    expect(await ask('discord:designer', ['designers'], 'd5')).toMatchObject({ ok: true });
  });
}

describe('FileQuotaStore: role budgets', () => {
  const stores: FileQuotaStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  refusesByRole(async () => {
    const store = new FileQuotaStore({ dir: await newDir() });
    stores.push(store);
    return store;
  });
});

describe.skipIf(redis.skipReason)(`RedisQuotaStore: role budgets ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  const prefixes: string[] = [];
  const clients: Redis[] = [];
  const stores: RedisQuotaStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    for (const client of clients.splice(0)) client.disconnect();
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deleteKeys(requireRedisUrl(redis), prefix);
  });
  refusesByRole(async () => {
    const client = await connectRedis(requireRedisUrl(redis));
    clients.push(client);
    const prefix = uniquePrefix('roles');
    prefixes.push(prefix);
    const store = new RedisQuotaStore({ redis: client, prefix });
    stores.push(store);
    return store;
  });
});
