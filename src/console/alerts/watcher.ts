import type { LoggerLike } from '../../client/PictorClient.js';
import { describeReset } from '../../core/describe-duration.js';
import { formatUsd } from '../../core/pricing.js';
import { estimateOf } from '../../core/pricing.js';
import { roundToNanoUsd } from '../../spend/rules.js';
import { nextUtcMidnight, utcMonth } from '../../spend/utc-period.js';
import { roleBudgetsOf, spendFigures, type CapUse } from '../figures.js';
import { LedgerNow } from '../ledger-now.js';
import type { ConsoleSource } from '../source.js';
import type { UsageIndex } from '../usage-index.js';
import type { AlertLog } from './alert-log.js';
import type { Alert, AlertChannel } from './channels.js';
import type { AlertConfig } from './config.js';

export interface AlertWatcherOptions {
  source: ConsoleSource;
  index: UsageIndex;
  log: AlertLog;
  channels: AlertChannel[];
  config: AlertConfig;
  logger: LoggerLike;
  now?: (() => number) | undefined;
  /** The ledger's reservations with those of gone processes ended (shared with the pages); default one of its own. */
  ledgerNow?: LedgerNow | undefined;
}

/** How long a process's claim on an alert lasts while it sends it (if it dies, another sends it after this). */
const CLAIM_MS = 60_000;
const DAY_MS = 24 * 60 * 60_000;
const BREAKER_ALERT_KEPT_MS = 90 * DAY_MS;

/** What a job of one image reserves at most (its upper-bound price, quality auto): a cap with less left cannot take it. */
const ONE_IMAGE_USD = estimateOf({ operation: 'generate', n: 1 }).totalUsd;

const OWNER_WORDS: Record<CapUse['owner'], string> = { account: 'the whole account', scope: 'the server/workspace', dm: 'the DM user', user: 'the user' };

/**
 * Looks at every cap (and at the breaker) every `PICTOR_ALERT_CHECK_SECONDS`,
 * or at once when poked, and sends an alert to every channel when a cap passes
 * one of the thresholds (50, 80, 100 % by default; only the highest passed is
 * sent, the lower ones count as sent) or when the breaker pauses a server —
 * each once per cap, period and threshold (once per pause), whichever process
 * of the account sees it first, across restarts (the alert log).
 */
export class AlertWatcher {
  readonly #options: AlertWatcherOptions;
  readonly #now: () => number;
  readonly #ledgerNow: LedgerNow;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<Alert[]> | undefined;
  #again = false;
  #stopped = false;

  constructor(options: AlertWatcherOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#ledgerNow = options.ledgerNow ?? new LedgerNow(options.source.store, { now: this.#now, onError: (err) => options.logger.warn({ err }, 'could not end the reservations of gone processes') });
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

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running?.catch(() => undefined);
  }

  async #check(): Promise<Alert[]> {
    const { source, index, log, config } = this.#options;
    const now = this.#now();
    const rules = (await log.rules()) ?? { thresholds: config.thresholds, breaker: config.breaker };
    await index.refresh();
    const active = await this.#ledgerNow.activeJobs();
    const [overrides, breaker, refusals, roleBudgets] = await Promise.all([
      source.store.allCapOverrides(),
      source.store.breakerStates(),
      source.store.refusals(`${utcMonth(now)}-01`),
      roleBudgetsOf(source, this.#options.logger),
    ]);
    const figures = await spendFigures({ index, operator: source.operator, active, overrides, refusals, now, chartDays: 1, ledger: source.store, roleBudgets, withUsers: false });
    const pending: { alert: Alert; keepUntil: number; passed: string[] }[] = [];
    const keys = new Set<string>();
    for (const cap of figures.caps) {
      // A member of a scope whose role budgets cannot be read: one alert for the scope (below), not one per member.
      if (cap.bound === 'unreadable') continue;
      const percent = cap.ratio * 100;
      const passed = rules.thresholds.filter((t) => percent >= t);
      // At 100 % the threshold's alert says the cap refuses; below it, one that cannot take one more image says so.
      const full = percent < 100 && cannotTakeOneImage(cap);
      if (passed.length === 0 && !full) continue;
      const threshold = passed.length === 0 ? 0 : Math.max(...passed);
      const periodKey = cap.period === 'day' ? figures.today : figures.month;
      const base = `cap:${cap.owner}:${cap.key}${cap.scopeKey === undefined ? '' : `@${cap.scopeKey}`}:${cap.period}:${periodKey}`;
      keys.add(cap.key);
      if (cap.scopeKey !== undefined) keys.add(cap.scopeKey);
      const facts = {
        owner: cap.owner,
        key: cap.key,
        ...(cap.scopeKey !== undefined && { scopeKey: cap.scopeKey }),
        ...(cap.bound === 'lower' && { bound: 'lower' as const }),
        period: cap.period,
        periodKey,
        limitUsd: cap.limitUsd,
        usedUsd: cap.usedUsd,
        leftUsd: roundToNanoUsd(Math.max(0, cap.limitUsd - cap.usedUsd)),
        percent: Math.round(percent),
        threshold,
        resetsAt: cap.resetsAt,
      };
      const keepUntil = cap.resetsAt + DAY_MS;
      if (full) {
        // One message for the event: every threshold of the cap and period counts as sent with it (100 % included, the
        // same event seen later: nothing fits in what is left).
        pending.push({
          alert: { id: `${base}:full`, kind: 'cap', text: '', at: now, ledger: source.operator.ledger, cap: { ...facts, trigger: 'full' } },
          keepUntil,
          passed: rules.thresholds.map((t) => `${base}:${t}`),
        });
      } else {
        pending.push({
          alert: { id: `${base}:${threshold}`, kind: 'cap', text: '', at: now, ledger: source.operator.ledger, cap: { ...facts, trigger: 'threshold' } },
          keepUntil,
          // At 100 %, the alert that it cannot take one more image would tell the same: it counts as sent too.
          passed: [...passed.filter((t) => t !== threshold).map((t) => `${base}:${t}`), ...(percent >= 100 ? [`${base}:full`] : [])],
        });
      }
    }
    for (const [scopeKey, budgets] of Object.entries(roleBudgets)) {
      if (budgets !== 'unreadable') continue;
      keys.add(scopeKey);
      pending.push({
        alert: { id: `role-budgets:${scopeKey}:${figures.today}`, kind: 'role-budgets', text: '', at: now, ledger: source.operator.ledger, roleBudgets: { scopeKey } },
        keepUntil: nextUtcMidnight(now) + DAY_MS,
        passed: [],
      });
    }
    if (rules.breaker) {
      for (const [scopeKey, state] of Object.entries(breaker)) {
        if (state.pausedAt === undefined) continue;
        keys.add(scopeKey);
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
    if (pending.length === 0) return [];
    const names = (await source.bots?.names?.([...keys]).catch(() => undefined)) ?? new Map<string, string>();
    const sent: Alert[] = [];
    for (const { alert, keepUntil, passed } of pending) {
      if (alert.cap) {
        alert.cap.name = names.get(alert.cap.key);
        if (alert.cap.scopeKey !== undefined) alert.cap.scopeName = names.get(alert.cap.scopeKey);
      }
      if (alert.breaker) alert.breaker.name = names.get(alert.breaker.scopeKey);
      if (alert.roleBudgets) alert.roleBudgets.name = names.get(alert.roleBudgets.scopeKey);
      alert.text = alertText(alert, now);
      for (const channel of this.#options.channels) {
        // A lower threshold passed at the same time is not sent after the higher one.
        for (const lower of passed) if (await log.claim(`${lower}@${channel.id}`, now, CLAIM_MS)) await log.sent(`${lower}@${channel.id}`, { id: lower, channel: channel.id, text: '(passed with a higher threshold)', at: now }, now, keepUntil);
        const key = `${alert.id}@${channel.id}`;
        if (!(await log.claim(key, now, CLAIM_MS))) continue;
        try {
          await channel.send(alert);
        } catch (error) {
          await log.release(key).catch(() => undefined);
          this.#options.logger.warn({ alert: alert.id, channel: channel.id, err: error instanceof Error ? error.message : String(error) }, 'an alert was not taken; it is tried again at the next check');
          continue;
        }
        await log.sent(key, { id: alert.id, channel: channel.id, text: alert.text, at: now }, now, keepUntil);
        this.#options.logger.info({ alert: alert.id, channel: channel.id }, 'alert sent');
        sent.push(alert);
      }
    }
    return sent;
  }
}

/** The sentence of an alert. */
export function alertText(alert: Alert, now: number): string {
  const tag = alert.ledger === 'emulator' ? 'Pictor (emulator ledger, no money spent)' : 'Pictor';
  if (alert.breaker) {
    const { scopeKey, name, pausedUsd, limitUsd } = alert.breaker;
    return (
      `${tag} paused ${name ? `${name} (${scopeKey})` : scopeKey}: it spent ${formatUsd(pausedUsd)} in the last hour, more than the ${formatUsd(limitUsd)} an hour its usual use allows. ` +
      'Its jobs are refused until you resume it in the Pictor console (Caps and settings).'
    );
  }
  const named = (name: string | undefined, key: string) => (name ? `${name} (${key})` : key);
  if (alert.roleBudgets) {
    const { scopeKey, name } = alert.roleBudgets;
    return `${tag}: the role budgets of ${named(name, scopeKey)} cannot be read: its members may spend nothing until an admin of it sets them again.`;
  }
  const cap = alert.cap!;
  const where = cap.scopeKey === undefined ? '' : ` in ${named(cap.scopeName, cap.scopeKey)}`;
  const whose = cap.owner === 'account' ? OWNER_WORDS.account : `${OWNER_WORDS[cap.owner]} ${named(cap.name, cap.key)}${where}`;
  const period = cap.period === 'day' ? 'daily' : 'monthly';
  const used =
    cap.bound === 'lower'
      ? `${formatUsd(cap.usedUsd)} of its ${period} cap of at least ${formatUsd(cap.limitUsd)} (at most ${cap.percent} %, if the member holds no role with a larger budget`
      : `${formatUsd(cap.usedUsd)} of its ${period} cap of ${formatUsd(cap.limitUsd)} (${cap.percent} %`;
  // A job reserves its upper-bound price before it is sent, and the cap refuses it when that does not fit in what is left.
  const left = `${formatUsd(cap.leftUsd)} is left, and a job that reserves more is refused (one image of quality auto reserves ${formatUsd(ONE_IMAGE_USD)})`;
  const resets = `at ${describeReset(cap.resetsAt, now)}`;
  if (cap.trigger === 'full') {
    return `${tag}: ${whose}: its ${period} cap cannot take one more image (a job reserves up to ${formatUsd(ONE_IMAGE_USD)}). It has used ${used}, settled and reserved by running jobs); ${formatUsd(cap.leftUsd)} is left until the cap resets ${resets}.`;
  }
  // A lower bound (the member's roles are not known here) is never said to refuse: a role may lift the cap.
  if (cap.bound === 'lower') return `${tag}: ${whose} has used ${used}, past ${cap.threshold} %, settled and reserved by running jobs). The cap resets ${resets}.`;
  if (cap.percent >= 100) return `${tag}: ${whose} has used ${used}, past ${cap.threshold} %, settled and reserved by running jobs). Its jobs are refused until the cap resets ${resets}.`;
  return `${tag}: ${whose} has used ${used}, past ${cap.threshold} %, settled and reserved by running jobs): ${left}. The cap resets ${resets}.`;
}

/**
 * A cap the jobs are reserved with (not a member's lower bound) that has been used and has less left than a job of one
 * image reserves: it cannot take one more image. The ledger counts refusals by kind of cap, not by whose, so no
 * refusal is claimed of it.
 */
export function cannotTakeOneImage(cap: CapUse): boolean {
  return cap.bound === undefined && (cap.usedUsd > 0 || cap.limitUsd === 0) && cap.limitUsd - cap.usedUsd < ONE_IMAGE_USD;
}
