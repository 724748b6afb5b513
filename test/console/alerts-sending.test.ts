import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryAlertLog, type AlertLogEntry, type AlertMark } from '../../src/console/alerts/alert-log.js';
import { discordChannel, slackChannel, type Alert, type AlertChannel } from '../../src/console/alerts/channels.js';
import { AlertWatcher, MEMBERS_LISTED, mostUsedFirst } from '../../src/console/alerts/watcher.js';
import { capRatio } from '../../src/console/percent.js';
import { silentLogger } from '../../src/internal.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { percent } from '../../src/console/pages/layout.js';
import type { OperatorSettings } from '../../src/console/source.js';
import { ledgerFixtures, operatorWith, spend } from './ledger-fixtures.js';
import { consoleReads, NO_ALERTS } from './console-harness.js';
import { LEDGER_WAIT_MS } from '../../src/console/server.js';

/**
 * How a check sends what it found: the most urgent first (a pause, then the account), many members' caps as one
 * summary per destination, every claim in one step, a stop that does not wait for what is queued, and sentences that
 * say what the numbers are.
 */
const steps: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const step of steps.splice(0).reverse()) await step();
});

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const { folder, opened } = ledgerFixtures(steps, 'alerts-sending');

/** An alert log that counts its writes. */
class CountingLog extends MemoryAlertLog {
  claims = 0;
  marks = 0;
  override claim(keys: readonly string[], now: number, leaseMs: number): Promise<Set<string>> {
    this.claims++;
    return super.claim(keys, now, leaseMs);
  }
  override sent(marks: readonly AlertMark[], now: number, entry?: AlertLogEntry): Promise<void> {
    if (marks.length > 0 || entry) this.marks++;
    return super.sent(marks, now, entry);
  }
}

/** An alert log that records the keys let go. */
class ReleasingLog extends MemoryAlertLog {
  released: string[] = [];
  override release(keys: readonly string[]): Promise<void> {
    this.released.push(...keys);
    return super.release(keys);
  }
}

/** A destination that records what it was sent, in order. */
function recording(id: string, order: { channel: string; alert: Alert }[]): AlertChannel {
  return { id, send: async (alert) => void order.push({ channel: id, alert }) };
}

/** `watcher.stop()` has not returned 999 ms (fake) after it was asked, and has at 1 s. */
async function expectStopWithinASecond(watcher: { stop(): Promise<void> }): Promise<void> {
  vi.useFakeTimers();
  let stopped = false;
  const stop = watcher.stop().then(() => (stopped = true));
  await vi.advanceTimersByTimeAsync(999);
  expect(stopped).toBe(false);
  await vi.advanceTimersByTimeAsync(1);
  await stop;
  expect(stopped).toBe(true);
}

function watcherOf(store: FileQuotaStore, operator: OperatorSettings, channels: AlertChannel[], log = new MemoryAlertLog(), names?: Record<string, string>) {
  const watcher = new AlertWatcher({
    readWaitMs: LEDGER_WAIT_MS,
    source: { store, operator, ...(names && { bots: { names: async () => new Map(Object.entries(names)) } }) },
    ...consoleReads(store),
    log,
    channels,
    config: NO_ALERTS,
    logger: silentLogger(),
  });
  steps.push(() => watcher.stop());
  return watcher;
}

/** `count` Discord members of one server, each past 50 % of a $1 daily cap (and short of 80 %). */
async function membersPastHalf(store: FileQuotaStore, count: number, now: number) {
  for (let i = 0; i < count; i++) await spend(store, `m${i}`, `discord:1000000000000000${String(i).padStart(2, '0')}`, 'discord:crowd', 0.5 + i / 200, now);
}

describe('sending the alerts of a check', () => {
  it('sends a pause first, then the account’s cap, and many members’ caps as one summary per destination, claimed in one step', async () => {
    const dir = await folder();
    const clock = { now: Date.now() - 2 * DAY_MS };
    const store = await opened(new FileQuotaStore({ dir, clock: () => clock.now }));
    // A week of modest spend in a server, then a burst that pauses it.
    await spend(store, 'history', 'discord:100000000000000099', 'discord:guild', 1.68, clock.now);
    clock.now = Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 1000;
    const breaker = { factor: 10, floorUsd: 0.5 };
    const burst = (jobId: string) => store.reserve({ jobId, userKey: 'discord:100000000000000099', scopeKey: 'discord:guild', estimateUsd: 0.3, limits: { breaker }, now: clock.now });
    expect(await burst('a')).toEqual({ ok: true });
    expect(await burst('b')).toMatchObject({ ok: false, code: 'scope_paused', tripped: true });
    await membersPastHalf(store, 30, clock.now);
    const order: { channel: string; alert: Alert }[] = [];
    const log = new CountingLog();
    // The account: 30 members' $17.18 and the burst's $0.30 reserved, of $30: past 50 %.
    const watcher = watcherOf(store, operatorWith({ accountDailyUsd: 30, userDailyUsd: 1 }), [recording('one', order), recording('two', order)], log);

    await watcher.check();

    expect(order.map(({ channel, alert }) => `${alert.kind}${alert.cap ? `:${alert.cap.owner}` : ''}@${channel}`)).toEqual([
      'breaker@one',
      'breaker@two',
      'cap:account@one',
      'cap:account@two',
      'members@one',
      'members@two',
    ]);
    const summary = order[4]!.alert;
    expect(summary.members).toMatchObject({ count: 30, byThreshold: { '50': 30 } });
    expect(summary.members!.top).toHaveLength(MEMBERS_LISTED);
    expect(summary.members!.top[0]!.key).toBe('discord:100000000000000029');
    expect(summary.text).toMatch(/^Pictor: 30 members’ caps passed a threshold \(30 past 50 %\)\. The 10 most used: discord:100000000000000029 \(64 % of \$1\.00 daily\); discord:100000000000000028 \(64 % of \$1\.00 daily\); /);
    // One claim for the whole check; a mark per message sent, none for the 30 members one by one.
    expect(log.claims).toBe(1);
    expect(log.marks).toBe(6);
    expect(await log.recent(100)).toHaveLength(6);

    // Nothing again, and a member crossing later is one of a few: sent on its own.
    expect(await watcher.check()).toEqual([]);
    await spend(store, 'late', 'discord:100000000000000077', 'discord:crowd', 0.6, clock.now);
    order.length = 0;
    await watcher.check();
    expect(order.map(({ channel, alert }) => `${alert.kind}:${alert.cap?.key}@${channel}`)).toEqual(['cap:discord:100000000000000077@one', 'cap:discord:100000000000000077@two']);
  });

  it('counts in a members’ summary the caps that refuse their jobs apart from those that cannot take one more image, as their own alerts say', async () => {
    const dir = await folder();
    const now = Date.now();
    const store = await opened(new FileQuotaStore({ dir }));
    // Members' caps of $0.01 a day: $0.0048 (48 %) leaves less than the cheapest image; $0.001 less than one image of quality auto.
    for (let i = 0; i < 3; i++) await spend(store, `r${i}`, `discord:10000000000000001${i}`, 'discord:crowd', 0.0048, now);
    for (let i = 0; i < 3; i++) await spend(store, `f${i}`, `discord:10000000000000002${i}`, 'discord:crowd', 0.001, now);
    const order: { channel: string; alert: Alert }[] = [];
    const watcher = watcherOf(store, operatorWith({ userDailyUsd: 0.01 }), [recording('one', order)]);

    await watcher.check();

    expect(order.map(({ alert }) => alert.kind)).toEqual(['members']);
    const summary = order[0]!.alert;
    expect(summary.members).toMatchObject({ count: 6, byThreshold: { refused: 3, full: 3 } });
    expect(summary.text).toMatch(/^Pictor: 6 members’ caps passed a threshold \(3 refuse their jobs, 3 cannot take one more image\)\. /);
  });

  it('returns from stop() within a second while a send hangs, sends nothing more, and lets go of what was queued before it returns', async () => {
    const dir = await folder();
    const now = Date.now();
    const store = await opened(new FileQuotaStore({ dir }));
    await spend(store, 'a', 'discord:100000000000000001', 'discord:guild', 0.6, now);
    await spend(store, 'b', 'discord:100000000000000002', 'discord:guild', 0.6, now);
    let calls = 0;
    let called!: () => void;
    const sending = new Promise<void>((resolve) => (called = resolve));
    // A destination that never answers and ignores the abort.
    const hanging: AlertChannel = {
      id: 'hangs',
      send: () => {
        calls++;
        called();
        return new Promise<void>(() => undefined);
      },
    };
    const log = new ReleasingLog();
    const watcher = watcherOf(store, operatorWith({ accountDailyUsd: 2, userDailyUsd: 1 }), [hanging], log);
    void watcher.check();
    await sending;
    await expectStopWithinASecond(watcher);
    expect(calls).toBe(1);
    // The two users' alerts, queued behind the hanging one, were let go while the store was still open; the one under
    // way keeps its claim.
    expect(log.released).toHaveLength(2);
    expect(log.released.every((k) => k.startsWith('cap:user:discord:10000000000000000'))).toBe(true);
  });

  it('returns from stop() within a second while both the send under way and the alert log’s release of what was queued hang', async () => {
    const dir = await folder();
    const now = Date.now();
    const store = await opened(new FileQuotaStore({ dir }));
    await spend(store, 'a', 'discord:100000000000000001', 'discord:guild', 0.6, now);
    await spend(store, 'b', 'discord:100000000000000002', 'discord:guild', 0.6, now);
    let called!: () => void;
    const sending = new Promise<void>((resolve) => (called = resolve));
    const hanging: AlertChannel = { id: 'hangs', send: () => (called(), new Promise<void>(() => undefined)) };
    // An alert log that stops answering once the first send is under way.
    class StallingLog extends MemoryAlertLog {
      override release(): Promise<void> {
        return new Promise<void>(() => undefined);
      }
    }
    const watcher = watcherOf(store, operatorWith({ accountDailyUsd: 2, userDailyUsd: 1 }), [hanging], new StallingLog());
    void watcher.check();
    await sending;
    await expectStopWithinASecond(watcher);
  });

  it('gives the send under way a second at stop(), then aborts it keeping its claim, so the next process sends what was queued at once and the cut one only once its claim lapses', async () => {
    const dir = await folder();
    const now = Date.now();
    const store = await opened(new FileQuotaStore({ dir }));
    await spend(store, 'a', 'discord:100000000000000001', 'discord:guild', 0.6, now);
    await spend(store, 'b', 'discord:100000000000000002', 'discord:guild', 0.6, now);
    const log = new MemoryAlertLog();
    let called!: () => void;
    const sending = new Promise<void>((resolve) => (called = resolve));
    const aborted: boolean[] = [];
    const slow: AlertChannel = {
      id: 'place',
      send: (_alert, signal) => {
        called();
        return new Promise<void>((_resolve, reject) => signal?.addEventListener('abort', () => (aborted.push(true), reject(new Error('aborted')))));
      },
    };
    const first = watcherOf(store, operatorWith({ accountDailyUsd: 2, userDailyUsd: 1 }), [slow], log);
    const check = first.check();
    await sending;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const stop = first.stop();
    await vi.advanceTimersByTimeAsync(999);
    expect(aborted).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await stop;
    expect(aborted).toEqual([true]);
    vi.useRealTimers();
    expect(await check).toEqual([]);
    // The next process (the same log): both users' alerts, queued, go at once; the account's, cut (its request may have
    // reached the destination), is not sent again while its claim holds.
    const order: { channel: string; alert: Alert }[] = [];
    const operator = operatorWith({ accountDailyUsd: 2, userDailyUsd: 1 });
    const next = watcherOf(store, operator, [recording('place', order)], log);
    expect((await next.check()).map((a) => a.cap?.owner)).toEqual(['user', 'user']);
    // Once the claim lapses (a minute), a later check sends it.
    const later = new AlertWatcher({ readWaitMs: LEDGER_WAIT_MS, source: { store, operator }, ...consoleReads(store, { reconcileNow: () => Date.now() + 61_000 }), log, channels: [recording('place', order)], config: NO_ALERTS, logger: silentLogger(), now: () => Date.now() + 61_000 });
    steps.push(() => later.stop());
    expect((await later.check()).map((a) => a.cap?.owner)).toEqual(['account']);
  });

  it('says a cap used $99.60 of $100 is at 99 % with $0.400 left, not that its jobs are refused', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    await spend(store, 'a', 'cli:me', 'cli', 99.6, Date.now());
    const order: { channel: string; alert: Alert }[] = [];
    await watcherOf(store, operatorWith({ accountMonthlyUsd: 100 }), [recording('place', order)]).check();
    expect(order).toHaveLength(1);
    const { alert } = order[0]!;
    expect(alert.cap).toMatchObject({ percent: 99, threshold: 80, trigger: 'threshold', leftUsd: 0.4 });
    expect(alert.text).toContain('(99 %, past 80 %');
    expect(alert.text).toContain('$0.400 is left');
    expect(alert.text).not.toContain('refused until');
    // The spend page says the same share.
    expect(percent(99.6 / 100)).toBe('99 %');
  });

  it('says a cap a billionth short of full is at 100 % and refuses its jobs, decided from the same percent as its threshold', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    await spend(store, 'a', 'cli:me', 'cli', 99.9999999, Date.now());
    const order: { channel: string; alert: Alert }[] = [];
    await watcherOf(store, operatorWith({ accountMonthlyUsd: 100 }), [recording('place', order)]).check();
    expect(order).toHaveLength(1);
    const { alert } = order[0]!;
    expect(alert.cap).toMatchObject({ percent: 100, threshold: 100, trigger: 'threshold' });
    expect(alert.text).toContain('(100 %, past 100 %');
    expect(alert.text).toContain('Its jobs are refused until the cap resets');
    expect(percent(99.9999999 / 100)).toBe('100 %');
  });

  it('lists only the alerts that went out: the lower thresholds passed with a higher one are marked, not listed', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    await spend(store, 'a', 'cli:me', 'cli', 1.05, Date.now());
    const log = new MemoryAlertLog();
    const order: { channel: string; alert: Alert }[] = [];
    const watcher = watcherOf(store, operatorWith({ accountDailyUsd: 1 }), [recording('place', order)], log);
    await watcher.check();
    expect(order.map(({ alert }) => alert.cap?.threshold)).toEqual([100]);
    expect((await log.recent(100)).map((e) => e.id)).toEqual([order[0]!.alert.id]);
    // And the lower ones stay sent.
    expect(await watcher.check()).toEqual([]);
  });
});

describe('names in Discord and Slack alerts', () => {
  const HOSTILE = '[free nitro](https://evil.example) @everyone <@&123456789012345678> *boss*';

  /** A stand-in for Discord's and Slack's APIs: records each request's JSON body, answers as they do. */
  async function chatApi() {
    const bodies: { path: string; body: Record<string, unknown> }[] = [];
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('utf8')));
      req.on('end', () => {
        bodies.push({ path: req.url ?? '', body: JSON.parse(text) as Record<string, unknown> });
        res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.includes('chat.postMessage') ? '{"ok":true}' : '{"id":"1"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    steps.push(() => new Promise((resolve) => server.close(() => resolve())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies };
  }

  it('writes a member’s name with Discord’s markdown escaped and mentions off, and Slack’s escapes with formatting off', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    await spend(store, 'a', 'discord:100000000000000001', 'discord:guild', 0.06, Date.now());
    const api = await chatApi();
    const channels = [
      discordChannel({ channelId: '333333333333333333', token: 'bot-token', apiBaseUrl: api.url }),
      slackChannel({ channel: 'C0ALERTS', teamId: undefined, token: 'xoxb-token', apiUrl: `${api.url}/` }),
    ];
    const names = { 'discord:100000000000000001': HOSTILE };
    const sent = await watcherOf(store, operatorWith({ userDailyUsd: 0.1 }), channels, new MemoryAlertLog(), names).check();
    expect(sent).toHaveLength(2);

    const discord = api.bodies.find((b) => b.path.startsWith('/v10/channels/'))!.body;
    expect(discord.allowed_mentions).toEqual({ parse: [] });
    expect(discord.flags).toBe(1 << 2); // no link previews
    expect(discord.content).toContain(
      'the user \\[free nitro\\]\\(https\\://evil.example\\) \\@everyone \\<\\@&123456789012345678\\> \\*boss\\* (discord:100000000000000001)',
    );
    const slack = api.bodies.find((b) => b.path === '/chat.postMessage')!.body;
    expect(slack.mrkdwn).toBe(false);
    expect(slack.text).toContain('the user [free nitro](https://evil.example) @everyone &lt;@&amp;123456789012345678&gt; *boss* (discord:100000000000000001)');
    // The webhook's and the alerts page's text is the name as it is.
    expect(sent[0]!.text).toContain(`the user ${HOSTILE} (discord:100000000000000001)`);
  });
});

describe('a members’ summary in one message of its destination', () => {
  it('names as many of the most used as fit Discord’s 2,000 characters and says how many more there are; Slack, with room, names all ten', async () => {
    const dir = await folder();
    const store = await opened(new FileQuotaStore({ dir }));
    await membersPastHalf(store, 30, Date.now());
    const bodies: { path: string; body: Record<string, unknown> }[] = [];
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('utf8')));
      req.on('end', () => {
        bodies.push({ path: req.url ?? '', body: JSON.parse(text) as Record<string, unknown> });
        res.writeHead(200, { 'content-type': 'application/json' }).end(req.url?.includes('chat.postMessage') ? '{"ok":true}' : '{"id":"1"}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    steps.push(() => new Promise((resolve) => server.close(() => resolve())));
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const channels = [
      discordChannel({ channelId: '333333333333333333', token: 'bot-token', apiBaseUrl: api }),
      slackChannel({ channel: 'C0ALERTS', teamId: undefined, token: 'xoxb-token', apiUrl: `${api}/` }),
    ];
    // Long names full of markdown (each character escaped for Discord: twice as long there).
    const names: Record<string, string> = {};
    for (let i = 0; i < 30; i++) names[`discord:1000000000000000${String(i).padStart(2, '0')}`] = `member_${i} ${'*'.repeat(80)}`;
    await watcherOf(store, operatorWith({ userDailyUsd: 1 }), channels, new MemoryAlertLog(), names).check();

    const discord = String(bodies.find((b) => b.path.startsWith('/v10/channels/'))!.body.content);
    expect(discord.length).toBeLessThanOrEqual(2000);
    const cut = /^Pictor: 30 members’ caps passed a threshold \(30 past 50 %\)\. The (\d+) most used: .*; and (\d+) more\. All are in the Pictor console \(Caps and settings\)\.$/.exec(discord);
    expect(cut, discord).not.toBeNull();
    const [shown, more] = [Number(cut![1]), Number(cut![2])];
    expect(shown).toBeGreaterThan(0);
    expect(shown).toBeLessThan(MEMBERS_LISTED);
    expect(shown + more).toBe(30);
    expect(discord.match(/member\\_\d+/g)).toHaveLength(shown);

    const slack = String(bodies.find((b) => b.path === '/chat.postMessage')!.body.text);
    expect(slack).toMatch(/The 10 most used: .*\. All are in the Pictor console/);
    expect(slack).not.toMatch(/ more\. All are/);
    expect(slack.match(/member_\d+/g)).toHaveLength(MEMBERS_LISTED);
  });
});

describe('the members’ summary ranks the caps as the spend page does', () => {
  it('puts a cap past its amount before a $0 cap with nothing spent (reached, at 100 %), as their share says', () => {
    const zero = { key: 'discord:1', usedUsd: 0, limitUsd: 0 };
    const past = { key: 'discord:2', usedUsd: 1.5, limitUsd: 1 };
    const spentOnZero = { key: 'discord:3', usedUsd: 0.01, limitUsd: 0 };
    expect(mostUsedFirst([zero, past, spentOnZero]).map((cap) => cap.key)).toEqual(['discord:3', 'discord:2', 'discord:1']);
    expect(capRatio(zero.usedUsd, zero.limitUsd)).toBe(1);
  });
});
