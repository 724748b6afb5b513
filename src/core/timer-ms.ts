/** The longest a Node timer waits (2^31 − 1 ms, about 24.8 days): setTimeout takes anything longer, or not finite, as 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface TimerMsRule {
  /** A timeout: 0 is refused too (a wait of none, a grace, is taken by default). */
  aboveZero?: boolean | undefined;
  /** The error thrown, made of the option's name and the message; default a `RangeError` of the message. */
  error?: ((option: string, message: string) => Error) | undefined;
}

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
