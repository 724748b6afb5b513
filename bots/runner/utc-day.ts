const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC calendar day of a time, as `YYYY-MM-DD`: the key budgets are counted under. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** When the UTC day of `now` ends: the moment daily budgets reset. */
export function nextUtcMidnight(now: number): number {
  return Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
}

/** The UTC day `days` before the day of `now`. */
export function utcDayBefore(now: number, days: number): string {
  return utcDay(Math.floor(now / DAY_MS) * DAY_MS - days * DAY_MS);
}
