import { ValidationError } from './errors.js';

/** The longest a Node timer waits (2^31 − 1 ms, about 24.8 days): setTimeout takes anything longer, or not finite, as 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface TimerMsRule {
  /** A timeout: 0 is refused too (a wait of none, a grace, is taken by default). */
  aboveZero?: boolean | undefined;
  /** The error thrown, made of the option's name and the message; default a `RangeError` of the message. */
  error?: ((option: string, message: string) => Error) | undefined;
}

/** The rule of an option checked where it is given: a refused value is a `ValidationError` naming it (code `validation_error`). */
export const AS_VALIDATION_ERROR: TimerMsRule = { error: (option, message) => new ValidationError(option, message) };

/**
 * A wait (a grace, a timeout) in ms as given — a finite number from 0 (above 0 with `aboveZero`) to `MAX_TIMER_MS`,
 * which a timer keeps as it is — or an error naming the option: the one check of every such option, so that none
 * reaches setTimeout as a wait of 1 ms.
 */
export function timerMsOf(option: string, ms: unknown, rule: TimerMsRule = {}): number {
  const least = rule.aboveZero ? 'more than 0 and at most' : 'from 0 to';
  if (typeof ms === 'number' && Number.isFinite(ms) && (rule.aboveZero ? ms > 0 : ms >= 0) && ms <= MAX_TIMER_MS) return ms;
  const message = `${option} must be a number of milliseconds ${least} ${MAX_TIMER_MS} (about 24.8 days), not ${String(ms)}`;
  throw rule.error ? rule.error(option, message) : new RangeError(message);
}

/**
 * A stop's `until` as given to a public stop (`Service.stop`, the bots' `stop`, the runner's `shutdown`): a time as
 * `Date.now()`, or none. Anything else is refused at once (a RangeError naming it), before the stop begins: NaN would
 * turn every wait of the stop into a timer of 1 ms, dropping the last messages it owes, and ±Infinity is no deadline.
 */
export function checkUntil(until: number | undefined): number | undefined {
  if (until !== undefined && !Number.isFinite(until)) throw new RangeError(`until must be a time (a finite number of ms, as Date.now() gives), not ${String(until)}`);
  return until;
}

/**
 * How long a step of a stop may wait: its own bound, or less when the stop's `until` (a time as `Date.now()`) comes
 * first; never below 0 nor above what a timer can wait. Without `until`, its own bound.
 */
export function waitWithin(ms: number, until: number | undefined): number {
  return Math.max(0, Math.min(ms, until === undefined ? ms : until - Date.now(), MAX_TIMER_MS));
}
