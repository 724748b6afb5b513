import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkUntil, waitWithin } from '../../bots/time-left.js';
import { MAX_TIMER_MS } from '../../src/internal.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('a stop’s time left', () => {
  it('refuses an until that is not a time, before the stop begins (NaN or Infinity would make every wait 1 ms)', () => {
    for (const until of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) expect(() => checkUntil(until)).toThrow(RangeError);
    expect(checkUntil(undefined)).toBeUndefined();
    expect(checkUntil(1_700_000_000_000)).toBe(1_700_000_000_000);
  });

  it('gives a step its own bound, or what is left of until when that is less, never below 0 nor above what a timer can wait', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    expect(waitWithin(5_000, undefined)).toBe(5_000);
    expect(waitWithin(5_000, 1_002_000)).toBe(2_000);
    expect(waitWithin(5_000, 1_009_000)).toBe(5_000);
    expect(waitWithin(5_000, 999_000)).toBe(0);
    expect(waitWithin(Number.POSITIVE_INFINITY, undefined)).toBe(MAX_TIMER_MS);
    expect(waitWithin(Number.POSITIVE_INFINITY, 1_000_000 + 2 * MAX_TIMER_MS)).toBe(MAX_TIMER_MS);
  });
});
