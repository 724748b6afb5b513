import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { changeSetting, JobRefusedError, settingsInState, type JobRunner, type JobSpec, type Requester } from '../../../bots/runner/index.js';
import { openBotState, stateKeyOf, type BotState } from '../../../bots/state/index.js';
import { RedisLink, silentLogger, type ScopeSettingEntries } from '../../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { requester, useRunnerKit } from '../../helpers/runner-harness.js';
import { memorySpace } from '../../../bots/runner/memory-space.js';
import { RecordingLogger } from '../discord/harness.js';

const kit = useRunnerKit();
const admin = (overrides: Partial<Requester> = {}) => requester({ isAdmin: true, ...overrides });

function job(who: Requester, prompt = 'a small boat'): JobSpec {
  return { kind: 'generate', prompt, options: { quality: 'low' }, requester: who };
}

async function refusalCode(runner: JobRunner, spec: JobSpec): Promise<string | undefined> {
  try {
    const handle = await runner.submit(spec, () => {});
    await handle.done;
    return undefined;
  } catch (error) {
    if (error instanceof JobRefusedError) return error.code;
    throw error;
  }
}

const opened: (BotState | RedisLink)[] = [];
afterAll(async () => {
  for (const open of opened.reverse()) await open.close();
});

/** A process's settings store, in a bots' state of its own (the data folder, or Redis through `link`). */
async function settingsOf(dataDir: string, link?: RedisLink) {
  const state = await openBotState({ dataDir, redis: link, logger: silentLogger() });
  opened.push(state);
  return { state, settings: settingsInState(state.store.space(state.spaces.scopeSettings)) };
}

describe('the chat settings kept in the bots’ state', () => {
  it('survive a restart of the bot: the data folder keeps them', async () => {
    const dir = await kit.newDir();
    const { runner } = await kit.runner({ settings: (await settingsOf(dir)).settings });
    expect((await runner.policy.set(admin(), 'blockedWords', ['kraken'])).ok).toBe(true);
    await runner.shutdown({ graceMs: 0 });

    const { runner: next } = await kit.runner({ settings: (await settingsOf(dir)).settings });
    expect(await refusalCode(next, job(requester(), 'a kraken'))).toBe('blocked_word');
    expect(kit.emu.emulator.requests).toHaveLength(0);
    expect((await next.policy.effective(requester())).blockedWords).toMatchObject({ value: ['kraken'], source: 'admin', change: { by: expect.stringMatching(/^discord:user-\d+$/) as unknown } });
  });

  it('leave out a stored value this version cannot read, name it as unreadable, and say so in the log', async () => {
    const { state } = await settingsOf(await kit.newDir());
    const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
    await space.put(stateKeyOf('discord:G1'), {
      maxImages: { value: 99, by: 'discord:admin', at: 1 },
      channels: { value: ['art'], by: 'discord:admin', at: 1 },
      colourScheme: { value: 'teal', by: 'discord:admin', at: 1 },
    });
    const warnings: unknown[] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args), info: () => {}, error: () => {}, debug: () => {} };
    const stored = await settingsInState(space, logger).get('discord:G1');
    expect(stored.values).toEqual({ channels: ['art'] });
    // An unknown name is no setting of this version: nothing to mend.
    expect(stored.unreadable).toEqual(['maxImages']);
    expect(warnings).toHaveLength(1);
  });

  it('warn of a damaged record or value once a scope while it stays so, however often it is read, and again once it is damaged anew', async () => {
    const dir = await kit.newDir();
    const { state } = await settingsOf(dir);
    const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
    const logger = new RecordingLogger();
    const settings = settingsInState(space, logger);
    const warnings = () => logger.entries.filter((e) => e.level === 'warn').map((e) => e.obj);
    const readTimes = async (scopeKey: string, times: number) => {
      for (let i = 0; i < times; i++) await settings.get(scopeKey);
    };
    await space.put(stateKeyOf('discord:G1'), { roleBudgets: { value: 'a penny', by: 'discord:admin', at: 1 } });
    await space.put(stateKeyOf('discord:G2'), { roleBudgets: { value: [], by: 'discord:admin', at: 1 } });
    await writeFile(join(dir, state.spaces.scopeSettings.dir, `${stateKeyOf('discord:G2')}.json`), '{"roleBudgets":{"val');
    await readTimes('discord:G1', 5);
    await readTimes('discord:G2', 5);
    expect(warnings()).toEqual([
      { scopeKey: 'discord:G1', settings: ['roleBudgets'], jobsRefused: false, roleBudgetsUnreadable: true },
      { scopeKey: 'discord:G2', damagedRecord: true, jobsRefused: true, roleBudgetsUnreadable: true },
    ]);

    // Mended, then damaged anew: told again, once.
    await settings.set('discord:G1', 'roleBudgets', [], { by: 'discord:admin', at: 2 });
    await readTimes('discord:G1', 3);
    await space.put(stateKeyOf('discord:G1'), { roleBudgets: { value: 'a penny', by: 'discord:admin', at: 3 }, maxImages: { value: 99, by: 'discord:admin', at: 3 } });
    await readTimes('discord:G1', 3);
    expect(warnings().slice(2)).toEqual([{ scopeKey: 'discord:G1', settings: ['roleBudgets', 'maxImages'], jobsRefused: true, roleBudgetsUnreadable: true }]);
    // One message, whatever is unreadable: what it holds back is in its fields.
    expect(new Set(logger.entries.filter((e) => e.level === 'warn').map((e) => e.msg)).size).toBe(1);
  });

  it('answer what a setting was before a change, and forget a cleared one', async () => {
    const { settings } = await settingsOf(await kit.newDir());
    expect(await settings.set('slack:T1', 'maxImages', 3, { by: 'slack:U1', at: 1 })).toEqual({ previous: undefined, unreadable: false });
    expect(await settings.set('slack:T1', 'maxImages', 2, { by: 'slack:U1', at: 2 })).toEqual({ previous: 3, unreadable: false });
    expect(await settings.set('slack:T1', 'maxImages', undefined, { by: 'slack:U1', at: 3 })).toEqual({ previous: 2, unreadable: false });
    expect(await settings.get('slack:T1')).toEqual({ values: {}, setBy: {} });
  });
});

describe('a rule the bots’ state keeps but cannot read', () => {
  /** A runner whose settings are kept in a data folder, and a way to damage one stored value of a scope. */
  async function damageable() {
    const dir = await kit.newDir();
    const { state, settings } = await settingsOf(dir);
    const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
    const { runner } = await kit.runner({ settings, settingsCacheMs: 0 });
    const damage = (entries: ScopeSettingEntries) => space.update(stateKeyOf('discord:guild-1'), (stored) => ({ ...(stored as ScopeSettingEntries), ...entries }));
    const tear = () => writeFile(join(dir, state.spaces.scopeSettings.dir, `${stateKeyOf('discord:guild-1')}.json`), '{"blocked":{"val');
    return { runner, damage, tear };
  }

  it('refuses every paid job of the scope, before anything is sent, naming it — a blocked member and a blocked word do not pass — until an admin sets it again', async () => {
    const { runner, damage } = await damageable();
    expect((await runner.policy.set(admin(), 'blocked', ['mallory'])).ok).toBe(true);
    expect((await runner.policy.set(admin(), 'blockedWords', ['kraken'])).ok).toBe(true);
    await damage({ blocked: { value: 'mallory', by: 'discord:admin', at: 2 }, blockedWords: { value: [42], by: 'discord:admin', at: 2 }, defaultSize: { value: 'huge', by: 'discord:admin', at: 2 } });

    for (const who of [requester({ userId: 'mallory' }), requester(), admin()]) {
      await expect(runner.submit(job(who, 'a kraken'), () => {})).rejects.toMatchObject({ code: 'settings_unreadable', words: { values: { count: 2 } } });
    }
    // The entry points that open a form first refuse it too.
    expect(await runner.policy.whoWhereRefusal(requester())).toMatchObject({ code: 'settings_unreadable' });
    expect(kit.emu.emulator.requests).toHaveLength(0);
    // A default that cannot be read falls back, and is named with the rules for the admins' view.
    expect((await runner.policy.effective(admin())).unreadable).toEqual(['blocked', 'blockedWords', 'defaultSize']);

    // Setting one again (the admin's answer says what it replaced) leaves the other refusing; clearing that one lifts the refusal.
    expect(await runner.policy.set(admin(), 'blocked', ['mallory'])).toMatchObject({ ok: true, previous: undefined, wasUnreadable: true });
    await expect(runner.submit(job(requester()), () => {})).rejects.toMatchObject({ code: 'settings_unreadable', words: { values: { count: 1 } } });
    expect(await runner.policy.set(admin(), 'blockedWords', undefined)).toMatchObject({ ok: true, wasUnreadable: true });
    expect(await refusalCode(runner, job(requester({ userId: 'mallory' })))).toBe('member_blocked');
    expect(await refusalCode(runner, job(requester()))).toBeUndefined();
    expect(kit.emu.emulator.requests).toHaveLength(1);
    expect((await runner.policy.effective(admin())).defaultSize).toMatchObject({ value: '1024x1024', source: 'default' });
  });

  it('refuses every job of a scope whose record is damaged until an admin sets or clears each rule: writing one setting keeps the others unreadable', async () => {
    const { runner, tear } = await damageable();
    expect((await runner.policy.set(admin(), 'channels', ['art'])).ok).toBe(true);
    await tear();
    const rules = ['channels', 'allowed', 'blocked', 'blockedWords', 'maxImages', 'qualities', 'sizes', 'highQualityFor', 'privateResults'];
    await expect(runner.submit(job(requester({ channelId: 'general' })), () => {})).rejects.toMatchObject({ code: 'settings_unreadable', words: { values: { count: rules.length } } });

    // A default written meanwhile writes the record anew, but no rule becomes unset by it.
    expect((await runner.policy.set(admin(), 'defaultSize', '1024x1536')).ok).toBe(true);
    expect((await runner.policy.effective(admin())).unreadable).toEqual(rules);
    expect((await runner.policy.set(admin(), 'channels', ['art'])).ok).toBe(true);
    for (const name of rules.slice(1)) {
      await expect(runner.submit(job(requester({ channelId: 'art' })), () => {})).rejects.toMatchObject({ code: 'settings_unreadable' });
      expect(await runner.policy.set(admin(), name as 'allowed', undefined)).toMatchObject({ ok: true, wasUnreadable: true });
    }
    // The rules are mended; the role budgets still give nothing until they are set again (role-budgets.test.ts).
    await expect(runner.submit(job(requester({ channelId: 'art' })), () => {})).rejects.toMatchObject({ code: 'budget_user_daily', limit: 0 });
    await runner.budgets.setRoleBudget(admin(), { id: 'role-x', name: 'X' }, 'userDailyUsd', undefined);
    expect(await refusalCode(runner, job(requester({ channelId: 'general' })))).toBe('channel_not_allowed');
    expect(await refusalCode(runner, job(requester({ channelId: 'art' })))).toBeUndefined();
    expect(kit.emu.emulator.requests).toHaveLength(1);
  });
});

describe('repairing the settings that cannot be read, in one step', () => {
  it('clears exactly the unreadable ones, back to their defaults, keeps the readable ones, and lifts the refusal: a job is then taken', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space), settingsCacheMs: 0 });
    expect((await runner.policy.set(admin(), 'channels', ['art'])).ok).toBe(true);
    expect((await runner.policy.set(admin(), 'maxImages', 2)).ok).toBe(true);
    await space.update(stateKeyOf('discord:guild-1'), (stored) => ({
      ...(stored as ScopeSettingEntries),
      blocked: { value: 'mallory', by: 'discord:admin', at: 2 },
      qualities: { value: [3], by: 'discord:admin', at: 2 },
      defaultSize: { value: 'huge', by: 'discord:admin', at: 2 },
      roleBudgets: { value: 'a penny', by: 'discord:admin', at: 2 },
      colourScheme: { value: 'teal', by: 'discord:admin', at: 2 },
    }));
    const member = requester({ channelId: 'art' });
    await expect(runner.submit(job(member), () => {})).rejects.toMatchObject({ code: 'settings_unreadable' });

    expect(await runner.policy.repair(admin())).toEqual({ ok: true, cleared: ['blocked', 'qualities', 'defaultSize', 'roleBudgets'], left: [] });
    const s = await runner.policy.effective(admin());
    expect(s.unreadable).toEqual([]);
    expect(s.channels).toMatchObject({ value: ['art'], source: 'admin' });
    expect(s.maxImages).toMatchObject({ value: 2, source: 'admin' });
    expect(s.blocked).toMatchObject({ value: [], source: 'default' });
    expect(s.defaultSize).toMatchObject({ value: '1024x1024', source: 'default' });
    // A name this version does not know is no setting of it: a later version's, kept.
    expect(((await space.read(stateKeyOf('discord:guild-1'))) as ScopeSettingEntries).colourScheme).toEqual({ value: 'teal', by: 'discord:admin', at: 2 });
    expect(await refusalCode(runner, job(member))).toBeUndefined();
    expect(await refusalCode(runner, job(requester({ channelId: 'general' })))).toBe('channel_not_allowed');
    expect(kit.emu.emulator.requests).toHaveLength(1);
    // Nothing left to clear: nothing changes.
    expect(await runner.policy.repair(admin())).toEqual({ ok: true, cleared: [], left: [] });
  });

  it('leaves each member the cap of each user once it cleared the role budgets, as before any role had one', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space), settingsCacheMs: 0, limits: { userDailyUsd: 1, userMonthlyUsd: 5 } });
    expect(await runner.budgets.setRoleBudget(admin(), { id: 'role-interns', name: 'Interns' }, 'userDailyUsd', 0.001)).toMatchObject({ ok: true });
    const intern = requester({ roleIds: ['role-interns'] });
    await space.update(stateKeyOf('discord:guild-1'), (stored) => ({ ...(stored as ScopeSettingEntries), roleBudgets: { value: 'a penny', by: 'discord:admin', at: 2 } }));
    expect(await runner.budgets.limitsFor(intern)).toMatchObject({ userDailyUsd: 0, userMonthlyUsd: 0 });

    expect(await runner.policy.repair(admin())).toEqual({ ok: true, cleared: ['roleBudgets'], left: [] });
    expect(await runner.budgets.limitsFor(intern)).toMatchObject({ userDailyUsd: 1, userMonthlyUsd: 5 });
    expect(await refusalCode(runner, job(intern))).toBeUndefined();
  });

  it('leaves as they are the values a later version wrote, well-formed but beyond what this one reads — a longer ban list is never erased', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space), settingsCacheMs: 0 });
    const at = { by: 'discord:admin', at: 2 };
    const newer = {
      blocked: { value: Array.from({ length: 1001 }, (_, i) => `user${i}`), ...at },
      blockedWords: { value: Array.from({ length: 201 }, (_, i) => `word${i}`), ...at },
      maxImages: { value: 12, ...at },
      sizes: { value: ['4096x4096'], ...at },
      qualities: { value: ['ultra'], ...at },
      roleBudgets: { value: Array.from({ length: 30 }, (_, i) => ({ roleId: `role${i}`, name: `Role ${i}`, userDailyUsd: 1 })), ...at },
    };
    await space.update(stateKeyOf('discord:guild-1'), () => ({ ...newer, defaultSize: { value: 'huge', ...at }, maxImagesTypo: { value: 'x', ...at } }));

    expect(await runner.policy.repair(admin())).toEqual({ ok: true, cleared: ['defaultSize'], left: ['blocked', 'blockedWords', 'maxImages', 'qualities', 'sizes', 'roleBudgets'] });
    const stored = (await space.read(stateKeyOf('discord:guild-1'))) as ScopeSettingEntries;
    expect(stored).toEqual({ ...newer, maxImagesTypo: { value: 'x', ...at } });
    // Still unreadable here: its jobs stay refused until an admin sets or clears each by hand.
    expect((await runner.policy.effective(admin())).unreadable).toEqual(['blocked', 'blockedWords', 'maxImages', 'sizes', 'qualities']);
    await expect(runner.submit(job(requester()), () => {})).rejects.toMatchObject({ code: 'settings_unreadable' });
  });

  it('clears a record damaged whole, every rule and the role budgets with it, in one step: its jobs are taken again', async () => {
    const dir = await kit.newDir();
    const { state, settings } = await settingsOf(dir);
    const { runner } = await kit.runner({ settings, settingsCacheMs: 0 });
    expect((await runner.policy.set(admin(), 'channels', ['art'])).ok).toBe(true);
    await writeFile(join(dir, state.spaces.scopeSettings.dir, `${stateKeyOf('discord:guild-1')}.json`), '{"channels":{"val');
    await expect(runner.submit(job(requester()), () => {})).rejects.toMatchObject({ code: 'settings_unreadable' });

    const repaired = await runner.policy.repair(admin());
    expect(repaired).toMatchObject({ ok: true, cleared: expect.arrayContaining(['channels', 'privateResults', 'roleBudgets']) as unknown });
    expect((await runner.policy.effective(admin())).unreadable).toEqual([]);
    expect(await refusalCode(runner, job(requester()))).toBeUndefined();
  });

  it('is refused to a member who is not an admin, changing nothing, and logged with who did it for an admin', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const logger = new RecordingLogger();
    const { runner } = await kit.runner({ settings: settingsInState(space), settingsCacheMs: 0, logger });
    await space.update(stateKeyOf('discord:guild-1'), () => ({ blocked: { value: 'mallory', by: 'discord:admin', at: 2 } }));
    expect(await runner.policy.repair(requester())).toEqual({ ok: false, code: 'not_admin' });
    expect((await runner.policy.effective(admin())).unreadable).toEqual(['blocked']);
    await expect(runner.submit(job(requester()), () => {})).rejects.toMatchObject({ code: 'settings_unreadable' });

    const who = admin();
    await runner.policy.repair(who);
    expect(logger.entries.filter((e) => e.msg === 'a chat admin cleared the settings that could not be read').map((e) => e.obj)).toEqual([
      { scopeKey: 'discord:guild-1', changedBy: `discord:${who.userId}`, cleared: ['blocked'] },
    ]);
  });
});

describe('a rule stored by a version whose schema was wider', () => {
  it('keeps the sizes and qualities this version knows, and the lists of who may use the bot whole; the scope works', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space), settingsCacheMs: 0 });
    const many = Array.from({ length: 150 }, (_, i) => `user:${i}`);
    const member = requester();
    await space.update(stateKeyOf('discord:guild-1'), () => ({
      sizes: { value: ['2048x2048', '1024x1024', '1024x1024'], by: 'discord:admin', at: 1 },
      qualities: { value: ['ultra', 'low'], by: 'discord:admin', at: 1 },
      allowed: { value: [...many, `user:${member.userId}`], by: 'discord:admin', at: 1 },
      channels: { value: Array.from({ length: 120 }, (_, i) => (i === 0 ? member.channelId : `c${i}`)), by: 'discord:admin', at: 1 },
    }));
    const s = await runner.policy.effective(admin());
    expect(s.unreadable).toEqual([]);
    expect(s.sizes).toMatchObject({ value: ['1024x1024'], source: 'admin' });
    expect(s.qualities).toMatchObject({ value: ['low'], source: 'admin' });
    expect(s.allowed.value).toHaveLength(151);
    expect(s.channels.value).toHaveLength(120);
    expect(await refusalCode(runner, job(member))).toBeUndefined();
    expect(await refusalCode(runner, job(requester()))).toBe('member_not_allowed');
    expect(await refusalCode(runner, { ...job(member), options: { quality: 'low', size: '1536x1024' } })).toBe('size_not_allowed');
  });

  it('warns once a scope of the sizes and qualities it left out, however often it is read, and again when they change', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const logger = new RecordingLogger();
    const settings = settingsInState(space, logger);
    const dropped = () => logger.entries.filter((e) => e.level === 'warn').map((e) => e.obj);
    await space.update(stateKeyOf('discord:G1'), () => ({ sizes: { value: ['2048x2048', '1024x1024', '2048x2048'], by: 'discord:admin', at: 1 } }));
    await space.update(stateKeyOf('discord:G2'), () => ({ qualities: { value: ['ultra', 'low'], by: 'discord:admin', at: 1 } }));
    for (let i = 0; i < 3; i++) {
      expect((await settings.get('discord:G1')).values).toEqual({ sizes: ['1024x1024'] });
      await settings.get('discord:G2');
    }
    expect(dropped()).toEqual([
      { scopeKey: 'discord:G1', dropped: { sizes: ['2048x2048'] } },
      { scopeKey: 'discord:G2', dropped: { qualities: ['ultra'] } },
    ]);
    await space.update(stateKeyOf('discord:G1'), () => ({ sizes: { value: ['4096x4096', '1024x1024'], by: 'discord:admin', at: 2 } }));
    await settings.get('discord:G1');
    await settings.get('discord:G1');
    expect(dropped().slice(2)).toEqual([{ scopeKey: 'discord:G1', dropped: { sizes: ['4096x4096'] } }]);
  });

  it('keeps failing closed for a value of the wrong shape, one with no size or quality it knows, and blocked members or words beyond today’s bounds', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space), settingsCacheMs: 0 });
    const cases: [ScopeSettingEntries, string][] = [
      [{ sizes: { value: ['2048x2048'], by: 'discord:admin', at: 1 } }, 'sizes'],
      [{ sizes: { value: '1024x1024', by: 'discord:admin', at: 1 } }, 'sizes'],
      [{ qualities: { value: ['low', 3], by: 'discord:admin', at: 1 } }, 'qualities'],
      [{ qualities: { value: [], by: 'discord:admin', at: 1 } }, 'qualities'],
      [{ allowed: { value: ['user:1', ''], by: 'discord:admin', at: 1 } }, 'allowed'],
      [{ blocked: { value: Array.from({ length: 1001 }, (_, i) => `u${i}`), by: 'discord:admin', at: 1 } }, 'blocked'],
      [{ blockedWords: { value: Array.from({ length: 201 }, (_, i) => `w${i}`), by: 'discord:admin', at: 1 } }, 'blockedWords'],
    ];
    for (const [entries, name] of cases) {
      await space.update(stateKeyOf('discord:guild-1'), () => entries);
      expect((await runner.policy.effective(admin())).unreadable, name).toEqual([name]);
      await expect(runner.submit(job(requester()), () => {}), name).rejects.toMatchObject({ code: 'settings_unreadable' });
    }
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });
});

describe('the bound of a list of who and where, decided by the store', () => {
  const at = { by: 'discord:admin', at: 1 };
  const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `user:${from + i}`);

  it('refuses a whole value past the bound, however valid its ids, and writes nothing', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const store = settingsInState(space);
    for (const name of ['channels', 'allowed', 'highQualityFor'] as const) {
      const many = Array.from({ length: 5000 }, (_, i) => (name === 'channels' ? `c${i}` : `user:${i}`));
      await expect(store.set('discord:guild-1', name, many, at), name).rejects.toMatchObject({ name: 'ListTooLongError', most: 100 });
    }
    expect(await space.get(stateKeyOf('discord:guild-1'))).toBeUndefined();
  });

  it('keeps a list stored under a higher bound past it only as a part of what is stored: a change that adds anyone is refused', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const store = settingsInState(space);
    const long = ids(150);
    await space.update(stateKeyOf('discord:guild-1'), () => ({ allowed: { value: long, ...at } }));
    // Two dropped, one added: shorter than before, still past the bound, and not a part of what is stored.
    const swapped = [...long.slice(2), 'user:evil'];
    await expect(store.set('discord:guild-1', 'allowed', swapped, at)).rejects.toMatchObject({ name: 'ListTooLongError', most: 100 });
    await expect(store.update('discord:guild-1', 'allowed', (now) => [...(now ?? []).slice(2), 'user:evil'], at)).rejects.toMatchObject({ most: 100 });
    expect((await store.get('discord:guild-1')).values.allowed).toEqual(long);
    // A part of it is kept, however long; one within the bound is kept whatever it holds.
    expect(await store.update('discord:guild-1', 'allowed', (now) => (now ?? []).slice(2), at)).toEqual(long.slice(2));
    expect(await store.update('discord:guild-1', 'allowed', () => ['user:evil'], at)).toEqual(['user:evil']);
  });

  it('answers an admin’s change the policy cannot see the bound of as too many, naming the most', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space) });
    const long = ids(150);
    await space.update(stateKeyOf('discord:guild-1'), () => ({ allowed: { value: long, ...at } }));
    const swapped = [...long.slice(2), 'user:evil'];
    expect(await runner.policy.update(admin(), 'allowed', () => swapped)).toEqual({ ok: false, code: 'invalid_value', name: 'allowed', most: 100 });
    expect(await runner.policy.set(admin(), 'allowed', swapped)).toEqual({ ok: false, code: 'invalid_value', name: 'allowed', most: 100 });
    expect(await runner.policy.set(admin(), 'allowed', ids(101, 1000))).toEqual({ ok: false, code: 'invalid_value', name: 'allowed', most: 100 });
    expect((await space.get(stateKeyOf('discord:guild-1')))?.allowed?.value).toEqual(long);
    expect(await runner.policy.set(admin(), 'allowed', long.slice(1))).toMatchObject({ ok: true });
  });
});

const redis = testRedis();

describe.skipIf(redis.skipReason)(`chat settings on Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  const prefix = uniquePrefix('scope-settings');
  afterAll(async () => {
    if (redis.url) await deleteKeys(redis.url, prefix);
  });

  it('apply a change made through one process to the jobs of another on the same Redis', async () => {
    const url = requireRedisUrl(redis);
    // Two states on links of their own, as two processes of the account have.
    const [one, two] = [await RedisLink.open({ url, prefix }), await RedisLink.open({ url, prefix })];
    opened.push(one, two);
    const { runner: first } = await kit.runner({ settings: (await settingsOf(await kit.newDir(), one)).settings });
    const { runner: second } = await kit.runner({ settings: (await settingsOf(await kit.newDir(), two)).settings, settingsCacheMs: 0 });

    expect(await refusalCode(second, job(requester({ channelId: 'general' })))).toBeUndefined();
    expect((await first.policy.set(admin(), 'channels', ['art'])).ok).toBe(true);
    expect(await refusalCode(second, job(requester({ channelId: 'general' })))).toBe('channel_not_allowed');
    expect(kit.emu.emulator.requests).toHaveLength(1);
    expect((await second.policy.effective(admin())).channels).toMatchObject({ value: ['art'], source: 'admin' });
  });

  it('keep both members blocked when two admins on two processes each add one within the cache’s lifetime', async () => {
    const url = requireRedisUrl(redis);
    const [one, two] = [await RedisLink.open({ url, prefix }), await RedisLink.open({ url, prefix })];
    opened.push(one, two);
    const { runner: first } = await kit.runner({ settings: (await settingsOf(await kit.newDir(), one)).settings, settingsCacheMs: 60_000 });
    const { runner: second } = await kit.runner({ settings: (await settingsOf(await kit.newDir(), two)).settings, settingsCacheMs: 60_000 });
    const scope = { scopeId: 'guild-blocking' };
    // The second process has read the settings before the first one's change: its cache says nobody is blocked.
    expect((await second.policy.effective(admin(scope))).blocked.value).toEqual([]);
    expect(await changeSetting(first.policy, admin({ ...scope, userId: 'ann' }), 'blocked', 'add <@mallory>')).toMatchObject({ ok: true });
    expect(await changeSetting(second.policy, admin({ ...scope, userId: 'bob' }), 'blocked', 'add <@trudy>')).toMatchObject({ ok: true });
    expect((await second.policy.effective(admin(scope))).blocked.value).toEqual(['mallory', 'trudy']);
    expect(await refusalCode(second, job(requester({ ...scope, userId: 'mallory' })))).toBe('member_blocked');
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });
});
