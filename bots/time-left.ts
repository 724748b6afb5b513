import { MAX_TIMER_MS } from 'pictor/internal';

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
