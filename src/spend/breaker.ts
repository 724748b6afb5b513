import { envNumber, type Env } from '../core/env.js';
import { isChatScopeKey } from './caps.js';
import { ValidationError } from '../core/errors.js';
import { BREAKER_CODE, type SpendRefusal } from './types.js';

/**
 * The breaker: a money rule beside the caps. A server, workspace or DM user
 * whose spend in the last hour (settled, plus what its running jobs reserved,
 * plus the job asking) would pass both `factor` times its own trailing hourly
 * average (the 7 days before that hour) and an absolute floor is paused: that
 * job and every later one of the scope are refused (`scope_paused`) until the
 * owner resumes it from the console. A scope with no spend in those 7 days
 * (a cold start, or a new server) is never paused by it: there is nothing to
 * compare with. Off until both `PICTOR_BREAKER_FACTOR` and
 * `PICTOR_BREAKER_FLOOR_USD` are set.
 *
 * This module is the rule; the stores keep the numbers it reads: spend per
 * scope in 5-minute buckets for the last hour and in hourly buckets for the
 * 7 days before, and the paused scopes, all in the ledger (file or Redis).
 */
export interface BreakerSettings {
  /** `PICTOR_BREAKER_FACTOR`: how many times its trailing hourly average a scope may spend in an hour. */
  factor: number;
  /** `PICTOR_BREAKER_FLOOR_USD`: below this much in an hour a scope is never paused, whatever its average. */
  floorUsd: number;
}

/** The window a scope's recent spend is counted over. */
export const BREAKER_WINDOW_MS = 60 * 60_000;
/** The recent spend is kept in buckets of this size (the window is exact to a bucket). */
export const BREAKER_BUCKET_MS = 5 * 60_000;
/** The trailing average is over this many hours (7 days) before the window. */
export const BREAKER_HISTORY_HOURS = 7 * 24;
export const HOUR_MS = 60 * 60_000;

/**
 * `PICTOR_BREAKER_FACTOR` (a number above 1) and `PICTOR_BREAKER_FLOOR_USD`
 * (US dollars, 0 or more), read once at an entry point. Both unset: off
 * (undefined). One without the other is a ValidationError naming the missing one.
 */
export function readBreakerSettings(env: Env): BreakerSettings | undefined {
  const factor = envNumber(env, 'PICTOR_BREAKER_FACTOR', { min: 1, takes: 'a number, 1 or more (how many times its usual hourly spend a server may spend in an hour)' });
  const floorUsd = envNumber(env, 'PICTOR_BREAKER_FLOOR_USD', { min: 0, takes: 'a number of US dollars, 0 or more' });
  if (factor === undefined && floorUsd === undefined) return undefined;
  if (factor === undefined) throw new ValidationError('PICTOR_BREAKER_FACTOR', 'PICTOR_BREAKER_FACTOR must be set with PICTOR_BREAKER_FLOOR_USD: the breaker needs both (or neither, to stay off)');
  if (floorUsd === undefined) throw new ValidationError('PICTOR_BREAKER_FLOOR_USD', 'PICTOR_BREAKER_FLOOR_USD must be set with PICTOR_BREAKER_FACTOR: the breaker needs both (or neither, to stay off)');
  return { factor, floorUsd };
}

/** Whether the breaker watches a scope: a Discord server, a Slack workspace or a DM user (`<platform>:<id>`), never the CLI's or n8n's. */
export function breakerApplies(scopeKey: string): boolean {
  return isChatScopeKey(scopeKey);
}

/**
 * The most a scope may spend in the window before it is paused: the larger of
 * `factor` times its trailing hourly average and the floor. Undefined when it
 * has no history (a cold start never trips).
 */
export function breakerLimit(historyUsd: number, settings: BreakerSettings): number | undefined {
  if (!(historyUsd > 0)) return undefined;
  return Math.max(settings.factor * (historyUsd / BREAKER_HISTORY_HOURS), settings.floorUsd);
}

/** The 5-minute bucket of a time. */
export const recentBucket = (now: number): number => Math.floor(now / BREAKER_BUCKET_MS);
/** The hourly bucket of a time. */
export const hourBucket = (now: number): number => Math.floor(now / HOUR_MS);

/** Whether a 5-minute bucket is part of the window that ends at `now` (it ends after the window begins). */
export function inWindow(bucket: number, now: number): boolean {
  return (bucket + 1) * BREAKER_BUCKET_MS > now - BREAKER_WINDOW_MS && bucket * BREAKER_BUCKET_MS <= now;
}

/** The hourly buckets of the trailing average: the 7 days of whole hours before the hour the window begins in, `[from, to)`. */
export function historyHours(now: number): { from: number; to: number } {
  const to = hourBucket(now - BREAKER_WINDOW_MS);
  return { from: to - BREAKER_HISTORY_HOURS, to };
}

/** What the breaker reads of a scope at a reservation: its spend in the window, its trailing spend, whether it is paused. */
export interface BreakerReading {
  paused: { usd: number; limitUsd: number } | undefined;
  /** Settled in the window, plus what the scope's jobs queued or running reserved. */
  windowUsd: number;
  /** Settled in the 7 days of the trailing average. */
  historyUsd: number;
}

/** The refusal of a job whose scope is paused (`tripped`: by this job). It resets only when the owner resumes the scope. */
export function pausedRefusal(limitUsd: number, usedUsd: number, tripped: boolean): SpendRefusal {
  return { ok: false, code: BREAKER_CODE, limit: limitUsd, used: usedUsd, resetsAt: Number.POSITIVE_INFINITY, ...(tripped && { tripped }) };
}
