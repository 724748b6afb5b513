import { resultFromCompleted } from '../client/job-result.js';
import type { PriceQuote } from '../core/pricing.js';
import type { CompletedEvent } from '../spec/index.js';

/**
 * What a request that was sent and then interrupted (cancelled, stream
 * broken, process stopping) is charged: the images it produced at table price,
 * and the estimate of each image it had not finished — those may be billed.
 * The one rule every surface applies (the job runner, the CLI guard).
 */
export function interruptedCostUsd(
  estimate: PriceQuote,
  completed: CompletedEvent[],
  request: { operation: 'generate' | 'edit'; n: number; size?: string | undefined; quality?: string | undefined },
): number {
  if (completed.length === 0) return estimate.totalUsd;
  const produced = resultFromCompleted(completed, request, undefined).cost.totalUsd;
  const missing = Math.max(0, request.n - completed.length);
  return Math.round((produced + missing * estimate.perImageUsd) * 1e9) / 1e9;
}
