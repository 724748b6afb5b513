import { describe, expect, it } from 'vitest';
import { cannotTakeOneImage, capRatio, CHEAPEST_JOB_USD, ONE_IMAGE_USD, percentOf, refusesJob, usedUp } from '../../src/console/percent.js';
import { passes } from '../../src/spend/rules.js';

describe('a cap’s percent, the one rule of the page and the alerts', () => {
  it('is the whole percent rounded down, without the float noise of the division', () => {
    expect(percentOf(0.996)).toBe(99);
    expect(percentOf(0.58)).toBe(58);
    expect(percentOf(99.9999999 / 100)).toBe(100);
    expect(percentOf(1.5)).toBe(150);
    expect(percentOf(Infinity)).toBe(Infinity);
  });

  it('calls a cap used up exactly when the spend guard refuses its cheapest job', () => {
    expect(usedUp({ usedUsd: 99.6, limitUsd: 100 })).toBe(false);
    expect(usedUp({ usedUsd: 99.9999999, limitUsd: 100 })).toBe(passes(99.9999999, CHEAPEST_JOB_USD, 100));
    expect(usedUp({ usedUsd: 99.9999999, limitUsd: 100 })).toBe(true);
    // A cap of millions said 100 % with a cent left: the guard takes a job of the cheapest image, so it is not used up.
    expect(percentOf(capRatio(1_999_999.99, 2_000_000))).toBe(100);
    expect(passes(1_999_999.99, CHEAPEST_JOB_USD, 2_000_000)).toBe(false);
    expect(usedUp({ usedUsd: 1_999_999.99, limitUsd: 2_000_000 })).toBe(false);
    // Exactly the cheapest job left: it fits, as the guard counts (to the nano-dollar).
    expect(usedUp({ usedUsd: 1 - CHEAPEST_JOB_USD, limitUsd: 1 })).toBe(false);
    expect(usedUp({ usedUsd: 0, limitUsd: 0 })).toBe(true);
    expect(usedUp({ usedUsd: 0.5, limitUsd: 0 })).toBe(true);
  });

  it('is the price table’s cheapest image', () => {
    expect(CHEAPEST_JOB_USD).toBe(0.0053);
  });

  it('says "cannot take one more image" and "used up" by the one rule, the spend guard’s: each with its job, never of a lower bound', () => {
    // One image of quality auto reserves its upper-bound price: $0.22366 (said $0.224).
    expect(ONE_IMAGE_USD).toBe(0.22366);
    const cap = { usedUsd: 9.9, limitUsd: 10 };
    expect(cannotTakeOneImage(cap)).toBe(true);
    expect(usedUp(cap)).toBe(false);
    // Exactly one image left fits, to the nano-dollar; a ten-thousandth of a cent less does not.
    expect(cannotTakeOneImage({ usedUsd: 9.77634, limitUsd: 10 })).toBe(false);
    expect(cannotTakeOneImage({ usedUsd: 9.7763401, limitUsd: 10 })).toBe(true);
    // Any job: refused when it does not fit in what is left, taken when it does.
    expect(refusesJob({ usedUsd: 1, limitUsd: 1.5 }, 0.5)).toBe(false);
    expect(refusesJob({ usedUsd: 1.000000001, limitUsd: 1.5 }, 0.5)).toBe(true);
    // Used up: it cannot take one more image either.
    expect(usedUp({ usedUsd: 9.996, limitUsd: 10 })).toBe(true);
    expect(cannotTakeOneImage({ usedUsd: 9.996, limitUsd: 10 })).toBe(true);
    // A member's lower bound (a role may lift the cap): neither.
    expect(refusesJob({ usedUsd: 10, limitUsd: 10, bound: 'lower' }, CHEAPEST_JOB_USD)).toBe(false);
    expect(usedUp({ usedUsd: 10, limitUsd: 10, bound: 'lower' })).toBe(false);
    expect(cannotTakeOneImage({ usedUsd: 10, limitUsd: 10, bound: 'lower' })).toBe(false);
    // A small cap not used yet is not an event of its own; one of $0 is.
    expect(cannotTakeOneImage({ usedUsd: 0, limitUsd: 0.1 })).toBe(false);
    expect(cannotTakeOneImage({ usedUsd: 0, limitUsd: 0 })).toBe(true);
  });
});
