/**
 * A wait in words, rounded up so a person never comes back too early:
 * `45 s`, `1 min 30 s`, `12 min`, `3 h 12 min`.
 */
export function describeDuration(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 600) {
    const rest = seconds % 60;
    return rest === 0 ? `${seconds / 60} min` : `${Math.floor(seconds / 60)} min ${rest} s`;
  }
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}

/**
 * A time limit in words (how long a timeout waited): under a second in milliseconds, `300 ms`, where
 * `describeDuration` would round it up to a second; else as `describeDuration` says it, `45 s`, `5 min`.
 */
export function describeLimit(ms: number): string {
  return ms < 1000 ? `${Math.ceil(ms)} ms` : describeDuration(ms);
}

/** When a cap resets, in words: `00:00 UTC (in 3 h 12 min)`, or for a month `2026-12-01 00:00 UTC (in 9 days)`. */
export function describeReset(resetsAt: number, now: number): string {
  const ms = resetsAt - now;
  const days = Math.ceil(ms / (24 * 60 * 60_000));
  return `${describeUtcTime(resetsAt, now)} (in ${days > 2 ? `${days} days` : describeDuration(ms)})`;
}

/** `00:00 UTC`, `13:05 UTC`. */
export function describeUtcTime(at: number, now?: number): string {
  const iso = new Date(at).toISOString();
  // More than a day away (a monthly cap): the date too.
  if (now !== undefined && at - now > 24 * 60 * 60_000) return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
  return `${iso.slice(11, 16)} UTC`;
}
