import { estimateOf, PRICE_TABLE } from '../core/pricing.js';
import { passes } from '../spend/rules.js';

/**
 * A cap's share, said once for the page and the alerts: what share of the cap is used, its percent as people read it,
 * and whether it is used up. The alert's thresholds and every percent shown are decided from these; "used up" and
 * "cannot take one more image" are the spend guard's own rule (`passes`, through `refusesJob`), so an alert never says
 * refused of a job the guard would take.
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

/**
 * The one rule of the console for "this cap refuses a job that reserves `jobUsd`": the spend guard's own (`passes`, to
 * the nano-dollar), of a cap the jobs are reserved with — never of a member's lower bound (roles not known here: a role
 * may lift the cap). "Used up" and "cannot take one more image" are this rule, each with its own job.
 */
export function refusesJob(cap: { usedUsd: number; limitUsd: number; bound?: string | undefined }, jobUsd: number): boolean {
  return cap.bound === undefined && passes(cap.usedUsd, jobUsd, cap.limitUsd);
}

/**
 * A cap the spend guard refuses every job of: not even the cheapest job the price table knows fits in what is left.
 * Its percent may still be said 99 % (a cap of millions); a cap at 100 % with more left than that is not used up.
 */
export function usedUp(cap: { usedUsd: number; limitUsd: number; bound?: string | undefined }): boolean {
  return refusesJob(cap, CHEAPEST_JOB_USD);
}

/**
 * A cap that has been used and cannot take a job of one image of quality auto (its upper-bound price, what such a job
 * reserves) — usually well before it is used up, as cheaper jobs still fit. The ledger counts refusals by kind of cap,
 * not by whose, so no refusal is claimed of it.
 */
export function cannotTakeOneImage(cap: { usedUsd: number; limitUsd: number; bound?: string | undefined }): boolean {
  return (cap.usedUsd > 0 || cap.limitUsd === 0) && refusesJob(cap, ONE_IMAGE_USD);
}

/** What the cheapest job reserves: one image at the lowest price of the price table. */
export const CHEAPEST_JOB_USD = Math.min(...Object.values(PRICE_TABLE).flatMap((prices) => Object.values(prices)));

/** What a job of one image reserves at most (the core's estimate: its upper-bound price, quality auto). */
export const ONE_IMAGE_USD = estimateOf({ operation: 'generate', n: 1 }).totalUsd;
