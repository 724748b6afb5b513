/** A unit a duration is said in. */
export type DurationUnit = 'hour' | 'minute' | 'second' | 'millisecond';

/** One number of a duration and its unit; `digits`: its decimals (1 only for the seconds of a time taken that are not whole). */
export interface DurationPart {
  readonly value: number;
  readonly unit: DurationUnit;
  readonly digits: 0 | 1;
}

/**
 * How a duration is said, the one rule of every surface (each says the parts in its reader's language: English here,
 * the bots' other languages through `Intl`, `bots/runner/words.ts`). Under a second it is milliseconds, so a quarter of
 * a second is never "1 s" nor "0.0 s".
 *
 * - `wait` (a wait, or a limit such as a timeout): rounded up, so a person never comes back too early: `250 ms`, `45 s`,
 *   `1 min 30 s` (under 10 min), `12 min`, `3 h 12 min`; a wait of nothing (or one already over) is `0 ms`, true of a
 *   limit set to nothing; a wait a person is told to wait, or one until a moment, is never nothing (`waitToSay`, `waitUntil`).
 * - `took` (how long something took, or has taken so far): to the nearest: `250 ms`, `4.2 s`, then `2 min 5 s`, and
 *   from an hour `3 h 12 min` (a job a reconcile ended days after it was reserved). Whole seconds drop the tenth: `6 s`,
 *   not `6.0 s`, whose trailing zero would claim a precision no one measured.
 * - `left` (what is left of a limit, said beside a wait that would outlast it): as a wait, but rounded down, so a wait
 *   longer than the time left never reads as short as it (`2 s` asked, `1 s` left of 1.1 s; never `2 s` left).
 */
export function durationParts(ms: number, kind: 'wait' | 'took' | 'left'): DurationPart[] {
  const part = (value: number, unit: DurationUnit, digits: 0 | 1 = 0): DurationPart => ({ value, unit, digits });
  if (kind === 'took') {
    const millis = Math.max(0, Math.round(ms));
    if (millis < 1000) return [part(millis, 'millisecond')];
    const tenths = Math.round(millis / 100);
    if (tenths < 600) return [part(tenths / 10, 'second', tenths % 10 === 0 ? 0 : 1)];
    const whole = Math.round(millis / 1000);
    if (whole < 3600) return [part(Math.floor(whole / 60), 'minute'), part(whole % 60, 'second')];
    const minutes = Math.round(millis / 60_000);
    return [part(Math.floor(minutes / 60), 'hour'), part(minutes % 60, 'minute')];
  }
  // A wait rounds up (a wait of nothing, or one already over, is nothing; any other is at least a millisecond), a time
  // left down: each unit below from the one above, so the two read on the same steps.
  const round = kind === 'wait' ? Math.ceil : Math.floor;
  const millis = Math.max(0, round(ms));
  if (millis < 1000) return [part(millis, 'millisecond')];
  const seconds = round(millis / 1000);
  if (seconds < 60) return [part(seconds, 'second')];
  if (seconds < 600) return seconds % 60 === 0 ? [part(seconds / 60, 'minute')] : [part(Math.floor(seconds / 60), 'minute'), part(seconds % 60, 'second')];
  const minutes = round(seconds / 60);
  if (minutes < 60) return [part(minutes, 'minute')];
  return minutes % 60 === 0 ? [part(minutes / 60, 'hour')] : [part(Math.floor(minutes / 60), 'hour'), part(minutes % 60, 'minute')];
}

const ENGLISH_UNITS: Readonly<Record<DurationUnit, string>> = { hour: 'h', minute: 'min', second: 's', millisecond: 'ms' };

/** Parts of a duration in English: `1 min 30 s`, `4.2 s`, `250 ms`. */
export function describeDurationParts(parts: readonly DurationPart[]): string {
  return parts.map((p) => `${p.value.toFixed(p.digits)} ${ENGLISH_UNITS[p.unit]}`).join(' ');
}

/**
 * A wait (or a limit, such as a timeout) in words, rounded up so a person never comes back too early:
 * `250 ms`, `45 s`, `1 min 30 s`, `12 min`, `3 h 12 min` (`durationParts`, `wait`).
 */
export function describeDuration(ms: number): string {
  return describeDurationParts(durationParts(ms, 'wait'));
}

/**
 * How long a person is told to wait until `at` ("try again in …", "resets … (in …)"), in ms for `describeDuration`:
 * never nothing. A moment that passed while the sentence was worded (the refusal decided a little before `now`) is the
 * smallest wait said, `1 ms`: telling someone to wait "0 ms" reads as a fault.
 */
export function waitUntil(at: number, now: number): number {
  return waitToSay(at - now);
}

/**
 * A wait a person is told to wait (a service's Retry-After, the time until a moment), in ms for `describeDuration`:
 * never nothing. A wait of nothing, or one already over (`Retry-After: 0`, a date past), is the smallest wait said,
 * `1 ms`; a limit set to nothing (a timeout) is not a wait told and stays `0 ms`.
 */
export function waitToSay(ms: number): number {
  return Math.max(1, ms);
}

/**
 * The wait until `at`, in words, as a person is told it: rounded up (`250 ms`, `20 s`), never `0 ms` (`waitUntil`).
 * The English "try again in …" of a cooldown and "resets … (in …)" are said through it; the bots say the same wait in
 * their reader's language (`durationUntil`, `bots/runner/words.ts`).
 */
export function describeWaitUntil(at: number, now: number): string {
  return describeDuration(waitUntil(at, now));
}

/**
 * What is left of a limit (a timeout), in words, rounded down: said beside a longer wait (`describeDuration`), it never
 * reads as long as that wait: `1 s` left of 1.1 s, `1 min` of 60.5 s, `999 ms` (`durationParts`, `left`).
 */
export function describeTimeLeft(ms: number): string {
  return describeDurationParts(durationParts(ms, 'left'));
}

/** How long something took, in words, to the nearest: `250 ms`, `4.2 s`, `6 s`, `2 min 5 s`, `3 h 12 min` (`durationParts`, `took`). */
export function describeElapsed(ms: number): string {
  return describeDurationParts(durationParts(ms, 'took'));
}

const DAY_MS = 24 * 60 * 60_000;

/**
 * The whole days, rounded up, a cap's reset is said in ("in 9 days") when it is more than two days away (a monthly
 * cap); `undefined` when it is said as a wait until it ("in 36 h", "in 250 ms": `describeWaitUntil`). The one rule of
 * every surface: the bots say the days or the wait in their reader's language (`resetTime`, `bots/runner/words.ts`).
 */
export function resetDays(resetsAt: number, now: number): number | undefined {
  const days = Math.ceil((resetsAt - now) / DAY_MS);
  return days > 2 ? days : undefined;
}

/** When a cap resets, in words: `00:00 UTC (in 3 h 12 min)`, or for a month `2026-12-01 00:00 UTC (in 9 days)`. */
export function describeReset(resetsAt: number, now: number): string {
  const days = resetDays(resetsAt, now);
  return `${describeUtcTime(resetsAt, now)} (in ${days === undefined ? describeWaitUntil(resetsAt, now) : `${days} days`})`;
}

/**
 * Whether a moment is said with its date as well as its time: when it is more than a day after `now` (a monthly cap's
 * reset); a moment within a day, or with no `now` to measure from, is its time alone. The bots' `utcTime` follows it.
 */
export function saysDate(at: number, now?: number): boolean {
  return now !== undefined && at - now > DAY_MS;
}

/** `00:00 UTC`, `13:05 UTC`; `2026-12-01 00:00 UTC` when more than a day after `now` (`saysDate`). */
export function describeUtcTime(at: number, now?: number): string {
  const iso = new Date(at).toISOString();
  return saysDate(at, now) ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : `${iso.slice(11, 16)} UTC`;
}
