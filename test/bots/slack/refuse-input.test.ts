import { describe, expect, it } from 'vitest';
import { refuseInput } from '../../../bots/slack/refuse-input.js';
import { SlackInputError } from '../../../bots/slack/SlackInputError.js';
import { sayWords, words } from '../../../bots/runner/index.js';
import { RecordingLogger } from '../discord/harness.js';

const ACTOR = { teamId: 'T0TEAM', userId: 'U0ALICE', locale: 'de' };

describe('refuseInput', () => {
  it('logs what the member gave the bot that it refused by the runner’s one rule, then tells them its words in their language', async () => {
    const logger = new RecordingLogger();
    const told: string[] = [];
    const refusal = new SlackInputError('no_images', words('slack.input.no_images'));
    await refuseInput(logger, ACTOR, refusal, async (text) => void told.push(text));
    expect(logger.entries).toEqual([{ level: 'info', obj: { platform: 'slack', scopeId: 'T0TEAM', userId: 'U0ALICE', code: 'no_images' }, msg: expect.any(String) }]);
    expect(told).toEqual([sayWords('de', refusal.words)]);
  });

  it('throws anything else on as it came, neither logged nor told', async () => {
    const logger = new RecordingLogger();
    const told: string[] = [];
    const bug = new TypeError('a bug');
    await expect(refuseInput(logger, ACTOR, bug, async (text) => void told.push(text))).rejects.toBe(bug);
    expect(logger.entries).toEqual([]);
    expect(told).toEqual([]);
  });
});
