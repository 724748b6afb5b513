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
});
