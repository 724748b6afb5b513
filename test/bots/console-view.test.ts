import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { botsConsoleView, ROLE_BUDGET_READS_AT_ONCE } from '../../bots/console-view.js';
import { settingsInState } from '../../bots/runner/index.js';
import type { RunnerConfig } from '../../bots/runner/config.js';
import { JobRecordStore } from '../../bots/discord/JobRecordStore.js';
import { MAX_KEPT_IMAGE_BYTES, openBotState, stateKeyOf } from '../../bots/state/index.js';
import { silentLogger, type ScopeSettingEntries } from '../../src/internal.js';
import { makeImage } from '../helpers/images.js';
import { requester, useRunnerKit } from '../helpers/runner-harness.js';
import { startSeededConsole, TOKEN } from '../console/console-harness.js';
import { jobStoreOf, spyOnInstance } from '../helpers/instance-spy.js';

const kit = useRunnerKit();

describe('the chat settings the console shows the owner', () => {
  it('are the admins’ choices with who set each, and each kept that cannot be read as what it means: jobs refused, the default applies, or (role budgets) members may spend nothing', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
    const { runner } = await kit.runner({ settings: settingsInState(space) });
    try {
      await space.update(stateKeyOf('discord:G1'), () => ({
        channels: { value: ['art'], by: 'discord:42', at: 5 },
        allowed: { value: 'user:7', by: 'discord:42', at: 5 },
        defaultQuality: { value: 'ultra', by: 'discord:42', at: 5 },
        roleBudgets: { value: 'lots', by: 'discord:42', at: 5 },
      }));
      const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() });
      expect(await view.chatSettings!(['discord:G1', 'slack:T1'])).toEqual({
        'discord:G1': {
          channels: { value: ['art'], by: 'discord:42', at: 5 },
          allowed: { unreadable: 'jobs_refused' },
          defaultQuality: { unreadable: 'default_applies' },
          // Its members may spend nothing meanwhile, though no rule names them.
          roleBudgets: { unreadable: 'spend_nothing' },
        },
      });
    } finally {
      await state.close();
    }
  });

  it('show role budgets as unreadable exactly where the members’ caps take them as unreadable (one rule, asked by both)', async () => {
    const dir = await kit.newDir();
    const state = await openBotState({ dataDir: dir, logger: silentLogger() });
    try {
      const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
      const { runner } = await kit.runner({ settings: settingsInState(space) });
      const budget = { roleId: '123456789012345678', name: 'artists', userDailyUsd: 1 };
      const stored: Record<string, unknown> = {
        // Readable: a list, an empty list, none at all beside another setting.
        G1: { roleBudgets: { value: [budget], by: 'discord:42', at: 5 } },
        G2: { roleBudgets: { value: [], by: 'discord:42', at: 5 } },
        G3: { maxImages: { value: 2, by: 'discord:42', at: 5 } },
        // Readable beside a rule that is not.
        G8: { allowed: { value: 'user:7', by: 'discord:42', at: 5 }, roleBudgets: { value: [budget], by: 'discord:42', at: 5 } },
        // Unreadable: not a list, a list of what is no budget, the mark a rewritten damaged record leaves.
        G4: { roleBudgets: { value: 'lots', by: 'discord:42', at: 5 } },
        G5: { roleBudgets: { value: [{ roleId: 'x', name: 7 }], by: 'discord:42', at: 5 } },
        G6: { roleBudgets: { value: { damaged: true }, by: 'discord:42', at: 5 } },
      };
      for (const [guild, entries] of Object.entries(stored)) await space.put(stateKeyOf(`discord:${guild}`), entries as ScopeSettingEntries);
      // A record damaged whole.
      await space.put(stateKeyOf('discord:G7'), { maxImages: { value: 4, by: 'discord:42', at: 8 } });
      await writeFile(join(dir, state.spaces.scopeSettings.dir, `${stateKeyOf('discord:G7')}.json`), '{"pictorState":1,"holder":null,"value":{"maxIm');
      const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() });
      const shown = await view.chatSettings!([]);
      const guilds = [...Object.keys(stored), 'G7'];
      const onConsole = guilds.map((guild) => shown[`discord:${guild}`]?.roleBudgets !== undefined);
      const caps = [];
      for (const guild of guilds) caps.push((await runner.budgets.summary(requester({ scopeId: guild, isAdmin: true }))).scope?.roleBudgetsUnreadable === true);
      expect(caps).toEqual([false, false, false, false, true, true, true, true]);
      expect(onConsole).toEqual(caps);
      for (const guild of ['G4', 'G5', 'G6', 'G7']) expect(shown[`discord:${guild}`]?.roleBudgets).toEqual({ unreadable: 'spend_nothing' });
    } finally {
      await state.close();
    }
  });

  it('give the console every server’s role budgets as the members’ caps read them: those set, and unreadable where they cannot be read', async () => {
    const dir = await kit.newDir();
    const state = await openBotState({ dataDir: dir, logger: silentLogger() });
    try {
      const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
      const { runner } = await kit.runner({ settings: settingsInState(space) });
      const budget = { roleId: '123456789012345678', name: 'artists', userDailyUsd: 1 };
      await space.put(stateKeyOf('discord:G1'), { roleBudgets: { value: [budget], by: 'discord:42', at: 5 } });
      await space.put(stateKeyOf('slack:T1'), { roleBudgets: { value: [{ roleId: 'S0123', name: 'design', userMonthlyUsd: 9 }], by: 'slack:U1', at: 5 } });
      // None: an empty list, other settings only; unreadable: not a list.
      await space.put(stateKeyOf('discord:G2'), { roleBudgets: { value: [], by: 'discord:42', at: 5 } });
      await space.put(stateKeyOf('discord:G3'), { maxImages: { value: 2, by: 'discord:42', at: 5 } });
      await space.put(stateKeyOf('discord:G4'), { roleBudgets: { value: 'lots', by: 'discord:42', at: 5 } });
      const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() });
      expect(await view.roleBudgets!()).toEqual({
        'discord:G1': [budget],
        'slack:T1': [{ roleId: 'S0123', name: 'design', userMonthlyUsd: 9 }],
        'discord:G4': 'unreadable',
      });
    } finally {
      await state.close();
    }
  });

  it('list every server and workspace with settings kept, though it has no lowered cap and spent nothing this month', async () => {
    const dir = await kit.newDir();
    const state = await openBotState({ dataDir: dir, logger: silentLogger() });
    try {
      const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
      const { runner } = await kit.runner({ settings: settingsInState(space) });
      // A workspace whose rule cannot be read has refused every job since: nothing spent, yet the owner must see why.
      await space.put(stateKeyOf('slack:T9'), { blocked: { value: 'mallory', by: 'slack:U1', at: 5 } });
      await space.put(stateKeyOf('discord:G2'), { maxImages: { value: 2, by: 'discord:42', at: 6 } });
      // A record damaged whole (text that is not JSON): every rule unreadable, every job refused, the role budgets none to spend.
      await space.put(stateKeyOf('discord:G4'), { maxImages: { value: 4, by: 'discord:42', at: 8 } });
      await writeFile(join(dir, state.spaces.scopeSettings.dir, `${stateKeyOf('discord:G4')}.json`), '{"pictorState":1,"holder":null,"value":{"maxIm');
      // A scope key with other characters is kept under a digest, which names no scope.
      await space.put(stateKeyOf('discord:G:3'), { maxImages: { value: 3, by: 'discord:42', at: 7 } });
      const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() });
      const refused = { unreadable: 'jobs_refused' };
      expect(await view.chatSettings!([])).toEqual({
        'slack:T9': { blocked: refused },
        'discord:G2': { maxImages: { value: 2, by: 'discord:42', at: 6 } },
        'discord:G4': {
          ...Object.fromEntries(['channels', 'allowed', 'blocked', 'blockedWords', 'maxImages', 'qualities', 'sizes', 'highQualityFor', 'privateResults'].map((name) => [name, refused])),
          ...Object.fromEntries(['moderation', 'defaultSize', 'defaultQuality', 'defaultPreviews', 'auditChannel'].map((name) => [name, { unreadable: 'default_applies' }])),
          roleBudgets: { unreadable: 'spend_nothing' },
        },
      });
      // Those asked for are listed too, once.
      expect(Object.keys(await view.chatSettings!(['discord:G2', 'discord:G1'])).sort()).toEqual(['discord:G2', 'discord:G4', 'slack:T9']);
    } finally {
      await state.close();
    }
  });

  it('give the role budgets of many servers read side by side, a bounded number at once, not one server after another', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    try {
      const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
      const { runner } = await kit.runner({ settings: settingsInState(space) });
      const budget = { roleId: '123456789012345678', name: 'artists', userDailyUsd: 1 };
      const guilds = Array.from({ length: ROLE_BUDGET_READS_AT_ONCE * 2 + 3 }, (_, i) => `discord:G${i}`);
      for (const guild of guilds) await space.put(stateKeyOf(guild), { roleBudgets: { value: [budget], by: 'discord:42', at: 5 } });
      // Each read of a server's settings waits until the test lets the ones asked so far answer.
      let asked = 0;
      let inFlight = 0;
      let most = 0;
      let answer!: () => void;
      let answered = new Promise<void>((resolve) => (answer = resolve));
      const spaceOf = state.store.space.bind(state.store);
      vi.spyOn(state.store, 'space').mockImplementation(<T>(definition: Parameters<typeof spaceOf>[0]) => {
        const inner = spaceOf<T>(definition);
        const read = inner.read.bind(inner);
        inner.read = async (key) => {
          asked++;
          most = Math.max(most, ++inFlight);
          await answered;
          inFlight--;
          return read(key);
        };
        return inner;
      });
      const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() });
      const all = view.roleBudgets!();
      await vi.waitFor(() => expect(asked).toBe(ROLE_BUDGET_READS_AT_ONCE));
      const release = () => {
        const now = answer;
        answered = new Promise<void>((resolve) => (answer = resolve));
        now();
      };
      while (asked < guilds.length) {
        const before = asked;
        release();
        await vi.waitFor(() => expect(asked).toBeGreaterThan(before));
      }
      answer();
      expect(Object.keys(await all).sort()).toEqual([...guilds].sort());
      expect(most).toBe(ROLE_BUDGET_READS_AT_ONCE);
    } finally {
      vi.restoreAllMocks();
      await state.close();
    }
  });

  it('are read from the bots’ state by the console itself, never through the jobs’ settings cache (a page would evict its busy scopes)', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    try {
      const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
      const jobs = settingsInState(space);
      const read = vi.spyOn(jobs, 'get');
      const { runner } = await kit.runner({ settings: jobs });
      for (let i = 0; i < 5; i++) await space.put(stateKeyOf(`discord:G${i}`), { maxImages: { value: 2, by: 'discord:42', at: 6 } });
      const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() });
      expect(Object.keys(await view.chatSettings!(['slack:T1'])).sort()).toEqual(['discord:G0', 'discord:G1', 'discord:G2', 'discord:G3', 'discord:G4']);
      expect(read).not.toHaveBeenCalled();
      // What it shows is what is stored now: a change is seen on the next page, not a cache's lifetime later.
      await space.put(stateKeyOf('discord:G0'), { maxImages: { value: 3, by: 'discord:42', at: 7 } });
      expect((await view.chatSettings!([]))['discord:G0']).toEqual({ maxImages: { value: 3, by: 'discord:42', at: 7 } });
    } finally {
      await state.close();
    }
  });
});

describe('the kept images the console shows of a Discord job', () => {
  it('are those kept, numbered as the job’s images, as its Edit buttons: a job whose first image was not kept has its second alone, as its second', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    const { runner } = await kit.runner({});
    try {
      const store = new JobRecordStore({ state, logger: silentLogger() });
      const key = store.newKey();
      const second = Buffer.from(await makeImage('png', 9, 9));
      await store.add({ key, kind: 'generate', prompt: 'p', options: {}, requester: { platform: 'discord', userId: '1', channelId: '2', scopeId: '3' }, status: 'running', runnerJobId: 'job-1' });
      // Its first image too large to keep: its Edit buttons are "Edit 2" alone, opening the job's image 1.
      await store.saveOutputs(key, [Buffer.alloc(MAX_KEPT_IMAGE_BYTES + 1), second], ['png']);
      const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() });
      expect(await view.images!.indices(['job-1', 'job-2'])).toEqual(new Map([['job-1', [1]]]));
      expect(await view.images!.read('job-1', 0)).toBeUndefined();
      expect((await view.images!.read('job-1', 1))?.data).toEqual(second);
      expect((await view.images!.read('job-1', 1))?.data).toEqual((await store.readOutput(key, 1))?.data);
    } finally {
      await state.close();
    }
  });

  it('are asked of the page’s jobs together, not one job after another', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    const { runner } = await kit.runner({});
    try {
      const asked: string[] = [];
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => (answer = resolve));
      spyOnInstance(JobRecordStore.prototype, 'keptOutputs', jobStoreOf({ state })).mockImplementation(async (jobId) => {
        asked.push(jobId);
        await answered;
        return jobId === 'job-2' ? [0] : undefined;
      });
      const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() });
      const indices = view.images!.indices(['job-1', 'job-2', 'job-3']);
      await vi.waitFor(() => expect(asked).toEqual(['job-1', 'job-2', 'job-3']));
      answer();
      expect(await indices).toEqual(new Map([['job-2', [0]]]));
    } finally {
      vi.restoreAllMocks();
      await state.close();
    }
  });

  it('cost one `has` per image a row shows, not one per image of the job, and one for a thumbnail made before', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    const { runner } = await kit.runner({});
    const store = new JobRecordStore({ state, logger: silentLogger() });
    const images = state.store.space<Buffer>(state.spaces.discordImages);
    const key = store.newKey();
    // The seeded ledger's Discord job d-2, here with six images kept.
    await store.add({ key, kind: 'generate', prompt: 'p', options: {}, requester: { platform: 'discord', userId: '1', channelId: '2', scopeId: '3' }, status: 'running', runnerJobId: 'd-2' });
    const made = await Promise.all([1, 2, 3, 4, 5, 6].map(async (shade) => Buffer.from(await makeImage('png', 9, 9, { r: shade * 40, g: 80, b: 40 }))));
    await store.saveOutputs(key, made, ['png']);
    const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() });
    const running = await startSeededConsole({ bots: { images: view.images } });
    const has = vi.spyOn(images, 'has');
    try {
      expect(await view.images!.indices(['d-2'], 4)).toEqual(new Map([['d-2', [0, 1, 2, 3]]]));
      expect(has).toHaveBeenCalledTimes(4);
      // One of the four gone: the fifth is asked in its place, alone.
      await images.delete((await store.get(key))!.outputs[1]!.file);
      has.mockClear();
      expect(await view.images!.indices(['d-2'], 4)).toEqual(new Map([['d-2', [0, 2, 3, 4]]]));
      expect(has).toHaveBeenCalledTimes(5);

      const login = await fetch(`${running.url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }), redirect: 'manual', headers: { origin: running.url } });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      has.mockClear();
      const row = /<tr data-job="d-2">(.*?)<\/tr>/.exec(await (await fetch(`${running.url}/jobs`, { headers: { cookie } })).text())?.[1] ?? '';
      expect([...row.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1])).toEqual(['/thumbs/d-2/0', '/thumbs/d-2/2', '/thumbs/d-2/3', '/thumbs/d-2/4']);
      expect(has).toHaveBeenCalledTimes(5);
      expect((await fetch(`${running.url}/thumbs/d-2/3`, { headers: { cookie } })).status).toBe(200);
      // Served again from the console's cache: its one image asked.
      has.mockClear();
      expect((await fetch(`${running.url}/thumbs/d-2/3`, { headers: { cookie } })).status).toBe(200);
      expect(has).toHaveBeenCalledTimes(1);
      expect(has).toHaveBeenCalledWith((await store.get(key))!.outputs[3]!.file);
    } finally {
      await running.close();
      await state.close();
    }
  });

  it('draw on the owner’s page one thumbnail per image kept, named by its number in the job, and none that answers 404', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    const { runner } = await kit.runner({});
    const store = new JobRecordStore({ state, logger: silentLogger() });
    const key = store.newKey();
    // The seeded ledger's Discord job d-2 made two images; the first was too large to keep.
    await store.add({ key, kind: 'generate', prompt: 'p', options: {}, requester: { platform: 'discord', userId: '1', channelId: '2', scopeId: '3' }, status: 'running', runnerJobId: 'd-2' });
    await store.saveOutputs(key, [Buffer.alloc(MAX_KEPT_IMAGE_BYTES + 1), Buffer.from(await makeImage('png', 9, 9))], ['png']);
    const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() });
    const running = await startSeededConsole({ bots: { images: view.images } });
    try {
      const login = await fetch(`${running.url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }), redirect: 'manual', headers: { origin: running.url } });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const page = await (await fetch(`${running.url}/jobs`, { headers: { cookie } })).text();
      const row = /<tr data-job="d-2">(.*?)<\/tr>/.exec(page)?.[1] ?? '';
      expect([...row.matchAll(/<img src="([^"]+)" alt="([^"]+)"/g)].map(([, src, alt]) => ({ src, alt }))).toEqual([{ src: '/thumbs/d-2/1', alt: expect.stringMatching(/^Image 2 of the job of /) }]);
      const asked = [...page.matchAll(/(?:src|href)="(\/thumbs\/[^"]+)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));
      expect(asked).toEqual(['/thumbs/d-2/1?full=1', '/thumbs/d-2/1']);
      for (const path of asked) expect((await fetch(`${running.url}${path}`, { headers: { cookie } })).status, path).toBe(200);
    } finally {
      await running.close();
      await state.close();
    }
  });

  it('leave out an image the kept images’ bound dropped since (the oldest go first): no thumbnail drawn for it, and its thumbnail made before is no longer served', async () => {
    const [first, second, third] = await Promise.all([1, 2, 3].map(async (shade) => Buffer.from(await makeImage('png', 9, 9, { r: shade * 60, g: 80, b: 40 }))));
    // Room for the two newer images alone: keeping them drops the first.
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger(), keptImagesBytes: second!.length + third!.length });
    const { runner } = await kit.runner({});
    const store = new JobRecordStore({ state, logger: silentLogger() });
    const requester = { platform: 'discord' as const, userId: '1', channelId: '2', scopeId: '3' };
    const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, keptImages: new JobRecordStore({ state, logger: silentLogger() }), env: {}, logger: silentLogger() });
    const running = await startSeededConsole({ bots: { images: view.images } });
    try {
      const login = await fetch(`${running.url}/login`, { method: 'POST', body: new URLSearchParams({ token: TOKEN }), redirect: 'manual', headers: { origin: running.url } });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const rowOf = async (jobId: string) => new RegExp(`<tr data-job="${jobId}">(.*?)</tr>`).exec(await (await fetch(`${running.url}/jobs`, { headers: { cookie } })).text())?.[1] ?? '';
      const older = store.newKey();
      await store.add({ key: older, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running', runnerJobId: 'd-1' });
      await store.saveOutputs(older, [first!], ['png']);
      expect(await rowOf('d-1')).toContain('<img src="/thumbs/d-1/0"');
      // Its thumbnail is made, and kept by the console.
      expect((await fetch(`${running.url}/thumbs/d-1/0`, { headers: { cookie } })).status).toBe(200);

      const newer = store.newKey();
      await store.add({ key: newer, kind: 'generate', prompt: 'p', options: {}, requester, status: 'running', runnerJobId: 'd-2' });
      await store.saveOutputs(newer, [second!, third!], ['png']);
      // The record of d-1 still lists its image; the images space dropped it.
      expect((await store.get(older))?.outputs).toHaveLength(1);
      expect(await store.readOutput(older, 0)).toBeUndefined();

      expect(await view.images!.indices(['d-1', 'd-2'])).toEqual(new Map([['d-2', [0, 1]]]));
      const row = await rowOf('d-1');
      expect(row).not.toContain('<img');
      expect(row).toContain('<td>—</td>');
      for (const path of ['/thumbs/d-1/0', '/thumbs/d-1/0?full=1']) expect((await fetch(`${running.url}${path}`, { headers: { cookie } })).status, path).toBe(404);
      for (const path of ['/thumbs/d-2/0', '/thumbs/d-2/1']) expect((await fetch(`${running.url}${path}`, { headers: { cookie } })).status, path).toBe(200);
    } finally {
      await running.close();
      await state.close();
    }
  });
});
