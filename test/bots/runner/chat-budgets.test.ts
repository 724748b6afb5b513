import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { capOfName, ChatBudgets, dmScopeId, JobRefusedError, parseCapAmount, RedisQuotaStore, type JobRunner, type JobSpec, type QuotaStore, type Requester } from '../../../bots/runner/index.js';
import { connectRedis } from '../../../src/core/redis-connection.js';
import { PRICE_TABLE } from '../../../src/index.js';
import { resetsAt } from '../../../src/internal.js';
import { RecordingLogger } from '../discord/harness.js';
import { recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';

const kit = useRunnerKit();
const redis = testRedis();

const admin = (overrides: Partial<Requester> = {}) => requester({ isAdmin: true, ...overrides });
const lowJob = (who: Requester): JobSpec => ({ kind: 'generate', prompt: 'a small boat', options: { quality: 'low' }, requester: who });

async function refusalOf(promise: Promise<unknown>): Promise<JobRefusedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(JobRefusedError);
  return error as JobRefusedError;
}

async function runToEnd(runner: JobRunner, who: Requester): Promise<void> {
  const handle = await runner.submit(lowJob(who), recordingSink().sink);
  expect(await handle.done).toMatchObject({ type: 'completed' });
}

describe('a person’s own budget in DMs and user installs', () => {
  it('holds a DM scope to the operator’s DM caps instead of the servers’ caps, and lets no chat admin change it', async () => {
    const { runner } = await kit.runner({ limits: { scopeDailyUsd: 0 }, dmCaps: { dailyUsd: 0 } });
    const inDm = requester({ scopeId: dmScopeId('u-1'), userId: 'u-1' });
    // The servers' cap (0) does not apply in the DM; the DM cap (0) does.
    expect(await runner.budgets.limitsFor(inDm)).toMatchObject({ scopeDailyUsd: 0, scopeMonthlyUsd: undefined });
    expect((await refusalOf(runner.submit(lowJob(inDm), () => {}))).code).toBe('budget_scope_daily');
    expect(await runner.budgets.setCap({ ...inDm, isAdmin: true }, 'scopeDailyUsd', 5)).toMatchObject({ ok: false, code: 'not_admin' });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('counts a DM job in the user’s spend, so the user caps hold across servers and DMs', async () => {
    const { runner } = await kit.runner({ limits: { userDailyUsd: 1 }, dmCaps: { dailyUsd: 1 } });
    const inDm = requester({ scopeId: dmScopeId('u-2'), userId: 'u-2' });
    await runToEnd(runner, inDm);
    const summary = await runner.budgets.summary(inDm);
    expect(summary.user.todayUsd).toBeGreaterThan(0);
    expect(summary.caps.map((c) => [c.whose, c.period, c.limitUsd])).toEqual([
      ['user', 'day', 1],
      ['scope', 'day', 1],
    ]);
  });
});

describe('a budget spent to its end, by the rulebook', () => {
  it('refuses every job once a cap is spent to the last nano-dollar, not while one is left, with the cap’s reset and the DM caps in a DM', async () => {
    const price = PRICE_TABLE['1024x1024'].low;
    const { runner } = await kit.runner({ partialImages: 0, limits: { userDailyUsd: price + 2e-9, scopeMonthlyUsd: price }, dmCaps: { dailyUsd: 5 } });
    const who = requester();
    expect(await runner.budgets.spentRefusal(who)).toBeUndefined();

    await runToEnd(runner, who);

    // Two nano-dollars are left of the member's daily cap: it refuses nothing; the server's monthly cap is spent to its end.
    expect(await runner.budgets.spentRefusal(who)).toEqual({ ok: false, code: 'budget_scope_monthly', limit: price, used: price, resetsAt: resetsAt('month', Date.now()) });
    const summary = await runner.budgets.summary(who);
    expect(summary.caps.find((c) => c.code === 'budget_user_daily')).toMatchObject({ leftUsd: 2e-9, resetsAt: resetsAt('day', Date.now()) });
    // In a DM the operator's DM cap stands in for the scope's, decided in one place for the check and the summary alike.
    const inDm = requester({ scopeId: dmScopeId('u-3'), userId: 'u-3' });
    expect((await runner.budgets.summary(inDm)).caps.map((c) => [c.code, c.limitUsd])).toContainEqual(['budget_scope_daily', 5]);
    expect(await runner.budgets.spentRefusal(inDm)).toBeUndefined();
  });
});

describe('chat admins’ budgets in the job runner', () => {
  it('refuses the next job with budget_user_daily once an admin lowered the daily cap below what a user spent', async () => {
    const { runner } = await kit.runner({ limits: { userDailyUsd: 1 } });
    const who = requester();
    await runToEnd(runner, who);

    const change = await runner.budgets.setCap(admin(), 'userDailyUsd', 0.001);
    expect(change).toMatchObject({ ok: true, previousUsd: undefined, usd: 0.001, operatorUsd: 1 });
    const error = await refusalOf(runner.submit(lowJob(who), () => {}));
    expect(error).toMatchObject({ code: 'budget_user_daily', limit: 0.001 });
    expect(kit.emu.emulator.requests).toHaveLength(1);
    // Only in that server: the same user elsewhere is held to the operator's cap.
    await runToEnd(runner, { ...who, scopeId: 'guild-2' });
  });

  it('refuses a cap above the operator’s with above_operator_cap, and one from someone who is no admin with not_admin', async () => {
    const { runner, store } = await kit.runner({ limits: { scopeDailyUsd: 5 } });
    expect(await runner.budgets.setCap(admin(), 'scopeDailyUsd', 5.01)).toMatchObject({ ok: false, code: 'above_operator_cap' });
    expect(await runner.budgets.setCap(requester(), 'scopeDailyUsd', 1)).toMatchObject({ ok: false, code: 'not_admin' });
    expect(await runner.budgets.setCap(admin(), 'scopeDailyUsd', Number.NaN)).toMatchObject({ ok: false, code: 'invalid_amount' });
    expect(await store.capOverrides('discord:guild-1')).toEqual({});
    expect(await runner.budgets.setCap(admin(), 'scopeDailyUsd', 5)).toMatchObject({ ok: true });
  });

  it('logs who changed a cap, from what to what', async () => {
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ limits: { userMonthlyUsd: 10 }, logger });
    const who = admin({ userId: 'boss' });
    await runner.budgets.setCap(who, 'userMonthlyUsd', 4);
    await runner.budgets.setCap(who, 'userMonthlyUsd', undefined);
    const changes = logger.entries.filter((e) => 'cap' in e.obj).map((e) => e.obj);
    expect(changes).toEqual([
      { scopeKey: 'discord:guild-1', cap: 'userMonthlyUsd', changedBy: 'discord:boss', oldUsd: null, newUsd: 4, operatorUsd: 10 },
      { scopeKey: 'discord:guild-1', cap: 'userMonthlyUsd', changedBy: 'discord:boss', oldUsd: 4, newUsd: null, operatorUsd: 10 },
    ]);
  });

  it('lets another process sharing the ledger see a change within its cache time', async () => {
    const store = await kit.store();
    let now = Date.now();
    const mine = new ChatBudgets({ store, limits: { userDailyUsd: 1 }, logger: new RecordingLogger(), now: () => now, cacheMs: 5_000 });
    const theirs = new ChatBudgets({ store, limits: { userDailyUsd: 1 }, logger: new RecordingLogger(), now: () => now, cacheMs: 5_000 });
    expect((await theirs.limitsFor(admin())).userDailyUsd).toBe(1);
    await mine.setCap(admin(), 'userDailyUsd', 0.25);
    expect((await mine.limitsFor(admin())).userDailyUsd).toBe(0.25);
    expect((await theirs.limitsFor(admin())).userDailyUsd).toBe(1);
    now += 5_000;
    expect((await theirs.limitsFor(admin())).userDailyUsd).toBe(0.25);
  });
});

describe('what chat admins type', () => {
  it('names caps as user-daily, user-monthly, server-… or workspace-…, never the account’s', () => {
    expect(capOfName('user-daily')).toBe('userDailyUsd');
    expect(capOfName('Server-Monthly')).toBe('scopeMonthlyUsd');
    expect(capOfName('workspace-daily')).toBe('scopeDailyUsd');
    expect(capOfName('account-daily')).toBeUndefined();
  });

  it('gives amounts in dollars, 0 or more, or clear', () => {
    expect(parseCapAmount('2.50')).toEqual({ ok: true, usd: 2.5 });
    expect(parseCapAmount('$3')).toEqual({ ok: true, usd: 3 });
    expect(parseCapAmount('0')).toEqual({ ok: true, usd: 0 });
    expect(parseCapAmount('clear')).toEqual({ ok: true, usd: undefined });
    for (const bad of ['-1', 'lots', '1e3', 'NaN', '2,50']) expect(parseCapAmount(bad)).toEqual({ ok: false });
  });

  it('never takes a missing amount for clear: a command sent before it was finished lifts no cap', () => {
    expect(parseCapAmount(undefined)).toEqual({ ok: false });
    expect(parseCapAmount('')).toEqual({ ok: false });
    expect(parseCapAmount('  ')).toEqual({ ok: false });
  });
});

describe.skipIf(redis.skipReason)(`chat admins’ budgets shared through Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  let url: string;
  const prefix = uniquePrefix('chat-budgets');
  const clients: Redis[] = [];
  const stores: QuotaStore[] = [];
  beforeAll(() => {
    url = requireRedisUrl(redis);
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    for (const client of clients.splice(0)) client.disconnect();
  });
  afterAll(async () => {
    if (url) await deleteKeys(url, prefix);
  });
  const redisStore = async () => {
    const client = await connectRedis(url);
    clients.push(client);
    const store = new RedisQuotaStore({ redis: client, prefix });
    stores.push(store);
    return store;
  };

  it('keeps an admin’s change across a restart: a new runner on a new connection refuses with the lowered cap', async () => {
    const before = await kit.runner({ limits: { userDailyUsd: 1 }, store: (await redisStore()) });
    const who = requester();
    await runToEnd(before.runner, who);
    expect(await before.runner.budgets.setCap(admin(), 'userDailyUsd', 0.002)).toMatchObject({ ok: true });
    await before.runner.shutdown({ graceMs: 0 });

    const after = await kit.runner({ limits: { userDailyUsd: 1 }, store: (await redisStore()) });
    const error = await refusalOf(after.runner.submit(lowJob(who), () => {}));
    expect(error).toMatchObject({ code: 'budget_user_daily', limit: 0.002 });
    const summary = await after.runner.budgets.summary(who);
    expect(summary.caps).toEqual([expect.objectContaining({ code: 'budget_user_daily', limitUsd: 0.002, setBy: 'chat' })]);
  });
});
