/**
 * A cap's share, said once for the page and the alerts: what share of the cap is used, its percent as people read it,
 * and whether it is used up. The alert's thresholds, its "used up" and every percent shown are decided from these.
 */

/** used / limit (1 = reached); a cap of $0 is reached at once, and past it (infinitely) once anything is spent. */
export function capRatio(usedUsd: number, limitUsd: number): number {
  return limitUsd > 0 ? usedUsd / limitUsd : usedUsd > 0 ? Infinity : 1;
}

/**
 * The whole percent of a share, rounded down (99.6 % is said 99 %), after the float noise of the division (0.58 of a
 * cap is 58 %, not 57.99999999999999): to a millionth of a percent first, so a share within a millionth of a percent
 * of 100 % is said 100 % (and the cap used up: $99.9999999 of $100 leaves less than any job costs). Infinite for a cap
 * of $0 with something spent.
 */
export function percentOf(ratio: number): number {
  if (!Number.isFinite(ratio)) return ratio;
  return Math.floor(Math.round(ratio * 100e6) / 1e6);
}

/** A cap that has counted all of it or more (its jobs are refused): its percent is 100 or more. */
export function usedUp(cap: { usedUsd: number; limitUsd: number }): boolean {
  return percentOf(capRatio(cap.usedUsd, cap.limitUsd)) >= 100;
}
