import { describe, expect, it } from 'vitest';
import { sayWords } from '../../../bots/runner/index.js';
import { scanImagineText } from '../../../bots/slack/imagine-text.js';
import { styleFlagRefusal } from '../../../bots/slack/listeners/style-commands.js';

/** The sentence an admin reads when a style's text holds a flag a style cannot keep (checked once, here). */
describe('what Slack tells an admin defining a house style', () => {
  it('names the flag a style cannot keep, the ones it takes, and that nothing was saved', () => {
    expect(sayWords('en', styleFlagRefusal(scanImagineText('secret {prompt} --format jpeg --private'))!.words)).toBe(
      'A house style cannot keep `--private`: a style takes only `--size`, `--quality`, `--background`, `--format`, `--n`; nothing was saved.',
    );
  });
});
