import { afterEach, describe, expect, it } from 'vitest';
import { keyOf } from '../../helpers/message-keys.js';
import type { FakeInteraction, FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import { buttonId, buttonsOf, DiscordHarness, EPHEMERAL, privateNoteOf } from './harness.js';

/**
 * A job's Retry runs it once: its member's presses take over the job's record in one write, so a double click (the button stays
 * shown after the first press) or two presses racing send and charge it once, and every image it was paid for stays
 * shown. Another member's Retry runs in a new reply of theirs, leaving the job's message and its Delete to its member;
 * it is their own new job, as their Reroll is, and takes nothing over, so the member's own Retry is still theirs.
 */
describe('a job’s Retry', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  /** A job of `user` that failed before reaching the service's answer (nothing made, nothing charged): its message offering Retry. */
  async function failed(user?: FakeInteraction['user']): Promise<FakeMessage> {
    h.emulator.injectFault('server_error', { count: 1 });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a resilient bridge', quality: 'low' }, user && { user });
    const message = await h.finalReply(ix);
    expect(buttonsOf(message).map((b) => b.label)).toEqual(['Retry']);
    // As a client shows it, not as later edits change it.
    return { ...message, components: structuredClone(message.components) };
  }

  const generations = () => h.emulator.requests.filter((r) => r.route === 'generations' && r.status === 200).length;
  const charges = async () => (await h.quotaStore.usage({})).length;
  const refusedAsRetried = () => h.logger.entries.filter((e) => (e.obj as { code?: string }).code === 'already_retried');

  it.each([
    ['pressed twice, the second once the first was answered (a double click)', 'in turn'],
    ['pressed twice at once', 'at once'],
  ] as const)('%s: sent and charged once, its images shown, the other press told privately', async (_name, when) => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const message = await failed();
    const [before, charged] = [generations(), await charges()];

    const first = h.discord.clickButton(message, buttonId(message, 'Retry'));
    if (when === 'in turn') await h.discord.waitFor(() => first.ack, 'the first press answered');
    const second = h.discord.clickButton(message, buttonId(message, 'Retry'));

    // Which of two presses at once takes the job is the state's to decide: the other is told.
    const refused = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => (m.interactionId === first.id || m.interactionId === second.id) && (m.flags & EPHEMERAL) !== 0), 'a press told privately');
    if (when === 'in turn') expect(refused.interactionId).toBe(second.id);
    expect(keyOf(refused.content.replace(/^✋ /, ''))).toBe('discord.button.already_retried');
    const done = await h.finalReply(refused.interactionId === first.id ? second : first, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).toBe(message.id);
    expect(done.attachments).toHaveLength(1);
    expect(generations() - before).toBe(1);
    expect((await charges()) - charged).toBe(1);
    expect(refusedAsRetried()).toHaveLength(1);
    // Its message shows one run's images, and no other message holds any.
    expect([...h.discord.messages.values()].filter((m) => m.attachments.length > 0).map((m) => m.id)).toEqual([message.id]);
  });

  it('pressed again after its run ended, on a client that did not refresh: told privately, nothing sent, the run’s images still shown', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const message = await failed();
    const first = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const done = await h.finalReply(first, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    const [before, charged, shown] = [generations(), await charges(), done.attachments.map((a) => a.filename)];

    const again = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const note = await privateNoteOf(h, again);
    expect(keyOf(note.content.replace(/^✋ /, ''))).toBe('discord.button.already_retried');
    expect(generations()).toBe(before);
    expect(await charges()).toBe(charged);
    expect(h.discord.messages.get(message.id)!.attachments.map((a) => a.filename)).toEqual(shown);
  });

  it('refused by the intake (a job of theirs still running): nothing ran, so the same Retry pressed again once it may runs the job', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 800 }, limits: { userConcurrentJobs: 1 } });
    const message = await failed();
    const other = h.discord.slashCommand('imagine', { prompt: 'a job still drawing', quality: 'low' });
    await h.discord.waitFor(() => (h.discord.original(other)?.content.includes('Drawing') ? true : undefined), 'the other job to start');

    const refused = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const note = await privateNoteOf(h, refused);
    expect(keyOf(note.content.replace(/^✋ /, ''))).not.toBe('discord.button.already_retried');
    await h.finalReply(other);

    const again = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const done = await h.finalReply(again, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).toBe(message.id);
    expect(done.attachments).toHaveLength(1);
    expect(refusedAsRetried()).toEqual([]);
  });

  it('pressed by another member: runs in a new reply of theirs, on their budget; the job’s message and its Delete stay its member’s', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const ada = h.discord.newUser('ada');
    const mal = h.discord.newUser('mal');
    const message = await failed(ada);
    const before = h.discord.messages.get(message.id)!.content;

    const retry = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: mal });
    const done = await h.finalReply(retry, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).not.toBe(message.id);
    expect(done.interactionId).toBe(retry.id);
    expect(done.attachments).toHaveLength(1);
    // Ada's message is as it was: her failed job, its Retry.
    const ada_s = h.discord.messages.get(message.id)!;
    expect(ada_s.content).toBe(before);
    expect(ada_s.attachments).toEqual([]);
    // The run is Mal's: charged to him, and its Delete is his.
    expect((await h.quotaStore.usage({})).map((u) => u.userKey)).toEqual([`discord:${mal.id}`]);
    const byAda = h.discord.clickButton(done, buttonId(done, 'Delete'), { user: ada });
    const note = await privateNoteOf(h, byAda);
    expect(keyOf(note.content.replace(/^✋ /, ''))).toBe('discord.button.only_requester');
    expect(note.content).toContain(`<@${mal.id}>`);
  });

  it('pressed by another member first: its member’s own Retry still runs her job in her message, once; his runs in his reply', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const ada = h.discord.newUser('ada');
    const mal = h.discord.newUser('mal');
    const message = await failed(ada);

    const byMal = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: mal });
    const his = await h.finalReply(byMal, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(his.id).not.toBe(message.id);
    const before = generations();

    const byAda = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: ada });
    const hers = await h.finalReply(byAda, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(hers.id).toBe(message.id);
    expect(hers.attachments).toHaveLength(1);
    expect(generations() - before).toBe(1);
    expect(refusedAsRetried()).toEqual([]);
    // Each run is charged to the member who pressed, and Mal's reply still shows his.
    expect((await h.quotaStore.usage({})).map((u) => u.userKey).sort()).toEqual([`discord:${ada.id}`, `discord:${mal.id}`].sort());
    expect(h.discord.messages.get(his.id)!.attachments).toHaveLength(1);
  });

  it('pressed twice by another member (a double click): runs twice, each in a new reply of theirs, as a double Reroll does', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const ada = h.discord.newUser('ada');
    const mal = h.discord.newUser('mal');
    const message = await failed(ada);
    const before = generations();

    const first = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: mal });
    await h.discord.waitFor(() => first.ack, 'the first press answered');
    const second = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: mal });
    const [a, b] = await Promise.all([first, second].map((press) => h.finalReply(press, (m) => buttonsOf(m).some((x) => x.label === 'Reroll'))));
    expect(new Set([a!.id, b!.id, message.id]).size).toBe(3);
    expect(generations() - before).toBe(2);
    expect(refusedAsRetried()).toEqual([]);
    // Ada's Retry is still hers.
    const byAda = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: ada });
    const hers = await h.finalReply(byAda, (m) => buttonsOf(m).some((x) => x.label === 'Reroll'));
    expect(hers.id).toBe(message.id);
  });

  it('gives its Retry back when the press’s first answer fails (Discord refuses the deferral): nothing ran, and the next press runs it', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const message = await failed();
    const before = generations();
    h.discord.failNext({ route: 'interaction-callback' }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    const first = h.discord.clickButton(message, buttonId(message, 'Retry'));
    await h.discord.waitFor(() => h.discord.requests.some((r) => r.route === 'interaction-callback' && r.token === first.token && r.code === 50035), 'the refused deferral');
    await h.discord.waitFor(() => (h.logger.entries.some((e) => /Invalid Form Body|50035/.test(JSON.stringify(e))) ? true : undefined), 'the failure logged');
    expect(generations()).toBe(before);

    const again = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const done = await h.finalReply(again, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).toBe(message.id);
    expect(generations()).toBe(before + 1);
    expect(refusedAsRetried()).toHaveLength(0);
  });
});
