import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { say } from '../../../bots/runner/index.js';
import { WORKFLOW_STEP_ID } from '../../../bots/slack/listeners/workflow-step.js';
import { RecordingLogger } from '../discord/harness.js';
import { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import { FAKE_CHANNEL_INTERVAL_MS, finishedActions, finishedJob, hasButton, jobMessages, png, privately, startHarness, statusOf, type Harness, userContext } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  // Fake timers a test left on (it timed out before putting them back) go before anything else of this worker runs.
  vi.useRealTimers();
  await h?.close();
  h = undefined;
});

/**
 * Nothing is charged to the member: once the dropped job's reservation is given back, nothing is spent or reserved
 * against them today, and no usage record of theirs costs anything.
 */
async function expectNothingChargedTo(harness: Harness, user: string): Promise<void> {
  const key = `slack:${user}`;
  await vi.waitFor(async () => expect(await harness.store.spentToday(key, Date.now())).toBe(0), { timeout: 10_000 });
  const records = (await harness.store.usage({})).filter((r) => r.userKey === key);
  expect(records.reduce((sum, r) => sum + r.costUsd, 0)).toBe(0);
}

/**
 * The Web API's address for the bot: a relay to the fake's, which passes every call on until `refuse()` closes it —
 * once the calls it is passing on are answered; from then on no connection to it can be made (refused), so a call
 * never reaches Slack — and `reopen()` opens it again on the same port. Closed when the test ends.
 */
async function relayTo(apiUrl: string): Promise<{ url: string; refuse(): Promise<void>; reopen(): Promise<void> }> {
  const target = new URL(apiUrl);
  let passing = 0;
  let onIdle: (() => void) | undefined;
  const relay: Server = createServer((req, res) => {
    passing++;
    res.on('close', () => {
      passing--;
      if (passing === 0) onIdle?.();
    });
    const onward = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    onward.on('error', () => res.socket?.destroy());
    req.pipe(onward);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const { port } = relay.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      if (!relay.listening) return resolve();
      // No new connection from now on; the kept-alive ones are cut once nothing passes through them.
      relay.close(() => resolve());
      onIdle = () => relay.closeAllConnections();
      if (passing === 0) onIdle();
    });
  onTestFinished(close);
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    refuse: close,
    reopen: () =>
      new Promise<void>((resolve) => {
        onIdle = undefined;
        relay.listen(port, '127.0.0.1', resolve);
      }),
  };
}

describe('a job whose first message Slack refuses is not started, and nothing is charged', () => {
  it('/imagine in a private channel the bot is not in: the member is told privately how to invite it; nothing reaches the service', async () => {
    h = await startHarness();
    h.fake.removeBotFrom('G0SECRET');
    const note = await privately(h.fake, 'a kite --quality low', 'U0BOB', 'G0SECRET');
    expect(note).toBe(say('en', 'slack.job.not_in_channel'));
    await expectNothingChargedTo(h, 'U0BOB');
    expect(h.emulator.requests).toEqual([]);
    expect(h.runner.activeJobs()).toEqual([]);
  });

  it('/imagine in an archived channel: the member is told privately it is archived; nothing reaches the service', async () => {
    h = await startHarness();
    h.fake.archive('C0OLD');
    const note = await privately(h.fake, 'a kite --quality low', 'U0BOB', 'C0OLD');
    expect(note).toBe(say('en', 'slack.job.archived'));
    await expectNothingChargedTo(h, 'U0BOB');
    expect(h.emulator.requests).toEqual([]);
  });

  it('/imagine whose first message never reached Slack (no connection could be made): the member is told it was not posted, not that it may show up; nothing is looked for or deleted; nothing reaches the service', async () => {
    const fake = await new FakeSlack({ channelWriteIntervalMs: FAKE_CHANNEL_INTERVAL_MS }).start();
    const slack = await relayTo(fake.apiUrl);
    h = await startHarness({ fake, bot: { apiUrl: slack.url } });
    // A job first, while Slack is reached: what the bot learns of the member and the channel on the way is known.
    await fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0AWAY', user: 'U0BOB' });
    await finishedJob(fake, 'C0AWAY');
    await slack.refuse();
    const note = await privately(fake, 'a boat --quality low', 'U0BOB', 'C0AWAY');
    expect(note).toBe(say('en', 'slack.job.not_posted_at_all'));
    expect(h.emulator.requests).toHaveLength(1);
    expect(h.runner.activeJobs()).toEqual([]);
    // Slack reached again: the next job runs to its end, and nothing was looked for or deleted in between.
    await slack.reopen();
    await fake.command({ command: '/imagine', text: 'a fox --quality low', channel: 'C0AWAY', user: 'U0BOB' });
    await finishedJob(fake, 'C0AWAY', 1);
    expect(fake.callsOf('conversations.history').filter((c) => c.args.channel === 'C0AWAY')).toEqual([]);
    expect(fake.callsOf('chat.delete')).toEqual([]);
    expect(jobMessages(fake, 'C0AWAY')).toHaveLength(2);
    expect(h.emulator.requests).toHaveLength(2);
    // Charged for the two jobs that ran, nothing for the one that never reached Slack.
    await vi.waitFor(async () => expect((await h!.store.usage({})).filter((r) => r.costUsd > 0)).toHaveLength(2), { timeout: 10_000 });
  });

  it('a private job whose first message its member’s direct messages refuse: told privately, not told it is drawn there; nothing reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    fake.failNext('chat.postMessage', { status: 200, error: 'not_in_channel', match: (args) => args.channel === fake.dmOf('U0CAROL') });
    const note = await privately(fake, 'a secret --private --quality low', 'U0CAROL', 'C0ART');
    // Not the invite hint: there is no one to invite to a direct message.
    expect(note).toBe(say('en', 'slack.job.not_posted_at_all'));
    await expectNothingChargedTo(h, 'U0CAROL');
    expect(h.emulator.requests).toEqual([]);
    expect(fake.responses.map((r) => String(r.body.text))).not.toContain(say('en', 'slack.job.private_in_dm'));
    expect(fake.messagesIn(fake.dmOf('U0CAROL'))).toEqual([]);
  });

  it('a mention in a channel where Slack refuses the bot’s post: the member is told privately; nothing reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    fake.failNext('chat.postMessage', { status: 200, error: 'restricted_action', match: (args) => args.channel === 'C0READONLY' });
    await fake.userMessage({ channel: 'C0READONLY', user: 'U0BOB', text: `<@${fake.botUserId}> a kite --quality low` });
    const note = await fake.waitFor(() => fake.ephemerals.find((e) => e.user === 'U0BOB'), 'the private note');
    expect(note.text).toBe(say('en', 'slack.job.not_posted_at_all'));
    await expectNothingChargedTo(h, 'U0BOB');
    expect(h.emulator.requests).toEqual([]);
    expect(fake.botMessages('C0READONLY')).toEqual([]);
  });

  it('an edit from the Edit image shortcut, its channel left before the form came back: its images are not downloaded; nothing reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    const photo = fake.addFile({ name: 'beach.png', bytes: await png(48, 32) });
    const post = await fake.userMessage({ channel: 'C0PHOTOS', text: 'our trip', files: [photo] });
    await fake.messageShortcut(post, 'pictor_edit_image', 'U0BOB');
    const view = await fake.waitFor(() => fake.views[0], 'the edit modal');
    fake.removeBotFrom('C0PHOTOS');
    const downloadsBefore = fake.downloads.length;
    await fake.submitView(view, { prompt: 'make the sky purple' });
    const note = await fake.waitFor(() => fake.responses.find((r) => r.body.text === say('en', 'slack.job.not_in_channel')), 'the invite hint');
    expect(note.body.response_type).toBe('ephemeral');
    await expectNothingChargedTo(h, 'U0BOB');
    expect(h.emulator.requests).toEqual([]);
    expect(fake.downloads.length).toBe(downloadsBefore);
  });

  it('a Reroll pressed once the bot was removed from the job’s channel: the member who pressed it is charged nothing', async () => {
    h = await startHarness();
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    const actions = await finishedActions(fake, 'C0KITES');
    fake.removeBotFrom('C0KITES');
    const click = await fake.clickButton(actions, 'pictor_reroll', 'U0BOB');
    const note = await fake.waitFor(() => fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
    expect(note.body.text).toBe(say('en', 'slack.job.not_in_channel'));
    await expectNothingChargedTo(h, 'U0BOB');
    expect(h.emulator.requests).toHaveLength(1);
  });

  it('a workflow step posting into a private channel the bot is not in: the step fails with the invite hint; nothing reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    fake.removeBotFrom('G0FLOW');
    const run = await fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { prompt: 'weekly banner', channel: 'G0FLOW', user: userContext('U0BOB'), quality: 'low' } });
    const outcome = await fake.waitFor(() => run.outcome, 'the step’s end');
    expect(outcome).toMatchObject({ ok: false });
    expect(JSON.stringify(outcome)).toContain('/invite @Pictor');
    await expectNothingChargedTo(h, 'U0BOB');
    expect(h.emulator.requests).toEqual([]);
  });
});

describe('a job between its first message and the image service', () => {
  it('Cancel pressed while an edit’s images are still downloading: the job is cancelled before it is sent; nothing is charged', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ logger });
    const { fake } = h;
    const photo = fake.addFile({ name: 'beach.png', bytes: await png(48, 32) });
    const post = await fake.userMessage({ channel: 'C0PHOTOS', text: 'our trip', files: [photo] });
    await fake.messageShortcut(post, 'pictor_edit_image', 'U0ALICE');
    const form = await fake.waitFor(() => fake.views[0], 'the edit modal');
    await fake.submitView(form, { prompt: 'make the sky purple' });
    const actions = await finishedActions(fake, 'C0PHOTOS');
    // A Reroll of an edit asks Slack where its image is (files.info) once the job is admitted: held, its download waits.
    const held = fake.holdOpen('files.info');
    await fake.clickButton(actions, 'pictor_reroll', 'U0BOB');
    await fake.waitFor(() => held.arrived() > 0, 'the reroll’s download');
    const message = await fake.waitFor(() => jobMessages(fake, 'C0PHOTOS').find((m) => m.ts !== jobMessages(fake, 'C0PHOTOS')[0]!.ts), 'the reroll’s message');
    expect(hasButton(message, 'pictor_cancel')).toBe(true);
    const click = await fake.clickButton(message, 'pictor_cancel', 'U0BOB');
    const cancelled = () => {
      const now = fake.messagesIn('C0PHOTOS').find((m) => m.ts === message.ts);
      return now && statusOf(now).includes('Cancelled by <@U0BOB>') ? now : undefined;
    };
    await fake.waitFor(() => cancelled() ?? fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the cancel’s answer');
    // Shown in the job's message, as any cancel: no private "not running".
    expect(fake.responses.filter((r) => click.responseUrl.endsWith(r.id))).toEqual([]);
    expect(hasButton(cancelled()!, 'pictor_cancel')).toBe(false);
    held.release();
    await expectNothingChargedTo(h, 'U0BOB');
    await vi.waitFor(() => expect(h!.runner.activeJobs()).toEqual([]));
    expect(h.emulator.requests).toHaveLength(1);
    expect(statusOf(cancelled()!)).toContain('Cancelled by <@U0BOB>');
    // A cancel, not a failure: nothing in the operator's log above info.
    expect(logger.entries.filter((e) => e.level === 'warn' || e.level === 'error')).toEqual([]);
  });

  it('a first message Slack rate-limits (a channel another process wrote to a moment before) is posted again once its Retry-After is over, and the job runs', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ bot: { logger } });
    const { fake } = h;
    fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 1, count: 1, match: (args) => args.channel === 'C0BUSY' });
    await fake.command({ command: '/imagine', text: 'a kite --quality low', user: 'U0BOB', channel: 'C0BUSY' });
    await finishedJob(fake, 'C0BUSY');
    const posts = fake.callsOf('chat.postMessage').filter((c) => c.args.channel === 'C0BUSY' && c.args.text === 'Pictor: queued');
    expect(posts.map((c) => c.status)).toEqual([429, 200]);
    expect(jobMessages(fake, 'C0BUSY')).toHaveLength(1);
    expect(h.emulator.requests).toHaveLength(1);
    // Posted again after Slack's Retry-After, a second.
    expect(logger.entries.find((e) => e.msg?.startsWith('Slack rate-limited the first message of a job'))?.obj).toMatchObject({ channel: 'C0BUSY', retryAfterMs: 1000, waitMs: 1000 });
  });

  it('a first message Slack rate-limits past its 30 seconds is refused at once: the member is told privately; nothing reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 31, count: 1, match: (args) => args.channel === 'C0HELD' });
    const note = await privately(fake, 'a kite --quality low', 'U0BOB', 'C0HELD');
    expect(note).toBe(say('en', 'slack.job.not_posted_at_all'));
    expect(fake.callsOf('chat.postMessage').filter((c) => c.args.channel === 'C0HELD')).toHaveLength(1);
    await expectNothingChargedTo(h, 'U0BOB');
    expect(h.emulator.requests).toEqual([]);
    expect(h.runner.activeJobs()).toEqual([]);
  });

  it('a first message whose answer is lost: not sent again, the job not started, the member told it may be there; nothing reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    fake.cutNext('chat.postMessage', 'after', { count: 6, match: (args) => args.channel === 'C0LOST' });
    const note = await privately(fake, 'a kite --quality low', 'U0BOB', 'C0LOST');
    expect(note).toBe(say('en', 'slack.job.maybe_posted'));
    expect(fake.callsOf('chat.postMessage').filter((c) => c.args.channel === 'C0LOST')).toHaveLength(1);
    await expectNothingChargedTo(h, 'U0BOB');
    expect(h.emulator.requests).toEqual([]);
    expect(h.runner.activeJobs()).toEqual([]);
  });

  it('a first message whose answer is lost but which Slack made: it is found by its request line and deleted, so the channel shows no job that did not start', async () => {
    h = await startHarness();
    const { fake } = h;
    fake.cutNext('chat.postMessage', 'after', { count: 1, match: (args) => args.channel === 'C0LOST' });
    const note = await privately(fake, 'a kite --quality low', 'U0BOB', 'C0LOST');
    // Still true once it is deleted: it will not run.
    expect(note).toBe(say('en', 'slack.job.maybe_posted'));
    await fake.waitFor(() => fake.callsOf('chat.delete').find((c) => c.args.channel === 'C0LOST' && c.ok), 'the message taken back');
    expect(fake.botMessages('C0LOST')).toEqual([]);
    expect(fake.callsOf('conversations.history').filter((c) => c.args.channel === 'C0LOST')).toHaveLength(1);
    expect(fake.callsOf('chat.postMessage').filter((c) => c.args.channel === 'C0LOST')).toHaveLength(1);
    await expectNothingChargedTo(h, 'U0BOB');
    expect(h.emulator.requests).toEqual([]);
  });

  it('a first message in a thread whose answer is lost: it is looked for in that thread and deleted', async () => {
    h = await startHarness();
    const { fake } = h;
    const parent = await fake.userMessage({ channel: 'C0TALK', user: 'U0CAROL', text: 'ideas for the poster?' });
    fake.cutNext('chat.postMessage', 'after', { count: 1, match: (args) => args.channel === 'C0TALK' && args.thread_ts === parent.ts });
    await fake.userMessage({ channel: 'C0TALK', user: 'U0BOB', text: `<@${fake.botUserId}> a kite --quality low`, threadTs: parent.ts });
    const note = await fake.waitFor(() => fake.ephemerals.find((e) => e.user === 'U0BOB'), 'the private note');
    expect(note.text).toBe(say('en', 'slack.job.maybe_posted'));
    await fake.waitFor(() => fake.callsOf('chat.delete').find((c) => c.args.channel === 'C0TALK' && c.ok), 'the message taken back');
    expect(fake.callsOf('conversations.replies').filter((c) => c.args.ts === parent.ts).length).toBeGreaterThan(0);
    expect(fake.botMessages('C0TALK')).toEqual([]);
    await expectNothingChargedTo(h, 'U0BOB');
    expect(h.emulator.requests).toEqual([]);
  });

  it('a first message Slack does not answer gets 30 seconds by default: not a moment less, then the job is given up', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ bot: { logger } });
    const { fake } = h;
    const held = fake.holdOpen('chat.postMessage');
    const givenUp = () => logger.entries.find((e) => e.msg?.startsWith('a job message was not posted within its deadline'));
    // Every turn of the event loop run, so whatever the clock made due has happened (no time passes).
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    const realSetTimeout = globalThis.setTimeout;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // The clock stands still from here: only this test moves it. A callback asked for at the next turn (a delay of 0:
    // a queue's next step on the command's way to its first post) runs at that turn, the clock not moved for it.
    const fakeSetTimeout = globalThis.setTimeout;
    globalThis.setTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) =>
      (ms ?? 0) <= 0 ? realSetTimeout(callback, 0, ...args) : fakeSetTimeout(callback, ms, ...args)) as typeof setTimeout;
    try {
      const ack = await fake.command({ command: '/imagine', text: 'a kite --quality low', user: 'U0BOB', channel: 'C0WAIT' });
      // The deadline was set, at the clock's 0, before its post left.
      await fake.waitFor(() => held.arrived() > 0, 'the first post at Slack');
      const answer = () => fake.responses.find((r) => ack.responseUrl.endsWith(r.id));
      await vi.advanceTimersByTimeAsync(29_999);
      await settle();
      expect(givenUp()).toBeUndefined();
      expect(answer()).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      await settle();
      expect(givenUp()?.obj).toMatchObject({ channel: 'C0WAIT', sent: true });
      expect((await fake.waitFor(answer, 'the private answer')).body.text).toBe(say('en', 'slack.job.maybe_posted'));
      expect(h.runner.activeJobs()).toEqual([]);
    } finally {
      globalThis.setTimeout = fakeSetTimeout;
      vi.useRealTimers();
      held.release();
    }
    await fake.waitFor(() => fake.callsOf('chat.delete').length > 0, 'the late post taken back');
    expect(h.emulator.requests).toEqual([]);
  });

  it('first messages Slack does not answer within their deadline: the jobs are not started, their members told privately; a late post is taken back, a waiting one never sent', async () => {
    h = await startHarness({ bot: { firstPostDeadlineMs: 300 } });
    const { fake } = h;
    const held = fake.holdOpen('chat.postMessage');
    const realSetTimeout = globalThis.setTimeout;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // The clock stands still from here, as in the test above (a callback asked for at the next turn runs at that turn);
    // the deadlines of 300 ms set on it are counted.
    const fakeSetTimeout = globalThis.setTimeout;
    let deadlines = 0;
    globalThis.setTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
      if (ms === 300) deadlines++;
      return (ms ?? 0) <= 0 ? realSetTimeout(callback, 0, ...args) : fakeSetTimeout(callback, ms, ...args);
    }) as typeof setTimeout;
    let bob: string;
    let carol: string;
    try {
      // Bob's post went to Slack and is not answered; Carol's waits behind it for the channel's turn.
      const toBob = privately(fake, 'a kite --quality low', 'U0BOB', 'C0SLOW');
      await fake.waitFor(() => held.arrived() === 1, 'Bob’s post at Slack');
      const toCarol = privately(fake, 'a boat --quality low', 'U0CAROL', 'C0SLOW');
      await fake.waitFor(() => deadlines === 2, 'Carol’s deadline set');
      await vi.advanceTimersByTimeAsync(300);
      [bob, carol] = await Promise.all([toBob, toCarol]);
    } finally {
      globalThis.setTimeout = fakeSetTimeout;
      vi.useRealTimers();
    }
    expect(held.arrived()).toBe(1);
    // Bob's post may still land: he is told so. Carol's was never sent.
    expect(bob).toBe(say('en', 'slack.job.maybe_posted'));
    expect(carol).toBe(say('en', 'slack.job.not_posted_at_all'));
    await expectNothingChargedTo(h, 'U0BOB');
    await expectNothingChargedTo(h, 'U0CAROL');
    expect(h.emulator.requests).toEqual([]);
    expect(h.runner.activeJobs()).toEqual([]);
    held.release();
    await fake.waitFor(() => fake.callsOf('chat.delete').length > 0, 'the late post taken back');
    expect(fake.botMessages('C0SLOW')).toEqual([]);
    expect(fake.callsOf('chat.postMessage').filter((c) => c.args.channel === 'C0SLOW')).toHaveLength(1);
    expect(h.emulator.requests).toEqual([]);
  });
});
