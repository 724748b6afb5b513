import { describe, expect, it } from 'vitest';
import { words } from '../../../bots/runner/index.js';
import { isSlackInputError, SlackInputError } from '../../../bots/slack/SlackInputError.js';

/**
 * A Slack input refusal is known by its class: every one is made and caught inside the Slack bot (one copy of its
 * modules, in the built bot as in the tests), so no other error is read as one, whatever its name.
 */
describe('isSlackInputError', () => {
  it('knows a refusal the Slack bot made', () => {
    expect(isSlackInputError(new SlackInputError('missing_prompt', words('slack.edit.only_images')))).toBe(true);
  });

  it('does not take another error for one because it bears the name and a code: it has no words to show the member', () => {
    const lookalike = Object.assign(new Error('not a refusal'), { name: 'SlackInputError', code: 'missing_prompt' });
    expect(isSlackInputError(lookalike)).toBe(false);
  });
});
