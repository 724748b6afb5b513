import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { privacyOf } from '../../../bots/discord/ReplyTarget.js';
import { describeFailure, dmScopeId } from '../../../bots/runner/index.js';
import { refusalFromPolicy } from '../../../bots/runner/describe-refusal.js';
import { makeImage } from '../../helpers/images.js';
import type { FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import { answerOf, buttonId, DiscordHarness, EPHEMERAL, previewByPreview, privateNoteOf } from './harness.js';

const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Every message the bot has in the server's channel that everyone sees (not ephemeral). */
const publicMessages = (harness: DiscordHarness): FakeMessage[] => harness.discord.channelMessages().filter((m) => (m.flags & EPHEMERAL) === 0);

/** Waits until the member's ended jobs are in their history (kept once the job's reply is final). */
async function inHistory(harness: DiscordHarness, userId: string, count: number): Promise<void> {
  const requester = { platform: 'discord' as const, userId, channelId: '', scopeId: harness.discord.guildId };
  await vi.waitFor(async () => expect((await harness.runner.history!.mine(requester)).length).toBeGreaterThanOrEqual(count), { timeout: 15_000 });
  // Kept for the server's view too: the writes under way are done.
  await harness.runner.history!.settled();
}

describe('how private a job’s messages are (privacyOf): the live job’s and the one a sweep or a Cancel shows later', () => {
  it('makes a private job’s messages ephemeral and sends it by DM past its token; a job in its member’s own scope by DM too; a server’s public job to the channel', () => {
    expect(privacyOf({ scopeId: '123456789012345678', private: true })).toEqual({ fallback: 'dm', ephemeral: true });
    expect(privacyOf({ scopeId: dmScopeId('U1') })).toEqual({ fallback: 'dm', ephemeral: false });
    expect(privacyOf({ scopeId: '123456789012345678', private: false })).toEqual({ fallback: 'channel', ephemeral: false });
  });
});

describe('private results on Discord', () => {
  it('shows a private /imagine only to its requester — every preview, the result, and its Reroll, Edit and Delete — and nothing in the channel', async () => {
    h = await DiscordHarness.start({ partialImages: 2, holdEvent: previewByPreview });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a secret garden', quality: 'low', private: true });
    const result = await h.finalReply(ix);
    expect(result.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(result.attachments.map((a) => a.filename)).toEqual([expect.stringMatching(/^pictor-.*\.png$/)]);
    // The previews were shown in the same private reply, before the result.
    expect(result.history.some((s) => s.attachments.some((a) => a.filename.startsWith('preview-')))).toBe(true);
    expect(publicMessages(h)).toEqual([]);
    expect(h.emulator.requests.at(-1)!.fields).toMatchObject({ prompt: 'a secret garden', partial_images: 2 });

    // Reroll: a new private reply.
    const reroll = h.discord.clickButton(result, buttonId(result, 'Reroll'));
    const rerolled = await h.finalReply(reroll);
    expect(rerolled.flags & EPHEMERAL).toBe(EPHEMERAL);

    // Edit: the modal, then a private edit of the image.
    const edit = h.discord.clickButton(result, buttonId(result, 'Edit'));
    await h.discord.waitFor(() => edit.modal, 'the edit modal');
    const edited = await h.finalReply(h.discord.submitModal(edit, { prompt: 'add a fountain' }));
    expect(edited.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(h.emulator.requests.filter((r) => r.route === 'edits')).toHaveLength(1);

    // Delete: the private message goes.
    h.discord.clickButton(result, buttonId(result, 'Delete'));
    await h.discord.waitFor(() => !h!.discord.messages.has(result.id), 'the private result to be deleted');
    expect(publicMessages(h)).toEqual([]);
  });

  it('keeps what follows a private reply private: an image Discord refused with the message (413) follows in an ephemeral message', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a heavy secret', private: true });
    await h.discord.waitFor(() => h!.discord.original(ix)?.content.includes('Drawing'), 'the job to start');
    const tooLarge = { status: 413, code: 40005, message: 'Request entity too large' };
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, tooLarge);
    const final = await h.finalReply(ix);
    const image = await h.discord.waitFor(() => [...h!.discord.messages.values()].find((m) => m.interactionId === ix.id && m.id !== final.id && m.attachments.length === 1), 'the image on its own');
    expect([final.flags & EPHEMERAL, image.flags & EPHEMERAL]).toEqual([EPHEMERAL, EPHEMERAL]);
    expect(publicMessages(h)).toEqual([]);
  });

  it('sends a private result the interaction can no longer show to the member’s DMs, never to the channel', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a stormy secret', private: true });
    await h.discord.waitFor(() => h!.discord.original(ix)?.content.includes('Drawing'), 'the job to start');
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 500, code: 0, message: 'Internal Server Error', count: 20 });
    const dm = h.discord.dmChannelOf(h.discord.user.id);
    const posted = await h.discord.waitFor(() => h!.discord.channelMessages(dm).find((m) => m.attachments.length === 1), 'the result in the DM', 20_000);
    expect(posted.content.startsWith(`<@${h.discord.user.id}> `)).toBe(true);
    expect(publicMessages(h)).toEqual([]);
  }, 30_000);

  it('shows a private /edit only to its requester', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const image1 = h.discord.hostFile({ filename: 'a.png', bytes: await makeImage('png', 20, 20) });
    const result = await h.finalReply(h.discord.slashCommand('edit', { prompt: 'make it night', image1, private: true }));
    expect(result.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(publicMessages(h).filter((m) => m.interactionId !== undefined)).toEqual([]);
  });

  it('keeps private jobs out of the server’s history (the member still sees them in theirs)', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const ada = h.discord.newUser('ada');
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a public kite', quality: 'low' }, { user: ada }));
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a private diary', quality: 'low', private: true }, { user: ada }));
    await inHistory(h, ada.id, 2);

    const server = await answerOf(h, h.discord.slashCommand('imagine-history', { show: 'server' }, { user: h.discord.newUser('mod'), permissions: MANAGE_SERVER }));
    expect(server.content).toContain('a public kite');
    expect(server.content).not.toContain('a private diary');
    const mine = await answerOf(h, h.discord.slashCommand('imagine-history', {}, { user: ada }));
    expect(mine.content).toContain('a private diary');
  });

  it('refuses a private job privately where the server forbids private results, sending and charging nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const set = await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'private-results', value: 'off' }, { permissions: MANAGE_SERVER }));
    expect(set.content).toContain('private-results is now off');

    const ix = h.discord.slashCommand('imagine', { prompt: 'a hidden thing', private: true });
    const note = await privateNoteOf(h, ix);
    expect(note.content).toBe('✋ This server does not allow private results; ask again without private.');
    expect(h.emulator.requests).toHaveLength(0);
    expect(publicMessages(h)).toEqual([]);
    expect(await h.quotaStore.spentToday(`discord:${h.discord.guildId}`, Date.now())).toBe(0);

    // Public jobs still run.
    const shown = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'an open thing', quality: 'low' }));
    expect(shown.flags & EPHEMERAL).toBe(0);
  });

  it('refuses another member’s Reroll of a public result that their private default would make private, with advice the button can follow, and sends nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a public kite', quality: 'low' }));
    const grace = h.discord.newUser('grace');
    await answerOf(h, h.discord.slashCommand('imagine-settings', { private: true }, { user: grace }));
    await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'private-results', value: 'off' }, { permissions: MANAGE_SERVER }));
    const sent = h.emulator.requests.length;
    // The sentence is describe-refusal's to check: here, that it is the one a button can follow (no private option to set).
    const advice = describeFailure(refusalFromPolicy('private_not_allowed', { platform: 'discord', again: true, fromDefault: true }), 'en').message;

    const reroll = h.discord.clickButton(result, buttonId(result, 'Reroll'), { user: grace });
    const note = await privateNoteOf(h, reroll);
    expect(note.content).toBe(`✋ ${advice}`);
    expect(h.emulator.requests).toHaveLength(sent);
  });

  it('refuses the edit form of a private result submitted after the server forbade private results, with advice the form can follow, and sends nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a secret garden', quality: 'low', private: true }));
    const edit = h.discord.clickButton(result, buttonId(result, 'Edit'));
    await vi.waitFor(() => expect(edit.modal).toBeDefined());
    // Turned off while the form is open: the submission is refused, in words the form can follow (it has no private option).
    await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'private-results', value: 'off' }, { permissions: MANAGE_SERVER }));
    const advice = describeFailure(refusalFromPolicy('private_not_allowed', { platform: 'discord', inForm: true }), 'en').message;

    const submit = h.discord.submitModal(edit, { prompt: 'add a fountain' });
    const note = await privateNoteOf(h, submit);
    expect(note.content).toBe(`✋ ${advice}`);
    expect(h.emulator.requests.filter((r) => r.route === 'edits')).toHaveLength(0);
    expect(publicMessages(h)).toEqual([]);
  });

  it('refuses the Edit of a private result before its modal opens once the server forbids private results, with advice the modal can follow', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a secret garden', quality: 'low', private: true }));
    await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'private-results', value: 'off' }, { permissions: MANAGE_SERVER }));

    const edit = h.discord.clickButton(result, buttonId(result, 'Edit'));
    const note = await privateNoteOf(h, edit);
    expect(note.content).toBe('✋ This server does not allow private results, and the edit of a private result would be private too: edit an image everyone can see instead.');
    expect(edit.modal).toBeUndefined();
    expect(h.emulator.requests.filter((r) => r.route === 'edits')).toHaveLength(0);
  });
});
