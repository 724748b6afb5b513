import { DEV_API_KEY } from '../../../src/emulator/index.js';
import { say, usd } from '../../../bots/runner/index.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JobRecordStore, type JobRecord } from '../../../bots/discord/JobRecordStore.js';
import { buttonId, buttonsOf, DiscordHarness, drawingReply, privateNoteOf, publicMessagesOf, secondImageAsJpeg } from './harness.js';
import { jobStoreOf, spyOnInstance } from '../../helpers/instance-spy.js';
import { notesOf } from './reply-scene.js';

/** Status lines of a reply, skipping the headline. */
const statusOf = (content: string) => content.split('\n').slice(1).join('\n');

describe('failures become short, kind messages', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    vi.restoreAllMocks();
    await h?.close();
  });

  it('refuses a job over the daily budget privately, in its first answer, before anything is sent, saying when it resets', async () => {
    h = await DiscordHarness.start({ limits: { userDailyUsd: 0.05 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'an expensive castle', quality: 'high' });
    const reply = await privateNoteOf(h, ix);
    expect(h.discord.original(ix)).toBe(reply);
    expect(reply.content).toMatch(/^✋ This job could cost up to \$0\.224, more than the \$0\.050\d* left of your daily budget of \$0\.050\d* .* resets at 00:00 UTC/);
    expect(buttonsOf(reply)).toEqual([]);
    expect(publicMessagesOf(h, ix)).toEqual([]);
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('tells the user a prompt was refused by moderation, without a Retry button', async () => {
    h = await DiscordHarness.start();
    const ix = h.discord.slashCommand('imagine', { prompt: 'something forbidden' });
    const reply = await h.finalReply(ix, (m) => m.content.includes('🚫'));
    expect(statusOf(reply.content)).toBe('🚫 The image service refused this request under its content policy; change the prompt (or the images) and try again.');
    expect(buttonsOf(reply)).toEqual([]);
  });

  it('offers Retry after an upstream failure, and the retry delivers the images in the same message', async () => {
    h = await DiscordHarness.start();
    h.emulator.injectFault('server_error', { count: 1 });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a resilient bridge' });
    const failed = await h.finalReply(ix);
    expect(statusOf(failed.content)).toMatch(/^⏳ The image service had an internal error and did not recover after several tries; try again in /);
    expect(buttonsOf(failed).map((b) => b.label)).toEqual(['Retry']);
    // Every attempt was answered with an error that bills nothing: no charge to tell.
    expect(failed.content).not.toContain('💵');

    const retry = h.discord.clickButton(failed, buttonId(failed, 'Retry'));
    const done = await h.finalReply(retry, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).toBe(failed.id);
    expect(done.attachments).toHaveLength(1);
    expect(h.emulator.requests.filter((r) => r.route === 'generations').map((r) => r.status)).toEqual([500, 200]);
  });

  it('says what a job whose stream broke after it reached the service is charged, under its failure', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    h.emulator.injectFault('reset_mid_stream');
    const ix = h.discord.slashCommand('imagine', { prompt: 'a bridge cut in two', quality: 'low', size: '1024x1024' });
    const failed = await h.finalReply(ix);
    const charged = await h.quotaStore.spentToday(`discord:${ix.user.id}`, Date.now());
    expect(charged).toBeGreaterThan(0);
    expect(statusOf(failed.content).split('\n').at(-1)).toBe(say('en', 'discord.job.charged', { usd: usd(charged) }));
  });

  it('gives a failure that came with paid images their Edit and Delete buttons, so the member can take them down', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    // Two asked, one came: the answer is not the whole result (bad_response), the image that came is shown and charged.
    h.emulator.injectFault('short_result');
    const ix = h.discord.slashCommand('imagine', { prompt: 'a pair of kites, one lost', quality: 'low', size: '1024x1024', count: 2 });
    const failed = await h.finalReply(ix);
    expect(failed.attachments).toHaveLength(1);
    const labels = buttonsOf(failed).map((b) => b.label);
    expect(labels).toContain('Delete');
    expect(labels.some((l) => l?.startsWith('Edit'))).toBe(true);
    expect(labels).not.toContain('Reroll');
  });

  it('keeps the paid images of a failure when its Retry is pressed: the retry runs in a message of its own', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    h.emulator.injectFault('short_result');
    const ix = h.discord.slashCommand('imagine', { prompt: 'a pair of kites, one lost, tried again', quality: 'low', size: '1024x1024', count: 2 });
    const failed = await h.finalReply(ix, (m) => buttonsOf(m).some((b) => b.label === 'Retry'));
    expect(failed.attachments).toHaveLength(1);

    const retry = h.discord.clickButton(failed, buttonId(failed, 'Retry'));
    const done = await h.finalReply(retry, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).not.toBe(failed.id);
    expect(done.attachments).toHaveLength(2);
    // The failure's message still shows the image it was charged for, with its buttons.
    const kept = h.discord.messages.get(failed.id)!;
    expect(kept.attachments.map((a) => a.id)).toEqual(failed.attachments.map((a) => a.id));
    expect(buttonsOf(kept).map((b) => b.label)).toEqual(buttonsOf(failed).map((b) => b.label));
  });

  it('keeps the paid images of a failure whose save for its Edit buttons failed when its Retry is pressed: its record still says the job made them', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    h.emulator.injectFault('short_result');
    spyOnInstance(JobRecordStore.prototype, 'saveOutputs', jobStoreOf(h)).mockRejectedValueOnce(new Error('storage unavailable'));
    const ix = h.discord.slashCommand('imagine', { prompt: 'a pair of kites, one lost, not saved', quality: 'low', size: '1024x1024', count: 2 });
    const failed = await h.finalReply(ix, (m) => buttonsOf(m).some((b) => b.label === 'Retry'));
    expect(failed.attachments).toHaveLength(1);
    const key = buttonId(failed, 'Retry').split(':')[2]!;
    // Marked as its failure was shown: with the one image it made, though none was kept.
    await vi.waitFor(async () => expect(await h.state.store.space<JobRecord>(h.state.spaces.discordJobs).get(key)).toMatchObject({ status: 'failed', made: 1, outputs: [] }));

    const retry = h.discord.clickButton(failed, buttonId(failed, 'Retry'));
    const done = await h.finalReply(retry, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).not.toBe(failed.id);
    expect(h.discord.messages.get(failed.id)!.attachments.map((a) => a.id)).toEqual(failed.attachments.map((a) => a.id));
  });

  it('runs the Retry of a failure that came with no images in the message it is on, whatever files that message carries: the job’s paid images decide, not its attachments', async () => {
    h = await DiscordHarness.start();
    const other = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a picture from another job' }), (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    h.emulator.injectFault('server_error', { count: 1 });
    const failed = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a bridge that failed, no image made' }), (m) => buttonsOf(m).some((b) => b.label === 'Retry'));
    expect(failed.attachments).toEqual([]);

    // The message as the click carries it shows a file that is no image of this job (none was made, none charged).
    const retry = h.discord.clickButton({ ...failed, attachments: other.attachments }, buttonId(failed, 'Retry'));
    const done = await h.finalReply(retry, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).toBe(failed.id);
  });

  it('keeps the copies of a failure’s mixed images for their Edit buttons each named by its own format', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    secondImageAsJpeg(h);
    h.emulator.injectFault('short_result');
    const ix = h.discord.slashCommand('imagine', { prompt: 'a png and a jpeg kept, one lost', quality: 'low', size: '1024x1024', count: 3 });
    const failed = await h.finalReply(ix, (m) => buttonsOf(m).some((b) => b.label === 'Delete'));
    const key = buttonId(failed, 'Delete').split(':')[2]!;
    await vi.waitFor(async () => expect((await h.state.store.space<JobRecord>(h.state.spaces.discordJobs).get(key))?.outputs.map((o) => o.filename)).toEqual(['image-1.png', 'image-2.jpg']));
  });

  it('names and types each image by its own format when an answer mixes them', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    secondImageAsJpeg(h);
    const ix = h.discord.slashCommand('imagine', { prompt: 'a png and a jpeg', quality: 'low', size: '1024x1024', count: 2 });
    const done = await h.finalReply(ix);
    expect(done.attachments.map((a) => [a.filename.replace(/^pictor-.*-(?=\d+\.\w+$)/, ''), a.contentType])).toEqual([
      ['1.png', 'image/png'],
      ['2.jpg', 'image/jpeg'],
    ]);
  });

  it('names and types each image a failure came with by its own format', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    secondImageAsJpeg(h);
    // Three asked, two came: a PNG and a JPEG, shown with the failure.
    h.emulator.injectFault('short_result');
    const ix = h.discord.slashCommand('imagine', { prompt: 'a png and a jpeg, one lost', quality: 'low', size: '1024x1024', count: 3 });
    const failed = await h.finalReply(ix, (m) => buttonsOf(m).some((b) => b.label === 'Delete'));
    expect(failed.attachments.map((a) => [a.filename.replace(/^pictor-.*-(?=\d+\.\w+$)/, ''), a.contentType])).toEqual([
      ['1.png', 'image/png'],
      ['2.jpg', 'image/jpeg'],
    ]);
  });

  it('says the service is busy, with the wait, when it keeps rate-limiting', async () => {
    h = await DiscordHarness.start();
    h.emulator.injectFault('rate_limited', { count: 1, retryAfterMs: 42_000 });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a crowded square' });
    const reply = await h.finalReply(ix);
    expect(statusOf(reply.content)).toBe('⏳ The image service is busy right now; try again in about 42 s.');
    expect(buttonsOf(reply).map((b) => b.label)).toEqual(['Retry']);
  });

  it('absorbs a 429 from Discord on an edit and still delivers the final result', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 300 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a patient turtle' });
    h.discord.rateLimitNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, 400, 2);
    const final = await h.finalReply(ix);
    const patches = h.discord.requests.filter((r) => r.route === 'webhook-message' && r.token === ix.token);
    expect(patches.filter((r) => r.status === 429)).toHaveLength(2);
    expect(final.attachments).toHaveLength(1);
    expect(buttonsOf(final).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
  });

  it('posts the result in the channel, mentioning the user, when the interaction token has expired (50027)', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a very long job' });
    await drawingReply(h, ix);
    h.discord.expireToken(ix.token);
    const posted = await h.discord.waitFor(() => h.discord.channelMessages().find((m) => m.interactionId === undefined && m.attachments.length === 1), 'the channel message');

    expect(posted.content.startsWith(`<@${h.discord.user.id}> 🖌️ **a very long job**`)).toBe(true);
    expect(posted.allowedMentions).toEqual({ parse: [], users: [h.discord.user.id] });
    expect(buttonsOf(posted).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    const refused = h.discord.requests.filter((r) => r.token === ix.token && r.code === 50027);
    expect(refused.length).toBeGreaterThan(0);
  });

  it.each([
    ['on the gateway', false],
    ['over HTTP', true],
  ])('says once (%s) that it can no longer run when Discord answers a request made with the bot token 401 (the token reset while it runs), DISCORD_TOKEN named, never shown, and is no longer healthy', async (_, http) => {
    const fatal: Error[] = [];
    h = await DiscordHarness.start({ http, partialImages: 0, emulator: { latencyMs: 600 }, bot: { onFatal: (error) => fatal.push(error) } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a very long job' });
    await drawingReply(h, ix);
    // Its token expires meanwhile: its result goes to the channel with the bot token, which Discord no longer takes.
    h.discord.expireToken(ix.token);
    h.discord.refuseBotToken();
    await h.discord.waitFor(() => fatal.length > 0 || undefined, 'the bot to say it can no longer run');
    await h.discord.waitFor(() => h.logger.entries.some((e) => e.msg?.startsWith('could not deliver a job result to Discord')) || undefined, 'the result’s delivery to end');
    expect(h.discord.requests.filter((r) => r.status === 401 && r.rawPath.endsWith(`/channels/${h.discord.channelId}/messages`))).toHaveLength(1);
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatchObject({ code: 'validation_error', param: 'DISCORD_TOKEN' });
    expect(h.bot.online()).toBe(false);
    expect(h.logger.text()).not.toContain(h.discord.botToken);
  });

  it('sends the images in messages of their own when Discord refuses the final upload as too large (413), and shrinks one refused alone', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a heavy painting' });
    await drawingReply(h, ix);
    const tooLarge = { status: 413, code: 40005, message: 'Request entity too large' };
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, tooLarge);
    h.discord.failNext({ route: 'webhook-followup', token: ix.token }, tooLarge);
    const final = await h.finalReply(ix);
    expect(final.content).toContain('they follow in separate messages');
    expect(buttonsOf(final).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    const image = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === ix.id && m.id !== final.id && m.attachments.length === 1), 'the image on its own');
    expect(image.attachments[0]!.filename).toMatch(/\.(webp|jpg|jpeg)$/);
    expect(h.discord.requests.filter((r) => r.token === ix.token && r.code === 40005)).toHaveLength(2);
  });

  it.each([
    { lost: 'Discord failed on its answer (500)', fault: (h: DiscordHarness, token: string) => h.discord.failNext({ route: 'webhook-followup', token }, { status: 500, code: 0, message: 'Internal Server Error', applyFirst: true }) },
    { lost: 'the connection was reset before the answer', fault: (h: DiscordHarness, token: string) => h.discord.cutNext({ route: 'webhook-followup', token }, 'after') },
  ])('posts an image Discord made as a follow-up once when $lost, and says in the reply it may be missing', async ({ fault }) => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a heron seen twice' });
    await drawingReply(h, ix);
    // The end's edit is refused as too large, so its image follows it in a follow-up: Discord makes that, and its answer is lost.
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 413, code: 40005, message: 'Request entity too large' });
    fault(h, ix.token);
    const shown = await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'job result shown on Discord'), 'the job result shown');

    const images = [...h.discord.messages.values()].filter((m) => m.interactionId === ix.id && m.attachments.length > 0);
    expect(images).toHaveLength(1);
    expect(h.discord.requests.filter((r) => r.route === 'webhook-followup' && r.token === ix.token && r.files.length > 0)).toHaveLength(1);
    expect(shown.obj).toMatchObject({ delivered: false, firstDelivered: true });
    expect(notesOf(h.discord.original(ix)!.content)).toEqual(['discord.job.upload_separately', 'discord.job.files_may_be_missing']);
  });

  it('says in the reply an image may be missing, and does not post it again, when the connection of its follow-up was cut before Discord made it', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a heron never seen' });
    await drawingReply(h, ix);
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 413, code: 40005, message: 'Request entity too large' });
    h.discord.cutNext({ route: 'webhook-followup', token: ix.token }, 'before');
    const shown = await h.discord.waitFor(() => h.logger.entries.find((e) => e.msg === 'job result shown on Discord'), 'the job result shown');

    // Cut before Discord acted: no message holds the image, and the bot, which cannot tell, sent it once.
    expect([...h.discord.messages.values()].filter((m) => m.interactionId === ix.id && m.attachments.length > 0)).toEqual([]);
    expect(h.discord.requests.filter((r) => r.route === 'webhook-followup' && r.token === ix.token && r.files.length > 0)).toHaveLength(1);
    expect(shown.obj).toMatchObject({ delivered: false });
    expect(notesOf(h.discord.original(ix)!.content)).toEqual(['discord.job.upload_separately', 'discord.job.files_may_be_missing']);
  });

  it('retries a final edit Discord keeps answering with 500, then posts the result in the channel', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a stormy server' });
    await drawingReply(h, ix);
    h.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 500, code: 0, message: 'Internal Server Error', count: 20 });
    const posted = await h.discord.waitFor(
      () => h.discord.channelMessages().find((m) => m.interactionId === undefined && m.attachments.length === 1),
      'the channel message',
      20_000,
    );
    expect(posted.content.startsWith(`<@${h.discord.user.id}> `)).toBe(true);
    expect(buttonsOf(posted).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
  }, 30_000);

  it('sends the result as a follow-up when the user deleted the reply while the job ran', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 600 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a deleted reply' });
    const running = await drawingReply(h, ix);
    h.discord.deleteMessage(running.id);
    const followUp = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => m.interactionId === ix.id && m.attachments.length === 1), 'the follow-up');
    expect(followUp.id).not.toBe(running.id);
    expect(buttonsOf(followUp).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    expect(h.discord.requests.filter((r) => r.token === ix.token && r.code === 10008).length).toBeGreaterThan(0);
    expect(h.discord.requests.filter((r) => r.token === ix.token && r.route === 'webhook-followup' && r.status === 200)).toHaveLength(1);
  });

  it('starts nothing for an interaction Discord no longer knows (10062) and keeps serving others', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    h.discord.failNext({ route: 'interaction-callback' }, { status: 404, code: 10062, message: 'Unknown interaction' });
    const late = h.discord.slashCommand('imagine', { prompt: 'too late' });
    await h.discord.waitFor(() => h.discord.requests.some((r) => r.route === 'interaction-callback' && r.token === late.token && r.code === 10062), 'the refused answer');
    const next = h.discord.slashCommand('imagine', { prompt: 'on time' });
    await h.finalReply(next);
    expect(h.emulator.requests.map((r) => r.fields?.prompt)).toEqual(['on time']);
    expect(late.ack).toBeUndefined();
  });

  it('carries on with the reply when Discord says the interaction was already acknowledged (40060)', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    h.discord.failNext({ route: 'interaction-callback' }, { status: 400, code: 40060, message: 'Interaction has already been acknowledged.', applyFirst: true });
    const ix = h.discord.slashCommand('imagine', { prompt: 'answered twice' });
    const final = await h.finalReply(ix);
    expect(final.attachments).toHaveLength(1);
  });

  it('never shows or logs a secret, and never shows an error’s raw text', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    h.emulator.injectFault('html_error', { count: 1 });
    const failed = h.discord.slashCommand('imagine', { prompt: 'a proxy in the way' });
    await h.finalReply(failed);
    const expired = h.discord.slashCommand('imagine', { prompt: 'after the token' });
    h.discord.expireToken(expired.token);
    await h.discord.waitFor(() => h.discord.channelMessages().some((m) => m.content.includes('after the token')), 'the channel message');
    // Discord refuses the first answer outright: the handler fails, logs, and says something went wrong.
    h.discord.failNext({ route: 'interaction-callback' }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    const broken = h.discord.slashCommand('imagine', { prompt: 'a refused answer' });
    await h.discord.waitFor(() => h.discord.requests.filter((r) => r.token === broken.token).length >= 2, 'the apology');

    const shown = [...h.discord.messages.values()].flatMap((m) => m.history.map((s) => s.content)).join('\n');
    const logged = h.logger.text();
    for (const secret of [h.discord.botToken, DEV_API_KEY, failed.token, expired.token, broken.token]) {
      expect(shown).not.toContain(secret);
      expect(logged).not.toContain(secret);
    }
    expect(shown).not.toMatch(/<html|\bat .+\.(ts|js):\d+|Error:/i);
  });
});
