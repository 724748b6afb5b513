import { randomBytes } from 'node:crypto';
import { renewEveryThird } from '../core/renewal.js';
import { refuseIfClosed } from './errors.js';
import { THIS_HOST } from './file-lock.js';
import type { JobDetails, LedgerOptions, LostReservation, ReconcileReport } from './types.js';
import { DEFAULT_USAGE_RETENTION_DAYS, withoutPromptOf } from './usage-records.js';
import { DAY_MS } from './utc-period.js';

/** The owner names of the stores open in this process (`StoreProcess.owner`): one closed holds nothing, though its pid lives. */
const OPEN_OWNERS = new Set<string>();

/** Whether `owner` is a store open in this process (`leasesIn`: a process on this host that lives). */
export function isOpenHere(owner: string): boolean {
  return OPEN_OWNERS.has(owner);
}

/** Erases a member's prompts from reservations (a ledger's, or a process's copies of them); every amount stays. */
export function forgetPromptsIn(reservations: Iterable<{ userKey: string; job?: JobDetails | undefined }>, userKey: string): void {
  for (const r of reservations) if (r.userKey === userKey && r.job) r.job = withoutPromptOf(r.job);
}

/**
 * What a quota store keeps in its process, on either backend: its settings, its name as a lease owner, whether it is
 * closed, and a copy of each reservation it made and has not ended (`held`): one the storage loses (a ledger file
 * replaced by an older copy or deleted, a Redis restarted empty) is put back from it before its job is sent, or charged
 * from it at its settle, and `lost` tells so. While it holds any, `renew` runs every third of `leaseMs`.
 */
export class StoreProcess<Copy extends { userKey: string; scopeKey: string; day: string; job?: JobDetails | undefined }> {
  readonly owner = `${THIS_HOST}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly held = new Map<string, Copy>();
  readonly leaseMs: number;
  readonly keepDays: number;
  readonly usageRetentionMs: number;
  readonly clock: () => number;
  readonly onError: ((error: unknown) => void) | undefined;
  readonly #options: LedgerOptions;
  readonly #renew: () => Promise<void>;
  #stopRenewing: (() => void) | undefined;
  #reconciling: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  constructor(options: LedgerOptions, renew: () => Promise<void>) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.keepDays = Math.max(1, Math.floor(options.keepDays ?? 7));
    this.usageRetentionMs = Math.max(1, options.usageRetentionDays ?? DEFAULT_USAGE_RETENTION_DAYS) * DAY_MS;
    this.clock = options.clock ?? Date.now;
    this.onError = options.onError;
    this.#options = options;
    this.#renew = renew;
    OPEN_OWNERS.add(this.owner);
  }

  /** Set by `close` only: every later call of the store refuses. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Keeps a reservation's copy and renews the lease while any is kept; once closed it refuses: a reservation answered after close is not handed out (it ends within the lease). */
  hold(jobId: string, copy: Copy): void {
    this.assertOpen();
    this.held.set(jobId, copy);
    this.#stopRenewing ??= renewEveryThird(
      this.leaseMs,
      async () => (this.held.size === 0 ? this.#stop() : this.#renew()),
      (error) => this.onError?.(error),
    );
  }

  lost(jobId: string, copy: Copy, foundAt: LostReservation['foundAt'], chargedUsd: number | undefined): void {
    this.#options.onReservationLost?.({ jobId, userKey: copy.userKey, scopeKey: copy.scopeKey, day: copy.day, foundAt, chargedUsd });
  }

  /** What a step of the ledger ended of dead processes' reservations (a reconcile's, or any that met them), told to `onReconciled` when it ended any; a hook that throws never fails the written step (its error goes to `onError`). */
  reconciled(report: ReconcileReport): ReconcileReport {
    if (report.released.length + report.settledAtEstimate.length + (report.settledAsRecorded?.length ?? 0) > 0) {
      try {
        this.#options.onReconciled?.(report);
      } catch (error) {
        this.onError?.(error);
      }
    }
    return report;
  }

  /** Erases a member's prompts from the copies too: one put back after the storage lost it must not bring them back. */
  forgetPrompts(userKey: string): void {
    forgetPromptsIn(this.held.values(), userKey);
  }

  /** From the first reconcile on, once per `leaseMs` until closed: a gone process's reservations end though no reserve meets them. */
  reconcileEachLease(reconcile: () => Promise<unknown>): void {
    if (this.#closed || this.#reconciling) return;
    this.#reconciling = setInterval(() => void reconcile().catch((error: unknown) => this.onError?.(error)), this.leaseMs);
    this.#reconciling.unref?.();
  }

  assertOpen(): void {
    refuseIfClosed(this.closed);
  }

  /** Closes the store for good: every later call refuses, and the lease is renewed no more. */
  close(): void {
    this.#closed = true;
    OPEN_OWNERS.delete(this.owner);
    this.#stop();
    clearInterval(this.#reconciling);
  }

  /** Stops renewing the lease (until the next `hold`). */
  #stop(): void {
    this.#stopRenewing?.();
    this.#stopRenewing = undefined;
  }
}
