import { describe, expect, it } from 'vitest';
import { keyOf } from '../../helpers/message-keys.js';
import { changeStyle, describeStyles, dmScopeId, HOUSE_STYLE_LIMITS, HouseStyles, parseStyleText, say, type AdmittedJob, type HouseStyleRecord, type JobIntent, type JobRefusedError } from '../../../bots/runner/index.js';
import { openBotState } from '../../../bots/state/index.js';
import { PRICE_TABLE } from '../../../src/index.js';
import { silentLogger } from '../../../src/internal.js';
import { makeImage } from '../../helpers/images.js';
import { recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();
const admin = requester({ userId: 'admin-1', isAdmin: true });

describe('house styles: an admin’s text around the prompt and default options', () => {
  it('reads a style’s text as before {prompt} after; text without {prompt} goes after the prompt; {prompt} twice is refused', () => {
    expect(parseStyleText('neon-lit, {prompt}, synthwave palette')).toEqual({ before: 'neon-lit, ', after: ', synthwave palette' });
    expect(parseStyleText('  in the style of a woodcut ')).toEqual({ before: '', after: ' in the style of a woodcut' });
    expect(parseStyleText('{prompt} and {prompt}')).toBeUndefined();
    expect(parseStyleText('x'.repeat(HOUSE_STYLE_LIMITS.textLength + 1))).toBeUndefined();
  });

  it('sends the prompt inside the style’s text with the style’s options under the member’s own, reserves and shows the cost of what is sent', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'Poster', 'a bold poster of {prompt}, flat colours', { quality: 'medium', n: 2, size: '1024x1536' });
    let admitted: AdmittedJob | undefined;
    const rec = recordingSink();
    const intent: JobIntent = { kind: 'generate', prompt: 'a lighthouse', options: { size: '1024x1024' }, requester: requester(), style: 'poster' };

    const handle = await runner.request(intent, {
      refuse: async (reason) => {
        throw reason;
      },
      accept: async (job) => {
        admitted = job;
        return { sink: rec.sink };
      },
      fail: async (reason) => {
        throw reason;
      },
    });
    const final = await handle!.done;

    const sent = kit.emu.emulator.requests[0]!.parsed as Record<string, unknown>;
    expect(sent).toMatchObject({ prompt: 'a bold poster of a lighthouse, flat colours', quality: 'medium', n: 2, size: '1024x1024' });
    expect(admitted).toMatchObject({ prompt: 'a bold poster of a lighthouse, flat colours', options: { quality: 'medium', n: 2, size: '1024x1024' } });
    // The estimate and the cost are those of two medium images, not of the member's one default image.
    expect(admitted!.estimate.totalUsd).toBeCloseTo(2 * PRICE_TABLE['1024x1024'].medium, 9);
    expect(final).toMatchObject({ type: 'completed', cost: { totalUsd: expect.closeTo(2 * PRICE_TABLE['1024x1024'].medium, 9) } });
  });

  it('gives an edit the style’s look but not its count: an edit makes one image unless the member asks for more, as with their own default count', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'poster', 'a poster of {prompt}', { quality: 'low', n: 3 });
    let admitted: AdmittedJob | undefined;
    const rec = recordingSink();
    const handle = await runner.request(
      { kind: 'edit', prompt: 'this cat', options: {}, requester: requester(), style: 'poster', images: [{ data: Buffer.from(await makeImage()), filename: 'cat.png' }] },
      { refuse: async (reason) => { throw reason; }, accept: async (job) => ((admitted = job), { sink: rec.sink }), fail: async (reason) => { throw reason; } },
    );
    await handle!.done;

    expect(kit.emu.emulator.requests[0]!.fields).toMatchObject({ prompt: 'a poster of this cat', quality: 'low', n: 1 });
    expect(admitted!.options).toEqual({ quality: 'low' });
    expect(admitted!.estimate.totalUsd).toBeCloseTo(PRICE_TABLE['1024x1024'].low, 9);
  });

  it('catches a blocked word the style brings in, names the style, and sends and reserves nothing', async () => {
    const { runner, store } = await kit.runner({ partialImages: 0, operatorControls: { blockedWords: ['gore'] } });
    await runner.styles.define(admin, 'horror', '{prompt}, lots of gore');
    const who = requester();
    let reason: unknown;

    await expect(runner.request({ kind: 'generate', prompt: 'a cat', options: {}, requester: who, style: 'horror' }, refusing((r) => (reason = r)))).resolves.toBeUndefined();

    expect(reason).toMatchObject({ code: 'blocked_word', field: 'style', words: { key: 'refusal.style_blocked_word', values: { style: 'horror', word: 'gore' } } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBe(0);
  });

  it('a blocked word in the member’s own prompt is their refusal, as without a style', async () => {
    const { runner } = await kit.runner({ partialImages: 0, operatorControls: { blockedWords: ['gore'] } });
    await runner.styles.define(admin, 'horror', '{prompt}, dark');
    let reason: unknown;
    await runner.request({ kind: 'generate', prompt: 'gore everywhere', options: {}, requester: requester(), style: 'horror' }, refusing((r) => (reason = r)));
    expect(reason).toMatchObject({ code: 'blocked_word', words: { key: 'refusal.blocked_word' } });
  });

  it('applies the scope’s rules to the style’s options: a quality the server forbids is refused', async () => {
    const { runner } = await kit.runner({ partialImages: 0, operatorControls: { qualities: ['low', 'medium'] } });
    await runner.styles.define(admin, 'hq', '{prompt}', { quality: 'high' });
    let reason: unknown;
    await runner.request({ kind: 'generate', prompt: 'a cat', options: {}, requester: requester(), style: 'hq' }, refusing((r) => (reason = r)));
    expect(reason).toMatchObject({ code: 'quality_not_allowed' });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('names the style when a rule refuses an option the style set, not the member, in the surface’s word for it', async () => {
    const { runner } = await kit.runner({ partialImages: 0, operatorControls: { qualities: ['low', 'medium'], maxImagesPerJob: 2 } });
    await runner.styles.define(admin, 'hq', '{prompt}', { quality: 'high', n: 4 });
    let reason: unknown;
    const ask = (options: JobIntent['options']) =>
      runner.request({ kind: 'generate', prompt: 'a cat', options, requester: requester(), style: 'hq', fieldNames: { n: 'count' } }, refusing((r) => (reason = r)));

    await ask({ n: 1 });
    expect(reason).toMatchObject({ code: 'quality_not_allowed', field: 'style', allowed: 'low, medium' });
    expect((reason as JobRefusedError).words).toEqual({ key: 'refusal.style_option_not_allowed', values: { style: 'hq', option: 'quality', value: 'high' } });
    await ask({ quality: 'low' });
    expect(reason).toMatchObject({ code: 'too_many_images', field: 'style', limit: 2, words: { values: { option: 'count', value: '4' } } });
    // The member's own choice is theirs to change: the rule's refusal as without a style.
    await ask({ quality: 'high', n: 1 });
    expect(reason).toMatchObject({ code: 'quality_not_allowed', field: 'quality', words: { key: 'refusal.quality_not_allowed' } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('leaves a rule’s refusal the member’s when the style’s option is what the job would have without it (the server’s own default)', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    // High quality alone, for one role: every job of anyone else is refused, with or without a style.
    await runner.policy.set(admin, 'qualities', ['high']);
    await runner.policy.set(admin, 'highQualityFor', ['role:R1']);
    await runner.styles.define(admin, 'hq', '{prompt}', { quality: 'high' });
    const refusals: unknown[] = [];
    for (const style of [undefined, 'hq']) await runner.request({ kind: 'generate', prompt: 'a cat', options: {}, requester: requester(), style }, refusing((r) => refusals.push(r)));

    const [unstyled, styled] = refusals as JobRefusedError[];
    expect(unstyled).toMatchObject({ code: 'high_quality_not_allowed', field: 'quality' });
    expect(styled).toMatchObject({ code: 'high_quality_not_allowed', field: 'quality', words: unstyled!.words });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('refuses a style the scope does not have, naming the ones it has; another server’s style is not this one’s', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.styles.define(admin, 'neon', 'neon {prompt}');
    await runner.styles.define(admin, 'woodcut', '{prompt} woodcut');
    let reason: unknown;
    await runner.request({ kind: 'generate', prompt: 'a cat', options: {}, requester: requester(), style: 'nope' }, refusing((r) => (reason = r)));
    expect(reason).toMatchObject({ code: 'style_unknown', words: { values: { style: 'nope', styles: 'neon, woodcut' } } });

    await runner.request({ kind: 'generate', prompt: 'a cat', options: {}, requester: requester({ scopeId: 'guild-2' }), style: 'neon' }, refusing((r) => (reason = r)));
    expect(reason).toMatchObject({ code: 'style_unknown', words: { values: { count: 0 } } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('refuses a style asked for outside servers (a DM) as such, not as one an admin could define there', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    let reason: unknown;
    await runner.request({ kind: 'generate', prompt: 'a cat', options: {}, requester: requester({ scopeId: dmScopeId('user-1') }), style: 'neon' }, refusing((r) => (reason = r)));
    expect(reason).toMatchObject({ code: 'style_unknown', field: 'style', words: { key: 'refusal.style_outside_servers', values: { style: 'neon' } } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('lets only admins define and remove styles, bounds their number, names and text, and words each answer', async () => {
    const styles = new HouseStyles();
    const member = requester();
    expect(await changeStyle(styles, member, 'neon', 'neon {prompt}', {}, '`style:`')).toMatchObject({ ok: false, code: 'not_admin' });
    expect(await changeStyle(styles, admin, 'Neon Lights', 'neon {prompt}', {}, '`style:`')).toMatchObject({ ok: false, code: 'invalid_name' });
    expect(await changeStyle(styles, admin, 'neon', '{prompt} {prompt}', {}, '`style:`')).toMatchObject({ ok: false, code: 'invalid_text' });
    const defined = await changeStyle(styles, admin, 'neon', 'neon {prompt}', { size: '1024x1536' }, '`style:`');
    expect(defined).toMatchObject({ ok: true });
    expect(keyOf(defined.message!)).toBe('styles.defined');
    expect(defined.message).toContain('(size 1024x1536)');
    const replaced = (await changeStyle(styles, admin, 'neon', 'neon-lit {prompt}', {}, '`style:`')).message!;
    expect(keyOf(replaced)).toBe('styles.defined');
    expect(replaced).toContain('neon replaced: “neon-lit {prompt}”');
    for (let i = 1; i < HOUSE_STYLE_LIMITS.perScope; i++) await styles.define(admin, `s${i}`, '{prompt}');
    expect(await changeStyle(styles, admin, 'one-more', '{prompt}', {}, '`style:`')).toMatchObject({ ok: false, code: 'too_many_styles' });
    const removed = await changeStyle(styles, admin, 'neon', 'clear', {}, '`style:`');
    expect(removed).toMatchObject({ ok: true });
    expect(keyOf(removed.message!)).toBe('styles.removed');
    expect(await changeStyle(styles, admin, 'neon', 'clear', {}, '`style:`')).toMatchObject({ ok: false, code: 'unknown_style' });
  });

  it('keeps styles in the bots’ state for every process, leaves out a damaged one with a warning', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    try {
      const space = state.store.space<HouseStyleRecord>(state.spaces.houseStyles);
      await new HouseStyles({ space }).define(admin, 'neon', 'neon {prompt}');
      await space.update('discord-guild-1', (record) => ({ ...record, broken: { before: 3 } as never }));
      const warnings: unknown[] = [];
      const logger = { debug() {}, info() {}, warn: (o: unknown) => warnings.push(o), error() {} };
      const other = new HouseStyles({ space, logger });
      expect((await other.list(admin)).map((s) => s.name)).toEqual(['neon']);
      expect(warnings).toEqual([{ scopeKey: 'discord:guild-1', style: 'broken' }]);
    } finally {
      await state.close();
    }
  });

  it('warns of a damaged style once a scope and style while it stays so, however often it is read, and again once it is damaged anew', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    try {
      const space = state.store.space<HouseStyleRecord>(state.spaces.houseStyles);
      await new HouseStyles({ space }).define(admin, 'neon', 'neon {prompt}');
      const damage = (name: string) => space.update('discord-guild-1', (record) => ({ ...record, [name]: { before: 3 } as never }));
      const warnings: unknown[] = [];
      const logger = { debug() {}, info() {}, warn: (o: unknown) => warnings.push(o), error() {} };
      const styles = new HouseStyles({ space, logger, cacheMs: 0 });
      const readTimes = async (times: number) => {
        for (let i = 0; i < times; i++) expect((await styles.list(admin)).map((s) => s.name)).toEqual(['neon']);
      };
      await damage('broken');
      await readTimes(5);
      await damage('cracked');
      await readTimes(3);
      expect(warnings).toEqual([{ scopeKey: 'discord:guild-1', style: 'broken' }, { scopeKey: 'discord:guild-1', style: 'cracked' }]);
      // Mended (removed by hand), then damaged anew: told again, once.
      await space.update('discord-guild-1', (record) => ({ neon: record!.neon! }));
      await readTimes(1);
      await damage('broken');
      await readTimes(3);
      expect(warnings.slice(2)).toEqual([{ scopeKey: 'discord:guild-1', style: 'broken' }]);
    } finally {
      await state.close();
    }
  });

  it('lists a scope’s styles in words, in the reader’s language', async () => {
    const styles = new HouseStyles();
    expect(describeStyles([], '`--style NAME`', '`/imagine admin style`', 'en')).toBe(say('en', 'styles.none', { command: '`/imagine admin style`' }));
    await styles.define(admin, 'neon', 'neon {prompt}', { n: 2 });
    expect(describeStyles(await styles.list(admin), '`style:`', '`/imagine-admin style`', 'de', { markup: { bold: (text) => `**${text}**` } })).toBe(
      ['**Hausstile** (1 von höchstens 25); Mitglieder wählen einen mit `style:`:', '• neon: „neon {prompt}“ (n 2)'].join('\n'),
    );
    for (let i = 1; i <= 24; i++) await styles.define(admin, `style-${String(i).padStart(2, '0')}`, `${'x'.repeat(200)} {prompt}`);
    const listed = describeStyles(await styles.list(admin), '`style:`', '`/imagine-admin style`', 'en', { maxChars: 2000 });
    expect(listed.length).toBeLessThanOrEqual(2000);
    expect(listed).toMatch(/…and \d+ more\.$/);
    expect(listed.split('\n').length).toBeGreaterThan(5);
  });
});

function refusing(keep: (reason: unknown) => void) {
  return {
    refuse: async (reason: unknown) => keep(reason),
    accept: async (): Promise<undefined> => {
      throw new Error('the job should have been refused');
    },
    fail: async (reason: unknown) => keep(reason),
  };
}
