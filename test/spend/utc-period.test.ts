import { describe, expect, it } from 'vitest';
import { nextUtcMonth, utcMonth, utcMonthStart } from '../../src/spend/utc-period.js';

describe('the UTC month of a time', () => {
  it('begins at 00:00 UTC on its first day, whatever the time in it', () => {
    expect(utcMonthStart(Date.parse('2026-03-31T23:59:59.999Z'))).toBe(Date.parse('2026-03-01T00:00:00Z'));
    expect(utcMonthStart(Date.parse('2026-03-01T00:00:00Z'))).toBe(Date.parse('2026-03-01T00:00:00Z'));
  });

  it('is the month its key names, and ends where the next begins', () => {
    const now = Date.parse('2028-02-29T12:00:00Z');
    expect(utcMonth(utcMonthStart(now))).toBe(utcMonth(now));
    expect(utcMonthStart(nextUtcMonth(now))).toBe(nextUtcMonth(now));
    expect(nextUtcMonth(now)).toBe(Date.parse('2028-03-01T00:00:00Z'));
  });
});
