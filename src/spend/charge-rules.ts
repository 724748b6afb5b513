import { ANSWERED_ERROR_CODES, isPictorError, type PictorErrorCode } from '../core/errors.js';
import { priceOfImages, type EstimatedRequest, type PriceQuote } from '../core/pricing.js';
import type { CompletedEvent } from '../spec/index.js';
import { roundToNanoUsd } from './rules.js';
import type { ChargeBasis } from './types.js';

/**
 * The one money rule of every surface (the job runner, the CLI, the n8n node):
 * whether a job that ended may have been billed (`mayBeBilled`), and what it
 * is charged then (`chargeOf`). docs/spend-guard.md has the same rule as a table.
 */

/**
 * How a job ended. `cancelled`: a person cancelled it, a shutdown stopped it, or its reader left early; `leftNothing`:
 * the client saw that no byte of the request had left when the cancel struck (`AbortedError.mayBeBilled`, told by the
 * transport), so nothing reached the service.
 */
export type JobEnding = { kind: 'completed' } | { kind: 'failed'; error: unknown } | { kind: 'cancelled'; leftNothing?: true | undefined };

export interface JobOutcome {
  ending: JobEnding;
  /**
   * The request was recorded as sent (`markSent`): from then on the service may bill it — unless the attempt sent was
   * answered with an error that bills nothing and the next one has not left yet (a retry waiting).
   */
  sent: boolean;
  /** The images that arrived whole, in order (a stream's completed events, or the good images of a bad answer). */
  completed: readonly CompletedEvent[];
}

/** What the request asked for, to price an answer. */
export type ChargedRequest = EstimatedRequest;

export interface Charge {
  usd: number;
  /** `table`: every charged image came back, priced from the table; `estimate`: some or all of it is the upper-bound estimate. */
  basis: ChargeBasis;
  /**
   * The size and quality the service reported for the images that came back (what they are priced as), each only when
   * it is one the spec knows, else the one asked; none came back: absent.
   */
  made?: { size: string; quality: string } | undefined;
}

/** Error answers of the service (and a request that never reached it), as the error tree classes its codes. */
const ANSWERED_WITH_AN_ERROR: ReadonlySet<PictorErrorCode> = new Set<PictorErrorCode>(ANSWERED_ERROR_CODES);

/**
 * True when the service ended the job with an error answer (an error status, or an `error` event in the stream), or
 * the request never reached it: a connection that could not be made, or a timeout or a cancel the client says struck
 * before any byte of the request left (`leftNothing`).
 */
function answeredWithAnError(ending: JobEnding): boolean {
  if (ending.kind !== 'failed' || !isPictorError(ending.error)) return false;
  return ANSWERED_WITH_AN_ERROR.has(ending.error.code) || leftNothing(ending);
}

/**
 * How an ending is charged and recorded. A request the caller cancelled through its signal (Ctrl+C in the CLI, a
 * stopped n8n execution) fails with `aborted`: it is a cancel — charged the same, and its usage record says
 * `cancelled` — which keeps what the client saw: a cancel before any byte of the request left (`mayBeBilled: false`)
 * left nothing at the service. Every other ending is as it came.
 */
export function endingOf(ending: JobEnding): JobEnding {
  if (ending.kind !== 'failed' || !isPictorError(ending.error) || ending.error.code !== 'aborted') return ending;
  return leftNothing(ending) ? { kind: 'cancelled', leftNothing: true } : { kind: 'cancelled' };
}

/**
 * The client saw that nothing of the request reached the service: a cancel or a timeout that struck before any byte of
 * it left. What a job left at the service is then only what earlier attempts did (`ChargedJob` tells them apart).
 */
export function leftNothing(ending: JobEnding): boolean {
  if (ending.kind === 'cancelled') return ending.leftNothing === true;
  if (ending.kind !== 'failed' || !isPictorError(ending.error)) return false;
  return (ending.error.code === 'timeout' || ending.error.code === 'aborted') && (ending.error as { mayBeBilled?: unknown }).mayBeBilled === false;
}

/**
 * May the service bill this job? Never when it was not sent; always when an
 * image came back or it completed; after a cancel, a timeout, a broken stream,
 * a 200 that is not the result, or a failure of ours once sent: yes. Only an
 * error answer of the service (or a request that never reached it: a cancel or
 * a timeout before any byte of it left) with no image before it is known to
 * cost nothing.
 */
export function mayBeBilled(outcome: JobOutcome): boolean {
  if (!outcome.sent) return false;
  if (outcome.completed.length > 0 || outcome.ending.kind === 'completed') return true;
  if (outcome.ending.kind === 'cancelled') return !leftNothing(outcome.ending);
  return !answeredWithAnError(outcome.ending);
}

/**
 * What a job is charged, or undefined when it is released (nothing can have
 * been billed). The images that came back are charged as `priceOfImages`
 * prices them (the price the client's result says); each image
 * asked for that did not come back is charged at its estimate — it may have
 * been made and billed — unless the service ended the job with an error answer.
 */
export function chargeOf(outcome: JobOutcome, estimate: PriceQuote, request: ChargedRequest): Charge | undefined {
  if (!mayBeBilled(outcome)) return undefined;
  const made = outcome.completed.length;
  const first = outcome.completed[0];
  const priced = first && priceOfImages(request, first, made);
  const labels = priced?.made;
  const produced = priced?.cost;
  const missing = answeredWithAnError(outcome.ending) ? 0 : Math.max(0, request.n - made);
  const usd = roundToNanoUsd((produced?.totalUsd ?? 0) + missing * estimate.perImageUsd);
  const basis: ChargeBasis = missing > 0 || (produced !== undefined && produced.basis !== 'table') ? 'estimate' : 'table';
  return { usd, basis, ...(labels?.size !== undefined && labels.quality !== undefined && { made: { size: labels.size, quality: labels.quality } }) };
}

/**
 * What a request that was sent and then interrupted (cancelled, stream broken,
 * process stopping) is charged: `chargeOf` for a cancelled job.
 */
export function interruptedCostUsd(estimate: PriceQuote, completed: CompletedEvent[], request: ChargedRequest): number {
  return chargeOf({ ending: { kind: 'cancelled' }, sent: true, completed }, estimate, request)!.usd;
}

/**
 * What a job cut off by the death of its process may cost, when its reservation is all that is left of it (the images
 * that came, if any, went with the process): an interrupted job's charge (`interruptedCostUsd`) with no image seen —
 * nothing unless its request was sent (`mayBeBilled`), else each image asked at its estimate, which is what it reserved:
 * the figure the ledger's reconcile charges it once its process is counted gone (the file ledger's `reconcileIn` calls
 * this for a job whose settle left no usage record: one that did is charged what its record says; the Redis ledger's
 * script is handed its answers, `CUT_OFF_CHARGED`, and held to it by the stores' contract test). Undefined: it cannot
 * have been billed, and the reconcile releases it. Of the reservation it reads only what it
 * reserved (`usd`, its estimate) and whether its request may have left (`sent`); `undefined` when that is unknown (a
 * reservation an older version wrote, with no owner): it may have left, so it is charged as a sent one, the safe side of a cap.
 */
export function cutOffCostUsd(reservation: { usd: number; sent: boolean | undefined }): number | undefined {
  return mayBeBilled({ ending: { kind: 'cancelled' }, sent: reservation.sent ?? true, completed: [] }) ? reservation.usd : undefined;
}

/**
 * What a job was charged, as every surface says it (`charged`): nothing (0) when released, `usd` when settled, null while
 * the ledger has not taken it (`deferred`) or has not answered yet (no settlement), and null when it answered that it had
 * already ended the job (`recorded` false: a reconcile after the lease lapsed, or an earlier try of the same settle):
 * this settle charged nothing, and what ended the job is not known here.
 */
export function chargedOf(settlement: { action: 'settled' | 'released'; usd: number; deferred: boolean; recorded?: boolean } | undefined): number | null {
  if (!settlement || settlement.deferred || settlement.recorded === false) return null;
  return settlement.action === 'released' ? 0 : settlement.usd;
}
