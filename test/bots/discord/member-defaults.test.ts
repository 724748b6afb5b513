import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { answerOf, buttonId, DiscordHarness, EPHEMERAL, privateNoteOf, publicMessagesOf } from './harness.js';
import type { FakeInteraction } from '../../fakes/discord/FakeDiscord.js';
import { say, sayWords, unreadableRulesRefusal, type Requester } from '../../../bots/runner/index.js';
import { INTAKE_REFUSALS } from '../../helpers/intake-cases.js';
import { stateKeyOf } from '../../../bots/state/index.js';

const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('/imagine-settings: a member’s own defaults on Discord', () => {
  it('keeps a member’s size, quality, format, count and previews, applies them where they choose nothing, and shows them beside the server’s', async () => {
    h = await DiscordHarness.start({ partialImages: 2 });
    const ada = h.discord.newUser('ada');
    const saved = await answerOf(h, h.discord.slashCommand('imagine-settings', { size: '1536x1024', quality: 'low', format: 'webp', count: 2, previews: false }, { user: ada }));
    expect(saved.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(saved.content.split('\n')).toEqual([
      '✅ Your defaults are saved.',
      '**Your defaults** (wherever you use Pictor; one a server’s rules do not allow is not used there)',
      '• size: 1536x1024',
      '• quality: low',
      '• format: webp',
      '• count: 2',
      '• previews: off',
      '**This server** (when you choose nothing): size 1024x1024, quality auto, 2 previews; up to 10 images a job; private results allowed.',
      'Change yours with `/imagine-settings`; `/imagine-settings clear:` clears one, or all.',
    ]);

    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a harbour' }, { user: ada }));
    const sent = h.emulator.requests.at(-1)!.fields!;
    expect(sent).toMatchObject({ size: '1536x1024', quality: 'low', output_format: 'webp', n: 2 });
    expect(sent.partial_images).toBeUndefined();
    // What the member chooses wins over their defaults; another member has none.
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a harbour', size: '1024x1024', count: 1 }, { user: ada }));
    expect(h.emulator.requests.at(-1)!.fields).toMatchObject({ size: '1024x1024', n: 1, quality: 'low' });
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a harbour', quality: 'low' }));
    expect(h.emulator.requests.at(-1)!.fields).toMatchObject({ partial_images: 2, size: '1024x1024', output_format: 'png', n: 1 });

    const cleared = await answerOf(h, h.discord.slashCommand('imagine-settings', { clear: 'all' }, { user: ada }));
    expect(cleared.content).toContain('You have set none: this server’s defaults apply.');
  });

  it('names /imagine-settings to a German member as their Discord shows it, in the sentence that tells them how to change their defaults', async () => {
    h = await DiscordHarness.start();
    const view = await answerOf(h, h.discord.slashCommand('imagine-settings', {}, { locale: 'de' }));
    expect(view.content.split('\n').at(-1)).toBe(say('de', 'member.how', { command: '`/bild-voreinstellungen`', clear: '`/bild-voreinstellungen clear:`' }));
    expect(view.content).not.toContain('imagine');
  });

  it('refuses /imagine privately, nothing sent, while the member’s own defaults cannot be read (never public against their private default); clearing them recovers', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const ada = h.discord.newUser('ada');
    await answerOf(h, h.discord.slashCommand('imagine-settings', { size: '1536x1024', private: true }, { user: ada }));
    // Their record cut short in the bots' state (a torn write, a full disk).
    await writeFile(join(h.dataDir, h.state.spaces.memberDefaults.dir, `${stateKeyOf(`discord:${ada.id}`)}.json`), '{"pictorState":1,"holder":null,"value":{"size":"1536x1024","pri');
    const ix = h.discord.slashCommand('imagine', { prompt: 'a sea', quality: 'low' }, { user: ada });
    const answer = await answerOf(h, ix);
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(h.logger.entries.some((e) => (e.obj as { code?: string }).code === 'defaults_unreadable' && e.msg === 'job refused')).toBe(true);
    expect(publicMessagesOf(h, ix)).toEqual([]);
    expect(h.emulator.requests).toHaveLength(0);
    const cleared = await answerOf(h, h.discord.slashCommand('imagine-settings', { clear: 'all' }, { user: ada }));
    expect(cleared.content).toContain('You have set none: this server’s defaults apply.');
    expect((await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a sea', quality: 'low' }, { user: ada }))).flags & EPHEMERAL).toBe(0);
  });

  it('shows a member, while a rule of the server cannot be read, that every job is refused — not the limits that would apply otherwise', async () => {
    h = await DiscordHarness.start({ partialImages: 2 });
    const admin: Requester = { platform: 'discord', userId: 'an-admin', channelId: h.discord.channelId, scopeId: h.discord.guildId, isAdmin: true };
    await INTAKE_REFUSALS.find((r) => r.code === 'settings_unreadable')!.apply(h.runner, admin, 'elsewhere', h.state);
    const view = await answerOf(h, h.discord.slashCommand('imagine-settings', {}, { user: h.discord.newUser('ada') }));
    expect(view.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(view.content.split('\n')).toContain(sayWords('en-US', unreadableRulesRefusal({ platform: 'discord', unreadable: ['blocked'] })!.words));
    expect(view.content).not.toContain('**This server** (when you choose nothing)');
  });

  it('never widens the server’s rules: a default they do not allow is named to the member, privately, and not used', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const ada = h.discord.newUser('ada');
    await answerOf(h, h.discord.slashCommand('imagine-settings', { size: '1536x1024', quality: 'high', count: 4 }, { user: ada }));
    const admin = { permissions: MANAGE_SERVER };
    await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'sizes', value: '1024x1024' }, admin));
    await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'qualities', value: 'low medium' }, admin));

    const ix = h.discord.slashCommand('imagine', { prompt: 'a quiet street' }, { user: ada });
    const result = await h.finalReply(ix);
    expect(result.flags & EPHEMERAL).toBe(0);
    const note = await privateNoteOf(h, ix);
    expect(note.content).toBe('ℹ️ Not used here, as this server’s rules do not allow them: your default size 1536x1024, quality high.');
    const sent = h.emulator.requests.at(-1)!.fields!;
    expect(sent).toMatchObject({ n: 4, size: '1024x1024', quality: 'low' });

    const view = await answerOf(h, h.discord.slashCommand('imagine-settings', {}, { user: ada }));
    expect(view.content).toContain('• size: 1536x1024 — not allowed here, not used');
    expect(view.content).toContain('• quality: high — not allowed here, not used');
    expect(view.content).toContain('• count: 4\n');
  });

  it('shows a member’s jobs privately by default, unless they ask otherwise; where the server forbids private results it names the default and sends nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const ada = h.discord.newUser('ada');
    await answerOf(h, h.discord.slashCommand('imagine-settings', { private: true }, { user: ada }));
    const hidden = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a note to self', quality: 'low' }, { user: ada }));
    expect(hidden.flags & EPHEMERAL).toBe(EPHEMERAL);
    const shown = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'for everyone', quality: 'low', private: false }, { user: ada }));
    expect(shown.flags & EPHEMERAL).toBe(0);

    await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'private-results', value: 'off' }, { permissions: MANAGE_SERVER }));
    const sentBefore = h.emulator.requests.length;
    const refused = h.discord.slashCommand('imagine', { prompt: 'a note to self', quality: 'low' }, { user: ada });
    const note = await privateNoteOf(h, refused);
    expect(note.content).toBe(
      '✋ This server does not allow private results, and your default asks for them: ask for a public one with private: False, or turn your default off with /imagine-settings private: False.',
    );
    expect(h.emulator.requests).toHaveLength(sentBefore);
    const view = await answerOf(h, h.discord.slashCommand('imagine-settings', {}, { user: ada }));
    expect(view.content).toContain('• private: on — not allowed here: a job here is refused unless you ask for a public one');
    expect(view.content).toContain('private results not allowed.');
  });

  it('sends a member’s own Reroll again as the job was sent — no note of a default not used, and not their defaults changed since — while another member’s Reroll takes their defaults where it chose nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'max-images', value: '1' }, { permissions: MANAGE_SERVER }));
    const ada = h.discord.newUser('ada');
    await answerOf(h, h.discord.slashCommand('imagine-settings', { count: 3, quality: 'low' }, { user: ada }));
    const first = h.discord.slashCommand('imagine', { prompt: 'a fox' }, { user: ada });
    const result = await h.finalReply(first);
    expect((await privateNoteOf(h, first)).content).toBe('ℹ️ Not used here, as this server’s rules do not allow it: your default count 3.');
    const asSent = h.emulator.requests.at(-1)!.fields!;
    expect(asSent).toMatchObject({ prompt: 'a fox', n: 1, quality: 'low' });
    const privateNotes = (ix: FakeInteraction) => [...h!.discord.messages.values()].filter((m) => m.interactionId === ix.id && (m.flags & EPHEMERAL) !== 0);

    const reroll = h.discord.clickButton(result, buttonId(result, 'Reroll'), { user: ada });
    expect((await h.finalReply(reroll)).flags & EPHEMERAL).toBe(0);
    expect(privateNotes(reroll)).toEqual([]);
    expect(h.emulator.requests.at(-1)!.fields).toEqual(asSent);

    await answerOf(h, h.discord.slashCommand('imagine-settings', { size: '1536x1024', quality: 'medium', format: 'webp', private: true }, { user: ada }));
    const later = h.discord.clickButton(result, buttonId(result, 'Reroll'), { user: ada });
    expect((await h.finalReply(later)).flags & EPHEMERAL).toBe(0);
    expect(privateNotes(later)).toEqual([]);
    expect(h.emulator.requests.at(-1)!.fields).toEqual(asSent);

    const bo = h.discord.newUser('bo');
    await answerOf(h, h.discord.slashCommand('imagine-settings', { size: '1024x1536', quality: 'high' }, { user: bo }));
    await h.finalReply(h.discord.clickButton(result, buttonId(result, 'Reroll'), { user: bo }));
    expect(h.emulator.requests.at(-1)!.fields).toEqual({ ...asSent, size: '1024x1536' });
  });
});
