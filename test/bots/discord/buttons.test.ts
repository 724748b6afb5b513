import { afterEach, describe, expect, it, vi } from 'vitest';
import { COMMAND_NAMES } from '../../../bots/discord/command-words.js';
import { JobRecordStore, type JobRecord } from '../../../bots/discord/JobRecordStore.js';
import { say, words } from '../../../bots/runner/index.js';
import { MAX_KEPT_IMAGE_BYTES } from '../../../bots/state/index.js';
import { editBeingFetched } from '../../helpers/runner-harness.js';
import { buttonId, buttonsOf, cancelShown, DiscordHarness, drawingReply, passTheAnswerBudget, takeTheTimers } from './harness.js';
import { keyOf } from './reply-scene.js';
import { jobStoreOf, spyOnInstance } from '../../helpers/instance-spy.js';

describe('a press while the bots’ state does not answer', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    await h?.close();
  });

  it.each([
    ['in a server', 'guild'],
    ['in a DM, with DMs on', 'dm'],
  ] as const)('is answered privately in time %s, asked to press again, with nothing started', async (_where, place) => {
    h = await DiscordHarness.start({ partialImages: 0, bot: { userInstalls: place === 'dm' } });
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a red kite' }, { place }));
    const hung = spyOnInstance(JobRecordStore.prototype, 'get', jobStoreOf(h)).mockImplementation(() => new Promise(() => {}));
    takeTheTimers();
    const click = h.discord.clickButton(result, buttonId(result, 'Reroll'), { place });
    await h.discord.waitFor(() => hung.mock.calls.length > 0 || undefined, 'the job record read');
    await passTheAnswerBudget();
    const note = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === click.id), 'the private answer', 10_000);
    expect(hung).toHaveBeenCalled();
    expect(click.ack?.type).toBe(4);
    expect(note.flags & 64).toBe(64);
    expect(note.content).toBe(`⚠️ ${say('en-US', 'error.on_my_side')}`);
    expect(h.logger.entries.some((e) => e.msg === 'could not read what a press needs; told its member privately')).toBe(true);
    expect(h.emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(1);
    expect(h.runner.activeJobs()).toHaveLength(0);
  });
});

describe('buttons keep working, restarts included', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    vi.restoreAllMocks();
    await h?.close();
  });

  /**
   * A job left running after it completed, whose runner forgot it: its result reached neither its reply nor the channel
   * and its view's mark failed (its record kept running, with its final), then its runner no longer knows it (past the
   * finished jobs it keeps).
   */
  async function leftRunningForgotten(prompt: string) {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const ix = h.discord.slashCommand('imagine', { prompt });
    const running = await drawingReply(h, ix);
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 403, code: 50013, message: 'Missing Permissions' });
    const markEnded = spyOnInstance(JobRecordStore.prototype, 'markEnded', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable'));
    const records = h.state.store.space<JobRecord>(h.state.spaces.discordJobs);
    const key = buttonId(running, 'Cancel').split(':')[2]!;
    await vi.waitFor(async () => expect(await records.get(key)).toMatchObject({ status: 'running', endRecorded: true, final: { type: 'completed' } }), { timeout: 15_000 });
    vi.spyOn(h.runner, 'get').mockReturnValue(undefined);
    return { running, records, key, markEnded };
  }

  it('rerolls a job after the bot restarted, with a new client and runner on the same data folder', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const first = h.discord.slashCommand('imagine', { prompt: 'a red kite', size: '1536x1024', quality: 'low' });
    const result = await h.finalReply(first);
    const reroll = buttonId(result, 'Reroll');

    await h.restart();
    await h.discord.waitFor(() => h.discord.gatewayStats.identifies === 2, 'the new bot to identify');
    const other = h.discord.newUser('grace');
    const click = h.discord.clickButton(result, reroll, { user: other });
    const rerolled = await h.finalReply(click);

    expect(click.ack?.type).toBe(5); // a new reply, the first result stays
    expect(rerolled.id).not.toBe(result.id);
    expect(rerolled.attachments).toHaveLength(1);
    const sent = h.emulator.requests.filter((r) => r.route === 'generations');
    expect(sent).toHaveLength(2);
    expect(sent[1]!.fields).toMatchObject({ prompt: 'a red kite', size: '1536x1024', quality: 'low' });
    // The one who clicked pays for the reroll.
    expect(await h.quotaStore.spentToday(`discord:${other.id}`, Date.now())).toBeCloseTo(0.0053, 6);
  });

  it('tells the member privately that a job whose prompt its member erased while it ran cannot run again, on its Reroll, and sends nothing to the service', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    // The service answers only once the forget resolved: the job is running all through it, however long it takes.
    let forgot!: () => void;
    const forgetDone = new Promise<void>((resolve) => (forgot = resolve));
    const answer = h.emulator.fetch;
    const asked = vi.spyOn(h.emulator, 'fetch').mockImplementation(async (input, init) => {
      if (input instanceof Request && input.method === 'POST') await forgetDone;
      return answer(input, init);
    });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a lantern forgotten while drawn' });
    await drawingReply(h, ix);
    await h.runner.history!.forgetEverywhere({ platform: 'discord', userId: ix.user.id, channelId: '', scopeId: h.discord.guildId });
    forgot();
    const result = await h.finalReply(ix);
    expect(asked).toHaveBeenCalled();

    const click = h.discord.clickButton(result, buttonId(result, 'Reroll'));
    const note = await h.discord.waitFor(() => h.discord.original(click), 'the note');
    expect(note.flags & 64).toBe(64);
    expect(note.content).toBe(`✋ ${say('en-US', 'job.prompt_erased')}`);
    expect(h.emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(1);
    expect(h.runner.activeJobs()).toHaveLength(0);
  });

  it('rerolls an edit with the same input images, saved in the data folder', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const { makeImage } = await import('../../helpers/images.js');
    const image1 = h.discord.hostFile({ filename: 'dog.png', bytes: await makeImage('png', 20, 20) });
    const first = h.discord.slashCommand('edit', { prompt: 'give the dog a scarf', image1 });
    const result = await h.finalReply(first);
    await h.restart();
    const click = h.discord.clickButton(result, buttonId(result, 'Reroll'));
    await h.finalReply(click);
    const edits = h.emulator.requests.filter((r) => r.route === 'edits');
    expect(edits).toHaveLength(2);
    expect(Buffer.from(edits[1]!.images[0]!.bytes!).equals(Buffer.from(edits[0]!.images[0]!.bytes!))).toBe(true);
    expect(edits[1]!.images[0]!.filename).toBe('dog.png');
  });

  it('refuses the Reroll of an edit whose kept images are gone privately, as its first answer: nothing posted in public, nothing sent to the service', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const { makeImage } = await import('../../helpers/images.js');
    const image1 = h.discord.hostFile({ filename: 'dog.png', bytes: await makeImage('png', 20, 20) });
    const result = await h.finalReply(h.discord.slashCommand('edit', { prompt: 'give the dog a scarf', image1 }));
    // Its input images lapsed (past their day, or pushed out by newer ones); its record still names them.
    const key = buttonId(result, 'Reroll').split(':')[2]!;
    const record = await h.state.store.space<JobRecord>(h.state.spaces.discordJobs).get(key);
    expect(record!.inputs).toHaveLength(1);
    const images = h.state.store.space<Buffer>(h.state.spaces.discordImages);
    for (const img of record!.inputs) await images.delete(img.file);

    const click = h.discord.clickButton(result, buttonId(result, 'Reroll'));
    const note = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === click.id && (m.flags & 64) === 64), 'the private answer');
    expect(click.ack?.type).toBe(4);
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.too_old', COMMAND_NAMES)}`);
    expect([...h.discord.messages.values()].filter((m) => m.interactionId === click.id)).toEqual([note]);
    expect(h.discord.requests.filter((r) => r.token === click.token && r.method === 'DELETE')).toEqual([]);
    expect(h.emulator.requests.filter((r) => r.route === 'edits')).toHaveLength(1);
    expect(h.runner.activeJobs()).toHaveLength(0);
  });

  it('refuses the Reroll of an edit privately, before reading its kept images, when they would take the queue past its bound for input images', async () => {
    const { makeImage } = await import('../../helpers/images.js');
    const bytes = await makeImage('png', 20, 20);
    h = await DiscordHarness.start({ partialImages: 0, maxQueuedInputBytes: bytes.length + 100 });
    const image1 = h.discord.hostFile({ filename: 'dog.png', bytes });
    const result = await h.finalReply(h.discord.slashCommand('edit', { prompt: 'give the dog a scarf', image1 }));
    // Another edit's images fill the queue's room while they download.
    const other = editBeingFetched(h.runner, { platform: 'discord', userId: 'someone', channelId: 'c', scopeId: 'g' }, 200);
    expect(await other.admitted).toBeUndefined();

    const click = h.discord.clickButton(result, buttonId(result, 'Reroll'));
    const note = await h.discord.waitFor(() => h.discord.original(click), 'the note');
    other.giveUp();
    await other.handle;

    expect(note.flags & 64).toBe(64);
    expect(note.content).toContain('The bot is busy');
    expect(h.emulator.requests.filter((r) => r.route === 'edits')).toHaveLength(1);
  });

  it('cancels a running job from its Cancel button', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a slow painting' });
    const running = await drawingReply(h, ix);
    // "Drawing…" is shown before the request leaves; the charge below is of a request the service received.
    await h.discord.waitFor(() => h.emulator.requests.length > 0 || undefined, 'the request at the service');
    const click = h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const cancelled = await h.finalReply(ix);

    expect(click.ack?.type).toBe(6);
    expect(cancelled.content.split('\n')[1]).toBe(`✖️ Cancelled by <@${h.discord.user.id}>.`);
    // Sent, nothing came back: its estimate, as the ledger charges it.
    expect(await h.quotaStore.spentToday(`discord:${ix.user.id}`, Date.now())).toBeCloseTo(0.224, 2);
    expect(cancelled.content.split('\n')[2]).toBe(`💵 Charged $0.224: the request had reached the image service.`);
    expect(buttonsOf(cancelled).map((b) => b.label)).toEqual(['Retry']);
    expect(cancelled.attachments).toEqual([]);
    expect(h.emulator.stats().imagesGenerated).toBe(0);
  });

  it('offers no Retry on a job its member cancels after their forget erased its prompt while it ran: nothing is left to send again', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a slow painting forgotten while drawn' });
    const running = await drawingReply(h, ix);
    await h.runner.history!.forgetEverywhere({ platform: 'discord', userId: ix.user.id, channelId: '', scopeId: h.discord.guildId });
    h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const cancelled = await h.finalReply(ix, (m) => m.content.includes('Cancelled'));

    expect(cancelled.content.split('\n')[1]).toBe(`✖️ Cancelled by <@${h.discord.user.id}>.`);
    expect(buttonsOf(cancelled)).toEqual([]);
  });

  it('does not let another member cancel someone’s job, but lets an admin role', async () => {
    const adminRole = '123456789012345678';
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 }, bot: { adminRoleIds: [adminRole] } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a slow fresco' });
    const running = await drawingReply(h, ix);

    const stranger = h.discord.newUser('mallory');
    const denied = h.discord.clickButton(running, buttonId(running, 'Cancel'), { user: stranger });
    const note = await h.discord.waitFor(() => h.discord.original(denied), 'the refusal');
    expect(note.flags & 64).toBe(64);
    expect(note.content).toBe(`✋ Only <@${h.discord.user.id}> or an admin can cancel this job.`);
    expect(h.runner.activeJobs()).toHaveLength(1);

    const admin = h.discord.newUser('root');
    h.discord.clickButton(running, buttonId(running, 'Cancel'), { user: admin, roles: [adminRole] });
    const cancelled = await h.finalReply(ix);
    expect(cancelled.content).toContain(`Cancelled by <@${admin.id}>`);
  });

  it('tells the member privately that another instance draws the job on a Cancel of a job running on a replica that cannot be reached, its message unchanged', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a fresco drawn elsewhere' });
    const running = await drawingReply(h, ix);
    // As on a replica whose runner does not know the job, held by another live process whose notices do not arrive.
    vi.spyOn(h.runner, 'get').mockReturnValue(undefined);
    const runsElsewhere = spyOnInstance(JobRecordStore.prototype, 'runsElsewhere', jobStoreOf(h)).mockResolvedValue(true);

    const click = h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const note = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === click.id && (m.flags & 64) === 64), 'the private answer');
    expect(runsElsewhere).toHaveBeenCalled();
    expect(click.ack?.type).toBe(6);
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.runs_elsewhere')}`);
    expect(h.discord.messages.get(running.id)!.content).toContain('Drawing');
    expect(h.runner.activeJobs()).toHaveLength(1);
  });

  it('tells the job’s reply when the bot restarts, and runs it again in the same message on Retry', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'an unlucky job' });
    const running = await drawingReply(h, ix);
    await h.restart();
    const stopped = await h.finalReply(ix);
    expect(keyOf(stopped.content.split('\n')[1]!)).toBe('discord.job.restarted_before_done');

    // A Cancel button still shown somewhere (a client that did not refresh) gets a private note.
    const late = h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const note = await h.discord.waitFor(() => h.discord.original(late), 'the note');
    expect(note.content).toBe('✋ This job has already finished.');

    h.emulator.configure({ latencyMs: 10 });
    const retry = h.discord.clickButton(stopped, buttonId(stopped, 'Retry'));
    const done = await h.finalReply(retry, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(retry.ack?.type).toBe(6);
    expect(done.id).toBe(running.id); // Retry reuses the message
    expect(buttonsOf(done).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
  });

  it('shows the kept result, not “stopped” with Retry, on a Cancel of a job left running whose runner forgot it after it completed (its result unshown, its mark failed)', async () => {
    const { running, records, key } = await leftRunningForgotten('a paid image its reply never showed');

    const { click, shown } = await cancelShown(h, running);
    expect(click.ack?.type).toBe(6);
    expect(buttonsOf(shown).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    expect(shown.attachments).toHaveLength(1);
    await vi.waitFor(async () => expect(await records.get(key)).toMatchObject({ status: 'completed' }), { timeout: 15_000 });
  });

  it('shows the kept result on a Cancel of such a job when the claim of what gone processes left fails (Redis unreachable), not an error in the job’s message', async () => {
    const { running, records, key } = await leftRunningForgotten('a paid image shown whatever the claim');
    const claim = spyOnInstance(JobRecordStore.prototype, 'claimInterrupted', jobStoreOf(h)).mockRejectedValueOnce(new Error('connect ECONNREFUSED 127.0.0.1:6379'));

    const { shown } = await cancelShown(h, running);
    expect(claim).toHaveBeenCalled();
    expect(buttonsOf(shown).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    expect(shown.attachments).toHaveLength(1);
    await vi.waitFor(async () => expect(await records.get(key)).toMatchObject({ status: 'completed' }), { timeout: 15_000 });
    expect(h.logger.entries.some((e) => e.level === 'warn' && e.msg?.startsWith('could not claim what gone processes left'))).toBe(true);
  });

  it('keeps the result for whoever shows it next when a Cancel of such a job cannot post it: the record left running with its final, the member told privately to press again', async () => {
    const { running, records, key } = await leftRunningForgotten('a paid image no message could show');
    // Neither the clicked message's edit nor the channel post reaches Discord.
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH' }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 403, code: 50013, message: 'Missing Permissions' });

    const click = h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const note = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === click.id && (m.flags & 64) === 64), 'the private answer');
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.not_updated')}`);
    expect(h.discord.messages.get(running.id)!.content).toContain('Drawing');
    expect(await records.get(key)).toMatchObject({ status: 'running', endRecorded: true, final: { type: 'completed' } });
  });

  it('tells the member privately that the job’s end is being shown, not that it finished, on a Cancel of such a job another live process claimed meanwhile', async () => {
    const { running, records, key } = await leftRunningForgotten('a paid image another process shows');
    // Held by none when pressed; claimed by a replica's sweep before this Cancel's own claim.
    spyOnInstance(JobRecordStore.prototype, 'runsElsewhere', jobStoreOf(h)).mockResolvedValueOnce(false).mockResolvedValueOnce(true);

    const click = h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const note = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === click.id && (m.flags & 64) === 64), 'the private answer');
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.being_shown')}`);
    expect(h.discord.messages.get(running.id)!.content).toContain('Drawing');
    expect(await records.get(key)).toMatchObject({ status: 'running' });
  });

  it('tells the member privately to press again, not that it finished, on a Cancel of a job a gone process left when the claim of what it left fails (no sweep runs before the next start); pressed again, it shows the job stopped', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a job its process left, its claim failing' });
    const running = await drawingReply(h, ix);
    // The start's sweep and the Cancel's claim fail alike (a data folder that cannot be read for a while).
    const claim = spyOnInstance(JobRecordStore.prototype, 'claimInterrupted', jobStoreOf(h)).mockRejectedValue(new Error('EIO: i/o error, scandir'));
    await h.restart({ crash: true });
    await vi.waitFor(() => expect(claim).toHaveBeenCalled(), { timeout: 15_000 });

    const first = h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const note = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === first.id && (m.flags & 64) === 64), 'the private answer');
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.not_updated')}`);
    expect(h.discord.messages.get(running.id)!.content).toContain('Drawing');

    claim.mockRestore();
    const { shown: stopped } = await cancelShown(h, running);
    expect(stopped.content).toContain(say('en-US', 'discord.job.interrupted'));
  });

  it('shows “stopped” on a Cancel of a job a gone process left whose mark fails every try, keeping it as shown: the member gets no error, and the next start marks it ended saying nothing', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a job its process left, its mark failing' });
    const running = await drawingReply(h, ix);
    const key = buttonId(running, 'Cancel').split(':')[2]!;
    // The start's sweep claims nothing (its storage failing for a while): the Cancel takes the job.
    const claim = spyOnInstance(JobRecordStore.prototype, 'claimInterrupted', jobStoreOf(h)).mockRejectedValue(new Error('EIO: i/o error, scandir'));
    await h.restart({ crash: true });
    await vi.waitFor(() => expect(claim).toHaveBeenCalled(), { timeout: 15_000 });
    claim.mockRestore();
    const markEnded = spyOnInstance(JobRecordStore.prototype, 'markEnded', jobStoreOf(h)).mockRejectedValue(new Error('storage unavailable'));

    const { click, shown: stopped } = await cancelShown(h, running);
    expect(click.ack?.type).toBe(6);
    expect(stopped.content).toContain(say('en-US', 'discord.job.interrupted'));
    await vi.waitFor(async () => expect(await h.state.store.space<JobRecord>(h.state.spaces.discordJobs).get(key)).toMatchObject({ status: 'running', final: { type: 'failed', shown: true } }), { timeout: 15_000 });

    markEnded.mockRestore();
    const messages = h.discord.messages.size;
    await h.restart();
    await vi.waitFor(async () => expect(await h.state.store.space<JobRecord>(h.state.spaces.discordJobs).get(key)).toMatchObject({ status: 'failed' }), { timeout: 15_000 });
    expect(h.discord.messages.get(running.id)!.content).toBe(stopped.content);
    expect(h.discord.messages.size).toBe(messages);
  });

  it('shows the kept result in the message clicked on a Cancel of such a job left older than its kept images: not left “Drawing…”, and no Retry that would charge again', async () => {
    const { running, records, key } = await leftRunningForgotten('a paid image never shown');
    // Two days later: older than its kept images.
    const longAgo = Date.now() - 2 * 24 * 60 * 60_000;
    await records.update(key, (r) => r && { ...r, createdAt: longAgo, ...(r.reply && { reply: { ...r.reply, issuedAt: longAgo } }) });

    const { click, shown } = await cancelShown(h, running);
    expect(click.ack?.type).toBe(6);
    expect(buttonsOf(shown).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    await vi.waitFor(async () => expect(await records.get(key)).toMatchObject({ status: 'completed' }), { timeout: 15_000 });
  });

  it('shows the failure on a Cancel of a failed job its runner forgot whose ended mark fails again, and keeps it as shown: the next start marks it ended saying nothing', async () => {
    const { running, records, key, markEnded } = await leftRunningForgotten('a job whose end could not be marked');
    // A failure its view could not show nor mark, and the storage fails the Cancel's mark too.
    await records.update(key, (r) => r && { ...r, final: { type: 'failed', code: 'rate_limited', words: words('failure.rate_limited', { known: 'no' }), retryable: true } });
    markEnded.mockRejectedValue(new Error('storage unavailable'));

    const { click, shown } = await cancelShown(h, running);
    expect(click.ack?.type).toBe(6);
    expect(shown.content).toContain(say('en-US', 'failure.rate_limited', { known: 'no' }));
    await vi.waitFor(async () => expect(await records.get(key)).toMatchObject({ status: 'running', final: { type: 'failed', shown: true } }), { timeout: 15_000 });

    markEnded.mockRestore();
    const messages = h.discord.messages.size;
    await h.restart();
    await vi.waitFor(async () => expect(await h.state.store.space<JobRecord>(h.state.spaces.discordJobs).get(key)).toMatchObject({ status: 'failed' }), { timeout: 15_000 });
    expect(h.discord.messages.get(running.id)!.content).toBe(shown.content);
    expect(h.discord.messages.size).toBe(messages);
  });

  it('shows the failure in the message clicked on a Cancel of a job its runner forgot whose failure was kept as shown (posted as a new message): not left “Drawing…”', async () => {
    const { running, records, key } = await leftRunningForgotten('a job whose failure went out as a new message');
    // Its failure (which came with no image) went to the channel (its token expired) and was kept as shown; the job's own
    // message still says "Drawing…".
    await records.update(key, (r) => r && { ...r, outputs: [], made: undefined, final: { type: 'failed', code: 'rate_limited', words: words('failure.rate_limited', { known: 'no' }), retryable: true, shown: true } });

    const { click, shown } = await cancelShown(h, running);
    expect(click.ack?.type).toBe(6);
    expect(shown.content).toContain(say('en-US', 'failure.rate_limited', { known: 'no' }));
    expect(buttonsOf(shown).map((b) => b.label)).toEqual(['Retry']);
    await vi.waitFor(async () => expect(await records.get(key)).toMatchObject({ status: 'failed' }), { timeout: 15_000 });
  });

  it('marks a job lost to a crash as interrupted when the bot starts again, with Retry in the same message', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a job the crash ate' });
    const running = await drawingReply(h, ix);
    await h.restart({ crash: true });

    const swept = await h.discord.waitFor(() => {
      const m = h.discord.messages.get(running.id)!;
      return m.content.includes('restarted') ? m : undefined;
    }, 'the sweep');
    expect(keyOf(swept.content.split('\n')[1]!)).toBe('discord.job.interrupted');
    expect(buttonsOf(swept).map((b) => b.label)).toEqual(['Retry']);
    expect(h.discord.channelMessages().filter((m) => m.content.includes('restarted'))).toHaveLength(1);
  });

  it('marks a job lost to a crash with a channel message mentioning its requester once the reply token has expired', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'an old job the crash ate' });
    const running = await drawingReply(h, ix);
    h.discord.expireToken(ix.token);
    await h.restart({ crash: true });

    const note = await h.discord.waitFor(
      () => h.discord.channelMessages().find((m) => m.id !== running.id && m.content.includes('restarted')),
      'the channel message',
    );
    expect(note.content.startsWith(`<@${h.discord.user.id}> `)).toBe(true);
    expect(buttonsOf(note).map((b) => b.label)).toEqual(['Retry']);
  });

  /**
   * A result no message could show: its reply's edit refused, and the server channel refusing it (50013, Missing
   * Permissions). The job is marked ended all the same; its reply keeps its progress and Cancel.
   */
  async function resultNoChannelTook(prompt: string, options: Parameters<typeof DiscordHarness.start>[0] = {}) {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 }, ...options });
    const ix = h.discord.slashCommand('imagine', { prompt });
    const running = await drawingReply(h, ix);
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 403, code: 50013, message: 'Missing Permissions' });
    const records = h.state.store.space<JobRecord>(h.state.spaces.discordJobs);
    const key = buttonId(running, 'Cancel').split(':')[2]!;
    await vi.waitFor(async () => expect(await records.get(key)).toMatchObject({ status: 'completed', endRecorded: true }), { timeout: 15_000 });
    await h.restart();
    return { ix, running };
  }

  it('shows its member privately, on a Cancel of a result no message could show (the server channel refusing it: 50013), the result it kept: its images and buttons, the reply left as it was', async () => {
    const { running } = await resultNoChannelTook('a result no channel would take');
    const publicBefore = [...h.discord.messages.values()].filter((m) => (m.flags & 64) === 0).length;

    const click = h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const shown = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === click.id && (m.flags & 64) === 64 && m.attachments.length > 0), 'the private result');
    expect(click.ack?.type).toBe(5);
    expect(shown.content).toContain('a result no channel would take');
    expect(shown.attachments).toHaveLength(1);
    expect(buttonsOf(shown).map((b) => b.label)).toContain('Reroll');
    expect(buttonsOf(shown).map((b) => b.label)).not.toContain('Cancel');
    expect(h.discord.messages.get(running.id)!.content).toContain('Drawing');
    expect([...h.discord.messages.values()].filter((m) => (m.flags & 64) === 0)).toHaveLength(publicBefore);
    expect(h.emulator.requests.filter((r) => r.route === 'generations')).toHaveLength(1);
    const history = await h.finalReply(h.discord.slashCommand('imagine-history', {}));
    expect(history.content).toContain('a result no channel would take');
  });

  it('shows its member privately, on a second Cancel, the cancellation no message could show (its reply’s edit refused, the channel refusing it: 50013)', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a cancellation no channel would take' });
    const running = await drawingReply(h, ix);
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 403, code: 50013, message: 'Missing Permissions' });
    const records = h.state.store.space<JobRecord>(h.state.spaces.discordJobs);
    const key = buttonId(running, 'Cancel').split(':')[2]!;
    h.discord.clickButton(running, buttonId(running, 'Cancel'));
    await vi.waitFor(async () => expect(await records.get(key)).toMatchObject({ status: 'cancelled', endRecorded: true }), { timeout: 15_000 });
    expect(h.discord.messages.get(running.id)!.content).toContain('Drawing');

    const again = h.discord.clickButton(running, buttonId(running, 'Cancel'));
    const shown = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === again.id && (m.flags & 64) === 64 && m.content !== ''), 'the private end');
    expect(shown.content.split('\n')[1]).toBe(`✖️ Cancelled by <@${h.discord.user.id}>.`);
    expect(buttonsOf(shown).map((b) => b.label)).toEqual(['Retry']);
    expect(h.discord.messages.get(running.id)!.content).toContain('Drawing');
  });

  it('refuses another member’s Cancel of a result no message could show, privately, showing them nothing of it (not_requester), and lets an admin role see it', async () => {
    const adminRole = '123456789012345678';
    const { running } = await resultNoChannelTook('a result kept for its member', { bot: { adminRoleIds: [adminRole] } });

    const stranger = h.discord.newUser('mallory');
    const denied = h.discord.clickButton(running, buttonId(running, 'Cancel'), { user: stranger });
    const note = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === denied.id && m.content !== ''), 'the refusal');
    expect(note.flags & 64).toBe(64);
    expect(note.attachments).toEqual([]);
    expect(note.content).not.toContain('a result kept for its member');
    expect(h.logger.entries.some((e) => (e.obj as { code?: string; userId?: string }).code === 'not_requester' && (e.obj as { userId?: string }).userId === stranger.id)).toBe(true);

    const admin = h.discord.newUser('root');
    const allowed = h.discord.clickButton(running, buttonId(running, 'Cancel'), { user: admin, roles: [adminRole] });
    const shown = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === allowed.id && (m.flags & 64) === 64 && m.attachments.length > 0), 'the private result');
    expect(shown.content).toContain('a result kept for its member');
  });

  it('leaves a job lost to a crash whose “stopped” message could not be posted to the next start, which shows it', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a job whose end no message showed' });
    const running = await drawingReply(h, ix);
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 403, code: 50013, message: 'Missing Permissions' });
    await h.restart({ crash: true });
    await vi.waitFor(() => expect(h.logger.entries.some((e) => e.level === 'warn' && e.msg?.startsWith('could not post that a job was interrupted by the last stop'))).toBe(true), { timeout: 15_000 });
    expect(h.logger.entries.some((e) => e.msg === 'marked a job interrupted by the last stop')).toBe(false);

    await h.restart({ crash: true });
    const swept = await h.discord.waitFor(() => {
      const m = h.discord.messages.get(running.id)!;
      return m.content.includes('restarted') ? m : undefined;
    }, 'the next start to show it');
    expect(buttonsOf(swept).map((b) => b.label)).toEqual(['Retry']);
  });

  it('marks ended, saying nothing, a job lost to a crash whose “stopped” message is older than its kept images (a sweep’s post of it failed since: sweptAt), instead of trying it at every start', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 20_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a job whose stop no channel would take' });
    const running = await drawingReply(h, ix);
    const records = h.state.store.space<JobRecord>(h.state.spaces.discordJobs);
    const key = buttonId(running, 'Cancel').split(':')[2]!;
    const twoDaysAgo = Date.now() - 2 * 24 * 3_600_000;
    await records.update(key, (record) => record && { ...record, createdAt: twoDaysAgo, reply: record.reply && { ...record.reply, issuedAt: twoDaysAgo }, sweptAt: twoDaysAgo + 60_000 });
    const messages = h.discord.messages.size;
    await h.restart({ crash: true });

    await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg?.startsWith('marked ended, saying nothing')), 'the sweep marking the job ended');
    expect(await h.state.store.space<JobRecord>(h.state.spaces.discordJobs).get(key)).toMatchObject({ status: 'failed' });
    expect(h.discord.messages.get(running.id)!.content).toBe(running.content);
    expect(h.discord.messages.size).toBe(messages);
  });

  it('opens, from each Edit of a result, the image it names when one before it could not be kept: Edit 3 the third, Edit 2 “too old”', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    // The second of the three images is too large to keep for its buttons (the others are kept).
    const saveOutputs = JobRecordStore.prototype.saveOutputs;
    spyOnInstance(JobRecordStore.prototype, 'saveOutputs', jobStoreOf(h)).mockImplementation(function (this: JobRecordStore, key, images, ...rest) {
      return saveOutputs.call(this, key, images.map((image, i) => (i === 1 ? Buffer.alloc(MAX_KEPT_IMAGE_BYTES + 1) : image)), ...rest);
    });
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'three images', quality: 'low', count: 3 }));
    expect(buttonsOf(result).map((b) => b.label)).toEqual(['Reroll', 'Edit 1', 'Edit 2', 'Edit 3', 'Delete']);

    const tooOld = h.discord.clickButton(result, buttonId(result, 'Edit 2'));
    expect((await h.discord.waitFor(() => h.discord.original(tooOld), 'the note')).content).toContain('too old');
    const click = h.discord.clickButton(result, buttonId(result, 'Edit 3'));
    await h.discord.waitFor(() => click.modal, 'the edit modal');
    expect(click.modal!.title).toBe('Edit image 3');
    await h.finalReply(h.discord.submitModal(click, { prompt: 'add a storm' }));
    const edit = h.emulator.requests.filter((r) => r.route === 'edits').at(-1)!;
    expect(Buffer.from(edit.images[0]!.bytes!).equals(h.discord.fileBytes(result.attachments[2]!))).toBe(true);
  });

  it('answers a button of a job the store no longer has with a short private note', async () => {
    h = await DiscordHarness.start();
    const message = h.discord.postUserMessage({ content: 'old' });
    message.components = [{ type: 1, components: [{ type: 2, style: 1, label: 'Reroll', custom_id: 'pictor:reroll:gone1234' }] }];
    const click = h.discord.clickButton(message, 'pictor:reroll:gone1234');
    const note = await h.discord.waitFor(() => h.discord.original(click), 'the note');
    expect(note.flags & 64).toBe(64);
    expect(note.content).toContain('too old');
    expect(h.emulator.requests).toHaveLength(0);
  });
});
