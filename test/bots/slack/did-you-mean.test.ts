import { describe, expect, it } from 'vitest';
import { parseImagineText } from '../../../bots/slack/imagine-text.js';
import { SlackInputError } from '../../../bots/slack/SlackInputError.js';

function refusal(text: string): SlackInputError {
  try {
    parseImagineText(text);
  } catch (error) {
    if (error instanceof SlackInputError) return error;
    throw error;
  }
  throw new Error(`${text} was accepted`);
}

describe('/imagine with a mistyped flag', () => {
  it('says which flag was meant, as the CLI does (--qualty → --quality)', () => {
    const error = refusal('a fox --qualty high');
    expect(error.code).toBe('unknown_flag');
    expect(error.message).toContain('`--qualty` is not a flag. Did you mean `--quality`?');
  });

  it('suggests nothing when no flag is close', () => {
    expect(refusal('a fox --mood noir').message).not.toContain('Did you mean');
  });
});
