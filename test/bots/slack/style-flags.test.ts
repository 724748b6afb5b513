import { afterEach, describe, expect, it } from 'vitest';
import { scanImagineText } from '../../../bots/slack/imagine-text.js';
import { styleFlagRefusal } from '../../../bots/slack/listeners/style-commands.js';
import { slackKeyOf } from '../../helpers/message-keys.js';
import { privately, startHarness, type Harness } from './harness.js';

const ADMIN = 'U0ADMIN';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the flags a house style takes on Slack', () => {
  it('refuses a flag a style cannot keep, naming it and the ones a style takes, with a stable code', () => {
    expect(styleFlagRefusal(scanImagineText('secret {prompt} --private --format jpeg'))).toMatchObject({
      code: 'flag_not_for_style',
      flag: '--private',
      allowed: '--size, --quality, --background, --format, --n',
      words: { key: 'slack.styles.flag_not_for_style', values: { flag: '`--private`', flags: '`--size`, `--quality`, `--background`, `--format`, `--n`' } },
    });
    for (const flag of ['--public', '--compression 5', '--moderation low', '--style neon', '—output_compression 5']) {
      expect(styleFlagRefusal(scanImagineText(`{prompt} ${flag}`)), flag).toMatchObject({ code: 'flag_not_for_style' });
    }
    expect(styleFlagRefusal(scanImagineText('neon-lit {prompt} --size 1024x1536 --quality low --background opaque --format=png --n 2 —output-format webp'))).toBeUndefined();
  });

  it('leaves a flag /imagine does not have to its parser: not refused as one a style cannot keep', () => {
    for (const text of ['{prompt} --qualty high', '{prompt} --previews', '{prompt} --size 1024x1024 --qualty high']) expect(styleFlagRefusal(scanImagineText(text)), text).toBeUndefined();
  });

  it('answers an admin’s style with a flag it cannot keep privately, naming the flag, and saves nothing', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    const answer = await privately(h.fake, 'admin style diary secret {prompt} --private --format jpeg --compression 5 --moderation low', ADMIN);
    expect(slackKeyOf(answer)).toBe('slack.styles.flag_not_for_style');
    expect(answer).toContain('`--private`');
    for (const flag of ['--public', '--style neon', '--moderation low']) {
      expect(slackKeyOf(await privately(h.fake, `admin style diary {prompt} ${flag}`, ADMIN)), flag).toBe('slack.styles.flag_not_for_style');
    }
    expect(slackKeyOf(await privately(h.fake, 'styles'))).toBe('styles.none');
  });

  it('answers a mistyped flag in an admin’s style as /imagine does: unknown, with the flag meant, and saves nothing', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    const answer = await privately(h.fake, 'admin style x {prompt} --qualty high', ADMIN);
    expect(slackKeyOf(answer)).toBe('slack.flag.unknown');
    expect(answer).toContain('`--quality`');
    expect(slackKeyOf(await privately(h.fake, 'styles'))).toBe('styles.none');
  });

  it('names the style when its option does not go with the member’s: nothing is sent or charged', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    expect(await privately(h.fake, 'admin style tr {prompt}, cut out --background transparent', ADMIN)).toMatch(/^:white_check_mark:/);

    const answer = await privately(h.fake, 'a cat --style tr --format jpeg', 'U0ALICE', 'C0ART');
    expect(slackKeyOf(answer)).toBe('refusal.style_option_conflict');
    expect(answer).toContain('--background');
    expect(h.emulator.requests).toHaveLength(0);
    expect(await h.store.spentToday('slack:U0ALICE', Date.now())).toBe(0);
    expect(h.fake.botMessages('C0ART')).toEqual([]);
  });
});
