import type { LoggerLike } from 'pictor';
import { cutOffCostUsd } from 'pictor/internal';
import { jobEndOf, type JobEnd } from './job-history.js';
import type { JobCost, QuotaStore } from './types.js';

/** The ledger as a sweep reads it: what it charged each job (by the runner's job id), and what it still holds. */
export type SweptLedger = Pick<QuotaStore, 'usage' | 'reconcile' | 'activeJobs'>;

/**
 * What the ledger charged a job a dead process left: `charged`, what it settled (its process's settle, or the estimate
 * a reconcile charged once its request had reached the service); `pending`, its request sent and its reservation still
 * held by a process the ledger does not count gone yet (its ledger lease, 60 s, outlives its lease on the job, 15 s):
 * most likely charged its estimate (`cost`) once that lease lapses, so it may be charged up to that; `none`, nothing
 * charged nor to be (released, never sent, never taken by the runner), or the ledger could not be read. Whether a held
 * reservation may have been billed, and up to what, is the core's rule for a job cut off by its process's death
 * (`cutOffCostUsd`): its estimate once its request was sent, what the reconcile charges it.
 */
export type SweptCharge = { type: 'charged'; cost: JobCost } | { type: 'pending'; cost: JobCost } | { type: 'none' };

/** A job a sweep may ask about: its runner job, who asked for it (the ledger's user key) and when (its record's). */
export interface SweptJob {
  jobId: string;
  userKey: string;
  createdAt: number;
}

const NONE: SweptCharge = { type: 'none' };
const DAY_MS = 24 * 3_600_000;

/**
 * What the ledger charged the jobs one sweep shows, read once for all of them — at the first ask, so a sweep with no job
 * to say "stopped" of reads nothing: a reconcile first (it ends the reservations of every process that is gone: on
 * this host a killed one at once, elsewhere once its ledger lease lapsed), so `pending` is left only to a reservation a
 * process the ledger counts live still holds; then the usage records of each member (by the day it counts in: the day
 * it was reserved, just before its record was made) and the reservations still held, once each. A ledger that cannot
 * be read answers `none` for every job (logged once): "stopped" is said without its charge. Discord's sweep and
 * Slack's share it: one rule for what a swept job was charged. `now` is the caller's clock, the reconcile's time.
 */
export function sweptCharges(
  ledger: SweptLedger | undefined,
  jobs: readonly SweptJob[],
  logger: LoggerLike,
  now: () => number = Date.now,
): (jobId: string | undefined) => Promise<SweptCharge> {
  let read: Promise<Map<string, SweptCharge>> | undefined;
  return async (jobId) => {
    if (!jobId || !ledger || !jobs.some((job) => job.jobId === jobId)) return NONE;
    read ??= readCharges(ledger, jobs, now()).catch((error: unknown) => {
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not read what the ledger charged the jobs a stop left; they are shown stopped without it');
      return new Map<string, SweptCharge>();
    });
    return (await read).get(jobId) ?? NONE;
  };
}

async function readCharges(ledger: SweptLedger, jobs: readonly SweptJob[], now: number): Promise<Map<string, SweptCharge>> {
  await ledger.reconcile(now);
  const since = new Map<string, number>();
  for (const job of jobs) since.set(job.userKey, Math.min(since.get(job.userKey) ?? Infinity, job.createdAt - DAY_MS));
  const settled = new Map<string, number>();
  for (const [userKey, from] of since) for (const record of await ledger.usage({ userKey, since: from })) settled.set(record.jobId, record.costUsd);
  const held = new Map<string, number>();
  for (const reservation of await ledger.activeJobs()) {
    const mayCostUsd = cutOffCostUsd(reservation);
    if (mayCostUsd !== undefined) held.set(reservation.jobId, mayCostUsd);
  }
  const charges = new Map<string, SweptCharge>();
  for (const { jobId } of jobs) {
    const costUsd = settled.get(jobId);
    const heldUsd = held.get(jobId);
    if (costUsd !== undefined) charges.set(jobId, costUsd > 0 ? { type: 'charged', cost: { totalUsd: costUsd } } : NONE);
    else if (heldUsd !== undefined) charges.set(jobId, { type: 'pending', cost: { totalUsd: heldUsd } });
  }
  return charges;
}

/** The failure code of a job a stop cut off, as its history and audit entries keep it (the ledger's outcome `interrupted`). */
export const INTERRUPTED = 'interrupted';

/**
 * The end a sweep records of a job it said "stopped" of (the member's history, the audit channel): failed
 * (`interrupted`), with what the ledger charged it, or what it may charge (`mayCost`) while that is pending.
 */
export function stoppedEndOf(charge: SweptCharge): JobEnd {
  return jobEndOf({ type: 'failed', code: INTERRUPTED, ...(charge.type === 'charged' && { cost: charge.cost }), ...(charge.type === 'pending' && { mayCost: charge.cost }) });
}
