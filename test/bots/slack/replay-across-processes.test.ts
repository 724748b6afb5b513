import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openBotState, type BotState } from '../../../bots/state/index.js';
import { RedisLink, RedisQuotaStore, silentLogger } from '../../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { testTempDir } from '../../helpers/temp-dir.js';
import type { Space } from '../../../bots/state/StateStore.js';
import { withSpace } from '../../helpers/runner-harness.js';
import type { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import { signedHeaders } from '../../fakes/slack/sign-request.js';
import { RecordingLogger } from '../discord/harness.js';
import { say } from '../../../bots/runner/index.js';
import { finishedJob, jobMessages, startHarness, type Harness } from './harness.js';

/** Closed last first; a harness sharing another's fake leaves it open. */
const harnesses: { h: Harness; keepFake?: boolean }[] = [];
afterEach(async () => {
  for (const { h, keepFake } of harnesses.splice(0).reverse()) await h.close(keepFake ? { fake: true } : {});
});

const generations = (...hs: Harness[]) => hs.flatMap((h) => h.emulator.requests.filter((r) => r.path === '/v1/images/generations'));

/** Waits until the bot has dropped a request as one it has seen: nothing of it runs after that. */
async function refusedAsReplay(logger: RecordingLogger): Promise<void> {
  await vi.waitFor(() => expect(logger.entries.map((e) => e.msg)).toContain('refused a replayed Slack request'), { timeout: 15_000 });
}

describe('a replayed signed Slack request', () => {
  it('is dropped after a restart: the signatures seen are kept in the data folder', async () => {
    const before = await startHarness({ emulator: { latencyMs: 10 } });
    await before.fake.command({ command: '/imagine', text: 'a cat --quality low', channel: 'C0REPLAY' });
    await finishedJob(before.fake, 'C0REPLAY');
    await before.close({ fake: true, dataDir: true });

    const logger = new RecordingLogger();
    const after = await startHarness({ emulator: { latencyMs: 10 }, fake: before.fake, dataDir: before.dataDir, bot: { logger } });
    harnesses.push({ h: after });
    const replayed = await after.fake.replayLastDelivery();
    expect(replayed.status).toBe(200);
    await refusedAsReplay(logger);
    expect(generations(after)).toHaveLength(0);
    expect(jobMessages(after.fake, 'C0REPLAY')).toHaveLength(1);
  });
});

/** An `app_mention` event as Slack sends it: one `event_id` for the event, whatever delivery carries it. */
function appMention(fake: FakeSlack, channel: string, text: string) {
  const ts = `${Math.floor(Date.now() / 1000)}.000100`;
  return {
    token: 'legacy-verification-token',
    team_id: fake.teamId,
    api_app_id: 'A0PICTOR',
    event: { type: 'app_mention', user: 'U0ALICE', text: `<@${fake.botUserId}> ${text}`, ts, channel, event_ts: ts, team: fake.teamId },
    type: 'event_callback',
    event_id: 'Ev0RETRIED',
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: fake.teamId, user_id: fake.botUserId, is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
  };
}

/**
 * Delivers an event to a bot's events URL as Slack does: the first delivery, or a retry (`X-Slack-Retry-Num`), which
 * Slack signs again — a timestamp of its own, so a signature the replay guard has not seen.
 */
async function deliver(fake: FakeSlack, url: string, event: object, retry?: { num: number; timestampSec: number }): Promise<number> {
  const body = JSON.stringify(event);
  const headers = {
    ...signedHeaders(fake.signingSecret, body, retry?.timestampSec),
    'content-type': 'application/json',
    ...(retry ? { 'x-slack-retry-num': String(retry.num), 'x-slack-retry-reason': 'http_timeout' } : {}),
  };
  const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  return response.status;
}

/** Waits until a bot has dropped a message as one already taken (nothing of it runs after that), or ran it again. */
async function droppedOrRunAgain(logger: RecordingLogger, hs: Harness[], times = 1): Promise<void> {
  const dropped = () => logger.entries.filter((e) => e.msg === 'a Slack message already taken: not answered again').length;
  await vi.waitFor(() => expect(dropped() >= times || generations(...hs).length > 0).toBe(true), { timeout: 15_000 });
}

/** Slack retries a late event after a few seconds at the soonest (its 3 s timeout): a later timestamp. */
const retryOf = (num: number) => ({ num, timestampSec: Math.floor(Date.now() / 1000) + 3 });

describe('a Slack mention retried by Slack', () => {
  it('starts no second job after a restart: the messages taken are kept in the data folder', async () => {
    const before = await startHarness({ emulator: { latencyMs: 10 } });
    const mention = appMention(before.fake, 'C0RETRY', 'a cat --quality low');
    expect(await deliver(before.fake, before.bot.url!, mention)).toBe(200);
    await finishedJob(before.fake, 'C0RETRY');
    const first = generations(before);
    await before.close({ fake: true, dataDir: true });

    const logger = new RecordingLogger();
    const after = await startHarness({ emulator: { latencyMs: 10 }, fake: before.fake, dataDir: before.dataDir, bot: { logger } });
    harnesses.push({ h: after });
    expect(await deliver(after.fake, after.bot.url!, mention, retryOf(1))).toBe(200);
    await droppedOrRunAgain(logger, [after]);
    expect(first).toHaveLength(1);
    expect(generations(after)).toHaveLength(0);
    expect(jobMessages(after.fake, 'C0RETRY')).toHaveLength(1);
    expect(after.fake.ephemerals).toEqual([]);
  });
});

const onMySide = `:warning: ${say(undefined, 'error.on_my_side')}`;
const notChecked = 'could not check a Slack message against the ones taken lately: no job started, the member is told';

describe('a Slack mention while the bots’ state cannot answer', () => {
  /** A bot whose `slack-messages` space is the data folder's own, seen through `wrap` (a Redis gone, slow, a disk failing). */
  /**
   * A bot whose `slack-messages` space is `wrap`'s. `onChecked`, when given, is called a turn after the replay guard
   * answered each request's check, once the listener it let through has run to its own claim.
   */
  async function withMessages(name: string, wrap: (space: Space<unknown>) => Partial<Space<unknown>>, onChecked?: () => void) {
    const state = await openBotState({ dataDir: await testTempDir(`pictor-mention-${name}-`), logger: silentLogger() });
    const logger = new RecordingLogger();
    const messages = withSpace(state, state.spaces.slackMessages, wrap);
    const checked = onChecked
      ? withSpace(messages, state.spaces.slackSeen, (space) => ({ claimOnce: (key, token) => space.claimOnce(key, token).finally(() => void setImmediate(onChecked)) }))
      : messages;
    const h = await startHarness({ emulator: { latencyMs: 10 }, bot: { state: checked, logger } });
    return { h, logger, state };
  }

  /** A bot whose claims are `claimOf`'s, given the data folder's own `slack-messages` space. */
  const withClaim = (name: string, claimOf: (space: Space<unknown>) => (key: string) => Promise<boolean>) => withMessages(name, (space) => ({ claimOnce: claimOf(space) }));

  it.each([
    ['fails', () => Promise.reject(new Error('the state does not answer'))],
    ['never answers (a Redis down queues the claim)', () => new Promise<boolean>(() => {})],
  ])('when the claim %s, starts no job, as a paid job may be at stake: the member is told privately it failed on our side, and that is logged', async (name, claimOnce) => {
    const { h, logger, state } = await withClaim(name.split(' ')[0]!, () => claimOnce);
    try {
      expect(await deliver(h.fake, h.bot.url!, appMention(h.fake, 'C0DOWN', 'a cat --quality low'))).toBe(200);
      const note = await h.fake.waitFor(() => h.fake.ephemerals[0], 'the private answer');
      expect(note).toMatchObject({ channel: 'C0DOWN', user: 'U0ALICE', text: onMySide });
      expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.msg)).toEqual([notChecked]);
      await h.runner.shutdown({ graceMs: 500 });
      expect(generations(h)).toHaveLength(0);
      expect(jobMessages(h.fake, 'C0DOWN')).toHaveLength(0);
      expect(h.fake.ephemerals).toHaveLength(1);
    } finally {
      await h.close();
      await state.close();
    }
  });

  it('tries the message again when it comes again: Slack’s retry after a failed claim starts its job', async () => {
    let claims = 0;
    const { h, logger, state } = await withClaim('again', (space) => (key) => (++claims === 1 ? Promise.reject(new Error('the state does not answer')) : space.claimOnce(key)));
    try {
      const mention = appMention(h.fake, 'C0AGAIN', 'a cat --quality low');
      expect(await deliver(h.fake, h.bot.url!, mention)).toBe(200);
      await h.fake.waitFor(() => h.fake.ephemerals[0], 'the private answer');
      expect(await deliver(h.fake, h.bot.url!, mention, retryOf(1))).toBe(200);
      await finishedJob(h.fake, 'C0AGAIN');
      expect(generations(h)).toHaveLength(1);
      expect(logger.entries.map((e) => e.msg)).not.toContain('a Slack message already taken: not answered again');
    } finally {
      await h.close();
      await state.close();
    }
  });

  it('tries the message again when Slack retries it after a claim that answered too late: the late claim gives the message back, and the retry starts its job', async () => {
    let answer: () => void = () => {};
    let landed = 0;
    let released = 0;
    const { h, state } = await withMessages('late', (space) => ({
      claimOnce: (key, token) =>
        ++landed === 1
          ? new Promise<void>((resolve) => (answer = resolve)).then(() => space.claimOnce(key, token)).finally(() => void (landed = 100))
          : space.claimOnce(key, token),
      releaseClaim: (key, token) => space.releaseClaim(key, token).then(() => void released++),
    }));
    try {
      const mention = appMention(h.fake, 'C0LATE', 'a cat --quality low');
      expect(await deliver(h.fake, h.bot.url!, mention)).toBe(200);
      expect(await h.fake.waitFor(() => h.fake.ephemerals[0], 'the private answer')).toMatchObject({ channel: 'C0LATE', text: onMySide });
      // The state answers at last: the claim took the message, for a request refused meanwhile.
      answer();
      await vi.waitFor(() => expect(landed).toBe(100));
      await vi.waitFor(() => expect(released).toBe(1));
      expect(await deliver(h.fake, h.bot.url!, mention, retryOf(1))).toBe(200);
      await finishedJob(h.fake, 'C0LATE');
      expect(generations(h)).toHaveLength(1);
      expect(h.fake.ephemerals).toHaveLength(1);
    } finally {
      answer();
      await h.close();
      await state.close();
    }
  });

  it('starts the job of Slack’s retry sent while the state is still slow: the late claim, having taken the message, is handed to the retry, not given back', async () => {
    let answer: () => void = () => {};
    let claims = 0;
    let released = 0;
    let checked = 0;
    const { h, state } = await withMessages(
      'slow',
      (space) => ({
        claimOnce: (key, token) => (++claims === 1 ? new Promise<void>((resolve) => (answer = resolve)).then(() => space.claimOnce(key, token)) : space.claimOnce(key, token)),
        releaseClaim: (key, token) => space.releaseClaim(key, token).then(() => void released++),
      }),
      () => checked++,
    );
    try {
      const mention = appMention(h.fake, 'C0SLOW', 'a cat --quality low');
      expect(await deliver(h.fake, h.bot.url!, mention)).toBe(200);
      expect(await h.fake.waitFor(() => h.fake.ephemerals[0], 'the private answer')).toMatchObject({ channel: 'C0SLOW', text: onMySide });
      // The retry comes before the state answers the first claim.
      expect(await deliver(h.fake, h.bot.url!, mention, retryOf(1))).toBe(200);
      // Slack has its 200 before the retry's listener reaches its claim: the state answers once it has.
      await vi.waitFor(() => expect(checked).toBe(2));
      answer();
      await finishedJob(h.fake, 'C0SLOW');
      expect(generations(h)).toHaveLength(1);
      expect(h.fake.ephemerals).toHaveLength(1);
      expect({ claims, released }).toEqual({ claims: 1, released: 0 });
    } finally {
      answer();
      await h.close();
      await state.close();
    }
  });

  it('starts the job of the message’s twin event that came while the first event’s claim was still under way, when that claim fails', async () => {
    let fail: (error: Error) => void = () => {};
    let claims = 0;
    let checked = 0;
    const dataDir = await testTempDir('pictor-mention-pending-');
    const opened = await openBotState({ dataDir, logger: silentLogger() });
    const messages = withSpace(opened, opened.spaces.slackMessages, (space) => ({
      claimOnce: (key, token) => (++claims === 1 ? new Promise<boolean>((_resolve, reject) => (fail = reject)) : space.claimOnce(key, token)),
    }));
    // The replay guard's check of each request: counted a turn after it is answered, once the listener it lets through has run to its own claim.
    const state = withSpace(messages, opened.spaces.slackSeen, (space) => ({
      claimOnce: (key, token) => space.claimOnce(key, token).finally(() => void setImmediate(() => checked++)),
    }));
    const logger = new RecordingLogger();
    const h = await startHarness({ emulator: { latencyMs: 10 }, bot: { state, logger } });
    try {
      const mention = appMention(h.fake, 'C0PENDING', 'a cat --quality low');
      expect(await deliver(h.fake, h.bot.url!, mention)).toBe(200);
      await vi.waitFor(() => expect(claims).toBe(1));
      // Slack's `message` event of the same message, while the first event's claim waits for the state.
      const { event } = mention;
      const twin = { ...mention, event_id: 'Ev0TWIN', event: { type: 'message', channel: event.channel, channel_type: 'channel', user: event.user, text: event.text, ts: event.ts, team: event.team } };
      expect(await deliver(h.fake, h.bot.url!, twin)).toBe(200);
      await vi.waitFor(() => expect(checked).toBe(2));
      // The first claim fails: its event is refused (the member told), and the twin asks the state for itself.
      fail(new Error('the state does not answer'));
      await finishedJob(h.fake, 'C0PENDING');
      expect(generations(h)).toHaveLength(1);
      expect(h.fake.ephemerals.map((e) => e.text)).toEqual([onMySide]);
      expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.msg)).toEqual([notChecked]);
    } finally {
      await h.close();
      await opened.close();
    }
  });

  it('tells the member once, and logs one error, when the message’s twin event fails its claim too', async () => {
    let claims = 0;
    const { h, logger, state } = await withClaim('twin', () => () => (claims++, Promise.reject(new Error('the state does not answer'))));
    try {
      const mention = appMention(h.fake, 'C0TWIN', 'a cat --quality low');
      expect(await deliver(h.fake, h.bot.url!, mention)).toBe(200);
      await h.fake.waitFor(() => h.fake.ephemerals[0], 'the private answer');
      // Slack's `message` event of the same message, after the first failed.
      const { event } = mention;
      const twin = { ...mention, event_id: 'Ev0TWIN', event: { type: 'message', channel: event.channel, channel_type: 'channel', user: event.user, text: event.text, ts: event.ts, team: event.team } };
      expect(await deliver(h.fake, h.bot.url!, twin)).toBe(200);
      await vi.waitFor(() => expect(logger.entries.filter((e) => e.msg?.startsWith('could not check a Slack message'))).toHaveLength(2));
      await h.runner.shutdown({ graceMs: 500 });
      expect(claims).toBe(2);
      expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.msg)).toEqual([notChecked]);
      expect(h.fake.ephemerals).toHaveLength(1);
      expect(generations(h)).toHaveLength(0);
    } finally {
      await h.close();
      await state.close();
    }
  });
});

describe('a Slack mention whose job cannot be started', () => {
  it('tells the member privately that it failed on our side, and logs it once, when the request cannot be saved', async () => {
    const state = await openBotState({ dataDir: await testTempDir('pictor-mention-nosave-'), logger: silentLogger() });
    const logger = new RecordingLogger();
    const h = await startHarness({ emulator: { latencyMs: 10 }, bot: { logger, state: withSpace(state, state.spaces.slackRequests, () => ({ put: () => Promise.reject(new Error('the disk is full')) })) } });
    try {
      expect(await deliver(h.fake, h.bot.url!, appMention(h.fake, 'C0NOSAVE', 'a cat --quality low'))).toBe(200);
      // Told, or (were it not) only the listener's failure that Bolt logs.
      await vi.waitFor(() => expect(h.fake.ephemerals.length > 0 || logger.entries.some((e) => e.msg === 'a Slack listener failed')).toBe(true), { timeout: 15_000 });
      expect(h.fake.ephemerals.map((e) => ({ channel: e.channel, user: e.user, text: e.text }))).toEqual([{ channel: 'C0NOSAVE', user: 'U0ALICE', text: onMySide }]);
      expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.msg)).toEqual(['a Slack job failed before the runner had it: its member is told']);
      await h.runner.shutdown({ graceMs: 500 });
      expect(generations(h)).toHaveLength(0);
      expect(jobMessages(h.fake, 'C0NOSAVE')).toHaveLength(0);
    } finally {
      await h.close();
      await state.close();
    }
  });
});

const redis = testRedis();

describe.skipIf(redis.skipReason)(`a Slack request sent again, two bots on one Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  let url: string;
  const prefixes: string[] = [];
  const opened: (BotState | RedisLink)[] = [];

  beforeAll(() => {
    url = requireRedisUrl(redis);
  });
  afterAll(async () => {
    for (const open of opened.reverse()) await open.close();
    if (url) for (const prefix of prefixes) await deleteKeys(url, prefix);
  });

  /** A process's ledger and state on the shared Redis. */
  async function onRedis(prefix: string) {
    const link = await RedisLink.open({ url, prefix });
    const state = await openBotState({ dataDir: await testTempDir('pictor-replay-'), redis: link, logger: silentLogger() });
    opened.push(link, state);
    return { store: new RedisQuotaStore({ redis: link.commands, prefix }), bot: { state } };
  }

  /** Two bots on one Redis sharing one fake Slack; the second's log is kept. */
  async function twoBots(name: string) {
    const prefix = uniquePrefix(name);
    prefixes.push(prefix);
    const first = await startHarness({ emulator: { latencyMs: 10 }, ...(await onRedis(prefix)) });
    harnesses.push({ h: first });
    const logger = new RecordingLogger();
    const onSecond = await onRedis(prefix);
    const second = await startHarness({ emulator: { latencyMs: 10 }, fake: first.fake, ...onSecond, bot: { ...onSecond.bot, logger } });
    harnesses.push({ h: second, keepFake: true });
    return { first, second, logger };
  }

  it('replayed as it was signed, is dropped by the second bot when the first one ran it', async () => {
    const { first, second, logger } = await twoBots('replay');

    first.fake.deliverOverHttp(first.bot.url!);
    await first.fake.command({ command: '/imagine', text: 'a cat --quality low', channel: 'C0TWO' });
    await finishedJob(first.fake, 'C0TWO');
    first.fake.deliverOverHttp(second.bot.url!);
    const replayed = await first.fake.replayLastDelivery();
    expect(replayed.status).toBe(200);
    await refusedAsReplay(logger);
    expect(generations(first)).toHaveLength(1);
    expect(generations(second)).toHaveLength(0);
    expect(jobMessages(first.fake, 'C0TWO')).toHaveLength(1);
  });

  it('as Slack retries a mention, starts one job when the retry, or the message’s other event, reaches the other bot: one request to the image service, one job message', async () => {
    const { first: a, second: b, logger } = await twoBots('mention-retry');

    const mention = appMention(a.fake, 'C0RETRIED', 'a cat --quality low');
    expect(await deliver(a.fake, a.bot.url!, mention)).toBe(200);
    await finishedJob(a.fake, 'C0RETRIED');
    // The same message's `message` event (an event of its own) reaching the other bot shares the claim; then the retry.
    const twin = { ...mention, event_id: 'Ev0TWIN', event: { ...mention.event, type: 'message', channel_type: 'channel' } };
    expect(await deliver(a.fake, b.bot.url!, twin)).toBe(200);
    expect(await deliver(a.fake, b.bot.url!, mention, retryOf(1))).toBe(200);
    await droppedOrRunAgain(logger, [b], 2);
    expect(generations(a)).toHaveLength(1);
    expect(generations(b)).toHaveLength(0);
    expect(jobMessages(a.fake, 'C0RETRIED')).toHaveLength(1);
  });
});
