import type { LoggerLike } from '../../client/PictorClient.js';
import { describeReset } from '../../core/describe-duration.js';
import { formatUsd } from '../../core/pricing.js';
import { spendFigures, type CapUse } from '../figures.js';
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
}

/** How long a process's claim on an alert lasts while it sends it (if it dies, another sends it after this). */
const CLAIM_MS = 60_000;
const DAY_MS = 24 * 60 * 60_000;
const BREAKER_ALERT_KEPT_MS = 90 * DAY_MS;

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
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<Alert[]> | undefined;
  #again = false;
  #stopped = false;

  constructor(options: AlertWatcherOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
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
    const [active, overrides, breaker] = await Promise.all([source.store.activeJobs(), source.store.allCapOverrides(), source.store.breakerStates()]);
    const figures = spendFigures({ index, operator: source.operator, active, overrides, refusals: {}, now, chartDays: 1 });
    const pending: { alert: Alert; keepUntil: number; passed: string[] }[] = [];
    const keys = new Set<string>();
    for (const cap of figures.caps) {
      const percent = cap.ratio * 100;
      const passed = rules.thresholds.filter((t) => percent >= t);
      if (passed.length === 0) continue;
      const threshold = Math.max(...passed);
      const periodKey = cap.period === 'day' ? figures.today : figures.month;
      const base = `cap:${cap.owner}:${cap.key}:${cap.period}:${periodKey}`;
      keys.add(cap.key);
      pending.push({
        alert: {
          id: `${base}:${threshold}`,
          kind: 'cap',
          text: '',
          at: now,
          ledger: source.operator.ledger,
          cap: { owner: cap.owner, key: cap.key, period: cap.period, periodKey, limitUsd: cap.limitUsd, usedUsd: cap.usedUsd, percent: Math.round(percent), threshold, resetsAt: cap.resetsAt },
        },
        keepUntil: cap.resetsAt + DAY_MS,
        passed: passed.filter((t) => t !== threshold).map((t) => `${base}:${t}`),
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
      if (alert.cap) alert.cap.name = names.get(alert.cap.key);
      if (alert.breaker) alert.breaker.name = names.get(alert.breaker.scopeKey);
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
  const cap = alert.cap!;
  const whose = cap.owner === 'account' ? OWNER_WORDS.account : `${OWNER_WORDS[cap.owner]} ${cap.name ? `${cap.name} (${cap.key})` : cap.key}`;
  const period = cap.period === 'day' ? 'daily' : 'monthly';
  const then = cap.percent >= 100 ? 'Its jobs are refused until the cap resets' : 'The cap resets';
  return `${tag}: ${whose} has spent ${formatUsd(cap.usedUsd)} of its ${period} cap of ${formatUsd(cap.limitUsd)} (${cap.percent} %, past ${cap.threshold} %). ${then} at ${describeReset(cap.resetsAt, now)}.`;
}
