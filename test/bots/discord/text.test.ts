import { afterEach, describe, expect, it } from 'vitest';
import { promptExcerpt } from '../../../bots/discord/text.js';
import { DiscordHarness } from './harness.js';

/** A masked link as Discord renders it: `[text](url)` whose bracket is not escaped. */
const MASKED_LINK = /(?<!\\)\[[^\]]*(?<!\\)\]\(/;

describe('a user’s prompt in the bot’s messages', () => {
  let h: DiscordHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('never shows a masked link as a clickable one', () => {
    for (const prompt of ['[click me](https://evil.example/x)', 'a [cat](<https://evil.example>) on a mat', '[a]( https://x.example)']) {
      expect(promptExcerpt(prompt)).not.toMatch(MASKED_LINK);
    }
    expect(promptExcerpt('[free nitro](https://evil.example/x)')).toBe('\\[free nitro\\](https://evil.example/x)');
  });

  it('shows the prompt of a job with its link brackets escaped, from the first reply to the result', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a lighthouse [login here](https://evil.example/steal)', quality: 'low' });
    await h.finalReply(ix);
    const shown = h.discord.requests.map((r) => r.body?.content).filter((c): c is string => typeof c === 'string');
    expect(shown.length).toBeGreaterThan(0);
    for (const content of shown) expect(content).not.toMatch(MASKED_LINK);
    expect(shown.at(-1)).toContain('\\[login here\\](https://evil.example/steal)');
  });
});
