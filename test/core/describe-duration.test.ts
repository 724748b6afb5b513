import { describe, expect, it } from 'vitest';
import {
  describeDuration,
  describeElapsed,
  describeReset,
  describeTimeLeft,
  describeUtcTime,
  describeWaitUntil,
  durationParts,
  resetDays,
  saysDate,
  waitToSay,
  waitUntil,
} from '../../src/core/describe-duration.js';

describe('describeDuration', () => {
  it('rounds up and reads like speech', () => {
    expect(describeDuration(45_000)).toBe('45 s');
    expect(describeDuration(1_200)).toBe('2 s');
    expect(describeDuration(90_000)).toBe('1 min 30 s');
    expect(describeDuration(12 * 60_000 - 1)).toBe('12 min');
    expect(describeDuration((3 * 60 + 12) * 60_000)).toBe('3 h 12 min');
    expect(describeDuration(2 * 60 * 60_000)).toBe('2 h');
  });

  it('says a wait or a limit under a second in milliseconds, rounded up, never as a whole second', () => {
    expect(describeDuration(250)).toBe('250 ms');
    expect(describeDuration(0.4)).toBe('1 ms');
    expect(describeDuration(999)).toBe('999 ms');
    expect(describeDuration(999.2)).toBe('1 s');
    expect(describeDuration(1000)).toBe('1 s');
    expect(describeDuration(5 * 60_000)).toBe('5 min');
  });

  it('says a wait of nothing as nothing: 0 ms, not a millisecond rounded up from it', () => {
    expect(describeDuration(0)).toBe('0 ms');
    expect(describeDuration(-20)).toBe('0 ms');
    expect(durationParts(0, 'wait')).toEqual([{ value: 0, unit: 'millisecond', digits: 0 }]);
    expect(describeDuration(0.01)).toBe('1 ms');
  });
});

describe('waitUntil', () => {
  it('is the wait a person is told until a moment, never nothing: one that ran out while it was worded is the smallest wait said, 1 ms', () => {
    const now = Date.UTC(2030, 0, 2, 20, 48);
    expect(describeDuration(waitUntil(now + 20_000, now))).toBe('20 s');
    expect(describeDuration(waitUntil(now + 0.2, now))).toBe('1 ms');
    expect(describeDuration(waitUntil(now, now))).toBe('1 ms');
    expect(describeDuration(waitUntil(now - 35, now))).toBe('1 ms');
  });
});

describe('waitToSay', () => {
  it('is a wait a person is told to wait (a service’s Retry-After), never nothing: one of nothing is the smallest wait said, 1 ms', () => {
    expect(describeDuration(waitToSay(400))).toBe('400 ms');
    expect(describeDuration(waitToSay(0.2))).toBe('1 ms');
    expect(describeDuration(waitToSay(0))).toBe('1 ms');
    expect(describeDuration(waitToSay(-35))).toBe('1 ms');
  });
});

describe('describeWaitUntil', () => {
  it('says the wait until a moment rounded up, in milliseconds under a second, and never as 0 ms', () => {
    const now = Date.UTC(2030, 0, 2, 20, 48);
    expect(describeWaitUntil(now + 20_000, now)).toBe('20 s');
    expect(describeWaitUntil(now + 999.2, now)).toBe('1 s');
    expect(describeWaitUntil(now + 250, now)).toBe('250 ms');
    expect(describeWaitUntil(now + 1_000.2, now)).toBe('2 s');
    expect(describeWaitUntil(now + 0.2, now)).toBe('1 ms');
    expect(describeWaitUntil(now, now)).toBe('1 ms');
    expect(describeWaitUntil(now - 35, now)).toBe('1 ms');
  });
});

describe('resetDays', () => {
  const DAY = 24 * 60 * 60_000;
  const now = Date.UTC(2030, 0, 2, 20, 48);

  it('says a reset more than two days away in whole days, rounded up', () => {
    expect(resetDays(now + 2 * DAY + 1, now)).toBe(3);
    expect(resetDays(now + 30 * DAY, now)).toBe(30);
  });

  it('leaves a reset two days away or less to be said as a wait, as is one that already came', () => {
    expect(resetDays(now + 2 * DAY, now)).toBeUndefined();
    expect(resetDays(now + DAY, now)).toBeUndefined();
    expect(resetDays(now + 250, now)).toBeUndefined();
    expect(resetDays(now, now)).toBeUndefined();
    expect(resetDays(now - 40, now)).toBeUndefined();
  });
});

describe('saysDate', () => {
  const DAY = 24 * 60 * 60_000;
  const now = Date.UTC(2030, 0, 2, 20, 48);

  it('gives a moment its date only when it is more than a day after now', () => {
    expect(saysDate(now + DAY + 1, now)).toBe(true);
    expect(saysDate(now + DAY, now)).toBe(false);
    expect(saysDate(now + 60_000, now)).toBe(false);
    expect(saysDate(now + 2 * DAY)).toBe(false);
    expect(describeUtcTime(now + DAY + 1, now)).toBe('2030-01-03 20:48 UTC');
    expect(describeUtcTime(now + DAY, now)).toBe('20:48 UTC');
  });
});

describe('describeTimeLeft', () => {
  it('rounds the time left of a limit down, so it never reads as long as a longer wait rounded up', () => {
    // [the wait asked, the time left]: the wait is longer, and reads longer.
    const cases: [number, number, string, string][] = [
      [1_500, 1_100, '2 s', '1 s'],
      [61_000, 60_500, '1 min 1 s', '1 min'],
      [800, 0, '800 ms', '0 ms'],
      [1_000.5, 1_000, '2 s', '1 s'],
      [1_000, 999.9, '1 s', '999 ms'],
      [12 * 60_000 + 1, 12 * 60_000, '13 min', '12 min'],
      [2 * 60 * 60_000, 2 * 60 * 60_000 - 1, '2 h', '1 h 59 min'],
    ];
    for (const [waitMs, leftMs, wait, left] of cases) expect([describeDuration(waitMs), describeTimeLeft(leftMs)]).toEqual([wait, left]);
  });

  it('reads like a wait otherwise: milliseconds under a second, minutes and hours when long, nothing as 0 ms', () => {
    expect(describeTimeLeft(999.9)).toBe('999 ms');
    expect(describeTimeLeft(45_900)).toBe('45 s');
    expect(describeTimeLeft(90_999)).toBe('1 min 30 s');
    expect(describeTimeLeft((3 * 60 + 12) * 60_000 + 59_999)).toBe('3 h 12 min');
    expect(describeTimeLeft(-20)).toBe('0 ms');
    expect(durationParts(60_500, 'left')).toEqual([{ value: 1, unit: 'minute', digits: 0 }]);
  });
});

describe('describeElapsed', () => {
  it('says how long something took to the nearest: milliseconds under a second, tenths of a second under a minute, then minutes and seconds', () => {
    expect(describeElapsed(250)).toBe('250 ms');
    expect(describeElapsed(999.6)).toBe('1 s');
    expect(describeElapsed(4_240)).toBe('4.2 s');
    expect(describeElapsed(59_960)).toBe('1 min 0 s');
    expect(describeElapsed(125_400)).toBe('2 min 5 s');
  });

  it('says whole seconds taken without a tenth: "6 s", not "6.0 s" (a precision no one measured)', () => {
    expect(describeElapsed(6_000)).toBe('6 s');
    expect(describeElapsed(12_030)).toBe('12 s');
    expect(describeElapsed(1_500)).toBe('1.5 s');
    expect(durationParts(6_000, 'took')).toEqual([{ value: 6, unit: 'second', digits: 0 }]);
  });

  it('says a time taken of an hour or more in hours and minutes (a job a reconcile ended days later)', () => {
    expect(describeElapsed(3_599_400)).toBe('59 min 59 s');
    expect(describeElapsed(3_599_600)).toBe('1 h 0 min');
    expect(describeElapsed((2 * 60 + 5) * 60_000 + 29_000)).toBe('2 h 5 min');
    expect(describeElapsed(3 * 24 * 60 * 60_000)).toBe('72 h 0 min');
  });
});

describe('durationParts', () => {
  it('is the one rule both follow, so every language says the same amount in its own units', () => {
    expect(durationParts(250, 'wait')).toEqual([{ value: 250, unit: 'millisecond', digits: 0 }]);
    expect(durationParts(90_000, 'wait')).toEqual([
      { value: 1, unit: 'minute', digits: 0 },
      { value: 30, unit: 'second', digits: 0 },
    ]);
    expect(durationParts(4_240, 'took')).toEqual([{ value: 4.2, unit: 'second', digits: 1 }]);
  });
});

describe('describeReset', () => {
  it('gives the time of a reset within a day, and the date of one further away', () => {
    const now = Date.UTC(2030, 0, 2, 20, 48);
    expect(describeReset(Date.UTC(2030, 0, 3), now)).toBe('00:00 UTC (in 3 h 12 min)');
    expect(describeReset(Date.UTC(2030, 1, 1), now)).toBe('2030-02-01 00:00 UTC (in 30 days)');
  });

  it('never says a reset is in 0 ms: one that passed while it was worded is in the smallest wait said', () => {
    const midnight = Date.UTC(2030, 0, 3);
    expect(describeReset(midnight, midnight)).toBe('00:00 UTC (in 1 ms)');
    expect(describeReset(midnight, midnight + 40)).toBe('00:00 UTC (in 1 ms)');
  });

  it('says a reset across midnight UTC as a wait up to two days away, and in days beyond', () => {
    const DAY = 24 * 60 * 60_000;
    const now = Date.UTC(2030, 0, 2, 23, 59, 59, 500);
    expect(describeReset(Date.UTC(2030, 0, 3), now)).toBe('00:00 UTC (in 500 ms)');
    expect(describeReset(now + DAY, now)).toBe('23:59 UTC (in 24 h)');
    expect(describeReset(now + 2 * DAY, now)).toBe('2030-01-04 23:59 UTC (in 48 h)');
    expect(describeReset(now + 2 * DAY + 1, now)).toBe('2030-01-04 23:59 UTC (in 3 days)');
  });
});
