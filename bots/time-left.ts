/**
 * How long a step of a stop may wait: its own bound, or less when the stop's `until` (a time as `Date.now()`) comes
 * first; never below 0. Without `until`, its own bound.
 */
export function waitWithin(ms: number, until: number | undefined): number {
  return until === undefined ? ms : Math.max(0, Math.min(ms, until - Date.now()));
}
