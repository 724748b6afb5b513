import { describe, expect, it } from 'vitest';
import { botsConsoleView } from '../../bots/console-view.js';
import { memorySpace } from '../../bots/runner/memory-space.js';
import { settingsInState } from '../../bots/runner/index.js';
import type { RunnerConfig } from '../../bots/runner/config.js';
import { openBotState, stateKeyOf } from '../../bots/state/index.js';
import { silentLogger, type ScopeSettingEntries } from '../../src/internal.js';
import { useRunnerKit } from '../helpers/runner-harness.js';

const kit = useRunnerKit();

describe('the chat settings the console shows the owner', () => {
  it('are the admins’ choices with who set each, and each kept that cannot be read as what it means: jobs refused, or the default applies', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space) });
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    try {
      await space.update(stateKeyOf('discord:G1'), () => ({
        channels: { value: ['art'], by: 'discord:42', at: 5 },
        allowed: { value: 'user:7', by: 'discord:42', at: 5 },
        defaultQuality: { value: 'ultra', by: 'discord:42', at: 5 },
      }));
      const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, env: {}, logger: silentLogger() });
      expect(await view.chatSettings!(['discord:G1', 'slack:T1'])).toEqual({
        'discord:G1': {
          channels: { value: ['art'], by: 'discord:42', at: 5 },
          allowed: { unreadable: 'jobs_refused' },
          defaultQuality: { unreadable: 'default_applies' },
        },
      });
    } finally {
      await state.close();
    }
  });

  it('list every server and workspace with settings kept, though it has no lowered cap and spent nothing this month', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    try {
      const space = state.store.space<ScopeSettingEntries>(state.spaces.scopeSettings);
      const { runner } = await kit.runner({ settings: settingsInState(space) });
      // A workspace whose rule cannot be read has refused every job since: nothing spent, yet the owner must see why.
      await space.put(stateKeyOf('slack:T9'), { blocked: { value: 'mallory', by: 'slack:U1', at: 5 } });
      await space.put(stateKeyOf('discord:G2'), { maxImages: { value: 2, by: 'discord:42', at: 6 } });
      // A scope key with other characters is kept under a digest, which names no scope.
      await space.put(stateKeyOf('discord:G:3'), { maxImages: { value: 3, by: 'discord:42', at: 7 } });
      const view = botsConsoleView({ runner, runnerConfig: {} as RunnerConfig, state, env: {}, logger: silentLogger() });
      expect(await view.chatSettings!([])).toEqual({
        'slack:T9': { blocked: { unreadable: 'jobs_refused' } },
        'discord:G2': { maxImages: { value: 2, by: 'discord:42', at: 6 } },
      });
      // Those asked for are listed too, once.
      expect(Object.keys(await view.chatSettings!(['discord:G2', 'discord:G1'])).sort()).toEqual(['discord:G2', 'slack:T9']);
    } finally {
      await state.close();
    }
  });
});
