import { describe, expect, it } from 'vitest';
import { describeDuration, describeLimit, describeReset } from '../../src/core/describe-duration.js';

describe('describeDuration', () => {
  it('rounds up and reads like speech', () => {
    expect(describeDuration(400)).toBe('1 s');
    expect(describeDuration(45_000)).toBe('45 s');
    expect(describeDuration(90_000)).toBe('1 min 30 s');
    expect(describeDuration(12 * 60_000 - 1)).toBe('12 min');
    expect(describeDuration((3 * 60 + 12) * 60_000)).toBe('3 h 12 min');
    expect(describeDuration(2 * 60 * 60_000)).toBe('2 h');
  });
});

describe('describeLimit', () => {
  it('says a limit under a second in milliseconds, and a longer one as describeDuration does', () => {
    expect(describeLimit(300)).toBe('300 ms');
    expect(describeLimit(999)).toBe('999 ms');
    expect(describeLimit(1000)).toBe('1 s');
    expect(describeLimit(5 * 60_000)).toBe('5 min');
  });
});

describe('describeReset', () => {
  it('gives the time of a reset within a day, and the date of one further away', () => {
    const now = Date.UTC(2030, 0, 2, 20, 48);
    expect(describeReset(Date.UTC(2030, 0, 3), now)).toBe('00:00 UTC (in 3 h 12 min)');
    expect(describeReset(Date.UTC(2030, 1, 1), now)).toBe('2030-02-01 00:00 UTC (in 30 days)');
  });
});
