import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { say, usd } from '../../../bots/runner/index.js';
import { sniffImageType } from '../../../src/index.js';
import { buttonsOf, visibleText } from '../../fakes/slack/slack-objects.js';
import { RecordingLogger } from '../discord/harness.js';
import { finishedActions, finishedJob, imageShares, jobMessages, previewByPreview, startHarness, statusOf, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('/imagine over HTTP', () => {
  it('posts a queued message, updates it in place as the job starts and previews arrive, and shares the final image beside it with the prompt and cost', async () => {
    // Each partial image comes once the message shows the one before it: a preview still waiting to be shown is dropped
    // when the next update comes (the latest wins), and a loaded machine is slower than any latency chosen here.
    h = await startHarness({ emulator: { latencyMs: 1200 }, holdEvent: previewByPreview('C0ART') });
    const { fake } = h;
    const ack = await fake.command({ command: '/imagine', text: 'a lighthouse at dusk --quality low', channel: 'C0ART' });
    expect(ack.status).toBe(200);

    const message = await finishedJob(fake, 'C0ART');
    // The first version of the message said the job was queued, with its position.
    expect(fake.callsOf('chat.postMessage')[0]!.args.blocks).toBeDefined();
    const firstStatus = JSON.stringify(fake.callsOf('chat.postMessage')[0]!.args.blocks);
    expect(firstStatus).toMatch(/Queued|Drawing/);
    // Then it was updated in place: drawing, previews, done.
    const statuses = message.edits.map((e) => visibleText(e));
    expect(statuses.some((s) => s.includes('Drawing'))).toBe(true);
    expect(statuses.some((s) => /preview \d is in the thread/.test(s))).toBe(true);
    expect(statusOf(message)).toMatch(/^:white_check_mark: Done · 1024x1024 · low · png · \$0\.0064 · ([\d.]+ s|\d+ ms) · the image is posted below, with Reroll, Edit and Delete$/);
    // Its buttons are not on the message (no stale Cancel, no second set): they follow the image, in a message of their own.
    expect(buttonsOf(message)).toEqual([]);
    const actions = await finishedActions(fake, 'C0ART');
    expect(buttonsOf(actions).map((b) => b.actionId)).toEqual(['pictor_reroll', 'pictor_edit', 'pictor_delete']);
    expect(visibleText(actions)).toContain('“a lighthouse at dusk”');
    expect(visibleText(actions)).not.toContain('<@');

    // Previews are files in the message's thread; the final image is shared in the channel, captioned so it reads on its own.
    const thread = fake.replies('C0ART', message.ts);
    const previews = thread.filter((m) => m.text.startsWith('Preview'));
    expect(previews.length).toBeGreaterThanOrEqual(1);
    expect(thread.every((m) => m.text.startsWith('Preview'))).toBe(true);
    const final = imageShares(fake, 'C0ART').at(-1)!;
    expect(fake.topLevel('C0ART').map((m) => m.ts)).toEqual([message.ts, final.ts, actions.ts]);
    expect(final.text).toMatch(/^<@U0ALICE> here is your image: “a lighthouse at dusk” {2}`--quality low`\n1024x1024 · low · png · \$0\.0064 · ([\d.]+ s|\d+ ms)$/);
    expect(final.files).toHaveLength(1);
    expect(sniffImageType(final.files![0]!.bytes!)).toBe('png');

    // Uploaded the Slack way: get an upload URL, send the bytes, complete into the channel (previews: into its thread).
    const uploads = fake.callsOf('files.completeUploadExternal').filter((c) => c.ok);
    expect(uploads.every((c) => c.args.channel_id === 'C0ART')).toBe(true);
    expect(uploads.filter((c) => c.args.thread_ts !== message.ts).map((c) => c.args.initial_comment)).toEqual([final.text]);
    expect(fake.callsOf('files.getUploadURLExternal').filter((c) => c.ok).length).toBe(fake.uploads.length);
    // The upload URL is pre-signed: the bot token does not go with the bytes.
    expect(fake.uploads.every((u) => u.authorization === undefined && u.bytes > 0)).toBe(true);

    // The prompt reached the image service as asked, and Slack never had to refuse a write.
    const sent = h.emulator.requests.filter((r) => r.path === '/v1/images/generations');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.fields).toMatchObject({ prompt: 'a lighthouse at dusk', quality: 'low', stream: true });
    expect(fake.rejectedWrites).toEqual([]);
  });

  it('refuses a request with a forged signature, and nothing is posted or spent', async () => {
    h = await startHarness();
    const ack = await h.fake.command({ command: '/imagine', text: 'a cat' }, { secret: 'not-the-signing-secret' });
    expect(ack.status).toBe(401);
    const tampered = await h.fake.command({ command: '/imagine', text: 'a cat' }, { signature: 'v0=0000' });
    expect(tampered.status).toBe(401);
    expect(h.fake.messages).toEqual([]);
    expect(h.emulator.requests).toEqual([]);
  });

  it('refuses a correctly signed request whose timestamp is more than five minutes old', async () => {
    h = await startHarness();
    const ack = await h.fake.command({ command: '/imagine', text: 'a cat' }, { timestampSec: Math.floor(Date.now() / 1000) - 6 * 60 });
    expect(ack.status).toBe(401);
    expect(h.fake.messages).toEqual([]);
    expect(h.emulator.requests).toEqual([]);
  });

  it('runs a correctly signed request once: the same request sent again within five minutes is dropped', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 10 }, bot: { logger } });
    const ack = await h.fake.command({ command: '/imagine', text: 'a cat --quality low', channel: 'C0REPLAY' });
    expect(ack.status).toBe(200);
    await finishedJob(h.fake, 'C0REPLAY');
    const replayed = await h.fake.replayLastDelivery();
    expect(replayed.status).toBe(200);
    await h.fake.waitFor(() => logger.entries.find((e) => e.msg === 'refused a replayed Slack request'), 'the replay refused');
    expect(h.emulator.requests.filter((r) => r.path === '/v1/images/generations')).toHaveLength(1);
    expect(jobMessages(h.fake, 'C0REPLAY')).toHaveLength(1);
  });

  it('refuses a correctly signed request dated ten minutes in the future', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ bot: { logger } });
    await h.fake.command({ command: '/imagine', text: 'a cat from the future' }, { timestampSec: Math.floor(Date.now() / 1000) + 10 * 60 });
    await h.fake.waitFor(() => logger.entries.find((e) => e.msg === 'refused a Slack request dated in the future'), 'the request refused');
    expect(h.fake.messages).toEqual([]);
    expect(h.emulator.requests).toEqual([]);
  });

  it('answers a bad flag privately, naming the flag and its allowed values, and queues nothing', async () => {
    h = await startHarness();
    const ack = await h.fake.command({ command: '/imagine', text: 'a cat --size 512x512' });
    expect(ack.status).toBe(200);
    expect(ack.body).toMatchObject({ response_type: 'ephemeral' });
    const text = (ack.body as { text: string }).text;
    expect(text).toContain('--size 512x512');
    expect(text).toContain('1024x1024, 1024x1536, 1536x1024');

    // The spec's rules are the runner's, answered privately through the response URL in the words of the flags.
    const clash = await h.fake.command({ command: '/imagine', text: 'a logo --background transparent --format jpeg' });
    const note = await h.fake.waitFor(() => h!.fake.responses.find((r) => clash.responseUrl.endsWith(r.id)), 'the private refusal');
    expect(note.body.response_type).toBe('ephemeral');
    expect(String(note.body.text)).toContain('--format must be png or webp when --background is transparent');
    expect(h.fake.messages).toEqual([]);
    expect(h.emulator.requests).toEqual([]);
  });

  it('shows the usage privately for /imagine help', async () => {
    h = await startHarness();
    const ack = await h.fake.command({ command: '/imagine', text: 'help' });
    const text = (ack.body as { text: string }).text;
    expect(ack.body).toMatchObject({ response_type: 'ephemeral' });
    for (const flag of ['--size', '--quality', '--background', '--format', '--n']) expect(text).toContain(flag);
    expect(h.fake.messages).toEqual([]);
  });

  it('tells the user privately when a job is over budget, and nothing reaches the image service', async () => {
    h = await startHarness({ limits: { userDailyUsd: 0.05 } });
    const ack = await h.fake.command({ command: '/imagine', text: 'a castle --quality high' });
    expect(ack.status).toBe(200);
    const note = await h.fake.waitFor(() => h!.fake.responses.find((r) => r.body.response_type === 'ephemeral'), 'the private refusal');
    expect(String(note.body.text)).toMatch(/daily budget of \$0\.050/);
    expect(note.body.replace_original).toBe(false);
    expect(h.fake.messages).toEqual([]);
    expect(h.emulator.requests).toEqual([]);
    // A refused job leaves nothing behind for buttons to find.
    expect(await readdir(join(h.dataDir, 'slack', 'requests'))).toEqual([]);
  });

  it('lets the requester cancel a running job, and the message says who cancelled it', async () => {
    h = await startHarness({ emulator: { latencyMs: 20_000 } });
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a very slow painting', channel: 'C0SLOW' });
    const running = await fake.waitFor(() => jobMessages(fake, 'C0SLOW').find((m) => statusOf(m).includes('Drawing')), 'the job to start');

    const stranger = await fake.clickButton(running, 'pictor_cancel', 'U0BOB');
    expect(stranger.status).toBe(200);
    const refusal = await fake.waitFor(() => fake.responses.find((r) => String(r.body.text).includes('Only the person')), 'the refusal to a stranger');
    expect(refusal.body.response_type).toBe('ephemeral');

    await fake.clickButton(running, 'pictor_cancel', 'U0ALICE');
    const cancelled = await fake.waitFor(() => jobMessages(fake, 'C0SLOW').find((m) => statusOf(m).includes('Cancelled')), 'the cancelled message');
    // Cancelled after its request reached the image service: what it was charged is said under it.
    const charged = await h.store.spentToday('slack:U0ALICE', Date.now());
    expect(statusOf(cancelled).split('\n')).toEqual([':no_entry_sign: Cancelled by <@U0ALICE>', say('en', 'slack.job.charged', { usd: usd(charged) })]);
    expect(buttonsOf(cancelled).map((b) => b.actionId)).toEqual(['pictor_reroll']);
    const [job] = h.runner.activeJobs();
    expect(job).toBeUndefined();
  });

  it('waits out a 429 with Retry-After from Slack and still finishes the job', async () => {
    h = await startHarness();
    h.fake.failNext('chat.update', { status: 429, retryAfterSec: 1 });
    await h.fake.command({ command: '/imagine', text: 'a patient robot --quality low', channel: 'C0RATE' });
    const message = await finishedJob(h.fake, 'C0RATE');
    expect(statusOf(message)).toContain('Done');
    const updates = h.fake.callsOf('chat.update');
    expect(updates[0]!.status).toBe(429);
    expect(updates.slice(1).every((c) => c.ok)).toBe(true);
  });

  it('says privately when it cannot post in a channel, and stops the job', async () => {
    h = await startHarness({ emulator: { latencyMs: 5_000 } });
    h.fake.removeBotFrom('C0PRIVATE');
    await h.fake.command({ command: '/imagine', text: 'a secret', channel: 'C0PRIVATE' });
    const note = await h.fake.waitFor(() => h!.fake.responses.find((r) => String(r.body.text).includes('/invite @Pictor')), 'the invite hint');
    expect(note.body.response_type).toBe('ephemeral');
    await h.fake.waitFor(() => h!.runner.activeJobs().length === 0, 'the job to stop');
    expect(h.fake.messages).toEqual([]);
  });
});
