import { readFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RATE_LIMITED_WAIT_MAX_MS } from '../../../bots/slack/SlackJobView.js';
import { ChannelWriter } from '../../../bots/slack/ChannelWriter.js';
import { say, usd } from '../../../bots/runner/index.js';
import { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import type { ConnectionCut } from '../../fakes/connection-cut.js';
import { RecordingLogger } from '../discord/harness.js';
import { buttonsOf } from '../../fakes/slack/slack-objects.js';
import { seenCalling, spyOnInstance } from '../../helpers/instance-spy.js';
import { actionMessages, FAKE_CHANNEL_INTERVAL_MS, finishedActions, finishedJob, hasButton, imageShares, isFinished, jobMessages, startHarness, statusOf, type Harness } from './harness.js';

let h: Harness | undefined;
/** Puts the real timers back (`clockOfLongTimers`), should a test end before it does. */
let restoreClock: (() => void) | undefined;
afterEach(async () => {
  restoreClock?.();
  await h?.close();
  h = undefined;
  vi.restoreAllMocks();
});

const isFinalUpdate = (args: Record<string, unknown>) => typeof args.text === 'string' && /^Pictor: (done|failed|cancelled)/.test(args.text);

describe('the end of a paid job reaches the user in Slack', () => {
  it('retries a final chat.update that Slack failed with internal_error, so the message does not stay at “Drawing…”', async () => {
    h = await startHarness();
    const { fake } = h;
    fake.failNext('chat.update', { status: 200, error: 'internal_error', count: 1, match: isFinalUpdate });
    await fake.command({ command: '/imagine', text: 'a lantern --quality low', channel: 'C0RETRY' });
    const done = await finishedJob(fake, 'C0RETRY');
    expect(statusOf(done)).toContain('Done');
    const finals = fake.callsOf('chat.update').filter((c) => isFinalUpdate(c.args));
    expect(finals.map((c) => c.error ?? 'ok')).toEqual(['internal_error', 'ok']);
  });

  it('lets the Cancel button repair a message whose final update failed every try', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ bot: { logger } });
    const { fake } = h;
    fake.failNext('chat.update', { status: 200, error: 'internal_error', count: 3, match: isFinalUpdate });
    await fake.command({ command: '/imagine', text: 'a stuck lantern --quality low', channel: 'C0STUCK' });
    await fake.waitFor(() => fake.callsOf('chat.update').filter((c) => isFinalUpdate(c.args)).length === 3 || undefined, 'three failed final updates', 15_000);
    // The bot has given up on the message (it then keeps the job for a repair by button).
    await fake.waitFor(() => logger.entries.some((e) => e.msg === 'could not show the end of a job in its message'), 'the bot to give up');
    const stuck = jobMessages(fake, 'C0STUCK')[0]!;
    expect(buttonsOf(stuck).map((b) => b.actionId)).toEqual(['pictor_cancel']);
    // The images were delivered in the channel all the same.
    expect(fake.topLevel('C0STUCK').some((m) => (m.files ?? []).length === 1 && /here is your image/.test(m.text))).toBe(true);

    const seenBefore = structuredClone(stuck);
    const click = await fake.clickButton(stuck, 'pictor_cancel');
    const repaired = await finishedJob(fake, 'C0STUCK');
    expect(statusOf(repaired)).toContain('Done');
    // A later click, from a screen still showing Cancel, is answered: the first click's handling had ended before.
    const later = await fake.clickButton(seenBefore, 'pictor_cancel');
    await fake.waitFor(() => fake.responses.find((r) => later.responseUrl.endsWith(r.id)), 'the answer to a later click');
    expect(fake.responses.filter((r) => click.responseUrl.endsWith(r.id))).toEqual([]);
  }, 20_000);

  it('sends the images and their buttons to the requester directly when the channel is archived mid-job', async () => {
    h = await startHarness({ emulator: { latencyMs: 1500 } });
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a lantern in the archive --quality low', channel: 'C0ARCHIVE', user: 'U0ALICE' });
    await fake.waitFor(() => jobMessages(fake, 'C0ARCHIVE').find((m) => statusOf(m).includes('Drawing')), 'the job to start');
    fake.archive('C0ARCHIVE');
    const dm = fake.dmOf('U0ALICE');
    const actions = await finishedActions(fake, dm);
    const images = fake.messagesIn(dm).filter((m) => (m.files ?? []).length > 0);
    expect(images).toHaveLength(1);
    expect(images[0]!.text).toContain('<@U0ALICE> here is your image');
    expect(fake.messagesIn(dm).map((m) => m.ts)).toEqual([images[0]!.ts, actions.ts]);
    // Nothing else is posted there in place of the job's message: the images, their caption and their buttons say it all.
    await h.close();
    h = undefined;
    expect(fake.messagesIn(dm)).toHaveLength(2);
  }, 20_000);

  it('retries the upload steps Slack failed on its side, and posts the images in the channel', async () => {
    h = await startHarness();
    const { fake } = h;
    const finalUpload = (args: Record<string, unknown>) => typeof args.filename === 'string' && !args.filename.includes('preview');
    fake.failNext('files.getUploadURLExternal', { status: 200, error: 'internal_error', count: 1, match: finalUpload });
    await fake.command({ command: '/imagine', text: 'a lantern uploaded twice --quality low', channel: 'C0UPLOAD' });
    const done = await finishedJob(fake, 'C0UPLOAD');
    expect(statusOf(done)).toContain('the image is posted below, with Reroll, Edit and Delete');
    expect(fake.topLevel('C0UPLOAD').filter((m) => /here is your image/.test(m.text))).toHaveLength(1);
  });

  it('sends the result directly to the requester when the bot was removed from the channel mid-job', async () => {
    h = await startHarness({ emulator: { latencyMs: 1500 } });
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a lantern nobody sees --quality low', channel: 'C0KICKED', user: 'U0BOB' });
    await fake.waitFor(() => jobMessages(fake, 'C0KICKED').find((m) => statusOf(m).includes('Drawing')), 'the job to start');
    fake.removeBotFrom('C0KICKED');
    const dm = fake.dmOf('U0BOB');
    await finishedActions(fake, dm);
    expect(fake.messagesIn(dm).filter((m) => (m.files ?? []).length > 0)).toHaveLength(1);
  }, 20_000);

  it('posts the images and their buttons when the job’s message was deleted mid-job, and no new job message in its place', async () => {
    h = await startHarness({ emulator: { latencyMs: 1500 } });
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a lantern whose message vanished --quality low', channel: 'C0GONE' });
    const running = await fake.waitFor(() => jobMessages(fake, 'C0GONE').find((m) => statusOf(m).includes('Drawing')), 'the job to start');
    fake.messages.splice(fake.messages.indexOf(running), 1);
    const actions = await finishedActions(fake, 'C0GONE');
    expect(imageShares(fake, 'C0GONE')).toHaveLength(1);
    await fake.waitFor(() => fake.callsOf('chat.update').find((c) => isFinalUpdate(c.args)), 'the final update of the message');
    await h.close({ fake: true });
    h = undefined;
    expect(fake.callsOf('chat.update').filter((c) => isFinalUpdate(c.args)).map((c) => c.error)).toEqual(['message_not_found']);
    expect(fake.topLevel('C0GONE').map((m) => m.ts)).toEqual([imageShares(fake, 'C0GONE')[0]!.ts, actions.ts]);
    await fake.close();
  }, 20_000);
});

describe('a failed job that was charged, in Slack', () => {
  it('says under its failure what it was charged, as the ledger charged it', async () => {
    h = await startHarness();
    const { fake } = h;
    h.emulator.injectFault('reset_mid_stream');
    await fake.command({ command: '/imagine', text: 'a bridge cut in two --quality low', channel: 'C0CHARGED', user: 'U0ALICE' });
    const failed = await finishedJob(fake, 'C0CHARGED');
    const charged = await h.store.spentToday('slack:U0ALICE', Date.now());
    expect(charged).toBeGreaterThan(0);
    expect(statusOf(failed).split('\n').at(-1)).toBe(say('en', 'slack.job.charged', { usd: usd(charged) }));
  });

  it('says the charge in its plain text too, which notifications and screen readers get', async () => {
    h = await startHarness();
    const { fake } = h;
    h.emulator.injectFault('reset_mid_stream');
    await fake.command({ command: '/imagine', text: 'a bridge cut in two, read aloud --quality low', channel: 'C0CHARGEDTEXT', user: 'U0ALICE' });
    const failed = await finishedJob(fake, 'C0CHARGEDTEXT');
    const charged = await h.store.spentToday('slack:U0ALICE', Date.now());
    expect(charged).toBeGreaterThan(0);
    expect(failed.text).toMatch(/^Pictor: failed: /);
    expect(failed.text.split('\n').at(-1)).toBe(say('en', 'slack.job.charged', { usd: usd(charged) }).replace(/^:dollar: /, ''));
  });

  it('says nothing of a charge when nothing was charged', async () => {
    h = await startHarness();
    const { fake } = h;
    h.emulator.injectFault('server_error', { count: 10 });
    await fake.command({ command: '/imagine', text: 'a bridge never built --quality low', channel: 'C0UNCHARGED', user: 'U0ALICE' });
    const failed = await finishedJob(fake, 'C0UNCHARGED');
    expect(await h.store.spentToday('slack:U0ALICE', Date.now())).toBe(0);
    expect(statusOf(failed)).not.toContain(':dollar:');
    expect(failed.text).not.toContain('Charged');
  });
});

describe('the end of a job posted anew, its message gone, when Slack’s answer to it is lost', () => {
  /** A job in `channel` whose message is deleted while it draws, then cancelled: its end is posted in a new message. */
  async function cancelWithMessageGone(harness: Harness, channel: string, cut: ConnectionCut = 'after'): Promise<void> {
    const { fake } = harness;
    await fake.command({ command: '/imagine', text: 'a lantern whose message vanished --quality low', channel, user: 'U0ALICE' });
    const running = await fake.waitFor(() => jobMessages(fake, channel).find((m) => statusOf(m).includes('Drawing')), 'the job to start');
    fake.messages.splice(fake.messages.indexOf(running), 1);
    fake.cutNext('chat.postMessage', cut, { count: 1, match: (args) => args.channel === channel && isFinalUpdate(args) });
    await fake.clickButton(running, 'pictor_cancel', 'U0ALICE');
  }
  const finalPosts = (fake: FakeSlack, channel: string) => fake.callsOf('chat.postMessage').filter((c) => c.args.channel === channel && isFinalUpdate(c.args));

  it('is looked for, found and kept: one message shows the end, never two', async () => {
    h = await startHarness({ emulator: { latencyMs: 1500 } });
    const { fake } = h;
    await cancelWithMessageGone(h, 'C0ONCE');
    const ended = await finishedJob(fake, 'C0ONCE');
    expect(statusOf(ended)).toContain('Cancelled');
    await h.close({ fake: true });
    h = undefined;
    expect(jobMessages(fake, 'C0ONCE')).toHaveLength(1);
    expect(finalPosts(fake, 'C0ONCE')).toHaveLength(1);
    expect(fake.callsOf('conversations.history').filter((c) => c.args.channel === 'C0ONCE')).toHaveLength(1);
    await fake.close();
  }, 20_000);

  it('is looked for and, cut before Slack made it, posted again: one message shows the end', async () => {
    h = await startHarness({ emulator: { latencyMs: 1500 } });
    const { fake } = h;
    await cancelWithMessageGone(h, 'C0CUTBEFORE', 'before');
    const ended = await finishedJob(fake, 'C0CUTBEFORE');
    expect(statusOf(ended)).toContain('Cancelled');
    await h.close({ fake: true });
    h = undefined;
    expect(jobMessages(fake, 'C0CUTBEFORE')).toHaveLength(1);
    // The cut post made nothing, so the look found nothing and the end was posted a second time.
    expect(finalPosts(fake, 'C0CUTBEFORE')).toHaveLength(2);
    expect(fake.callsOf('conversations.history').filter((c) => c.args.channel === 'C0CUTBEFORE')).toHaveLength(1);
    await fake.close();
  }, 20_000);

  it('is not posted again when it cannot be looked for: the look’s failure is logged, and one message at most shows the end', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 1500 }, bot: { logger } });
    const { fake } = h;
    fake.failNext('conversations.history', { status: 200, error: 'internal_error', count: 10, match: (args) => args.channel === 'C0BLIND' });
    await cancelWithMessageGone(h, 'C0BLIND');
    await fake.waitFor(() => logger.entries.find((e) => /could not be looked for: it is not posted again/.test(String(e.msg))), 'the bot to give up', 15_000);
    await h.close({ fake: true });
    h = undefined;
    expect(finalPosts(fake, 'C0BLIND')).toHaveLength(1);
    expect(jobMessages(fake, 'C0BLIND')).toHaveLength(1);
    expect(fake.messagesIn(fake.dmOf('U0ALICE'))).toEqual([]);
    await fake.close();
  }, 20_000);
});

describe('the buttons beside a finished job’s images, when Slack’s answer to them is lost', () => {
  const isActionsPost = (channel: string) => (args: Record<string, unknown>) => args.channel === channel && typeof args.text === 'string' && args.text.startsWith('Reroll, Edit or Delete');

  it('are looked for, found and kept: posted once, one set of buttons', async () => {
    h = await startHarness();
    const { fake } = h;
    fake.cutNext('chat.postMessage', 'after', { count: 1, match: isActionsPost('C0BUTTONS') });
    await fake.command({ command: '/imagine', text: 'a lantern with its buttons --quality low', channel: 'C0BUTTONS' });
    await finishedActions(fake, 'C0BUTTONS');
    const done = await finishedJob(fake, 'C0BUTTONS');
    await h.close({ fake: true });
    h = undefined;
    expect(fake.callsOf('chat.postMessage').filter((c) => isActionsPost('C0BUTTONS')(c.args))).toHaveLength(1);
    expect(actionMessages(fake, 'C0BUTTONS')).toHaveLength(1);
    // The job's message shows no second set: the buttons are beside the images.
    expect(buttonsOf(done)).toEqual([]);
    await fake.close();
  }, 20_000);
});

describe('the end of a job posted anew when Slack no longer lets its message be edited', () => {
  it('is posted again after an answer lost before Slack made it: the old message, still there, is not taken for it', async () => {
    h = await startHarness({ emulator: { latencyMs: 1500 } });
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a lantern past its edit window --quality low', channel: 'C0STALE', user: 'U0ALICE' });
    const running = await fake.waitFor(() => jobMessages(fake, 'C0STALE').find((m) => statusOf(m).includes('Drawing')), 'the job to start');
    fake.failNext('chat.update', { status: 200, error: 'edit_window_closed', count: 1, match: isFinalUpdate });
    // A gateway's 503 without Slack's answer: the post may have been made (it was not).
    fake.failNext('chat.postMessage', { status: 503, error: undefined, count: 1, match: (args) => args.channel === 'C0STALE' && isFinalUpdate(args) });
    await fake.clickButton(running, 'pictor_cancel', 'U0ALICE');
    const ended = await fake.waitFor(() => jobMessages(fake, 'C0STALE').find((m) => statusOf(m).includes('Cancelled')), 'the end of the job in a new message');
    expect(ended.ts).not.toBe(running.ts);
    await h.close({ fake: true });
    h = undefined;
    expect(jobMessages(fake, 'C0STALE').map((m) => m.ts)).toEqual([running.ts, ended.ts]);
    expect(fake.callsOf('chat.postMessage').filter((c) => c.args.channel === 'C0STALE' && isFinalUpdate(c.args)).map((c) => c.status)).toEqual([503, 200]);
    await fake.close();
  }, 20_000);
});

describe('results of jobs ending together, under Slack’s Tier 3 limit on chat.update', () => {
  it('shows every result in its channel with its caption and its buttons at once, brings Done to the messages within the budget, and draws no 429', async () => {
    // Slack allows 30 chat.updates a minute here; the bot keeps below it (25 a minute, none saved up), so the job messages' Done waits its turn.
    const fake = await new FakeSlack({ channelWriteIntervalMs: FAKE_CHANNEL_INTERVAL_MS, tier3PerMinute: 30 }).start();
    h = await startHarness({ fake, bot: { progressWritesPerMinute: 25, progressWritesBurst: 1 } });
    const channels = ['C0TIER1', 'C0TIER2', 'C0TIER3', 'C0TIER4'];
    await Promise.all(channels.map((channel, i) => fake.command({ command: '/imagine', text: `a lantern number ${i + 1} --quality low`, channel, user: 'U0ALICE' })));
    const resultIn = (channel: string) => fake.topLevel(channel).find((m) => (m.files ?? []).length === 1 && /here is your image/.test(m.text));

    await fake.waitFor(() => channels.every(resultIn) || undefined, 'every result in its channel', 15_000);
    await Promise.all(channels.map((channel) => finishedActions(fake, channel)));
    // The results and their buttons are out while job messages still wait for the budget to show Done.
    expect(channels.filter((c) => isFinished(jobMessages(fake, c)[0]!)).length).toBeLessThan(channels.length);
    for (const [i, channel] of channels.entries()) {
      expect(resultIn(channel)!.text).toMatch(new RegExp(`^<@U0ALICE> here is your image: “a lantern number ${i + 1}”  \`--quality low\`\\n1024x1024 · low · png · \\$0\\.0064 · `));
    }

    for (const channel of channels) {
      expect(buttonsOf(actionMessages(fake, channel)[0]!).map((b) => b.actionId)).toEqual(['pictor_reroll', 'pictor_edit', 'pictor_delete']);
      const done = await finishedJob(fake, channel);
      expect(buttonsOf(done)).toEqual([]);
    }
    expect(fake.rejectedWrites).toEqual([]);
    expect(fake.tier3Refusals).toEqual([]);
  }, 30_000);
});

/**
 * Timers of a second or more (Slack's waits, the bot's pauses between tries) run on vitest's clock, which stands still
 * until `advance` moves it; shorter ones (the channel's pacing, the image service's latency, a queue's next step) run on
 * the real one. `moved()` is how far the clock was moved, read when something happens.
 */
function clockOfLongTimers(): { advance: (ms: number) => Promise<void>; moved: () => number; restore: () => void } {
  const real = { set: globalThis.setTimeout, clear: globalThis.clearTimeout };
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const fake = { set: globalThis.setTimeout, clear: globalThis.clearTimeout };
  const onClock = new Set<unknown>();
  let moved = 0;
  globalThis.setTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    if ((ms ?? 0) < 1000) return real.set(callback, ms, ...args);
    const timer = fake.set(callback, ms, ...args);
    onClock.add(timer);
    return timer;
  }) as typeof setTimeout;
  globalThis.clearTimeout = ((timer: Parameters<typeof clearTimeout>[0]) => (onClock.has(timer) ? fake.clear(timer) : real.clear(timer))) as typeof clearTimeout;
  const restore = () => {
    restoreClock = undefined;
    globalThis.setTimeout = fake.set;
    globalThis.clearTimeout = fake.clear;
    vi.useRealTimers();
  };
  restoreClock = restore;
  return {
    advance: async (ms) => {
      moved += ms;
      await vi.advanceTimersByTimeAsync(ms);
    },
    moved: () => moved,
    restore,
  };
}

/**
 * Stops `Date.now()` at the first call `match` takes (Slack answering it with a 429), until `restore`: the bot's sense of
 * now — when a Retry-After ends, when its stop began to wait, its deadline — then moves only with the test's clock, not
 * with how long this machine takes to get there. The writer's pace keeps its own clock (read when it was made).
 */
function dateStoppedAt(match: (args: Record<string, unknown>) => boolean): { match: (args: Record<string, unknown>) => boolean; restore: () => void } {
  let now: ReturnType<typeof vi.spyOn> | undefined;
  return {
    match: (args) => {
      if (!match(args)) return false;
      if (!now) {
        const at = Date.now();
        now = vi.spyOn(Date, 'now').mockReturnValue(at);
      }
      return true;
    },
    restore: () => now?.mockRestore(),
  };
}

describe('a message of a job’s sent once, when Slack rate-limits it (429 with Retry-After: it did not take it)', () => {
  const isActionsPost = (channel: string) => (args: Record<string, unknown>) => args.channel === channel && typeof args.text === 'string' && args.text.startsWith('Reroll, Edit or Delete');
  const rateLimitedWait = (logger: RecordingLogger) => logger.entries.find((e) => e.msg?.startsWith('Slack rate-limited a message of a job that is sent once'));

  it('posts the buttons beside the images again once Slack’s Retry-After is over, not sooner, and once', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ bot: { logger } });
    const { fake } = h;
    const posts = () => fake.callsOf('chat.postMessage').filter((c) => isActionsPost('C0BUSY')(c.args));
    const clock = clockOfLongTimers();
    try {
      fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 30, count: 1, match: isActionsPost('C0BUSY') });
      // How far the clock had moved when the buttons were posted again (its own deadline past anything moved here).
      const postedAgain = fake.waitFor(() => posts().length > 1 && { at: clock.moved() }, 'the buttons posted again', 10 * 60_000);
      await fake.command({ command: '/imagine', text: 'a lantern in a busy channel --quality low', channel: 'C0BUSY', user: 'U0ALICE' });
      // Not vi.waitFor: under fake timers it moves the clock.
      expect((await fake.waitFor(() => rateLimitedWait(logger), 'the bot to wait', 10 * 60_000)).obj).toMatchObject({ channel: 'C0BUSY', retryAfterMs: 30_000 });
      await clock.advance(29_999);
      await clock.advance(1);
      expect((await postedAgain).at).toBe(30_000);
    } finally {
      clock.restore();
    }
    const buttons = await finishedActions(fake, 'C0BUSY');
    const done = await finishedJob(fake, 'C0BUSY');
    await h.close({ fake: true });
    h = undefined;
    expect(posts().map((c) => c.status)).toEqual([429, 200]);
    expect(actionMessages(fake, 'C0BUSY').map((m) => m.ts)).toEqual([buttons.ts]);
    expect(buttonsOf(done)).toEqual([]);
    expect(fake.messagesIn(fake.dmOf('U0ALICE'))).toEqual([]);
    await fake.close();
  }, 30_000);

  it('posts the end of a job anew in its channel once Slack’s Retry-After is over, not in the requester’s direct messages', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 1500 }, bot: { logger } });
    const { fake } = h;
    const finalPosts = () => fake.callsOf('chat.postMessage').filter((c) => c.args.channel === 'C0BUSYEND' && isFinalUpdate(c.args));
    await fake.command({ command: '/imagine', text: 'a lantern whose message vanished --quality low', channel: 'C0BUSYEND', user: 'U0ALICE' });
    const running = await fake.waitFor(() => jobMessages(fake, 'C0BUSYEND').find((m) => statusOf(m).includes('Drawing')), 'the job to start');
    fake.messages.splice(fake.messages.indexOf(running), 1);
    const clock = clockOfLongTimers();
    try {
      fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 20, count: 1, match: (args) => args.channel === 'C0BUSYEND' && isFinalUpdate(args) });
      const postedAgain = fake.waitFor(() => finalPosts().length > 1 && { at: clock.moved() }, 'the end posted again', 10 * 60_000);
      await fake.clickButton(running, 'pictor_cancel', 'U0ALICE');
      expect((await fake.waitFor(() => rateLimitedWait(logger), 'the bot to wait', 10 * 60_000)).obj).toMatchObject({ channel: 'C0BUSYEND', retryAfterMs: 20_000 });
      await clock.advance(19_999);
      await clock.advance(1);
      expect((await postedAgain).at).toBe(20_000);
    } finally {
      clock.restore();
    }
    const ended = await finishedJob(fake, 'C0BUSYEND');
    expect(statusOf(ended)).toContain('Cancelled');
    await h.close({ fake: true });
    h = undefined;
    expect(finalPosts().map((c) => c.status)).toEqual([429, 200]);
    expect(jobMessages(fake, 'C0BUSYEND')).toHaveLength(1);
    expect(fake.messagesIn(fake.dmOf('U0ALICE'))).toEqual([]);
    await fake.close();
  }, 30_000);

  it('does not wait past a minute: buttons Slack holds back longer are shown on the job’s message, posted beside the images never', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ bot: { logger } });
    const { fake } = h;
    // Slack refuses every post of the buttons for two minutes: each try within them would get its 429.
    fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 120, count: 3, match: isActionsPost('C0HELD') });
    await fake.command({ command: '/imagine', text: 'a lantern held back --quality low', channel: 'C0HELD', user: 'U0ALICE' });
    const done = await fake.waitFor(() => jobMessages(fake, 'C0HELD').find((m) => isFinished(m) && hasButton(m, 'pictor_reroll')), 'the buttons on the job’s message');
    await h.close({ fake: true });
    h = undefined;
    expect(buttonsOf(done).map((b) => b.actionId)).toEqual(['pictor_reroll', 'pictor_edit', 'pictor_delete']);
    expect(fake.callsOf('chat.postMessage').filter((c) => isActionsPost('C0HELD')(c.args)).map((c) => c.status)).toEqual([429]);
    expect(actionMessages(fake, 'C0HELD')).toEqual([]);
    expect(rateLimitedWait(logger)).toBeUndefined();
    await fake.close();
  }, 30_000);
});

describe('the end of a job posted anew, when Slack keeps rate-limiting it', () => {
  const isEndPost = (...channels: string[]) => (args: Record<string, unknown>) => channels.includes(String(args.channel)) && isFinalUpdate(args);
  const endPosts = (fake: FakeSlack, channel: string) => fake.callsOf('chat.postMessage').filter((c) => isEndPost(channel)(c.args)).map((c) => c.status);
  const waits = (logger: RecordingLogger) => logger.entries.filter((e) => e.msg?.startsWith('Slack rate-limited a message of a job that is sent once'));
  const gaveUp = (logger: RecordingLogger) => logger.entries.find((e) => e.msg === 'could not send the end of a job to the requester directly');

  /** Slack rate-limits the calls `match` takes, one after another, with these Retry-After seconds, in turn. */
  function failInTurn(fake: FakeSlack, match: (args: Record<string, unknown>) => boolean, retryAfterSecs: readonly number[]): void {
    let turn = 0;
    // The fake may ask a fault's `match` more than once of one call: the next turn is set once per call.
    const seen = new WeakSet<object>();
    const next = () => {
      if (turn >= retryAfterSecs.length) return;
      fake.failNext('chat.postMessage', {
        status: 429,
        retryAfterSec: retryAfterSecs[turn++]!,
        count: 1,
        match: (args) => {
          if (!match(args)) return false;
          if (!seen.has(args)) queueMicrotask(next);
          seen.add(args);
          return true;
        },
      });
    };
    next();
  }

  /** A job in `channel` whose message is deleted while it draws, then cancelled by U0ALICE: its end is posted anew. */
  async function cancelWithMessageGone(fake: FakeSlack, channel: string): Promise<void> {
    await fake.command({ command: '/imagine', text: 'a lantern whose message vanished --quality low', channel, user: 'U0ALICE' });
    const running = await fake.waitFor(() => jobMessages(fake, channel).find((m) => statusOf(m).includes('Drawing')), 'the job to start');
    fake.messages.splice(fake.messages.indexOf(running), 1);
    await fake.clickButton(running, 'pictor_cancel', 'U0ALICE');
  }

  it('waits a second at least for a Retry-After of 0, and gives up after ten 429s in its channel, then three more of their own in the requester’s direct messages (the README’s numbers)', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 1500 }, bot: { logger } });
    const { fake } = h;
    const dm = fake.dmOf('U0ALICE');
    const clock = clockOfLongTimers();
    try {
      fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 0, count: 10_000, match: isEndPost('C0NOWAIT', dm) });
      await cancelWithMessageGone(fake, 'C0NOWAIT');
      for (let i = 1; i <= 10; i++) {
        await fake.waitFor(() => waits(logger).length >= i || undefined, `wait ${i}`, 10 * 60_000);
        expect(waits(logger)).toHaveLength(i);
        expect(waits(logger)[i - 1]!.obj).toMatchObject({ channel: 'C0NOWAIT', retryAfterMs: 0, waitMs: 1000 });
        await clock.advance(1000 - 1);
        expect(endPosts(fake, 'C0NOWAIT')).toHaveLength(i);
        await clock.advance(1);
      }
      for (let i = 1; i <= 3; i++) {
        const all = 10 + i;
        await fake.waitFor(() => waits(logger).length >= all || undefined, `wait ${i} in the direct messages`, 10 * 60_000);
        expect(waits(logger)[all - 1]!.obj).toMatchObject({ channel: dm, retryAfterMs: 0, waitMs: 1000 });
        await clock.advance(1000);
      }
      await fake.waitFor(() => gaveUp(logger), 'the bot to give up', 10 * 60_000);
      expect(clock.moved()).toBe((10 + 3) * 1000);
    } finally {
      clock.restore();
    }
    // The job's end is settled: the stop does not wait for it.
    await h.close({ fake: true });
    h = undefined;
    expect(endPosts(fake, 'C0NOWAIT')).toEqual(Array.from({ length: 10 + 1 }, () => 429));
    expect(endPosts(fake, dm)).toEqual(Array.from({ length: 3 + 1 }, () => 429));
    expect(waits(logger)).toHaveLength(10 + 3);
    await fake.close();
  }, 30_000);

  it('waits out a minute of Retry-After in its channel and not a second more, then 30 seconds in the requester’s direct messages and not a second more (the README’s numbers)', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 1500 }, bot: { logger } });
    const { fake } = h;
    const dm = fake.dmOf('U0ALICE');
    const clock = clockOfLongTimers();
    try {
      // 20 s three times (a minute, all waited), then 1 s (past the minute: the direct messages); there 15 s twice (30 s), then 1 s (past them: given up).
      failInTurn(fake, isEndPost('C0EXACT', dm), [20, 20, 20, 1, 15, 15, 1]);
      await cancelWithMessageGone(fake, 'C0EXACT');
      for (const [i, sec] of [20, 20, 20, 15, 15].entries()) {
        await fake.waitFor(() => waits(logger).length > i || undefined, `wait ${i + 1}`, 10 * 60_000);
        await clock.advance(sec * 1000);
      }
      await fake.waitFor(() => gaveUp(logger), 'the bot to give up', 10 * 60_000);
      expect(clock.moved()).toBe(60_000 + 30_000);
    } finally {
      clock.restore();
    }
    await h.close({ fake: true });
    h = undefined;
    expect(endPosts(fake, 'C0EXACT')).toEqual([429, 429, 429, 429]);
    expect(endPosts(fake, dm)).toEqual([429, 429, 429]);
    expect(waits(logger).map((e) => (e.obj as { waitMs?: number }).waitMs)).toEqual([20_000, 20_000, 20_000, 15_000, 15_000]);
    await fake.close();
  }, 30_000);

  it('waits a minute in all in its channel, then sends the end to the requester’s direct messages, which wait out a 429 of their own: a rate-limited workspace still gets its end', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 1500 }, bot: { logger } });
    const { fake } = h;
    const dm = fake.dmOf('U0ALICE');
    const clock = clockOfLongTimers();
    try {
      // Three 429s in the channel (a third wait of 25 s would pass the minute), then one in the direct messages.
      fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 25, count: 4, match: isEndPost('C0MINUTE', dm) });
      await cancelWithMessageGone(fake, 'C0MINUTE');
      for (let i = 1; i <= 2; i++) {
        await fake.waitFor(() => waits(logger).length >= i || undefined, `wait ${i}`, 10 * 60_000);
        await clock.advance(25_000);
      }
      expect(clock.moved()).toBeLessThanOrEqual(RATE_LIMITED_WAIT_MAX_MS);
      await fake.waitFor(() => waits(logger)[2], 'the bot to wait in the direct messages', 10 * 60_000);
      expect(waits(logger).map((e) => (e.obj as { channel?: string }).channel)).toEqual(['C0MINUTE', 'C0MINUTE', dm]);
      await clock.advance(25_000);
    } finally {
      clock.restore();
    }
    const ended = await fake.waitFor(() => fake.messagesIn(dm).find((m) => statusOf(m).includes('Cancelled')), 'the end in the direct messages');
    await h.close({ fake: true });
    h = undefined;
    expect(endPosts(fake, 'C0MINUTE')).toEqual([429, 429, 429]);
    expect(endPosts(fake, dm)).toEqual([429, 200]);
    expect(fake.messagesIn(dm)).toEqual([ended]);
    expect(gaveUp(logger)).toBeUndefined();
    await fake.close();
  }, 30_000);

  it('keeps waiting when the bot begins to stop, and posts the end once Slack’s Retry-After is over: the next start could not show it, its message gone', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 1500 }, bot: { logger } });
    const { fake, dataDir } = h;
    const dm = fake.dmOf('U0ALICE');
    const clock = clockOfLongTimers();
    let stopped: Promise<void>;
    try {
      fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 60, count: 1, match: isEndPost('C0STOPPING', dm) });
      const writer = seenCalling(ChannelWriter.prototype, 'write', (channel) => channel === 'C0STOPPING');
      await cancelWithMessageGone(fake, 'C0STOPPING');
      await fake.waitFor(() => waits(logger)[0], 'the bot to wait', 10 * 60_000);
      // The bot begins to stop while Slack has the end wait: its writer tells its waits so (`stopping`).
      const shed = spyOnInstance(ChannelWriter.prototype, 'shedProgress', writer);
      stopped = h.bot.stop();
      await fake.waitFor(() => shed.mock.calls.length > 0 || undefined, 'the bot to begin to stop', 10 * 60_000);
      shed.mockRestore();
      await clock.advance(60_000 - 1);
      expect(endPosts(fake, 'C0STOPPING')).toEqual([429]);
      await clock.advance(1);
      await fake.waitFor(() => endPosts(fake, 'C0STOPPING').length > 1 || undefined, 'the end posted again', 10 * 60_000);
    } finally {
      clock.restore();
    }
    await stopped;
    const ended = await finishedJob(fake, 'C0STOPPING');
    expect(statusOf(ended)).toContain('Cancelled');
    await h.close({ fake: true, dataDir: true });
    h = undefined;
    expect(endPosts(fake, 'C0STOPPING')).toEqual([429, 200]);
    expect(endPosts(fake, dm)).toEqual([]);
    // Shown and marked ended: nothing is left for the next start's sweep.
    const dir = join(dataDir, 'slack', 'requests');
    const [file] = (await readdir(dir)).filter((name) => name.endsWith('.json'));
    const saved = (JSON.parse(readFileSync(join(dir, file!), 'utf8')) as { value: Record<string, unknown> }).value;
    expect(saved.status).toBe('ended');
    await rm(dataDir, { recursive: true, force: true });
    await fake.close();
  }, 30_000);
  /**
   * A job's end Slack asks to wait `retryAfterSec` when the bot begins to stop with a deadline ten minutes away: whether
   * it was posted in its channel once the wait was over (true), or sent to the requester's direct messages at once.
   */
  async function endWaitedThroughStop(channel: string, retryAfterSec: number): Promise<boolean> {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 1500 }, bot: { logger } });
    const { fake } = h;
    const dm = fake.dmOf('U0ALICE');
    const clock = clockOfLongTimers();
    const date = dateStoppedAt(isEndPost(channel, dm));
    try {
      fake.failNext('chat.postMessage', { status: 429, retryAfterSec, count: 1, match: date.match });
      const writer = seenCalling(ChannelWriter.prototype, 'write', (to) => to === channel);
      await cancelWithMessageGone(fake, channel);
      await fake.waitFor(() => waits(logger)[0], 'the bot to wait', 10 * 60_000);
      const shed = spyOnInstance(ChannelWriter.prototype, 'shedProgress', writer);
      const stopped = h.bot.stop({ until: Date.now() + 10 * 60_000 });
      await fake.waitFor(() => shed.mock.calls.length > 0 || undefined, 'the bot to begin to stop', 10 * 60_000);
      shed.mockRestore();
      await clock.advance(retryAfterSec * 1000);
      await fake.waitFor(() => endPosts(fake, channel).length > 1 || endPosts(fake, dm).length > 0 || undefined, 'the end shown', 10 * 60_000);
      await stopped;
    } finally {
      date.restore();
      clock.restore();
    }
    await h.close({ fake: true });
    h = undefined;
    const inChannel = endPosts(fake, channel);
    await fake.close();
    return inChannel.length === 2;
  }

  it('waits out, through a stop with a far deadline, a Retry-After that ends within the README’s 10 seconds after the stop begins to wait for its jobs', async () => {
    expect(await endWaitedThroughStop('C0NINE', 9)).toBe(true);
  }, 30_000);

  it('does not wait out, through a stop with a far deadline, a Retry-After that ends past those 10 seconds: the direct messages are tried at once', async () => {
    expect(await endWaitedThroughStop('C0ELEVEN', 11)).toBe(false);
  }, 30_000);

  it('stops waiting when a later call of the stop brings its deadline before the end of Slack’s Retry-After, and tries the requester’s direct messages at once, once', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 1500 }, bot: { logger } });
    const { fake } = h;
    const dm = fake.dmOf('U0ALICE');
    const clock = clockOfLongTimers();
    try {
      fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 60, count: 1, match: isEndPost('C0SOONER', dm) });
      const writer = seenCalling(ChannelWriter.prototype, 'write', (channel) => channel === 'C0SOONER');
      await cancelWithMessageGone(fake, 'C0SOONER');
      await fake.waitFor(() => waits(logger)[0], 'the bot to wait', 10 * 60_000);
      // A stop without a deadline: the end's wait goes on through it.
      const shed = spyOnInstance(ChannelWriter.prototype, 'shedProgress', writer);
      const stopped = h.bot.stop();
      await fake.waitFor(() => shed.mock.calls.length > 0 || undefined, 'the bot to begin to stop', 10 * 60_000);
      shed.mockRestore();
      expect(endPosts(fake, dm)).toEqual([]);
      // Then a deadline 5 s away: the 60 s no longer fit, so the direct messages are tried now.
      const sooner = h.bot.stop({ until: Date.now() + 5000 });
      await fake.waitFor(() => endPosts(fake, dm).length > 0 || undefined, 'the end in the direct messages', 10_000);
      await Promise.all([stopped, sooner]);
      expect(clock.moved()).toBe(0);
    } finally {
      clock.restore();
    }
    await h.close({ fake: true });
    h = undefined;
    expect(endPosts(fake, 'C0SOONER')).toEqual([429]);
    expect(endPosts(fake, dm)).toEqual([200]);
    expect(fake.messagesIn(dm).filter((m) => statusOf(m).includes('Cancelled'))).toHaveLength(1);
    await fake.close();
  }, 30_000);

  it('tries the requester’s direct messages at once, once, when Slack asks the end to wait past the stop’s deadline, and logs the end as lost (with its charge) when they refuse it too: the stop is not held past its deadline', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 1500 }, bot: { logger } });
    const { fake } = h;
    const dm = fake.dmOf('U0ALICE');
    const lost = () => logger.entries.find((e) => e.msg?.startsWith('the end of a job was lost'));
    const clock = clockOfLongTimers();
    // From Slack's first 429 on: the stop's 5 s are the test's clock's, however long this machine takes to stop.
    const date = dateStoppedAt(isEndPost('C0DEADLINE', dm));
    try {
      // Slack asks for 30 s, in the channel and in the direct messages alike.
      fake.failNext('chat.postMessage', { status: 429, retryAfterSec: 30, count: 2, match: date.match });
      await cancelWithMessageGone(fake, 'C0DEADLINE');
      await fake.waitFor(() => waits(logger)[0], 'the bot to wait', 10 * 60_000);
      // The stop begins with 5 s left: the 30 s Slack asked for do not fit.
      const stopped = h.bot.stop({ until: Date.now() + 5000 });
      const entry = await fake.waitFor(() => lost(), 'the end to be logged as lost', 10 * 60_000);
      expect(entry.level).toBe('warn');
      expect(entry.obj).toMatchObject({ jobId: expect.any(String), status: 'cancelled', chargedUsd: expect.any(Number) });
      await stopped;
      // Nothing waited on the clock: the direct messages were tried at once, and the stop did not wait for the 30 s.
      expect(clock.moved()).toBe(0);
    } finally {
      date.restore();
      clock.restore();
    }
    await h.close({ fake: true });
    h = undefined;
    expect(endPosts(fake, 'C0DEADLINE')).toEqual([429]);
    expect(endPosts(fake, dm)).toEqual([429]);
    expect(waits(logger)).toHaveLength(1);
    await fake.close();
  }, 30_000);
});
