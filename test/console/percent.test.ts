import { describe, expect, it } from 'vitest';
import { capRatio, percentOf, usedUp } from '../../src/console/percent.js';

describe('a cap’s percent, the one rule of the page and the alerts', () => {
  it('is the whole percent rounded down, without the float noise of the division', () => {
    expect(percentOf(0.996)).toBe(99);
    expect(percentOf(0.58)).toBe(58);
    expect(percentOf(99.9999999 / 100)).toBe(100);
    expect(percentOf(1.5)).toBe(150);
    expect(percentOf(Infinity)).toBe(Infinity);
  });

  it('calls a cap used up exactly when its percent reaches 100', () => {
    expect(usedUp({ usedUsd: 99.6, limitUsd: 100 })).toBe(false);
    expect(usedUp({ usedUsd: 99.9999999, limitUsd: 100 })).toBe(percentOf(capRatio(99.9999999, 100)) >= 100);
    expect(usedUp({ usedUsd: 99.9999999, limitUsd: 100 })).toBe(true);
    expect(usedUp({ usedUsd: 0, limitUsd: 0 })).toBe(true);
    expect(usedUp({ usedUsd: 0.5, limitUsd: 0 })).toBe(true);
  });
});
