/** A day in ms: the spend rules' day (UTC). */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC calendar day of a time, as `YYYY-MM-DD`: the key daily caps are counted under. */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

/** The UTC calendar month of a time, as `YYYY-MM`: the key monthly caps are counted under. */
export function utcMonth(now: number): string {
  return new Date(now).toISOString().slice(0, 7);
}

/** When the UTC day of `now` begins. */
export function utcDayStart(now: number): number {
  return Math.floor(now / DAY_MS) * DAY_MS;
}

/** When the UTC day of `now` ends: the moment daily caps reset. */
export function nextUtcMidnight(now: number): number {
  return utcDayStart(now) + DAY_MS;
}

/** When the UTC month of `now` begins: the moment monthly caps last reset. */
export function utcMonthStart(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** When the UTC month of `now` ends: the moment monthly caps reset. */
export function nextUtcMonth(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/** The UTC day `days` before the day of `now`. */
export function utcDayBefore(now: number, days: number): string {
  return utcDay(utcDayStart(now) - days * DAY_MS);
}

/** The UTC month `months` before the month of `now`. */
export function utcMonthBefore(now: number, months: number): string {
  const date = new Date(now);
  return utcMonth(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - months, 1));
}
