import type { LoggerLike } from '../../client/PictorClient.js';
import { describeReset } from '../../core/describe-duration.js';
import { formatUsd } from '../../core/pricing.js';
import { leftOf, roundToNanoUsd } from '../../spend/rules.js';
import { isBudgetCode } from '../../spend/errors.js';
import { BREAKER_CODE } from '../../spend/types.js';
import { nextUtcMidnight, utcMonth } from '../../spend/utc-period.js';
import { LATE, waitAtMost, within } from '../../core/with-timeout.js';
import { roleBudgetsOf, spendFigures, type CapUse } from '../figures.js';
import type { LedgerNow } from '../ledger-now.js';
import { cannotTakeOneImage, capRatio, CHEAPEST_JOB_USD, ONE_IMAGE_USD, percentOf, usedUp } from '../percent.js';
import type { ConsoleSource } from '../source.js';
import type { UsageIndex } from '../usage-index.js';
import type { AlertLog, AlertMark } from './alert-log.js';
import type { Alert, AlertChannel, CapAlert } from './channels.js';
import type { AlertConfig } from './config.js';

export interface AlertWatcherOptions {
  source: ConsoleSource;
  index: UsageIndex;
  log: AlertLog;
  channels: AlertChannel[];
  config: AlertConfig;
  logger: LoggerLike;
  now?: (() => number) | undefined;
  /**
   * The ledger's reservations with those of gone processes ended, shared with the pages: the one `startConsole` makes,
   * whose usage index the store tells of each step that ended them (no default: one made here would never be told).
   */
  ledgerNow: LedgerNow;
  /**
   * How long a check waits for each of its reads, made side by side — the ledger's (the usage records, the caps), the
   * alert log's (the rules, then the claim of what it sends), the bots' role budgets — past it the check ends with
   * nothing sent, and the next one runs at its time. The console's one backend wait.
   */
  readWaitMs: number;
}

/** How long a process's claim on an alert lasts while it sends it (if it dies, another sends it after this). */
const CLAIM_MS = 60_000;
const DAY_MS = 24 * 60 * 60_000;
const BREAKER_ALERT_KEPT_MS = 90 * DAY_MS;
/** How long `stop()` gives the send under way to be taken before it aborts it (what was queued is let go at once). */
const STOP_WAIT_MS = 1000;
/**
 * At most one check per this long for jobs settled and jobs refused by a cap or the breaker (`settled`, `refused`): the
 * first checks at once, the ones after it within this time make one check when it ends. A check reads the ledger (the new usage records, the caps, the reservations)
 * and the alert log; a busy account settles several jobs a second, and one check each would multiply those reads for
 * nothing — while an alert is then at most 3 s behind the settle that called for it, less than an image job takes at
 * the service, so the owner still hears of a cap nearing before the jobs that follow it are refused. Refusals share the
 * bound: once a cap is full it refuses every job until it resets, and a check each would read the ledger (taking the
 * file lock the jobs need) back to back for hours, sending nothing.
 */
export const SETTLED_CHECK_GAP_MS = 3000;
/** Up to this many members' cap alerts of one check go one by one to a destination; more go as one summary. */
export const MEMBERS_ONE_BY_ONE = 5;
/** How many members a summary names (the ones used the most). */
export const MEMBERS_LISTED = 10;

const OWNER_WORDS: Record<CapUse['owner'], string> = { account: 'the whole account', scope: 'the server/workspace', dm: 'the DM user', user: 'the user' };

/** One alert to send, and the lower thresholds it stands for (marked sent with it, listed nowhere). */
interface Pending {
  alert: Alert;
  keepUntil: number;
  passed: string[];
  /**
   * A cap's: its amount, and of each of its ids above (the alert, `passed`, `instead`) the event's reach — every amount
   * up to `usd` counts as told of that event once this one is (see `reachOf`).
   */
  amountUsd?: number;
  reach?: Map<string, { key: string; usd: number }>;
  /**
   * Sent instead to a destination that already had `alert` (and has not had this one); where `alert` goes, this one
   * counts as sent with it.
   */
  instead?: Alert;
}

/** What a check reads from, as the log names it when it has no answer in time. */
type Backend = 'the ledger' | 'the alert log' | 'the bots’ role budgets';

/** What a check did: the alerts it sent, and what did not answer in time (the check ended there). */
interface Outcome {
  sent: Alert[];
  late?: Backend[];
}

/** One message to one destination, and the alerts (their claims) it carries. */
interface Message {
  channel: AlertChannel;
  alert: Alert;
  marks: AlertMark[];
}

/** The events of a cap and period that each have an alert of their own (see `CapAlert.trigger`). */
type CapEvent = CapAlert['trigger'];

/** What a cap's alert is decided from. */
interface CapState {
  /** The alert rules' thresholds. */
  thresholds: readonly number[];
  /** The thresholds its percent passed. */
  passed: readonly number[];
  /** It cannot take one more image (a cap that refuses its jobs cannot either). */
  full: boolean;
  /** It refuses every job: not even the cheapest image fits in what is left (used up). */
  refuses: boolean;
}

/**
 * The one rule for a cap's alert, each event said once per amount and period: the first row that applies says which alert goes
 * (`threshold`: the highest passed), the thresholds and events that count as sent with it, and what goes instead to a
 * destination that had that alert already. No row: no alert. "Cannot take one more image" and "refuses its jobs" are
 * two events (the first sent never keeps the second).
 */
const CAP_ALERTS: readonly {
  applies(state: CapState): boolean;
  sends: CapEvent;
  thresholdsSent(state: CapState): readonly number[];
  standsFor?: readonly CapEvent[];
  instead?: CapEvent;
}[] = [
  // Used up before any threshold passed (a small cap, cheap jobs): the refusal, standing for every threshold and for
  // "cannot take one more image".
  { applies: (s) => s.refuses && s.passed.length === 0, sends: 'refused', thresholdsSent: (s) => s.thresholds, standsFor: ['full'] },
  // Cannot take one more image, whatever its share: every threshold counts as sent with it (100 % included, the same
  // event seen later). The refusal does not: it is told when it comes.
  { applies: (s) => s.full && !s.refuses, sends: 'full', thresholdsSent: (s) => s.thresholds },
  // Used up past a threshold: the highest threshold's alert says the cap refuses, and stands for the refusal, for the
  // higher thresholds (it takes nothing more this period) and for "cannot take one more image"; where it went out
  // before (at 80 %, say), the refusal's own alert goes instead.
  { applies: (s) => s.refuses, sends: 'threshold', thresholdsSent: (s) => s.thresholds, standsFor: ['full'], instead: 'refused' },
  // A threshold passed: the highest, the lower ones counting as sent with it.
  { applies: (s) => s.passed.length > 0, sends: 'threshold', thresholdsSent: (s) => s.passed },
];

/**
 * What goes out first: a pause (its scope's jobs are refused now), then the account's caps, unreadable role budgets, a
 * server's or workspace's caps, and last a member's (or DM user's) cap.
 */
function rankOf(alert: Alert): number {
  if (alert.breaker) return 0;
  if (alert.cap?.owner === 'account') return 1;
  if (alert.roleBudgets) return 2;
  if (alert.cap?.owner === 'scope') return 3;
  return 4;
}

/**
 * Looks at every cap (and at the breaker) every `PICTOR_ALERT_CHECK_SECONDS`,
 * at once when poked (a job refused by a cap or the breaker), and soon after a
 * job is settled (`settled`), and sends an alert to every channel when a cap passes
 * one of the thresholds (50, 80, 100 % by default; only the highest passed is
 * sent, the lower ones count as sent) or when the breaker pauses a server —
 * each once per cap, amount, period and threshold, and not for an amount an
 * earlier alert of the period settles (see `reachOf`; once per pause), whichever process
 * of the account sees it first, across restarts (the alert log). A pause goes
 * first; many members' caps of one check go as one summary per destination; a
 * stop ends the sending between two messages (see `stop`).
 */
export class AlertWatcher {
  readonly #options: AlertWatcherOptions;
  readonly #now: () => number;
  readonly #ledgerNow: LedgerNow;
  #timer: NodeJS.Timeout | undefined;
  /** While set, a settle waits for it (see `settled`); `#settledSince` says one came meanwhile. */
  #settledGap: NodeJS.Timeout | undefined;
  #settledSince = false;
  #running: Promise<Alert[]> | undefined;
  #again = false;
  #stopped = false;
  readonly #abort = new AbortController();
  /** The messages of the check under way whose send has not started (a stop lets them go). */
  #queue: Message[] = [];
  /** What the checks' reads are stalled on (said once in the log, until a check reads again). */
  #stalled: string | undefined;

  constructor(options: AlertWatcherOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#ledgerNow = options.ledgerNow;
  }

  start(): void {
    this.#timer ??= setInterval(() => this.poke(), this.#options.config.checkMs).unref();
    this.poke();
  }

  /** Checks soon (a check already running is followed by one more). */
  poke(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    void this.check().catch((error: unknown) => this.#options.logger.warn({ err: error }, 'could not check the caps for alerts'));
  }

  /**
   * A job was settled (its charge is in the ledger), or refused by a cap (`refused`), or another process wrote the
   * ledger: checks at once, or, within `SETTLED_CHECK_GAP_MS` of the last check one of these made, once when that time
   * ends, however many came meanwhile.
   */
  settled(): void {
    if (this.#stopped) return;
    if (this.#settledGap) {
      this.#settledSince = true;
      return;
    }
    this.poke();
    this.#settledGap = setTimeout(() => {
      this.#settledGap = undefined;
      if (!this.#settledSince) return;
      this.#settledSince = false;
      this.settled();
    }, SETTLED_CHECK_GAP_MS).unref();
  }

  /**
   * A job of this process was refused, by its code: a refusal by a cap or the breaker looks at the alerts as a settle
   * does (at once, or once at the end of `SETTLED_CHECK_GAP_MS`); a user's pace does not.
   */
  refused(code: string): void {
    if (isBudgetCode(code) || code === BREAKER_CODE) this.settled();
  }

  /** One check now; answers the alerts this process sent. */
  check(): Promise<Alert[]> {
    this.#running ??= this.#check().finally(() => {
      this.#running = undefined;
      if (this.#again && !this.#stopped) {
        this.#again = false;
        this.poke();
      }
    });
    return this.#running;
  }

  /**
   * No more checks. The messages queued and not started are let go before this returns (while the store is open), for
   * the next check of this or another process. The send under way (its request may have reached the destination
   * already) keeps its claim: it is given a second to be taken, and marked sent; past that it is aborted, and sent
   * again by a later check once its claim lapses (a minute).
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearTimeout(this.#settledGap);
    // One second for both, side by side: the release of what was queued and the send under way.
    const running = this.#running;
    await Promise.all([this.#letGo(this.#queue.splice(0)), running && waitAtMost(running, STOP_WAIT_MS)]);
    this.#abort.abort();
  }

  /** The messages a stop keeps from being sent: their claims are let go, so the next check sends them. */
  async #letGo(messages: readonly Message[]): Promise<void> {
    if (messages.length === 0) return;
    // Not let go within the stop's wait (an alert log that does not answer), they lapse with their claims (a minute).
    await waitAtMost(this.#options.log.release(messages.flatMap((m) => m.marks.map((mark) => mark.key))), STOP_WAIT_MS);
    this.#options.logger.info({ left: messages.length }, 'the console stops: the alerts not sent yet are let go, for the next check');
  }

  /**
   * One check: its reads, each given `readWaitMs` (a stalled ledger or alert log does not hold this check, nor the next
   * ones: the stalled read is left, logged once, naming what stalled, until a check reads again), then what they found
   * is claimed (given as long) and sent.
   */
  async #check(): Promise<Alert[]> {
    const now = this.#now();
    const found = await this.#find(now);
    if (!Array.isArray(found)) return this.#late(found);
    if (found.length === 0) {
      this.#answered();
      return [];
    }
    found.sort((a, b) => rankOf(a.alert) - rankOf(b.alert));
    const outcome = await this.#send(found, now);
    return outcome.late ? this.#late(outcome) : outcome.sent;
  }

  /** A check read and claimed in time: said once after a stall. */
  #answered(): void {
    if (this.#stalled !== undefined) this.#options.logger.info({}, 'the alert check reads the ledger again');
    this.#stalled = undefined;
  }

  /** A check that ended on a read or a write not answered in time: said once (naming what), until a check reads again. */
  #late({ sent, late = [] }: Outcome): Alert[] {
    const what = late.join(' nor from ');
    if (this.#stalled !== what) {
      this.#options.logger.warn(
        { waitedMs: this.#options.readWaitMs, late },
        `the alert check had no answer from ${what} in time: nothing is sent until ${late.length > 1 ? 'they answer' : 'it answers'}; the next check asks again`,
      );
    }
    this.#stalled = what;
    return sent;
  }

  /**
   * What the caps, the role budgets and the breaker call for now: the alerts to send (claimed or not yet). The alert
   * rules, the ledger and the role budgets are read side by side, each given `readWaitMs`: the ledger's reads (before
   * and while the figures are made) share theirs; the role budgets' wait is not the ledger's.
   */
  async #find(now: number): Promise<Pending[] | Outcome> {
    const { source, index, log, config, readWaitMs } = this.#options;
    const started = performance.now();
    const ledgerReads = (async () => {
      const active = await this.#ledgerNow.read();
      const [overrides, breaker, refusals] = await Promise.all([source.store.allCapOverrides(), source.store.breakerStates(), source.store.refusals(`${utcMonth(now)}-01`)]);
      return { active, overrides, breaker, refusals, tookMs: performance.now() - started };
    })();
    const [kept, read, roleBudgets] = await Promise.all([within(log.rules(), readWaitMs), within(ledgerReads, readWaitMs), within(roleBudgetsOf(source, this.#options.logger), readWaitMs)]);
    const late: Backend[] = [...(read === LATE ? ['the ledger' as const] : []), ...(kept === LATE ? ['the alert log' as const] : []), ...(roleBudgets === LATE ? ['the bots’ role budgets' as const] : [])];
    if (read === LATE || kept === LATE || roleBudgets === LATE) return { sent: [], late };
    const rules = kept ?? { thresholds: config.thresholds, breaker: config.breaker };
    const { active, overrides, breaker, refusals, tookMs } = read;
    // The figures read the ledger too (the amounts each cap counts): in what is left of its wait.
    const figures = await within(
      spendFigures({ index, operator: source.operator, active, overrides, refusals, now, chartDays: 1, ledger: source.store, roleBudgets, withUsers: false }),
      Math.max(0, readWaitMs - tookMs),
    );
    if (figures === LATE) return { sent: [], late: ['the ledger'] };
    const pending: Pending[] = [];
    for (const cap of figures.caps) {
      // A member of a scope whose role budgets cannot be read: one alert for the scope (below), not one per member.
      if (cap.bound === 'unreadable') continue;
      // The percent the page shows: the thresholds passed are decided from it ("used up" by the guard's own rule).
      const percent = percentOf(cap.ratio);
      const passed = rules.thresholds.filter((t) => percent >= t);
      // A cap the guard refuses every job of (used up); before that, one that cannot take one more image.
      const refuses = usedUp(cap);
      const state: CapState = { thresholds: rules.thresholds, passed, refuses, full: refuses || cannotTakeOneImage(cap) };
      const row = CAP_ALERTS.find((r) => r.applies(state));
      if (!row) continue;
      const threshold = passed.length === 0 ? 0 : Math.max(...passed);
      const periodKey = cap.period === 'day' ? figures.today : figures.month;
      // A cap's amount is part of its alerts' ids: a cap changed within its period (a chat admin lowers it or clears
      // that, the operator restarts with another) is told of its new amount's thresholds and events, each once per
      // amount, and only those an earlier alert of the period did not settle (`reachOf`): an amount it goes back to, or
      // one changed again and again while its use stays put, is not told again what was told of it.
      const capPeriod = `cap:${cap.owner}:${cap.key}${cap.scopeKey === undefined ? '' : `@${cap.scopeKey}`}:${cap.period}:${periodKey}`;
      const base = `${capPeriod}:${amountOf(cap.limitUsd)}`;
      const facts = {
        owner: cap.owner,
        key: cap.key,
        ...(cap.scopeKey !== undefined && { scopeKey: cap.scopeKey }),
        ...(cap.bound === 'lower' && { bound: 'lower' as const }),
        period: cap.period,
        periodKey,
        limitUsd: cap.limitUsd,
        usedUsd: cap.usedUsd,
        leftUsd: leftOf(cap.limitUsd, cap.usedUsd),
        percent,
        threshold,
        resetsAt: cap.resetsAt,
      };
      const idOf = (event: CapEvent) => `${base}:${event === 'threshold' ? threshold : event}`;
      const alertOf = (trigger: CapEvent): Alert => ({ id: idOf(trigger), kind: 'cap', text: '', at: now, ledger: source.operator.ledger, cap: { ...facts, trigger } });
      const alert = alertOf(row.sends);
      // What counts as sent with the alert (the thresholds and events it stands for): their ids, built once for both the marks and the reach.
      const sentWith: [string, CapEvent | number][] = [
        ...row.thresholdsSent(state).map((t): [string, number] => [`${base}:${t}`, t]),
        ...(row.standsFor ?? []).map((event): [string, CapEvent] => [idOf(event), event]),
      ];
      const told: [string, CapEvent | number][] = [
        [alert.id, row.sends === 'threshold' ? threshold : row.sends],
        ...sentWith,
        ...(row.instead ? [[idOf(row.instead), row.instead] as [string, CapEvent]] : []),
      ];
      pending.push({
        alert,
        keepUntil: cap.resetsAt + DAY_MS,
        passed: sentWith.map(([id]) => id).filter((id) => id !== alert.id),
        ...(row.instead && { instead: alertOf(row.instead) }),
        amountUsd: roundToNanoUsd(cap.limitUsd),
        reach: new Map(told.map(([id, event]) => [id, { key: `${capPeriod}:${event}`, usd: reachOf(event, cap) }])),
      });
    }
    for (const [scopeKey, budgets] of Object.entries(roleBudgets)) {
      if (budgets !== 'unreadable') continue;
      pending.push({
        alert: { id: `role-budgets:${scopeKey}:${figures.today}`, kind: 'role-budgets', text: '', at: now, ledger: source.operator.ledger, roleBudgets: { scopeKey } },
        keepUntil: nextUtcMidnight(now) + DAY_MS,
        passed: [],
      });
    }
    if (rules.breaker) {
      for (const [scopeKey, state] of Object.entries(breaker)) {
        if (state.pausedAt === undefined) continue;
        pending.push({
          alert: {
            id: `breaker:${scopeKey}:${state.pausedAt}`,
            kind: 'breaker',
            text: '',
            at: now,
            ledger: source.operator.ledger,
            breaker: { scopeKey, pausedAt: state.pausedAt, pausedUsd: state.pausedUsd ?? 0, limitUsd: state.limitUsd ?? 0 },
          },
          keepUntil: state.pausedAt + BREAKER_ALERT_KEPT_MS,
          passed: [],
        });
      }
    }
    return pending;
  }

  /**
   * Claims all in one step, marks the lower thresholds passed with a higher one, names the ones claimed, then sends,
   * most urgent first. Each write of the alert log is given `readWaitMs`: past it, nothing more is sent (what this check
   * claimed lapses with its claim, a minute, and a later check sends it from the figures it reads then); the names past
   * it are left out (the keys are said).
   */
  async #send(pending: Pending[], now: number): Promise<Outcome> {
    const { source, log, channels, logger, readWaitMs } = this.#options;
    if (this.#stopped) return { sent: [] };
    const keyOf = (id: string, channel: AlertChannel) => `${id}@${channel.id}`;
    const reachKeyOf = (p: Pending, id: string, channel: AlertChannel) => {
      const reach = p.reach?.get(id);
      return reach && keyOf(reach.key, channel);
    };
    // An event a cap was told of at an amount at least this one's (or with as much used) is not told again this period.
    const reachKeys = [...new Set(pending.flatMap((p) => [...(p.reach?.keys() ?? [])].flatMap((id) => channels.map((channel) => reachKeyOf(p, id, channel)!))))];
    const reached = await within(log.reached(reachKeys, now), readWaitMs);
    if (reached === LATE) return { sent: [], late: ['the alert log'] };
    const told = (p: Pending, id: string, channel: AlertChannel) => {
      const key = reachKeyOf(p, id, channel);
      return key !== undefined && p.amountUsd !== undefined && (reached.get(key) ?? -1) >= p.amountUsd;
    };
    const claimed = await within(
      log.claim(
        pending.flatMap((p) =>
          channels.flatMap((channel) =>
            [...p.passed, p.alert.id, ...(p.instead ? [p.instead.id] : [])].filter((id) => !told(p, id, channel)).map((id) => keyOf(id, channel)),
          ),
        ),
        now,
        CLAIM_MS,
      ),
      readWaitMs,
    );
    if (claimed === LATE) return { sent: [], late: ['the alert log'] };
    /** The mark of `id` sent to `channel`, raising its event's reach. */
    const markOf = (p: Pending, id: string, channel: AlertChannel): AlertMark => ({ key: keyOf(id, channel), keepUntil: p.keepUntil, ...(p.reach?.has(id) && { reach: { key: reachKeyOf(p, id, channel)!, usd: p.reach.get(id)!.usd } }) });
    /** What goes to `channel` of one pending alert: the alert, else what goes instead of it, else nothing (sent already). */
    const chosen = ({ alert, instead }: Pending, channel: AlertChannel): Alert | undefined =>
      claimed.has(keyOf(alert.id, channel)) ? alert : instead && claimed.has(keyOf(instead.id, channel)) ? instead : undefined;
    // A lower threshold passed at the same time is not sent after the higher one, nor listed as sent; nor is what the
    // alert stands for.
    const marked = await within(
      log.sent(
        pending.flatMap((p) =>
          channels.flatMap((channel) =>
            [...p.passed, ...(p.instead && claimed.has(keyOf(p.alert.id, channel)) ? [p.instead.id] : [])]
              .filter((id) => claimed.has(keyOf(id, channel)))
              .map((id) => markOf(p, id, channel)),
          ),
        ),
        now,
      ),
      readWaitMs,
    );
    if (marked === LATE) return { sent: [], late: ['the alert log'] };
    this.#answered();
    const toSend = pending.flatMap((p) => [...new Set(channels.map((channel) => chosen(p, channel)).filter((a) => a !== undefined))]);
    if (toSend.length === 0) return { sent: [] };
    const keys = new Set(toSend.flatMap((alert) => [alert.cap?.key, alert.cap?.scopeKey, alert.breaker?.scopeKey, alert.roleBudgets?.scopeKey].filter((k) => k !== undefined)));
    const named = source.bots?.names ? await within(source.bots.names([...keys]).catch(() => undefined), readWaitMs) : undefined;
    const names = named === LATE || named === undefined ? new Map<string, string>() : named;
    for (const alert of toSend) {
      if (alert.cap) {
        alert.cap.name = names.get(alert.cap.key);
        if (alert.cap.scopeKey !== undefined) alert.cap.scopeName = names.get(alert.cap.scopeKey);
      }
      if (alert.breaker) alert.breaker.name = names.get(alert.breaker.scopeKey);
      if (alert.roleBudgets) alert.roleBudgets.name = names.get(alert.roleBudgets.scopeKey);
    }
    const messages: Message[] = [];
    const members = new Map<AlertChannel, Message[]>(channels.map((channel) => [channel, []]));
    for (const p of pending) {
      for (const channel of channels) {
        const alert = chosen(p, channel);
        if (!alert) continue;
        const message = { channel, alert, marks: [markOf(p, alert.id, channel)] };
        if (rankOf(alert) === 4) members.get(channel)!.push(message);
        else messages.push(message);
      }
    }
    for (const [channel, each] of members) messages.push(...(each.length > MEMBERS_ONE_BY_ONE ? [membersMessage(channel, each, now)] : each));
    // Alert-major order: the first alert reaches every destination before the second goes anywhere.
    const sent: Alert[] = [];
    // Stopped while claiming: nothing starts.
    if (this.#stopped) {
      await this.#letGo(messages);
      return { sent };
    }
    this.#queue = messages;
    for (let next = this.#queue.shift(); next !== undefined; next = this.#queue.shift()) {
      const { channel, alert, marks } = next;
      const text = alertText(alert, now, channel.quote, channel.fits);
      try {
        await channel.send({ ...alert, text }, this.#abort.signal);
      } catch (error) {
        if (this.#abort.signal.aborted) {
          // Cut by a stop: the destination may have taken it. Its claim is kept; once it lapses, a later check sends it.
          logger.info({ alert: alert.id, channel: channel.id }, 'the console stops: the alert under way was cut; it is sent again once its claim lapses');
          continue;
        }
        await waitAtMost(log.release(marks.map((mark) => mark.key)), readWaitMs);
        logger.warn({ alert: alert.id, channel: channel.id, err: error instanceof Error ? error.message : String(error) }, 'an alert was not taken; it is tried again at the next check');
        continue;
      }
      const plain = alertText(alert, now);
      const kept = await within(log.sent(marks, now, { id: alert.id, channel: channel.id, text: plain, at: now }), readWaitMs);
      logger.info({ alert: alert.id, channel: channel.id, ...(alert.members && { members: alert.members.count }) }, 'alert sent');
      sent.push({ ...alert, text: plain });
      if (kept === LATE) {
        // Sent, not marked: the rest of this check waits (their claims lapse) for an alert log that answers.
        this.#queue = [];
        return { sent, late: ['the alert log'] };
      }
    }
    return { sent };
  }
}

/**
 * Up to which amount telling `event` of `cap` tells it of every amount: a lower amount is reached sooner, and one it had
 * as much used of already — a threshold's share of it, or too little left of it for one more image or for the cheapest
 * job — would have sent the same event then. So a cap changed again and again while its use stays put is not told again,
 * and one raised past what it has used is, once its use reaches the new amount's event.
 */
function reachOf(event: CapEvent | number, cap: Pick<CapUse, 'limitUsd' | 'usedUsd'>): number {
  const reach = typeof event === 'number' ? (cap.usedUsd * 100) / event : event === 'refused' ? cap.usedUsd + CHEAPEST_JOB_USD : event === 'full' ? cap.usedUsd + ONE_IMAGE_USD : cap.limitUsd;
  return roundToNanoUsd(Math.max(cap.limitUsd, reach));
}

/** A cap's amount as its alerts' ids say it: dollars to the nano-dollar, the ledger's precision (`5usd`, `0.3usd`). */
const amountOf = (limitUsd: number): string => `${roundToNanoUsd(limitUsd)}usd`;

/** The caps by the share used, as the spend page ranks them (`capRatio`), the larger first; a tie by key. */
export function mostUsedFirst<T extends Pick<CapAlert, 'key' | 'usedUsd' | 'limitUsd'>>(caps: readonly T[]): T[] {
  const share = (cap: T) => capRatio(cap.usedUsd, cap.limitUsd);
  return [...caps].sort((a, b) => share(b) - share(a) || a.key.localeCompare(b.key));
}

/**
 * How a members' summary counts an alert that is not a threshold's, as the single alert says it; most urgent first (a
 * threshold's alert counts under its threshold).
 */
const EVENT_COUNTS: Record<Exclude<CapEvent, 'threshold'>, { rank: number; says: (n: number) => string }> = {
  refused: { rank: 2e9, says: (n) => `${n} refuse their jobs` },
  full: { rank: 1e9, says: (n) => `${n} cannot take one more image` },
};
const eventOf = (bucket: string) => (Object.hasOwn(EVENT_COUNTS, bucket) ? EVENT_COUNTS[bucket as keyof typeof EVENT_COUNTS] : undefined);

/** Many members' cap alerts for one destination as one message: how many, each in its alert's bucket, and the ones used the most. */
function membersMessage(channel: AlertChannel, each: Message[], now: number): Message {
  const caps = each.map((m) => m.alert.cap!);
  const byThreshold: Record<string, number> = {};
  for (const cap of caps) {
    const bucket = cap.trigger === 'threshold' ? String(cap.threshold) : cap.trigger;
    byThreshold[bucket] = (byThreshold[bucket] ?? 0) + 1;
  }
  const top = mostUsedFirst(caps).slice(0, MEMBERS_LISTED);
  const first = each[0]!.alert;
  return {
    channel,
    alert: { id: `members:${now}:${caps.length}`, kind: 'members', text: '', at: first.at, ledger: first.ledger, members: { count: caps.length, byThreshold, top } },
    marks: each.flatMap((m) => m.marks),
  };
}

/**
 * The sentence of an alert; `quote` writes a name someone chose as the destination must (see `AlertChannel.quote`), and
 * a members' summary lists only as many of its most used as `fits` one message of the destination, then says how many
 * more there are (see `AlertChannel.fits`).
 */
export function alertText(alert: Alert, now: number, quote: (name: string) => string = (name) => name, fits: (text: string) => boolean = () => true): string {
  const tag = alert.ledger === 'emulator' ? 'Pictor (emulator ledger, no money spent)' : 'Pictor';
  const named = (name: string | undefined, key: string) => (name ? `${quote(name)} (${key})` : key);
  if (alert.breaker) {
    const { scopeKey, name, pausedUsd, limitUsd } = alert.breaker;
    return (
      `${tag} paused ${named(name, scopeKey)}: it spent ${formatUsd(pausedUsd)} in the last hour, more than the ${formatUsd(limitUsd)} an hour its usual use allows. ` +
      'Its jobs are refused until you resume it in the Pictor console (Caps and settings).'
    );
  }
  if (alert.roleBudgets) {
    const { scopeKey, name } = alert.roleBudgets;
    return `${tag}: the role budgets of ${named(name, scopeKey)} cannot be read: its members may spend nothing until an admin of it sets them again.`;
  }
  const whoOf = (cap: CapAlert) => `${named(cap.name, cap.key)}${cap.scopeKey === undefined ? '' : ` in ${named(cap.scopeName, cap.scopeKey)}`}`;
  const periodOf = (cap: CapAlert) => (cap.period === 'day' ? 'daily' : 'monthly');
  if (alert.members) {
    const { count, byThreshold, top } = alert.members;
    const counts = Object.entries(byThreshold)
      .sort(([a], [b]) => (eventOf(b)?.rank ?? Number(b)) - (eventOf(a)?.rank ?? Number(a)))
      .map(([bucket, n]) => eventOf(bucket)?.says(n) ?? `${n} past ${bucket} %`)
      .join(', ');
    const listed = top.map((cap) => `${whoOf(cap)} (${cap.bound === 'lower' ? 'at most ' : ''}${cap.percent} % of ${formatUsd(cap.limitUsd)} ${periodOf(cap)})`);
    const opening = `${tag}: ${count} members’ caps passed a threshold (${counts}).`;
    const closing = 'All are in the Pictor console (Caps and settings).';
    // As many of the most used as fit one message, the rest counted: a long name leaves room for fewer.
    for (let shown = listed.length; shown > 0; shown--) {
      const more = count - shown;
      const names = listed.slice(0, shown).join('; ');
      const text =
        more === 0 ? `${opening} They: ${names}. ${closing}` : shown === listed.length ? `${opening} The ${shown} most used: ${names}. ${closing}` : `${opening} The ${shown} most used: ${names}; and ${more} more. ${closing}`;
      if (fits(text)) return text;
    }
    return `${opening} ${closing}`;
  }
  const cap = alert.cap!;
  const whose = cap.owner === 'account' ? OWNER_WORDS.account : `${OWNER_WORDS[cap.owner]} ${whoOf(cap)}`;
  const period = periodOf(cap);
  const used =
    cap.bound === 'lower'
      ? `${formatUsd(cap.usedUsd)} of its ${period} cap of at least ${formatUsd(cap.limitUsd)} (at most ${cap.percent} %, if the member holds no role with a larger budget`
      : `${formatUsd(cap.usedUsd)} of its ${period} cap of ${formatUsd(cap.limitUsd)} (${cap.percent} %`;
  // A job reserves its upper-bound price before it is sent, and the cap refuses it when that does not fit in what is left.
  const left = `${formatUsd(cap.leftUsd)} is left, and a job that reserves more is refused (one image of quality auto reserves ${formatUsd(ONE_IMAGE_USD)})`;
  const resets = `at ${describeReset(cap.resetsAt, now)}`;
  if (cap.trigger === 'refused') {
    return `${tag}: ${whose}: its ${period} cap refuses its jobs: not even the cheapest image (${formatUsd(CHEAPEST_JOB_USD)}) fits in what is left. It has used ${used}, settled and reserved by running jobs); ${formatUsd(cap.leftUsd)} is left until the cap resets ${resets}.`;
  }
  if (cap.trigger === 'full') {
    return `${tag}: ${whose}: its ${period} cap cannot take one more image (a job reserves up to ${formatUsd(ONE_IMAGE_USD)}). It has used ${used}, settled and reserved by running jobs); ${formatUsd(cap.leftUsd)} is left until the cap resets ${resets}.`;
  }
  // A lower bound (the member's roles are not known here) is never said to refuse: a role may lift the cap.
  if (cap.bound === 'lower') return `${tag}: ${whose} has used ${used}, past ${cap.threshold} %, settled and reserved by running jobs). The cap resets ${resets}.`;
  if (usedUp(cap)) return `${tag}: ${whose} has used ${used}, past ${cap.threshold} %, settled and reserved by running jobs). Its jobs are refused until the cap resets ${resets}.`;
  return `${tag}: ${whose} has used ${used}, past ${cap.threshold} %, settled and reserved by running jobs): ${left}. The cap resets ${resets}.`;
}
