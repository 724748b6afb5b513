import { breakerApplies, breakerLimit, pausedRefusal, type BreakerReading } from './breaker.js';
import { ACCOUNT_KEY, type SpendLimits, type SpendRefusal } from './types.js';
import { nextUtcMidnight, nextUtcMonth, utcDay, utcMonth } from './utc-period.js';

/**
 * The rulebook of the spending caps, written once and read by every store
 * (file, Redis, memory): which caps exist and in what order they are checked,
 * which period a job counts in, when each cap resets, how amounts are rounded,
 * and the facts of a refusal. A store only keeps the numbers and answers them
 * atomically; it decides nothing of its own.
 */

/** Whose spending a cap counts. */
export type CapOwner = 'user' | 'scope' | 'account';
/** The UTC period a cap counts in: a job counts in the period it was **reserved** in, whenever it is settled. */
export type CapPeriod = 'day' | 'month';

/**
 * Every money cap, in the order they are checked: the user's, the scope's,
 * then the account's; daily before monthly. Adding a cap kind is a row here
 * (and its field in `SpendLimits`, its words in the refusal sentences).
 */
export const BUDGETS = [
  { code: 'budget_user_daily', field: 'userDailyUsd', owner: 'user', period: 'day' },
  { code: 'budget_user_monthly', field: 'userMonthlyUsd', owner: 'user', period: 'month' },
  { code: 'budget_scope_daily', field: 'scopeDailyUsd', owner: 'scope', period: 'day' },
  { code: 'budget_scope_monthly', field: 'scopeMonthlyUsd', owner: 'scope', period: 'month' },
  { code: 'budget_account_daily', field: 'accountDailyUsd', owner: 'account', period: 'day' },
  { code: 'budget_account_monthly', field: 'accountMonthlyUsd', owner: 'account', period: 'month' },
] as const satisfies readonly { code: string; field: keyof SpendLimits; owner: CapOwner; period: CapPeriod }[];

export type Budget = (typeof BUDGETS)[number];

/** Amounts are kept to the nano-dollar: sums of floats drift below it, and Redis counts whole nano-dollars. */
export const NANOS_PER_USD = 1e9;
/** Below a nano-dollar two amounts are the same. */
export const EPSILON_USD = 1 / NANOS_PER_USD;

/** Whether a charge of `usd` exceeds what was reserved (to the nano-dollar): the one rule every store and the job's ledger use. */
export const exceedsReservation = (reservation: { usd: number }, usd: number): boolean => usd > reservation.usd + EPSILON_USD;

/** USD rounded to the nano-dollar, the ledger's precision. */
export const roundToNanoUsd = (usd: number): number => Math.round(usd * NANOS_PER_USD) / NANOS_PER_USD;

/** USD as whole nano-dollars (Redis keeps these); a bad amount is a RangeError naming the field. */
export function toNanos(field: string, usd: number | undefined): number {
  if (!(typeof usd === 'number' && Number.isFinite(usd) && usd >= 0)) throw new RangeError(`${field} must be a non-negative number, not ${usd}`);
  return Math.round(usd * NANOS_PER_USD);
}

export function fromNanos(nanos: number): number {
  return Math.round(nanos) / NANOS_PER_USD;
}

/**
 * What is left of a cap of `limitUsd` with `usedUsd` spent: counted in whole nano-dollars, as the ledger counts, and
 * never below zero. Every place that says how much is left (a refusal, the usage view, an alert) asks this: a float
 * subtraction alone says 0.004559999999999998 for 0.01 − 0.00544, or $0.1000 for 1 − 0.9.
 */
export function leftOf(limitUsd: number, usedUsd: number): number {
  return fromNanos(Math.max(0, Math.round(limitUsd * NANOS_PER_USD) - Math.round(usedUsd * NANOS_PER_USD)));
}

/** The key of the period a time falls in: `YYYY-MM-DD` for a day, `YYYY-MM` for a month. */
export function periodKey(period: CapPeriod, now: number): string {
  return period === 'day' ? utcDay(now) : utcMonth(now);
}

/** When the period of `now` ends: the moment a cap of that period resets. */
export function resetsAt(period: CapPeriod, now: number): number {
  return period === 'day' ? nextUtcMidnight(now) : nextUtcMonth(now);
}

/** The keys a job's cost counts under: its user, its scope and the account. */
export function keysOfJob(userKey: string, scopeKey: string): string[] {
  return [...new Set([userKey, scopeKey, ACCOUNT_KEY])];
}

/** Whether a job of `userKey` in `scopeKey` counts under `key` (one of `keysOfJob`), without making the list: asked per reservation. */
export function countsUnder(key: string, userKey: string, scopeKey: string): boolean {
  return key === userKey || key === scopeKey || key === ACCOUNT_KEY;
}

/** The caps that apply to a job, in their order, each with the key it counts under and its limit (undefined: no cap). */
export function budgetsOf(limits: SpendLimits, userKey: string, scopeKey: string) {
  const keyOf = { user: userKey, scope: scopeKey, account: ACCOUNT_KEY } as const;
  return BUDGETS.map((b) => ({ ...b, key: keyOf[b.owner], limit: limits[b.field] }));
}

/** What a job asks of the ledger. */
export interface JobAsk {
  userKey: string;
  scopeKey: string;
  estimateUsd: number;
  limits: SpendLimits;
  now: number;
}

/** What a store knows at the moment of a reservation, read atomically with it. */
export interface LedgerSnapshot {
  /** The user's reservations still counting (queued or running jobs). */
  activeJobsOfUser: number;
  /** When the user last had a job reserved (ms), if the store remembers. */
  lastJobAt: number | undefined;
  /** Settled plus reserved under `key` in the period of `now`. */
  used(key: string, period: CapPeriod): number;
  /** The breaker's reading of the job's scope; read only when the breaker is on and watches that scope (`breakerWatches`). */
  breaker?(): BreakerReading;
}

/** Whether the breaker is on for a job's scope: set (`PICTOR_BREAKER_*`) and watching scopes of its kind. */
export function breakerWatches(limits: SpendLimits, scopeKey: string): boolean {
  return limits.breaker !== undefined && breakerApplies(scopeKey);
}

/** The refusal facts when a user has too many jobs at once. */
export function concurrencyRefusal(limit: number, active: number, now: number): SpendRefusal {
  return { ok: false, code: 'user_concurrency', limit, used: active, resetsAt: now };
}

/** The refusal facts when a user's last job was too recent. */
export function cooldownRefusal(limitSeconds: number, lastJobAt: number, now: number): SpendRefusal {
  return { ok: false, code: 'user_cooldown', limit: limitSeconds, used: (now - lastJobAt) / 1000, resetsAt: lastJobAt + limitSeconds * 1000 };
}

/** The refusal facts when a money cap would be passed. */
export function budgetRefusal(budget: Pick<Budget, 'code' | 'period'>, limit: number, usedUsd: number, now: number): SpendRefusal {
  return { ok: false, code: budget.code, limit, used: roundToNanoUsd(usedUsd), resetsAt: resetsAt(budget.period, now) };
}

/** Whether adding `estimateUsd` to `usedUsd` would pass `limit` (to the nano-dollar). */
export function passes(usedUsd: number, estimateUsd: number, limit: number): boolean {
  return toNanos('used', usedUsd) + toNanos('estimateUsd', estimateUsd) > toNanos('limit', limit);
}

/**
 * The one decision: the refusal a job gets, or undefined when it may be
 * reserved. Checked in order: a scope the breaker paused, the user's jobs at
 * once, the cooldown, every money cap in `BUDGETS` order, then the breaker
 * (a job that would take its scope's last hour past the breaker's limit trips
 * it: `tripped`, and the store keeps the scope paused); the first that fails
 * is the answer.
 */
export function evaluate(snapshot: LedgerSnapshot, job: JobAsk): SpendRefusal | undefined {
  const { limits, now } = job;
  const breaker = breakerWatches(limits, job.scopeKey) && snapshot.breaker ? snapshot.breaker() : undefined;
  if (breaker?.paused) return pausedRefusal(breaker.paused.limitUsd, breaker.paused.usd, false);
  if (limits.userConcurrentJobs !== undefined && snapshot.activeJobsOfUser >= limits.userConcurrentJobs) {
    return concurrencyRefusal(limits.userConcurrentJobs, snapshot.activeJobsOfUser, now);
  }
  const cooldownSeconds = limits.userCooldownSeconds ?? 0;
  const last = snapshot.lastJobAt;
  if (cooldownSeconds > 0 && last !== undefined && now < last + cooldownSeconds * 1000) {
    return cooldownRefusal(cooldownSeconds, last, now);
  }
  for (const budget of budgetsOf(limits, job.userKey, job.scopeKey)) {
    if (budget.limit === undefined) continue;
    const used = snapshot.used(budget.key, budget.period);
    if (passes(used, job.estimateUsd, budget.limit)) return budgetRefusal(budget, budget.limit, used, now);
  }
  if (breaker) {
    const limit = breakerLimit(breaker.historyUsd, limits.breaker!);
    if (limit !== undefined && passes(breaker.windowUsd, job.estimateUsd, limit)) return pausedRefusal(roundToNanoUsd(limit), roundToNanoUsd(breaker.windowUsd + job.estimateUsd), true);
  }
  return undefined;
}

/**
 * The caps of a job as data for a store that checks them itself (the Redis
 * Lua script): `[code, key, period, limit in nanos]` per cap set, in order.
 */
export function capsAsData(limits: SpendLimits, userKey: string, scopeKey: string): { code: string; key: string; period: CapPeriod; limitNanos: number }[] {
  return budgetsOf(limits, userKey, scopeKey).flatMap((b) =>
    b.limit === undefined ? [] : [{ code: b.code, key: b.key, period: b.period, limitNanos: toNanos(b.field, b.limit) }],
  );
}

/** A store's answer "this cap refused, with this much used" as the refusal facts (for stores that check caps themselves). */
export function refusalFromStore(code: string, usedOrLast: number, job: Pick<JobAsk, 'limits' | 'now'>, breaker?: { limitNanos: number; tripped: boolean }): SpendRefusal {
  const { limits, now } = job;
  if (code === 'scope_paused') return pausedRefusal(fromNanos(breaker?.limitNanos ?? 0), fromNanos(usedOrLast), breaker?.tripped ?? false);
  if (code === 'user_concurrency') return concurrencyRefusal(limits.userConcurrentJobs!, usedOrLast, now);
  if (code === 'user_cooldown') return cooldownRefusal(limits.userCooldownSeconds!, usedOrLast, now);
  const budget = BUDGETS.find((b) => b.code === code);
  if (!budget) throw new Error(`the quota ledger answered an unknown refusal ${JSON.stringify(code)}`);
  return budgetRefusal(budget, limits[budget.field]!, fromNanos(usedOrLast), now);
}
