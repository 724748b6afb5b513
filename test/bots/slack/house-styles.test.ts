import { afterEach, describe, expect, it } from 'vitest';
import { say, usd } from '../../../bots/runner/index.js';
import { styleCommandOf } from '../../../bots/slack/listeners/style-commands.js';
import { PRICE_TABLE } from '../../../src/index.js';
import { slackKeyOf } from '../../helpers/message-keys.js';
import { finishedActions, finishedJob, startHarness, statusOf, visibleText, type Harness, privately } from './harness.js';

const ADMIN = 'U0ADMIN';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('house styles on Slack', () => {
  it('reads /imagine styles and /imagine admin style NAME TEXT, and leaves prompts that start with those words alone', () => {
    expect(styleCommandOf('styles')).toEqual({ kind: 'list' });
    expect(styleCommandOf('admin style neon neon-lit {prompt} --quality low')).toEqual({ kind: 'define', name: 'neon', text: 'neon-lit {prompt} --quality low' });
    expect(styleCommandOf('admin style')).toEqual({ kind: 'define', name: undefined, text: '' });
    expect(styleCommandOf('styles of the 80s')).toBeUndefined();
    expect(styleCommandOf('admin styles')).toBeUndefined();
    // A near miss followed by a name is the command misspelt: its usage, never a paid prompt.
    expect(styleCommandOf('admin styel neon neon-lit {prompt}')).toEqual({ kind: 'define', name: undefined, text: '' });
    expect(styleCommandOf('admin styles neon neon-lit {prompt}')).toEqual({ kind: 'define', name: undefined, text: '' });
  });

  it('an admin defines a style; a member’s --style sends, shows, costs and rerolls the prompt as sent', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    const defined = await privately(h.fake, 'admin style neon neon-lit {prompt}, synthwave palette --quality low --n 2', ADMIN);
    expect(slackKeyOf(defined)).toBe('styles.defined');
    expect(defined).toContain('“neon-lit {prompt}, synthwave palette” (quality low, n 2)');
    const listed = (await privately(h.fake, 'styles')).split('\n');
    expect(listed.map(slackKeyOf)).toEqual(['styles.title', 'styles.line']);
    expect(listed[1]).toBe(say('en', 'styles.line', { name: 'neon', text: 'neon-lit {prompt}, synthwave palette', hasOptions: 'yes', options: 'quality low, n 2' }));

    await h.fake.command({ command: '/imagine', text: 'a cat --style neon', channel: 'C0ART', user: 'U0ALICE' });
    const job = await finishedJob(h.fake, 'C0ART');
    expect(h.emulator.requests[0]!.parsed).toMatchObject({ prompt: 'neon-lit a cat, synthwave palette', quality: 'low', n: 2 });
    expect(visibleText(job)).toContain('neon-lit a cat, synthwave palette');
    // The cost shown is that of the two images sent.
    expect(statusOf(job)).toContain(say('en', 'slack.job.cost', { basis: 'table', usd: usd(2 * PRICE_TABLE['1024x1024'].low) }));

    const actions = await finishedActions(h.fake, 'C0ART');
    await h.fake.clickButton(actions, 'pictor_reroll', 'U0ALICE');
    await finishedJob(h.fake, 'C0ART', 1);
    expect(h.emulator.requests[1]!.parsed).toMatchObject({ prompt: 'neon-lit a cat, synthwave palette', quality: 'low', n: 2 });
  });

  it('catches a blocked word inside the style privately, naming the style; an unknown style is refused; nothing is sent', async () => {
    h = await startHarness({ controls: { blockedWords: ['gore'] }, bot: { adminUserIds: [ADMIN] } });
    expect(await privately(h.fake, 'admin style horror {prompt}, dripping with gore', ADMIN)).toMatch(/^:white_check_mark:/);

    expect(await privately(h.fake, 'a cat --style horror', 'U0ALICE', 'C0ART')).toContain(say('en', 'refusal.style_blocked_word', { style: 'horror', word: 'gore' }));
    expect(await privately(h.fake, 'a cat --style noir', 'U0ALICE', 'C0ART')).toContain(say('en', 'refusal.style_unknown', { style: 'noir', count: 1, styles: 'horror' }));
    expect(h.emulator.requests).toHaveLength(0);
    expect(h.fake.botMessages('C0ART')).toEqual([]);
  });

  it('lets only admins define styles, answers a bare admin style with its usage, and removes one with clear', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    expect(await privately(h.fake, 'admin style mine {prompt}', 'U0ALICE')).toBe(`:raised_hand: ${say('en', 'styles.not_admin', { scope: 'workspace' })}`);
    const usage = await privately(h.fake, 'admin style', ADMIN);
    expect(slackKeyOf(usage)).toBe('slack.styles.usage');
    expect(usage).toContain('`/imagine admin style NAME TEXT`');
    // `help` where the text goes is a question, not a style's text: the usage again, privately.
    expect(await privately(h.fake, 'admin style neon help', ADMIN)).toBe(usage);
    expect(await privately(h.fake, 'admin style neon neon {prompt}', ADMIN)).toMatch(/^:white_check_mark:/);
    expect(await privately(h.fake, 'admin style neon clear', ADMIN)).toBe(`:white_check_mark: ${say('en', 'styles.removed', { name: 'neon' })}`);
    expect(await privately(h.fake, 'styles')).toBe(say('en', 'styles.none', { command: '`/imagine admin style NAME TEXT`' }));
  });
});
