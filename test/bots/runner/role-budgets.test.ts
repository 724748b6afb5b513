import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatBudgets, describeUsage, JobRefusedError, settingsInState, type JobSpec, type Requester } from '../../../bots/runner/index.js';
import { openBotState, stateKeyOf, type BotState } from '../../../bots/state/index.js';
import { memorySpace } from '../../../bots/runner/memory-space.js';
import { RedisLink, type ScopeSettingEntries } from '../../../src/internal.js';
import { RecordingLogger } from '../discord/harness.js';
import { recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';

const kit = useRunnerKit();

const admin = (overrides: Partial<Requester> = {}) => requester({ isAdmin: true, ...overrides });
const lowJob = (who: Requester): JobSpec => ({ kind: 'generate', prompt: 'a small boat', options: { quality: 'low' }, requester: who });
const designers = { id: 'role-designers', name: 'Designers' };
const interns = { id: 'role-interns', name: 'Interns' };

describe('budgets of roles in the job runner', () => {
  it('holds a member to the most generous budget of their roles, in place of the cap of each user, before anything is sent', async () => {
    const { runner } = await kit.runner({ limits: { userDailyUsd: 1 } });
    expect(await runner.budgets.setRoleBudget(admin(), interns, 'userDailyUsd', 0.001)).toMatchObject({ ok: true, usd: 0.001, operatorUsd: 1 });
    expect(await runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', 0.5)).toMatchObject({ ok: true });

    const intern = requester({ roleIds: [interns.id] });
    await expect(runner.submit(lowJob(intern), () => {})).rejects.toBeInstanceOf(JobRefusedError);
    await expect(runner.submit(lowJob(intern), () => {})).rejects.toMatchObject({ code: 'budget_user_daily', limit: 0.001 });
    // The form's intake answers the same: the one rule, one call path.
    expect(await runner.budgets.spentRefusal(intern)).toBeUndefined();
    expect(kit.emu.emulator.requests).toHaveLength(0);

    const both = requester({ roleIds: [interns.id, designers.id] });
    expect(await runner.budgets.limitsFor(both)).toMatchObject({ userDailyUsd: 0.5 });
    await expect((await runner.submit(lowJob(both), recordingSink().sink)).done).resolves.toMatchObject({ type: 'completed' });
    // No role with a budget: the cap of each user.
    expect(await runner.budgets.limitsFor(requester({ roleIds: ['role-other'] }))).toMatchObject({ userDailyUsd: 1 });
    // Another server's roles of the same ids mean nothing there.
    expect(await runner.budgets.limitsFor(requester({ scopeId: 'guild-2', roleIds: [interns.id] }))).toMatchObject({ userDailyUsd: 1 });
  });

  it('refuses a job of a member whose role budget is spent to its end at the form’s intake too', async () => {
    const { runner } = await kit.runner();
    await runner.budgets.setRoleBudget(admin(), interns, 'userDailyUsd', 0);
    const intern = requester({ roleIds: [interns.id] });
    expect(await runner.budgets.spentRefusal(intern)).toMatchObject({ code: 'budget_user_daily', limit: 0 });
  });

  it('refuses a change from someone who is no admin, of an amount that is none, above the operator’s cap of each user, of a server cap, or past 25 roles', async () => {
    const { runner } = await kit.runner({ limits: { userMonthlyUsd: 10 } });
    expect(await runner.budgets.setRoleBudget(requester(), designers, 'userDailyUsd', 1)).toMatchObject({ ok: false, code: 'not_admin' });
    expect(await runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', -1)).toMatchObject({ ok: false, code: 'invalid_amount' });
    expect(await runner.budgets.setRoleBudget(admin(), designers, 'userMonthlyUsd', 10.01)).toMatchObject({ ok: false, code: 'above_operator_cap' });
    expect(await runner.budgets.setRoleBudget(admin(), designers, 'scopeDailyUsd', 1)).toMatchObject({ ok: false, code: 'not_a_member_cap' });
    expect(await runner.budgets.setRoleBudget(admin({ scopeId: 'dm:u-1' }), designers, 'userDailyUsd', 1)).toMatchObject({ ok: false, code: 'not_admin' });
    for (let i = 0; i < 25; i++) expect(await runner.budgets.setRoleBudget(admin(), { id: `role-${i}`, name: `R${i}` }, 'userDailyUsd', 1)).toMatchObject({ ok: true });
    expect(await runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', 1)).toMatchObject({ ok: false, code: 'too_many_roles' });
    // A role already listed may still change, and clearing makes room.
    expect(await runner.budgets.setRoleBudget(admin(), { id: 'role-3', name: 'R3' }, 'userMonthlyUsd', 2)).toMatchObject({ ok: true });
    expect(await runner.budgets.setRoleBudget(admin(), { id: 'role-0', name: 'R0' }, 'userDailyUsd', undefined)).toMatchObject({ ok: true, previousUsd: 1, usd: undefined });
    expect(await runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', 1)).toMatchObject({ ok: true });
  });

  it('keeps them in the chat admins’ settings, each period on its own; a role with neither is gone', async () => {
    const settings = settingsInState(undefined, new RecordingLogger());
    const { runner } = await kit.runner({ settings });
    await runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', 5);
    await runner.budgets.setRoleBudget(admin(), designers, 'userMonthlyUsd', 50);
    await runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', undefined);
    expect((await settings.get('discord:guild-1')).values.roleBudgets).toEqual([{ roleId: designers.id, name: 'Designers', userMonthlyUsd: 50 }]);
    await runner.budgets.setRoleBudget(admin(), designers, 'userMonthlyUsd', undefined);
    expect((await settings.get('discord:guild-1')).values.roleBudgets).toBeUndefined();
  });

  it('shows a member which budget applies and why, and an admin every role budget', async () => {
    const { runner } = await kit.runner({ limits: { userDailyUsd: 1 } });
    await runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', 0.75);
    const summary = await runner.budgets.summary(requester({ roleIds: [designers.id] }));
    expect(summary.caps).toEqual([expect.objectContaining({ code: 'budget_user_daily', limitUsd: 0.75, setBy: 'role', role: 'Designers' })]);
    expect(summary.scope).toBeUndefined();
    const adminSummary = await runner.budgets.summary(admin({ roleIds: [] }));
    expect(adminSummary.caps).toEqual([expect.objectContaining({ code: 'budget_user_daily', limitUsd: 1, setBy: 'operator' })]);
    expect(adminSummary.scope?.roleBudgets).toEqual([{ roleId: designers.id, name: 'Designers', dailyUsd: 0.75, monthlyUsd: undefined }]);
  });

  it('gives a member whose roles cannot be read the least generous budget that could be theirs, never a wider one', async () => {
    const store = await kit.store();
    const budgets = new ChatBudgets({ store, limits: {}, logger: new RecordingLogger() });
    const slackAdmin = admin({ platform: 'slack', scopeId: 'T1' });
    await budgets.setRoleBudget(slackAdmin, { id: 'S1', name: '@designers' }, 'userDailyUsd', 5);
    await budgets.setRoleBudget(slackAdmin, { id: 'S2', name: '@interns' }, 'userDailyUsd', 0.5);
    const member = requester({ platform: 'slack', scopeId: 'T1' });
    // No reader: unknown.
    expect(await budgets.limitsFor(member)).toMatchObject({ userDailyUsd: 0.5 });
    const asked: string[][] = [];
    let answer: readonly string[] | undefined = ['S1'];
    budgets.readMemberRolesWith('slack', async (who, ids) => {
      asked.push([who.userId, ...ids]);
      return answer;
    });
    expect(await budgets.limitsFor(member)).toMatchObject({ userDailyUsd: 5 });
    expect(asked).toEqual([[member.userId, 'S1', 'S2']]);
    answer = undefined;
    expect(await budgets.limitsFor(member)).toMatchObject({ userDailyUsd: 0.5 });
    expect((await budgets.summary(member)).caps).toEqual([expect.objectContaining({ setBy: 'unknown_roles', role: '@interns', limitUsd: 0.5 })]);
  });
});

describe('one read of a scope’s settings for its rules and its role budgets', () => {
  /** The chat admins' settings of every process, kept in one space whose record reads are counted. */
  function countedSettings() {
    const space = memorySpace<ScopeSettingEntries>();
    const reads: string[] = [];
    const counted: Pick<typeof space, 'read' | 'update'> = {
      read: (key) => {
        reads.push(key);
        return space.read(key);
      },
      update: (key, change) => space.update(key, change),
    };
    return { reads, settings: () => settingsInState(counted, new RecordingLogger()) };
  }

  it('reads and parses the record once a job, though both the rules and the budgets of its roles are checked', async () => {
    const { reads, settings } = countedSettings();
    const { runner } = await kit.runner({ limits: { userDailyUsd: 1 }, settings: settings() });
    expect(await runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', 0.5)).toMatchObject({ ok: true });
    reads.length = 0;
    const designer = requester({ roleIds: [designers.id] });
    await expect((await runner.submit(lowJob(designer), recordingSink().sink)).done).resolves.toMatchObject({ type: 'completed' });
    expect(reads).toEqual([stateKeyOf('discord:guild-1')]);
  });

  it('lets a change made through either be seen by the other’s next read at once, with what another process changed meanwhile', async () => {
    const { settings } = countedSettings();
    const { runner } = await kit.runner({ limits: { userDailyUsd: 1 }, settings: settings() });
    const { runner: other } = await kit.runner({ limits: { userDailyUsd: 1 }, settings: settings() });
    const designer = requester({ roleIds: [designers.id] });
    // A job reads the scope's settings: this process keeps them its cache time.
    await expect((await runner.submit(lowJob(designer), recordingSink().sink)).done).resolves.toMatchObject({ type: 'completed' });

    // Another process gives the role a budget; a setting changed here (the rules) reads the record anew for the budgets too.
    expect(await other.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', 0.25)).toMatchObject({ ok: true });
    expect(await runner.budgets.limitsFor(designer)).toMatchObject({ userDailyUsd: 1 });
    expect(await runner.policy.set(admin(), 'maxImages', 4)).toMatchObject({ ok: true });
    expect(await runner.budgets.limitsFor(designer)).toMatchObject({ userDailyUsd: 0.25 });

    // Another process changes a setting; a role budget set here (the budgets) reads the record anew for the rules too.
    expect(await other.policy.set(admin(), 'maxImages', 2)).toMatchObject({ ok: true });
    expect((await runner.policy.effective(admin())).maxImages).toMatchObject({ value: 4 });
    expect(await runner.budgets.setRoleBudget(admin(), interns, 'userDailyUsd', 0.001)).toMatchObject({ ok: true });
    expect((await runner.policy.effective(admin())).maxImages).toMatchObject({ value: 2, source: 'admin' });
    expect((await runner.policy.settings.get('discord:guild-1')).values.roleBudgets).toEqual([
      { roleId: designers.id, name: 'Designers', userDailyUsd: 0.25 },
      { roleId: interns.id, name: 'Interns', userDailyUsd: 0.001 },
    ]);
  });
});

const redis = testRedis();

/** The bots' state of one process, on the data folder or on Redis, and a way to damage a scope's settings where they are kept. */
async function stateOn(backend: 'file' | 'redis', dataDir: string) {
  const prefix = uniquePrefix('role-budgets');
  const link = backend === 'redis' ? await RedisLink.open({ url: requireRedisUrl(redis), prefix }) : undefined;
  const state: BotState = await openBotState({ dataDir, redis: link, logger: new RecordingLogger() });
  const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
  return {
    space,
    /** Overwrites the scope's settings record with text that is not JSON (a torn write, a hand edit). */
    async tear(scopeKey: string) {
      const text = '{"roleBudgets":{"value":[{"roleId":"role-in';
      if (!link) return writeFile(join(dataDir, state.spaces.scopeSettings.dir, `${stateKeyOf(scopeKey)}.json`), text);
      const [key] = await link.commands.keys(`${prefix}:*${state.spaces.scopeSettings.name}*:r:${stateKeyOf(scopeKey)}`);
      await link.commands.set(key!, text, 'KEEPTTL');
    },
    async close() {
      await state.close();
      if (link) {
        await link.close();
        await deleteKeys(requireRedisUrl(redis), prefix);
      }
    },
  };
}

describe.each([
  { backend: 'file' as const, skip: undefined },
  { backend: 'redis' as const, skip: redis.skipReason },
])('role budgets the bots’ state cannot read ($backend)', ({ backend, skip }) => {
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  async function scopeWithInterns() {
    const state = await stateOn(backend, await kit.newDir());
    closing.push(() => state.close());
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ limits: { userDailyUsd: 1 }, settings: settingsInState(state.space, logger), logger, capCacheMs: 0, settingsCacheMs: 0 });
    expect(await runner.budgets.setRoleBudget(admin(), interns, 'userDailyUsd', 0.001)).toMatchObject({ ok: true });
    expect(await runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', 0.5)).toMatchObject({ ok: true });
    return { state, runner, logger };
  }

  it.skipIf(skip)('refuse a restricted role’s paid job (nothing sent) when their value does not parse, never falling back to the cap of each user', async () => {
    const { state, runner, logger } = await scopeWithInterns();
    const key = stateKeyOf('discord:guild-1');
    const entries = (await state.space.get(key))!;
    await state.space.put(key, { ...entries, roleBudgets: { ...entries.roleBudgets!, value: [{ roleId: interns.id, name: 'Interns', userDailyUsd: 'a penny' }] } });

    const intern = requester({ roleIds: [interns.id] });
    await expect(runner.submit(lowJob(intern), () => {})).rejects.toMatchObject({ code: 'budget_user_daily', limit: 0 });
    expect(await runner.budgets.limitsFor(requester({ roleIds: [designers.id] }))).toMatchObject({ userDailyUsd: 0, userMonthlyUsd: 0 });
    expect(await runner.budgets.spentRefusal(requester())).toMatchObject({ code: 'budget_user_daily', limit: 0 });
    expect(kit.emu.emulator.requests).toHaveLength(0);
    // Read on every job (no cache here), logged once.
    const warnings = logger.entries.filter((e) => e.level === 'warn');
    expect(warnings.map((e) => e.obj)).toEqual([{ scopeKey: 'discord:guild-1', settings: ['roleBudgets'], jobsRefused: false, roleBudgetsUnreadable: true }]);
  });

  it.skipIf(skip)('start a new list when a role’s budget is set on budgets that cannot be read, saying so, and are left unreadable by dropping deleted roles', async () => {
    const { state, runner } = await scopeWithInterns();
    const key = stateKeyOf('discord:guild-1');
    const entries = (await state.space.get(key))!;
    await state.space.put(key, { ...entries, roleBudgets: { ...entries.roleBudgets!, value: 'a penny' } });

    // Which roles were deleted cannot be told of budgets that cannot be read: nothing changes, members still get nothing.
    expect(await runner.budgets.forgetDeletedRoles(admin(), [interns.id])).toBe(0);
    expect(await runner.budgets.limitsFor(requester({ roleIds: [designers.id] }))).toMatchObject({ userDailyUsd: 0 });
    expect((await runner.budgets.summary(admin())).scope).toMatchObject({ roleBudgetsUnreadable: true });

    // The first budget set starts a new list, and its answer says the other roles have none now (describe-usage.test.ts).
    expect(await runner.budgets.setRoleBudget(admin(), interns, 'userDailyUsd', 0.001)).toMatchObject({ ok: true, previousUsd: undefined, replacedUnreadable: true });
    expect((await runner.budgets.summary(admin())).scope).toMatchObject({ roleBudgetsUnreadable: false, roleBudgets: [{ roleId: interns.id, dailyUsd: 0.001 }] });
    expect(await runner.budgets.limitsFor(requester({ roleIds: [designers.id] }))).toMatchObject({ userDailyUsd: 1 });
    expect(await runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', 0.5)).not.toHaveProperty('replacedUnreadable');
  });

  it.skipIf(skip)('refuse a budget set or cleared on a list of more roles than this version takes (a later version’s) as too_many_roles, leaving it as it is, as repair and dropping deleted roles do', async () => {
    const { state, runner } = await scopeWithInterns();
    const key = stateKeyOf('discord:guild-1');
    const entries = (await state.space.get(key))!;
    const newer = Array.from({ length: 30 }, (_, i) => ({ roleId: `role-${i}`, name: `R${i}`, userDailyUsd: 0.25 }));
    await state.space.put(key, { ...entries, roleBudgets: { ...entries.roleBudgets!, value: newer } });

    expect(await runner.budgets.setRoleBudget(admin(), interns, 'userDailyUsd', 0.001)).toMatchObject({ ok: false, code: 'too_many_roles' });
    expect(await runner.budgets.setRoleBudget(admin(), { id: 'role-3', name: 'R3' }, 'userDailyUsd', undefined)).toMatchObject({ ok: false, code: 'too_many_roles' });
    expect(await runner.budgets.forgetDeletedRoles(admin(), [interns.id])).toBe(0);
    expect(await runner.policy.repair(admin())).toMatchObject({ ok: true, cleared: [], left: ['roleBudgets'] });
    expect((await state.space.get(key))!.roleBudgets!.value).toEqual(newer);
  });

  it.skipIf(skip)('give every member nothing when the scope’s record is torn, also once another setting wrote it anew; warn its admins in the usage view; are mended by setting them again', async () => {
    const { state, runner, logger } = await scopeWithInterns();
    await state.tear('discord:guild-1');

    const intern = requester({ roleIds: [interns.id] });
    // Its rules cannot be read either: its jobs are refused by them first (scope-settings.test.ts); the budgets give nothing meanwhile.
    await expect(runner.submit(lowJob(intern), () => {})).rejects.toMatchObject({ code: 'settings_unreadable' });
    expect(await runner.budgets.spentRefusal(intern)).toMatchObject({ code: 'budget_user_daily', limit: 0 });
    const memberView = await runner.budgets.summary(intern);
    expect(memberView.caps).toEqual([expect.objectContaining({ code: 'budget_user_daily', limitUsd: 0, setBy: 'unreadable_budgets' }), expect.objectContaining({ code: 'budget_user_monthly', limitUsd: 0, setBy: 'unreadable_budgets' })]);
    const adminView = await runner.budgets.summary(admin());
    expect(adminView.scope).toMatchObject({ roleBudgets: [], roleBudgetsUnreadable: true });
    expect(describeUsage(adminView, { bold: (t) => `**${t}**` })).toMatch(/roles cannot be read/);
    expect(kit.emu.emulator.requests).toHaveLength(0);
    expect(logger.entries.filter((e) => e.level === 'warn').map((e) => e.obj)).toEqual([{ scopeKey: 'discord:guild-1', damagedRecord: true, jobsRefused: true, roleBudgetsUnreadable: true }]);

    // Another setting changed meanwhile writes the torn record anew: the role budgets stay unreadable, never none.
    expect(await runner.policy.set(admin(), 'maxImages', 4)).toMatchObject({ ok: true });
    expect(await runner.budgets.limitsFor(requester({ roleIds: [designers.id] }))).toMatchObject({ userDailyUsd: 0 });
    expect((await runner.policy.effective(admin())).maxImages).toMatchObject({ value: 4, source: 'admin' });

    // Setting a budget again starts a new list, as its answer says: the roles set since apply, the others' members have the cap of each user.
    expect(await runner.budgets.setRoleBudget(admin(), interns, 'userDailyUsd', 0.001)).toMatchObject({ ok: true, previousUsd: undefined, replacedUnreadable: true });
    expect(await runner.budgets.limitsFor(intern)).toMatchObject({ userDailyUsd: 0.001 });
    expect(await runner.budgets.limitsFor(requester({ roleIds: [designers.id] }))).toMatchObject({ userDailyUsd: 1 });
    expect((await runner.budgets.summary(admin())).scope?.roleBudgetsUnreadable).toBe(false);
    expect(await runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', 0.5)).not.toHaveProperty('replacedUnreadable');
  });
});

describe('role budgets on the data folder', () => {
  it('refuse every member’s job on the bot’s side while the scope’s file fails to read (not damaged: never the cap of each user), and write nothing over it', async () => {
    const dataDir = await kit.newDir();
    const state = await stateOn('file', dataDir);
    try {
      const { runner } = await kit.runner({ limits: { userDailyUsd: 1 }, settings: settingsInState(state.space, new RecordingLogger()), capCacheMs: 0, settingsCacheMs: 0 });
      expect(await runner.budgets.setRoleBudget(admin(), interns, 'userDailyUsd', 0.001)).toMatchObject({ ok: true });
      // A folder in the file's place (EISDIR), as a redeploy that changed the folder's owner (EACCES) or a disk error would fail it.
      const file = join(dataDir, state.space.definition.dir, `${stateKeyOf('discord:guild-1')}.json`);
      await rename(file, `${file}.aside`);
      await mkdir(file);
      await expect(runner.submit(lowJob(requester({ roleIds: [designers.id] })), () => {})).rejects.toMatchObject({ code: 'EISDIR' });
      await expect(runner.budgets.limitsFor(requester({ roleIds: [designers.id] }))).rejects.toMatchObject({ code: 'EISDIR' });
      await expect(runner.budgets.setRoleBudget(admin(), designers, 'userDailyUsd', 0.5)).rejects.toMatchObject({ code: 'EISDIR' });
      expect(kit.emu.emulator.requests).toHaveLength(0);
      // Read again, the budgets are as they were: the admin's change that failed wrote nothing over them.
      await rm(file, { recursive: true });
      await rename(`${file}.aside`, file);
      expect(await runner.budgets.limitsFor(requester({ roleIds: [interns.id] }))).toMatchObject({ userDailyUsd: 0.001 });
      expect(await runner.budgets.limitsFor(requester({ roleIds: [designers.id] }))).toMatchObject({ userDailyUsd: 1 });
    } finally {
      await state.close();
    }
  });
});
