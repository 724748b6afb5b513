import { webApi } from '@slack/bolt';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RecordingLogger } from '../discord/harness.js';
import { UserGroups } from '../../../bots/slack/user-groups.js';
import { FakeSlack } from '../../fakes/slack/FakeSlack.js';

let fake: FakeSlack | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await fake?.close();
  fake = undefined;
});

/** A real Web API client against the stand-in Slack, with no retries (a failure is seen at once). */
async function start(options: Partial<ConstructorParameters<typeof UserGroups>[0]> = {}) {
  fake = await new FakeSlack().start();
  // A 429 is seen at once here; the bot's own client waits for Retry-After, and `waitMs` bounds that (tested below).
  const client = new webApi.WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
  const logger = new RecordingLogger();
  let now = 0;
  const groups = new UserGroups({ clientFor: async () => client, logger, now: () => now, ...options });
  return { fake, groups, logger, later: (ms: number) => (now += ms), calls: () => fake!.callsOf('usergroups.list').length };
}

/** A promise, and whether it has settled yet. */
function settles<T>(promise: Promise<T>) {
  const watched = { promise, done: false, after: async (step: () => Promise<unknown>) => (await step(), promise) };
  void promise.finally(() => (watched.done = true)).catch(() => {});
  return watched;
}

/** The answer of a call that must not wait on a timer: only the event loop turns (no fake time passes); undefined answers fail it. */
async function settledNow<T>(promise: Promise<T>): Promise<T> {
  const watched = settles(promise);
  for (let turn = 0; turn < 10 && !watched.done; turn++) await new Promise((resolve) => setImmediate(resolve));
  if (!watched.done) throw new Error('it waited on a timer');
  return promise;
}

/** Waits, turn by turn of the event loop (never on time), for `check` to hold. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let turn = 0; turn < 500; turn++) {
    if (await check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('never held');
}

const MISSING_SCOPE = { status: 200, error: 'missing_scope', extra: { needed: 'usergroups:read', provided: 'commands,chat:write' } };

describe('UserGroups', () => {
  it('tells which budgeted groups a member is in, from one usergroups.list per workspace and minute, whatever the number asking', async () => {
    const { fake, groups, later, calls } = await start();
    fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', users: ['U0DARA', 'U0IVY'] });
    fake.setUserGroup({ id: 'S0INTERNS', handle: 'interns', users: ['U0IVY'] });
    const ids = ['S0DESIGN', 'S0INTERNS'];
    expect(await Promise.all([groups.membership(fake.teamId, 'U0IVY', ids), groups.membership(fake.teamId, 'U0DARA', ids), groups.membership(fake.teamId, 'U0BOB', ids)])).toEqual([
      ['S0DESIGN', 'S0INTERNS'],
      ['S0DESIGN'],
      [],
    ]);
    expect(calls()).toBe(1);
    expect(fake.callsOf('usergroups.list')[0]!.args).toMatchObject({ include_users: 'true' });
    fake.setUserGroup({ id: 'S0INTERNS', handle: 'interns', users: ['U0IVY', 'U0DARA'] });
    later(30_000);
    expect(await groups.membership(fake.teamId, 'U0DARA', ids)).toEqual(['S0DESIGN']);
    later(31_000);
    expect(await groups.membership(fake.teamId, 'U0DARA', ids)).toEqual(['S0DESIGN', 'S0INTERNS']);
    expect(calls()).toBe(2);
    // A disabled group has no members.
    fake.setUserGroup({ id: 'S0INTERNS', handle: 'interns', users: ['U0IVY'], disabled: true });
    later(61_000);
    expect(await groups.membership(fake.teamId, 'U0IVY', ids)).toEqual(['S0DESIGN']);
  });

  it('keeps the last membership for an hour when the groups cannot be read, then knows none (undefined), and logs why once', async () => {
    const { fake, groups, logger, later } = await start();
    fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', users: ['U0DARA'] });
    expect(await groups.membership(fake.teamId, 'U0DARA', ['S0DESIGN'])).toEqual(['S0DESIGN']);
    fake.failNext('usergroups.list', { ...MISSING_SCOPE, count: 1000 });
    later(61_000);
    expect(await groups.membership(fake.teamId, 'U0DARA', ['S0DESIGN'])).toEqual(['S0DESIGN']);
    later(59 * 60_000);
    expect(await groups.membership(fake.teamId, 'U0DARA', ['S0DESIGN'])).toBeUndefined();
    expect(await groups.membership(fake.teamId, 'U0NEW', ['S0DESIGN'])).toBeUndefined();
    expect(logger.entries.filter((r) => String(r.msg).includes('usergroups:read'))).toHaveLength(1);
    // Asked again at most every 30 s while it fails.
    const failed = fake.callsOf('usergroups.list').filter((c) => c.error === 'missing_scope').length;
    expect(failed).toBe(2);
  });

  it('knows none when Slack is down or rate-limits at the first look-up', async () => {
    const { fake, groups } = await start();
    fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', users: ['U0DARA'] });
    fake.failNext('usergroups.list', { status: 429, retryAfterSec: 30 });
    expect(await groups.membership(fake.teamId, 'U0DARA', ['S0DESIGN'])).toBeUndefined();
  });

  it('answers within waitMs when Slack is slow — the last membership, or none — and keeps the late answer for next time', async () => {
    vi.useFakeTimers();
    let answer!: (value: unknown) => void;
    const client = { usergroups: { list: () => new Promise((resolve) => (answer = resolve)) } } as unknown as webApi.WebClient;
    const groups = new UserGroups({ clientFor: async () => client, logger: new RecordingLogger(), waitMs: 1000 });
    const asked = groups.membership('T1', 'U1', ['S1']);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await asked).toBeUndefined();
    answer({ ok: true, usergroups: [{ id: 'S1', handle: 'designers', users: ['U1'] }] });
    await vi.advanceTimersByTimeAsync(0);
    expect(await groups.membership('T1', 'U1', ['S1'])).toEqual(['S1']);
  });

  it('makes a Slack that does not answer cost one wait a workspace: a burst waits once, together; later members not at all', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { fake, groups, logger } = await start({ now: () => Date.now() });
    fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', users: ['U0DARA'] });
    const ids = ['S0DESIGN'];
    expect(await groups.membership(fake.teamId, 'U0DARA', ids)).toEqual(['S0DESIGN']);
    vi.advanceTimersByTime(61_000);
    const hold = fake.holdOpen('usergroups.list');
    fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', users: ['U0DARA', 'U0IVY'] });

    const first = settles(groups.membership(fake.teamId, 'U0DARA', ids));
    await fake.waitFor(() => hold.arrived() === 1, 'the look-up to reach Slack');
    await vi.advanceTimersByTimeAsync(500);
    // Half a second in, more members ask: they wait with the first, until its wait ends, not a second of their own.
    const burst = ['U0IVY', 'U0BOB'].map((user) => settles(groups.membership(fake.teamId, user, ids)));
    await vi.advanceTimersByTimeAsync(499);
    expect([first, ...burst].some((p) => p.done)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    // The last membership known: Ivy joined since, but Slack has not said so yet.
    expect(await Promise.all([first, ...burst].map((p) => p.promise))).toEqual([['S0DESIGN'], [], []]);

    // While the look-up is still under way, and once it has timed out, a member's answer waits for nothing.
    expect(await settledNow(groups.membership(fake.teamId, 'U0DARA', ids))).toEqual(['S0DESIGN']);
    await vi.advanceTimersByTimeAsync(9_000);
    expect(logger.entries.filter((e) => e.level === 'warn' && (e.obj as { code?: string }).code === 'timeout')).toHaveLength(1);
    expect(await settledNow(groups.membership(fake.teamId, 'U0DARA', ids))).toEqual(['S0DESIGN']);
    expect(hold.arrived()).toBe(1);

    // A background retry, 30 s later, asks again; members still do not wait for it, and its answer is used once it comes.
    await vi.advanceTimersByTimeAsync(30_000);
    await fake.waitFor(() => hold.arrived() === 2, 'the background retry to reach Slack');
    expect(await settledNow(groups.membership(fake.teamId, 'U0IVY', ids))).toEqual([]);
    hold.release();
    await eventually(async () => (await settledNow(groups.membership(fake.teamId, 'U0IVY', ids)))?.length === 1);
    expect(fake.callsOf('usergroups.list')).toHaveLength(3);
  });

  it('retries a look-up Slack does not answer in the background a bounded number of times, further apart each time; members asking meanwhile ask Slack nothing', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    let asked = 0;
    const client = { usergroups: { list: () => new Promise(() => {}) } } as unknown as webApi.WebClient;
    const groups = new UserGroups({ clientFor: async () => (asked++, client), logger: new RecordingLogger() });
    expect(await settles(groups.membership('T1', 'U1', ['S1'])).after(() => vi.advanceTimersByTimeAsync(1_000))).toBeUndefined();
    expect(asked).toBe(1);
    // Given up after 10 s; then asked again 30 s, 60 s, 120 s and 240 s after each try gave up — a member asking every
    // second in between waits for nothing and starts no look-up of their own (more than 30 s after a failure too).
    const tries: number[] = [];
    for (let s = 0; s < 3600; s++) {
      await vi.advanceTimersByTimeAsync(1_000);
      if (asked > tries.length + 1) tries.push(s + 2); // seconds since the first look-up
      if (tries.length < 4) expect(await settledNow(groups.membership('T1', 'U1', ['S1']))).toBeUndefined();
    }
    expect(tries).toEqual([40, 110, 240, 490]);
    expect(asked).toBe(5);
    // Once the retries are spent, the next member asking starts a look-up and waits for it once, as the first did.
    expect(await settles(groups.membership('T1', 'U1', ['S1'])).after(() => vi.advanceTimersByTimeAsync(1_000))).toBeUndefined();
    expect(asked).toBe(6);
    expect(await settledNow(groups.membership('T1', 'U2', ['S1']))).toBeUndefined();
  });

  it('keeps the background retry’s time when a look-up that timed out fails later still, and does not warn again', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    let asked = 0;
    const lists: Array<(error: Error) => void> = [];
    // The Web API client retries a look-up for minutes before it fails: here it fails when the test says so.
    const client = { usergroups: { list: () => new Promise((_, reject) => lists.push(reject)) } } as unknown as webApi.WebClient;
    const logger = new RecordingLogger();
    const groups = new UserGroups({ clientFor: async () => (asked++, client), logger });
    expect(await settles(groups.membership('T1', 'U1', ['S1'])).after(() => vi.advanceTimersByTimeAsync(10_000))).toBeUndefined();
    // Given up at 10 s, retried at 40 s, given up again at 50 s: the next retry is due at 110 s. The first look-up fails at 55 s.
    await vi.advanceTimersByTimeAsync(45_000);
    expect(asked).toBe(2);
    lists[0]!(Object.assign(new Error('A request error occurred: socket hang up'), { code: 'slack_webapi_request_error' }));
    await vi.advanceTimersByTimeAsync(0);
    // Members asking before the retry is due wait for nothing and start no look-up of their own (not from 85 s, 30 s after the late failure).
    for (let s = 56; s < 110; s++) {
      await vi.advanceTimersByTimeAsync(1_000);
      expect(await settledNow(groups.membership('T1', 'U1', ['S1']))).toBeUndefined();
    }
    expect(asked).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(asked).toBe(3);
    expect(logger.entries.filter((e) => e.level === 'warn')).toHaveLength(1);
  });

  it('asks Slack nothing more once stopped: neither the background retries nor the give-up of a look-up under way', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    let asked = 0;
    const client = { usergroups: { list: () => new Promise(() => {}) } } as unknown as webApi.WebClient;
    const logger = new RecordingLogger();
    const groups = new UserGroups({ clientFor: async () => (asked++, client), logger });
    // T1's look-up gave up and waits for its background retry; T2's is under way, not yet given up.
    expect(await settles(groups.membership('T1', 'U1', ['S1'])).after(() => vi.advanceTimersByTimeAsync(10_000))).toBeUndefined();
    expect(await settles(groups.membership('T2', 'U1', ['S1'])).after(() => vi.advanceTimersByTimeAsync(1_000))).toBeUndefined();
    expect(asked).toBe(2);
    expect(vi.getTimerCount()).toBe(2);

    groups.stop();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(await settledNow(groups.membership('T1', 'U1', ['S1']))).toBeUndefined();
    expect(await settledNow(groups.byHandle('T2', 'designers'))).toBeUndefined();
    expect(asked).toBe(2);
    expect(logger.entries.filter((e) => (e.obj as { teamId?: string }).teamId === 'T2')).toEqual([]);
  });

  it('finds a group by its handle for the admin command, and says when the app may not read them', async () => {
    const { fake, groups, later } = await start();
    fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', name: 'Design team', users: [] });
    expect(await groups.byHandle(fake.teamId, '@Designers')).toEqual({ id: 'S0DESIGN', handle: 'designers', name: 'Design team' });
    expect(await groups.byHandle(fake.teamId, '@nobody')).toBeUndefined();
    // A group disabled since (Slack never deletes one) is still found, so the budget it had can be cleared; an enabled group of the same handle first.
    fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', name: 'Design team', users: [], disabled: true });
    later(61_000);
    expect(await groups.byHandle(fake.teamId, '@designers')).toEqual({ id: 'S0DESIGN', handle: 'designers', name: 'Design team' });
    fake.setUserGroup({ id: 'S0DESIGN2', handle: 'designers', name: 'Designers', users: [] });
    later(61_000);
    expect(await groups.byHandle(fake.teamId, '@designers')).toMatchObject({ id: 'S0DESIGN2' });
    const { fake: other, groups: noScope } = await start();
    await fake.close();
    other.failNext('usergroups.list', MISSING_SCOPE);
    expect(await noScope.byHandle(other.teamId, '@designers')).toBe('missing_scope');
  });
});
