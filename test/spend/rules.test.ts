import { describe, expect, it } from 'vitest';
import { leftOf } from '../../src/spend/rules.js';

describe('leftOf, what is left of a cap', () => {
  it('is counted in whole nano-dollars, as the ledger counts, not with the noise of a float subtraction', () => {
    // A float subtraction says 0.004559999999999998 and 0.09999999999999998.
    expect(leftOf(0.01, 0.00544)).toBe(0.00456);
    expect(leftOf(1, 0.9)).toBe(0.1);
    expect(leftOf(0.03, 0.02544)).toBe(0.00456);
  });

  it('is the whole limit when nothing is spent, and zero when the limit is zero', () => {
    expect(leftOf(2, 0)).toBe(2);
    expect(leftOf(0, 0)).toBe(0);
  });

  it('is never negative: a cap spent to or past its limit has nothing left', () => {
    expect(leftOf(1, 1)).toBe(0);
    expect(leftOf(1, 1.2)).toBe(0);
    expect(leftOf(0.3, 0.1 + 0.2)).toBe(0);
  });
});
