import { describe, expect, it, vi } from 'vitest';
import { changeSetting, describeAuditTrouble, LOCALES, describeSettings, say, parseSettingValue, repairSettings, ScopePolicy, type OperatorControls } from '../../../bots/runner/index.js';
import { requester, useRunnerKit } from '../../helpers/runner-harness.js';
import { settingLabel, WORD_OF } from '../../../bots/runner/setting-words.js';
import { memorySpace } from '../../../bots/runner/memory-space.js';
import { scopeKeyOf } from '../../../bots/runner/member-keys.js';
import { settingsInState } from '../../../bots/runner/index.js';
import { stateKeyOf } from '../../../bots/state/index.js';
import type { ScopeSettingEntries } from '../../../src/internal.js';

const kit = useRunnerKit();

describe('changeSetting: what an admin types, and the answer in words', () => {
  it('changes a setting and says what it is now and what it was', async () => {
    const { runner } = await kit.runner();
    const admin = requester({ isAdmin: true });
    expect(await changeSetting(runner.policy, admin, 'channels', '<#111> <#222|memes>')).toEqual({ ok: true, message: 'channels is now <#111>, <#222> (was the default).' });
    expect(await changeSetting(runner.policy, admin, 'channels', 'remove <#111>')).toEqual({ ok: true, message: 'channels is now <#222> (was <#111>, <#222>).' });
    expect(await changeSetting(runner.policy, admin, 'who', 'add <@&333> <@444>')).toEqual({ ok: true, message: 'who is now <@&333>, <@444> (was the default).' });
    expect(await changeSetting(runner.policy, admin, 'max-images', 'clear')).toEqual({ ok: true, message: 'max-images is back to its default (was the default).' });
  });

  it('refuses with a stable code and one sentence saying what to do', async () => {
    const { runner } = await kit.runner({ operatorControls: { maxImagesPerJob: 4 } });
    const admin = requester({ isAdmin: true });
    expect(await changeSetting(runner.policy, requester(), 'max-images', '2')).toEqual({ ok: false, code: 'not_admin', message: 'Only an admin of this server can change its settings.' });
    expect(await changeSetting(runner.policy, { ...requester(), platform: 'slack' }, 'max-images', '2')).toMatchObject({ message: 'Only an admin of this workspace can change its settings.' });
    expect(await changeSetting(runner.policy, admin, 'colour', 'teal')).toEqual({
      ok: false,
      code: 'unknown_setting',
      message: 'Choose one of channels, who, blocked, blocked-words, max-images, qualities, sizes, high-quality, moderation, default-size, default-quality, default-previews, private-results.',
    });
    expect(await changeSetting(runner.policy, admin, 'max-images', 'lots')).toEqual({ ok: false, code: 'invalid_value', message: 'max-images takes a whole number from 1 to 10.' });
    expect(await changeSetting(runner.policy, admin, 'max-images', '8')).toEqual({
      ok: false,
      code: 'not_allowed_by_operator',
      message: 'The bot’s operator allows at most 4 for max-images; an admin can choose within that, not beyond. Ask the operator to change it.',
    });
    expect(await changeSetting(runner.policy, admin, 'moderation', 'low')).toMatchObject({ code: 'not_allowed_by_operator', message: expect.stringContaining('allows auto for moderation') as unknown });
    expect((await runner.policy.effective(admin)).maxImages.value).toBe(4);
  });
});

describe('changeSetting: blocked words that could never match', () => {
  it('refuses blocked words with an entry that has no letter, digit, emoji or symbol, naming it, and keeps emoji', async () => {
    const { runner } = await kit.runner();
    const admin = requester({ isAdmin: true });
    expect(await changeSetting(runner.policy, admin, 'blocked-words', 'gore, ...')).toEqual({
      ok: false,
      code: 'invalid_value',
      message: 'blocked-words cannot take “...”: it has no letter, digit, emoji or symbol to match, so it would block nothing. Nothing was changed.',
    });
    expect(await changeSetting(runner.policy, admin, 'blocked-words', '殺す, 血, 🍆, gore')).toEqual({ ok: true, message: 'blocked-words is now 殺す, 血, 🍆, gore (was the default).' });
  });
});

describe('changeSetting: a default beyond the server’s own sizes or qualities', () => {
  it('blames a default outside the sizes or qualities the server chose on that setting, not on the operator', async () => {
    const { runner } = await kit.runner();
    const admin = requester({ isAdmin: true });
    await changeSetting(runner.policy, admin, 'sizes', '1024x1024');
    expect(await changeSetting(runner.policy, admin, 'default-size', '1536x1024')).toEqual({
      ok: false,
      code: 'not_allowed_by_scope',
      message: 'This server’s own sizes setting allows 1024x1024, so default-size can only be one of those. An admin can add it to sizes first, then set default-size.',
    });
    await changeSetting(runner.policy, admin, 'qualities', 'low medium');
    expect(await changeSetting(runner.policy, admin, 'default-quality', 'high')).toMatchObject({ ok: false, code: 'not_allowed_by_scope' });
  });

  it('still blames the operator for a default the operator does not allow', async () => {
    const { runner } = await kit.runner({ operatorControls: { sizes: ['1024x1024', '1024x1536'] } });
    const admin = requester({ isAdmin: true });
    await changeSetting(runner.policy, admin, 'sizes', '1024x1024');
    expect(await changeSetting(runner.policy, admin, 'default-size', '1536x1024')).toMatchObject({ ok: false, code: 'not_allowed_by_operator' });
  });
});

describe('changeSetting: add and remove on two replicas', () => {
  /** Two replicas' policies over one shared settings space, each reading through its own cache (a minute long here). */
  function replicas(operator?: OperatorControls) {
    const space = memorySpace<ScopeSettingEntries>();
    const policy = () => new ScopePolicy({ store: settingsInState(space), operator, partialImages: 3, cacheMs: 60_000 });
    return { space, one: policy(), two: policy(), fresh: policy() };
  }

  it('loses neither admin’s change when each changes the list from a cached value the other has since changed', async () => {
    const { one, two, fresh } = replicas();
    const ann = requester({ isAdmin: true, userId: 'ann' });
    const bob = requester({ isAdmin: true, userId: 'bob' });
    // Replica two has read the settings before replica one's change: its cache still says nobody is blocked.
    expect((await two.effective(bob)).blocked.value).toEqual([]);
    expect(await changeSetting(one, ann, 'blocked', 'add <@mallory>')).toEqual({ ok: true, message: 'blocked is now <@mallory> (was the default).' });
    expect(await changeSetting(two, bob, 'blocked', 'add <@trudy>')).toEqual({ ok: true, message: 'blocked is now <@mallory>, <@trudy> (was <@mallory>).' });
    expect((await fresh.effective(ann)).blocked.value).toEqual(['mallory', 'trudy']);

    // Remove too: replica one reads the list, replica two adds to it, replica one removes from what is stored now.
    expect((await one.effective(ann)).blocked.value).toEqual(['mallory', 'trudy']);
    expect(await changeSetting(two, bob, 'blocked', 'add <@eve>')).toMatchObject({ ok: true });
    expect(await changeSetting(one, ann, 'blocked', 'remove <@trudy>')).toEqual({ ok: true, message: 'blocked is now <@mallory>, <@eve> (was <@mallory>, <@trudy>, <@eve>).' });
    expect((await one.effective(ann)).blocked.value).toEqual(['mallory', 'eve']);
    // The same for the other lists: blocked words and who may generate.
    await two.effective(bob);
    expect(await changeSetting(one, ann, 'blocked-words', 'add kraken')).toMatchObject({ ok: true });
    expect(await changeSetting(two, bob, 'blocked-words', 'add hydra')).toMatchObject({ ok: true });
    expect(await changeSetting(one, ann, 'who', 'add <@ann> <@bob>')).toMatchObject({ ok: true });
    expect(await changeSetting(two, bob, 'who', 'remove <@ann>')).toMatchObject({ ok: true });
    const now = new ScopePolicy({ store: one.settings, partialImages: 3, cacheMs: 0 });
    expect((await now.effective(ann)).blockedWords.value).toEqual(['kraken', 'hydra']);
    expect((await now.effective(ann)).allowed.value).toEqual(['user:bob']);
  });

  it('checks what is stored now, not the cached value: unreadable, beyond its bound or the operator’s, and nothing is changed', async () => {
    const { space, one, two } = replicas({ qualities: ['low', 'medium'] });
    const ann = requester({ isAdmin: true, userId: 'ann' });
    const key = stateKeyOf(scopeKeyOf(ann));
    // Replica one's cache reads a list it can read; the stored list has since been damaged.
    await space.update(key, () => ({ blocked: { value: ['mallory'], by: 'discord:ann', at: 1 } }));
    expect((await one.effective(ann)).unreadable).toEqual([]);
    await space.update(key, (now) => ({ ...now, blocked: { value: ['x'.repeat(80)], by: 'discord:ann', at: 2 } }));
    expect(await changeSetting(one, ann, 'blocked', 'remove <@mallory>')).toMatchObject({ ok: false, code: 'setting_unreadable' });
    expect((await space.get(key))?.blocked?.value).toEqual(['x'.repeat(80)]);

    // A full list: one more is beyond its bound, though the cached list had room.
    expect((await two.effective(ann)).blockedWords.value).toEqual([]);
    const full = Array.from({ length: 200 }, (_, i) => `word${i}`);
    await space.update(key, (now) => ({ ...now, blockedWords: { value: full, by: 'discord:ann', at: 3 } }));
    expect(await changeSetting(two, ann, 'blocked-words', 'add kraken')).toMatchObject({ ok: false, code: 'invalid_value' });
    expect((await space.get(key))?.blockedWords?.value).toEqual(full);

    // The operator's bounds hold for what is added.
    expect(await changeSetting(two, ann, 'qualities', 'add high')).toMatchObject({ ok: false, code: 'not_allowed_by_operator' });
    expect(await changeSetting(two, ann, 'qualities', 'remove medium')).toEqual({ ok: true, message: 'qualities is now low (was the default).' });
    expect((await space.get(key))?.qualities?.value).toEqual(['low']);
  });
});

describe('parseSettingValue', () => {
  it('reads mentions as Discord and Slack send them, words and numbers, and clear', () => {
    expect(parseSettingValue('blocked', '<@!12> <@U34|sam>')).toEqual({ ok: true, op: 'set', value: ['12', 'U34'] });
    expect(parseSettingValue('highQualityFor', '<@&5>, user:6')).toEqual({ ok: true, op: 'set', value: ['role:5', 'user:6'] });
    expect(parseSettingValue('blockedWords', 'gore, Red  Fox, gore')).toEqual({ ok: true, op: 'set', value: ['gore', 'Red Fox'] });
    expect(parseSettingValue('qualities', 'LOW medium')).toEqual({ ok: true, op: 'set', value: ['low', 'medium'] });
    expect(parseSettingValue('sizes', 'reset')).toEqual({ ok: true, op: 'clear' });
    expect(parseSettingValue('sizes', '512x512')).toEqual({ ok: false });
    expect(parseSettingValue('defaultPreviews', 'two')).toEqual({ ok: false });
  });
});

describe('describeSettings', () => {
  it('lists every effective setting of a server with where it comes from, and how to change one', async () => {
    const { runner } = await kit.runner({ operatorControls: { blockedWords: ['gore'], qualities: ['low', 'medium'] }, partialImages: 2 });
    const admin = requester({ isAdmin: true, userId: '42' });
    await runner.policy.set(admin, 'maxImages', 3);
    const text = describeSettings(await runner.policy.effective(admin), '`/imagine-admin set`');
    const today = new Date().toISOString().slice(0, 10);
    expect(text.split('\n')).toEqual([
      'Settings of this server — where each comes from: operator (the bot’s environment), admin (set here), default.',
      '• bot allowed here: yes (operator)',
      '• channels: every channel (default)',
      '• who: everyone (default)',
      '• blocked: nobody (default)',
      '• blocked-words: none (default)',
      '• operator’s blocked words (everywhere): gore (operator)',
      `• max-images: 3 (admin: <@42>, ${today})`,
      '• qualities: low, medium (operator)',
      '• sizes: 1024x1024, 1024x1536, 1536x1024 (default)',
      '• high-quality: whoever may use it (default)',
      '• moderation: auto (operator)',
      '• default-size: 1024x1024 (default)',
      '• default-quality: low (default)',
      '• default-previews: 2 (operator)',
      '• private-results: on (default)',
      '• audit channel: off (default)',
      'Change one with `/imagine-admin set` (clear for the default; add or remove for lists).',
    ]);
  });
});

describe('describeSettings: a default quality of high that high-quality limits', () => {
  it('says what members high-quality does not list get instead, as their jobs get it', async () => {
    const { runner } = await kit.runner();
    const admin = requester({ isAdmin: true, userId: '42' });
    await runner.policy.set(admin, 'defaultQuality', 'high');
    const lineOf = async () => describeSettings(await runner.policy.effective(admin), '`/imagine-admin set`').split('\n').find((l) => l.startsWith('• default-quality:'));
    const today = new Date().toISOString().slice(0, 10);
    expect(await lineOf()).toBe(`• default-quality: high (admin: <@42>, ${today})`);
    await runner.policy.set(admin, 'highQualityFor', ['role:7']);
    expect(await lineOf()).toBe(`• default-quality: high (admin: <@42>, ${today}); whoever high-quality does not list gets auto`);
    // Where the qualities leave auto out, the first one they may use.
    await runner.policy.set(admin, 'qualities', ['medium', 'high']);
    expect(await lineOf()).toBe(`• default-quality: high (admin: <@42>, ${today}); whoever high-quality does not list gets medium`);
    expect((await runner.policy.admit({ kind: 'generate', prompt: 'a boat', options: {}, requester: requester({ userId: '9' }) })).spec.options.quality).toBe('medium');
  });
});

describe('describeSettings: settings that cannot be read', () => {
  it('says which cannot be read: a rule refuses every job until it is repaired, set again or cleared, a default applies meanwhile', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space) });
    const admin = requester({ isAdmin: true, userId: '42' });
    await space.update(stateKeyOf(scopeKeyOf(admin)), () => ({
      blocked: { value: 'mallory', by: 'discord:42', at: 1 },
      defaultSize: { value: 'huge', by: 'discord:42', at: 1 },
      auditChannel: { value: { channelId: 7 }, by: 'discord:42', at: 1 },
    }));
    const lines = describeSettings(await runner.policy.effective(admin), '`/imagine-admin set`').split('\n');
    expect(lines.slice(1, 3)).toEqual([
      '• bot allowed here: yes (operator)',
      '⚠️ A rule of this server cannot be read, so every job here is refused until an admin clears what cannot be read with `/imagine-admin repair`, or sets each again or clears it (below).',
    ]);
    // On Slack the repair is the app's own command, as configured.
    const onSlack = { ...(await runner.policy.effective(admin)), platform: 'slack' as const };
    expect(describeSettings(onSlack, '`/draw admin set SETTING VALUE`', 'en', undefined, '/draw').split('\n')[2]).toBe(
      '⚠️ A rule of this workspace cannot be read, so every job here is refused until an admin clears what cannot be read with `/draw admin repair`, or sets each again or clears it (below).',
    );
    expect(lines).toContain('• blocked: ⚠️ cannot be read (damaged in the bot’s storage) — every job is refused until an admin sets it again or clears it');
    expect(lines).toContain('• default-size: ⚠️ cannot be read (damaged in the bot’s storage) — its default, 1024x1024, applies until an admin sets it again');
    expect(lines).toContain('• audit channel: ⚠️ cannot be read (damaged in the bot’s storage) — nothing is posted until an admin chooses it again');

    // Set again: the answer says what it replaced, and the view no longer warns.
    expect(await changeSetting(runner.policy, admin, 'blocked', '<@7>')).toEqual({ ok: true, message: 'blocked is now <@7> (was a value that could not be read).' });
    expect(describeSettings(await runner.policy.effective(admin), '`/imagine-admin set`')).not.toMatch(/A rule of this server cannot be read|blocked: ⚠️/);
  });
});

describe('changeSetting: a list stored longer than today’s bound', () => {
  it('takes a remove (it only narrows who may), refuses an add naming the bound, and never points at clear', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space) });
    const admin = requester({ isAdmin: true, userId: '42' });
    const key = stateKeyOf(scopeKeyOf(admin));
    const long = Array.from({ length: 150 }, (_, i) => `user:${1000 + i}`);
    await space.update(key, () => ({ allowed: { value: long, by: 'discord:42', at: 1 }, highQualityFor: { value: long, by: 'discord:42', at: 1 } }));

    const removed = await changeSetting(runner.policy, admin, 'who', 'remove <@1000>');
    expect(removed).toMatchObject({ ok: true });
    expect((await space.get(key))?.allowed?.value).toEqual(long.slice(1));
    expect(await changeSetting(runner.policy, admin, 'high-quality', 'remove <@1000> <@1001>')).toMatchObject({ ok: true });
    expect((await space.get(key))?.highQualityFor?.value).toEqual(long.slice(2));

    const refusal = { ok: false, code: 'invalid_value', message: 'who may hold at most 100: nothing was changed. Remove some, or set a shorter whole value.' };
    expect(await changeSetting(runner.policy, admin, 'who', 'add <@9999>')).toEqual(refusal);
    // A remove of someone not in it changes nothing: what is stored stays, and it is still a part of it.
    expect(await changeSetting(runner.policy, admin, 'who', 'remove <@9999>')).toMatchObject({ ok: true });
    expect(await changeSetting(runner.policy, admin, 'high-quality', 'add <@9999>')).toMatchObject({ ok: false, code: 'invalid_value', message: expect.stringContaining('high-quality may hold at most 100') as unknown });
    expect((await space.get(key))?.allowed?.value).toEqual(long.slice(1));
    expect((await runner.policy.effective(admin)).allowed.value).toEqual(long.slice(1));
  });
});

describe('changeSetting: a remove never empties a list of who, where or what may be used', () => {
  it('refuses to remove the last entry (none is everyone, every channel, every quality) and points at clear; clear still opens it', async () => {
    const { runner } = await kit.runner();
    const admin = requester({ isAdmin: true, userId: '42' });
    expect(await changeSetting(runner.policy, admin, 'qualities', 'low')).toMatchObject({ ok: true });
    expect(await changeSetting(runner.policy, admin, 'qualities', 'remove low')).toEqual({
      ok: false,
      code: 'would_open',
      message: 'Removing the last quality from qualities would open every quality: nothing was changed. To do that, use `clear`.',
    });
    expect((await runner.policy.effective(admin)).qualities).toMatchObject({ value: ['low'], source: 'admin' });
    const cases: [string, string, string][] = [
      ['channels', '<#111>', 'Removing the last channel from channels would open the bot to every channel'],
      ['sizes', '1024x1024', 'Removing the last size from sizes would open every size'],
      ['who', '<@7>', 'Removing the last one from who would open it to everyone'],
      ['high-quality', '<@7>', 'Removing the last one from high-quality would open it to everyone'],
    ];
    for (const [word, value, said] of cases) {
      expect(await changeSetting(runner.policy, admin, word, value), word).toMatchObject({ ok: true });
      expect(await changeSetting(runner.policy, admin, word, `remove ${value}`), word).toEqual({ ok: false, code: 'would_open', message: `${said}: nothing was changed. To do that, use \`clear\`.` });
    }
    const s = await runner.policy.effective(admin);
    expect([s.channels.value, s.sizes.value, s.allowed.value, s.highQualityFor.value]).toEqual([['111'], ['1024x1024'], ['user:7'], ['user:7']]);
    expect(await changeSetting(runner.policy, admin, 'qualities', 'clear')).toMatchObject({ ok: true });
    expect((await runner.policy.effective(admin)).qualities.source).toBe('default');
    // Blocked members and words may be emptied: none blocked is no wider than any rule.
    expect(await changeSetting(runner.policy, admin, 'blocked', '<@troll>')).toMatchObject({ ok: true });
    expect(await changeSetting(runner.policy, admin, 'blocked', 'remove <@troll>')).toMatchObject({ ok: true });
    expect(await changeSetting(runner.policy, admin, 'blocked-words', 'kraken')).toMatchObject({ ok: true });
    expect(await changeSetting(runner.policy, admin, 'blocked-words', 'remove kraken')).toMatchObject({ ok: true });
    expect((await runner.policy.effective(admin)).blocked.source).toBe('default');
  });

  it('keeps the list closed when two admins on two replicas each remove one of its two entries', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const one = new ScopePolicy({ store: settingsInState(space), partialImages: 3, cacheMs: 60_000 });
    const two = new ScopePolicy({ store: settingsInState(space), partialImages: 3, cacheMs: 60_000 });
    const ann = requester({ isAdmin: true, userId: 'ann' });
    const bob = requester({ isAdmin: true, userId: 'bob' });
    expect(await changeSetting(one, ann, 'who', '<@ann> <@bob>')).toMatchObject({ ok: true });
    // Both replicas have read the two entries; each admin removes one: each removal narrows what their replica shows.
    expect((await two.effective(bob)).allowed.value).toEqual(['user:ann', 'user:bob']);
    expect(await changeSetting(one, ann, 'who', 'remove <@bob>')).toMatchObject({ ok: true });
    expect(await changeSetting(two, bob, 'who', 'remove <@ann>')).toMatchObject({ ok: false, code: 'would_open' });
    const fresh = new ScopePolicy({ store: settingsInState(space), partialImages: 3, cacheMs: 0 });
    expect((await fresh.effective(ann)).allowed.value).toEqual(['user:ann']);
    expect(await fresh.admit({ kind: 'generate', prompt: 'a boat', options: {}, requester: requester({ userId: 'mallory' }) }).catch((error: { code: string }) => error.code)).toBe('member_not_allowed');
  });
});

describe('changeSetting: a remove from a channels list of 120 stored under a higher bound', () => {
  it('takes it, and refuses an add past the bound', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space) });
    const admin = requester({ isAdmin: true, userId: '42' });
    const key = stateKeyOf(scopeKeyOf(admin));
    const channels = Array.from({ length: 120 }, (_, i) => `${5000 + i}`);
    await space.update(key, () => ({ channels: { value: channels, by: 'discord:42', at: 1 } }));
    expect(await changeSetting(runner.policy, admin, 'channels', 'remove <#5000> <#5001>')).toMatchObject({ ok: true });
    expect((await space.get(key))?.channels?.value).toEqual(channels.slice(2));
    expect(await changeSetting(runner.policy, admin, 'channels', 'add <#9999>')).toEqual({
      ok: false,
      code: 'invalid_value',
      message: 'channels may hold at most 100: nothing was changed. Remove some, or set a shorter whole value.',
    });
    expect((await space.get(key))?.channels?.value).toEqual(channels.slice(2));
  });
});

describe('changeSetting: the refusals of a list change, in every language', () => {
  it('says too many, unreadable (add and remove) and would open (channels, qualities, sizes, and any other list) in each locale', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space) });
    const long = Array.from({ length: 150 }, (_, i) => `user:${1000 + i}`);
    const said: Record<string, string[]> = {};
    for (const locale of LOCALES) {
      const admin = requester({ isAdmin: true, userId: '42', locale });
      const one = { by: 'discord:42', at: 1 };
      await space.update(stateKeyOf(scopeKeyOf(admin)), () => ({
        allowed: { value: long, ...one },
        blocked: { value: 3, ...one },
        channels: { value: ['1'], ...one },
        qualities: { value: ['low'], ...one },
        sizes: { value: ['1024x1024'], ...one },
        highQualityFor: { value: ['user:7'], ...one },
      }));
      const answers = [
        await changeSetting(runner.policy, admin, 'who', 'add <@9999>'),
        await changeSetting(runner.policy, admin, 'blocked', 'add <@troll>'),
        await changeSetting(runner.policy, admin, 'blocked', 'remove <@troll>'),
        await changeSetting(runner.policy, admin, 'channels', 'remove <#1>'),
        await changeSetting(runner.policy, admin, 'qualities', 'remove low'),
        await changeSetting(runner.policy, admin, 'sizes', 'remove 1024x1024'),
        await changeSetting(runner.policy, admin, 'high-quality', 'remove <@7>'),
      ];
      expect(answers.map((a) => a.code), locale).toEqual(['invalid_value', 'setting_unreadable', 'setting_unreadable', 'would_open', 'would_open', 'would_open', 'would_open']);
      said[locale] = answers.map((a) => a.message);
    }
    expect(said).toEqual({
      en: [
        'who may hold at most 100: nothing was changed. Remove some, or set a shorter whole value.',
        'blocked cannot be read (damaged in the bot’s storage), so nothing can be added to it: set its whole value again, or clear it.',
        'blocked cannot be read (damaged in the bot’s storage), so nothing can be removed from it: set its whole value again, or clear it.',
        'Removing the last channel from channels would open the bot to every channel: nothing was changed. To do that, use `clear`.',
        'Removing the last quality from qualities would open every quality: nothing was changed. To do that, use `clear`.',
        'Removing the last size from sizes would open every size: nothing was changed. To do that, use `clear`.',
        'Removing the last one from high-quality would open it to everyone: nothing was changed. To do that, use `clear`.',
      ],
      de: [
        'who darf höchstens 100 enthalten: nichts wurde geändert. Entferne einige oder setze einen kürzeren ganzen Wert.',
        'blocked kann nicht gelesen werden (im Speicher des Bots beschädigt), daher kann nichts hinzugefügt werden: setze den ganzen Wert neu oder setze es zurück (clear).',
        'blocked kann nicht gelesen werden (im Speicher des Bots beschädigt), daher kann nichts entfernt werden: setze den ganzen Wert neu oder setze es zurück (clear).',
        'Den letzten Kanal aus channels zu entfernen, würde den Bot für jeden Kanal öffnen: nichts wurde geändert. Dafür gibt es `clear`.',
        'Die letzte Qualität aus qualities zu entfernen, würde jede Qualität öffnen: nichts wurde geändert. Dafür gibt es `clear`.',
        'Die letzte Größe aus sizes zu entfernen, würde jede Größe öffnen: nichts wurde geändert. Dafür gibt es `clear`.',
        'Den letzten Eintrag aus high-quality zu entfernen, würde es für alle öffnen: nichts wurde geändert. Dafür gibt es `clear`.',
      ],
      es: [
        'who puede tener como máximo 100: no se cambió nada. Quita algunos o fija un valor completo más corto.',
        'blocked no se puede leer (dañado en el almacenamiento del bot), así que no se puede añadir nada: vuelve a poner su valor completo o bórralo (clear).',
        'blocked no se puede leer (dañado en el almacenamiento del bot), así que no se puede quitar nada: vuelve a poner su valor completo o bórralo (clear).',
        'Quitar el último canal de channels abriría el bot a todos los canales: no se cambió nada. Para eso, usa `clear`.',
        'Quitar la última calidad de qualities abriría todas las calidades: no se cambió nada. Para eso, usa `clear`.',
        'Quitar el último tamaño de sizes abriría todos los tamaños: no se cambió nada. Para eso, usa `clear`.',
        'Quitar el último de high-quality lo abriría a todo el mundo: no se cambió nada. Para eso, usa `clear`.',
      ],
      fr: [
        'who peut contenir au plus 100 : rien n’a été modifié. Retirez-en, ou définissez une valeur entière plus courte.',
        'blocked est illisible (endommagé dans le stockage du bot) : rien ne peut y être ajouté. Redonnez-lui sa valeur entière, ou effacez-le (clear).',
        'blocked est illisible (endommagé dans le stockage du bot) : rien ne peut y être retiré. Redonnez-lui sa valeur entière, ou effacez-le (clear).',
        'Retirer le dernier salon de channels ouvrirait le bot à tous les salons : rien n’a été modifié. Pour cela, utilisez `clear`.',
        'Retirer la dernière qualité de qualities ouvrirait toutes les qualités : rien n’a été modifié. Pour cela, utilisez `clear`.',
        'Retirer la dernière taille de sizes ouvrirait toutes les tailles : rien n’a été modifié. Pour cela, utilisez `clear`.',
        'Retirer le dernier de high-quality l’ouvrirait à tout le monde : rien n’a été modifié. Pour cela, utilisez `clear`.',
      ],
      ja: [
        'who は最大 100 件までです。何も変更していません。いくつか削除するか、より短い値全体を設定してください。',
        'blocked は読み取れません（ボットの保存データが破損しています）。そのため追加はできません: 値全体を設定し直すか、clear で消してください。',
        'blocked は読み取れません（ボットの保存データが破損しています）。そのため削除はできません: 値全体を設定し直すか、clear で消してください。',
        'channels から最後のチャンネルを削除すると、ボットがすべてのチャンネルで使えるようになります。何も変更していません。そうするには `clear` を使ってください。',
        'qualities から最後の品質を削除すると、すべての品質が使えるようになります。何も変更していません。そうするには `clear` を使ってください。',
        'sizes から最後のサイズを削除すると、すべてのサイズが使えるようになります。何も変更していません。そうするには `clear` を使ってください。',
        'high-quality から最後の 1 件を削除すると、全員に開放されます。何も変更していません。そうするには `clear` を使ってください。',
      ],
      'pt-BR': [
        'who pode ter no máximo 100: nada foi alterado. Remova alguns ou defina um valor inteiro mais curto.',
        'blocked não pode ser lido (danificado no armazenamento do bot), então nada pode ser adicionado: defina o valor inteiro de novo ou limpe-o (clear).',
        'blocked não pode ser lido (danificado no armazenamento do bot), então nada pode ser removido: defina o valor inteiro de novo ou limpe-o (clear).',
        'Remover o último canal de channels abriria o bot a todos os canais: nada foi alterado. Para isso, use `clear`.',
        'Remover a última qualidade de qualities abriria todas as qualidades: nada foi alterado. Para isso, use `clear`.',
        'Remover o último tamanho de sizes abriria todos os tamanhos: nada foi alterado. Para isso, use `clear`.',
        'Remover o último de high-quality o abriria a todos: nada foi alterado. Para isso, use `clear`.',
      ],
    });
  });
});

describe('changeSetting: a list that cannot be read', () => {
  it('refuses to add to it or remove from it (which would build on the default and lift the refusal), and takes a whole value or clear', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space) });
    const admin = requester({ isAdmin: true, userId: '42' });
    await space.update(stateKeyOf(scopeKeyOf(admin)), () => ({
      allowed: { value: 'user:7', by: 'discord:42', at: 1 },
      blocked: { value: ['x'.repeat(80)], by: 'discord:42', at: 1 },
      highQualityFor: { value: 3, by: 'discord:42', at: 1 },
    }));
    expect(await changeSetting(runner.policy, admin, 'who', 'remove <@bob>')).toEqual({
      ok: false,
      code: 'setting_unreadable',
      message: 'who cannot be read (damaged in the bot’s storage), so nothing can be removed from it: set its whole value again, or clear it.',
    });
    expect(await changeSetting(runner.policy, admin, 'high-quality', 'remove <@bob>')).toMatchObject({ ok: false, code: 'setting_unreadable' });
    expect(await changeSetting(runner.policy, admin, 'blocked', 'add <@troll>')).toEqual({
      ok: false,
      code: 'setting_unreadable',
      message: 'blocked cannot be read (damaged in the bot’s storage), so nothing can be added to it: set its whole value again, or clear it.',
    });
    expect((await runner.policy.effective(admin)).unreadable).toEqual(['allowed', 'blocked', 'highQualityFor']);

    expect(await changeSetting(runner.policy, admin, 'blocked', '<@troll>')).toMatchObject({ ok: true });
    expect(await changeSetting(runner.policy, admin, 'who', 'clear')).toMatchObject({ ok: true });
    const after = await runner.policy.effective(admin);
    expect(after.unreadable).toEqual(['highQualityFor']);
    expect(after.blocked.value).toEqual(['troll']);
  });
});

describe('settingLabel: a stored setting as an admin reads it', () => {
  it('names each as it is typed, the audit channel by its command, the role budgets in words in the admin’s language', () => {
    expect(settingLabel('blockedWords')).toBe('blocked-words');
    expect(settingLabel('allowed', 'de')).toBe('who');
    expect(settingLabel('auditChannel', 'fr')).toBe('audit');
    expect(settingLabel('roleBudgets')).toBe('role budgets');
    expect(settingLabel('roleBudgets', 'de')).toBe('Rollenbudgets');
    // WORD_OF holds the settings `set` names, and its type says so: the audit channel is no key of it.
    // @ts-expect-error auditChannel is typed with `audit …`, not `set`
    expect(WORD_OF.auditChannel).toBeUndefined();
  });
});

describe('the admin command named as the admin’s Discord shows it', () => {
  it('names /imagine-admin in the settings’ warning and the repair’s as it is registered in the admin’s language (/bild-admin), Slack’s own command on Slack', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space), settingsCacheMs: 0 });
    const admin = requester({ isAdmin: true, userId: '42' });
    const at = { by: 'discord:42', at: 1 };
    const damage = () => space.update(stateKeyOf(scopeKeyOf(admin)), () => ({ blocked: { value: 'mallory', ...at }, roleBudgets: { value: 'a penny', ...at } }));
    await damage();
    const settings = await runner.policy.effective(admin);
    expect(describeSettings(settings, '', 'de').split('\n')[2]).toContain('`/bild-admin repair`');
    for (const locale of ['de', 'fr', 'es', 'pt-BR', 'ja'] as const) {
      const said = describeSettings(settings, '', locale);
      expect(said).toContain(`\`/${say(locale, 'discord.command.admin.name')} repair\``);
      expect(said).not.toContain('/imagine-admin');
      await damage();
      const repaired = (await repairSettings(runner.policy, { ...admin, locale })).message;
      expect(repaired).toContain(`/${say(locale, 'discord.command.admin.name')} budget cap:user-daily`);
      expect(repaired).not.toContain('/imagine-admin');
    }
    const onSlack = { ...settings, platform: 'slack' as const };
    expect(describeSettings(onSlack, '', 'de', undefined, '/draw')).toContain('`/draw admin repair`');
  });
});

describe('repairSettings: the answer in words', () => {
  it('names the settings it cleared as they are typed (the role budgets in words), says when none was unreadable, and refuses a member', async () => {
    const space = memorySpace<ScopeSettingEntries>();
    const { runner } = await kit.runner({ settings: settingsInState(space), settingsCacheMs: 0 });
    const admin = requester({ isAdmin: true });
    const damage = (entries: ScopeSettingEntries) => space.update(stateKeyOf(scopeKeyOf(admin)), (stored) => ({ ...(stored as ScopeSettingEntries), ...entries }));
    const at = { by: 'discord:admin', at: 1 };

    await damage({ blockedWords: { value: 7, ...at }, maxImages: { value: 'lots', ...at }, auditChannel: { value: 'audit', ...at }, roleBudgets: { value: 'a penny', ...at } });
    expect(await repairSettings(runner.policy, requester())).toEqual({ ok: false, code: 'not_admin', message: 'Only an admin of this server can change its settings.' });
    // Who may repair is decided once, by the policy: asked for a member too.
    const asked = vi.spyOn(runner.policy, 'repair');
    await repairSettings(runner.policy, requester());
    expect(asked).toHaveBeenCalledTimes(1);
    asked.mockRestore();
    expect(await repairSettings(runner.policy, admin)).toEqual({
      ok: true,
      message:
        'Cleared the 4 settings that could not be read, back to their defaults: blocked-words, max-images, role budgets, audit. Every other setting is unchanged. ' +
        '⚠️ Now unrestricted: blocked-words, max-images, role budgets. Set again what should still hold — each role’s budget with /imagine-admin budget cap:user-daily usd:… role:@role; until then every member has the budget of each user.',
    });
    await damage({ highQualityFor: { value: [''], ...at } });
    expect(await repairSettings(runner.policy, admin)).toEqual({
      ok: true,
      message: 'Cleared the setting that could not be read, back to its default: high-quality. Every other setting is unchanged. ⚠️ Now unrestricted: high-quality. Set again what should still hold.',
    });
    // A default cleared lifts nothing: no warning. On Slack the budget command is the app's own.
    await damage({ defaultSize: { value: 'huge', ...at } });
    expect((await repairSettings(runner.policy, admin)).message).toBe('Cleared the setting that could not be read, back to its default: default-size. Every other setting is unchanged.');
    const slackAdmin = { ...admin, platform: 'slack' as const };
    await space.update(stateKeyOf(scopeKeyOf(slackAdmin)), () => ({ roleBudgets: { value: 'a penny', ...at } }));
    expect((await repairSettings(runner.policy, slackAdmin, '/draw')).message).toContain(
      '⚠️ Now unrestricted: role budgets. Set again what should still hold — each user group’s budget with /draw admin budget @group user-daily …; until then every member has the budget of each user.',
    );
    expect(await repairSettings(runner.policy, { ...admin, platform: 'slack' })).toEqual({ ok: true, message: 'Every setting of this workspace can be read: nothing was cleared.', unchanged: true });
    for (const locale of LOCALES) expect((await repairSettings(runner.policy, { ...admin, locale })).message).not.toBe('');

    // A later version's well-formed values are left as they are, and named.
    await damage({ maxImages: { value: 12, ...at }, sizes: { value: ['4096x4096'], ...at } });
    expect(await repairSettings(runner.policy, admin)).toEqual({
      ok: true,
      message: 'Left as they are: max-images, sizes, well-formed but written by a newer version of the bot, which this one cannot read. Set or clear each by hand.',
      unchanged: true,
    });
    await damage({ defaultQuality: { value: 7, ...at } });
    expect((await repairSettings(runner.policy, admin)).message).toBe(
      'Cleared the setting that could not be read, back to its default: default-quality. Every other setting is unchanged. Left as they are: max-images, sizes, well-formed but written by a newer version of the bot, which this one cannot read. Set or clear each by hand.',
    );
  });
});

describe('describeSettings: the audit channel’s trouble', () => {
  it('warns of failing audit posts only while their channel is still the one chosen', async () => {
    const { runner } = await kit.runner();
    const admin = requester({ isAdmin: true });
    const trouble = { channelId: 'C-broken', failures: 3, code: '50013', at: 0 };
    await runner.policy.set(admin, 'auditChannel', { channelId: 'C-broken' });
    expect(describeSettings(await runner.policy.effective(admin), '`/imagine-admin set`', 'en', trouble)).toContain(describeAuditTrouble(trouble, 'en'));
    // Turned off, or another channel chosen (on another replica, where this one's count is not cleared): no warning.
    await runner.policy.set(admin, 'auditChannel', undefined);
    expect(describeSettings(await runner.policy.effective(admin), '`/imagine-admin set`', 'en', trouble)).not.toContain(describeAuditTrouble(trouble, 'en'));
    await runner.policy.set(admin, 'auditChannel', { channelId: 'C-new' });
    expect(describeSettings(await runner.policy.effective(admin), '`/imagine-admin set`', 'en', trouble)).not.toContain(describeAuditTrouble(trouble, 'en'));
  });
});
