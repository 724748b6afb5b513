import { LATE, within } from '../core/with-timeout.js';
import type { ActiveJob, QuotaStore } from '../spend/types.js';

export interface LedgerNowOptions {
  /** How often, at most, the reservations of gone processes are ended before a read. Default 5 s. */
  everyMs?: number | undefined;
  now?: (() => number) | undefined;
  onError?: ((error: unknown) => void) | undefined;
  /**
   * How long calls share a reconcile under way and wait for it: past it they read without it, and the next call asks
   * the ledger again (a stalled one is left to answer or not). The console's one backend wait.
   */
  readWaitMs: number;
}

/**
 * The ledger as the caps count it now, for the console's pages, live list and
 * alerts: before its reservations are read, those of processes that are gone
 * (killed, crashed: their lease lapsed, or on this host their pid is gone) are
 * ended (`reconcile`: a sent job charged at its estimate and recorded as
 * interrupted, a queued one released), as the next job's reservation would.
 * Without it, a dead process's job stayed "in flight" and its reservation kept
 * counting against the caps until another process used the ledger. The pages
 * are polled: the reconcile runs at most once every `everyMs` for all of them
 * in this process (a file lock; on Redis a SCAN for this host's leases, which
 * walks the whole keyspace, and one script), and only while the ledger holds a
 * reservation (a reconcile only ends reservations: with none, the read of them
 * is all it costs), and a reconcile that fails, or has no answer within
 * `readWaitMs`, leaves the read as it is (after a stalled one, the next call
 * asks again).
 */
export class LedgerNow {
  readonly #store: Pick<QuotaStore, 'reconcile' | 'activeJobs'>;
  readonly #everyMs: number;
  readonly #now: () => number;
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #readWaitMs: number;
  #lastAt = Number.NEGATIVE_INFINITY;
  #running: Promise<void> | undefined;

  constructor(store: Pick<QuotaStore, 'reconcile' | 'activeJobs'>, options: LedgerNowOptions) {
    this.#store = store;
    this.#everyMs = options.everyMs ?? 5_000;
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError;
    this.#readWaitMs = options.readWaitMs;
  }

  /**
   * Ends the reservations of gone processes, unless that was done less than `everyMs` ago; calls meanwhile share one, for
   * at most `readWaitMs` (never rejects).
   */
  reconcile(): Promise<void> {
    if (this.#running) return this.#running;
    const now = this.#now();
    if (now - this.#lastAt < this.#everyMs) return Promise.resolve();
    this.#lastAt = now;
    this.#running = this.#sharedWithin(this.#endGone(now).catch((error: unknown) => this.#onError?.(error)));
    return this.#running;
  }

  /** Answers once `ending` settled or had its wait; no longer shared before its callers go on. */
  async #sharedWithin(ending: Promise<void>): Promise<void> {
    try {
      // Past its wait: not done, so the next call asks again.
      if ((await within(ending, this.#readWaitMs)) === LATE) this.#lastAt = Number.NEGATIVE_INFINITY;
    } finally {
      this.#running = undefined;
    }
  }

  /** Ends the reservations of gone processes, when there are reservations at all. */
  async #endGone(now: number): Promise<void> {
    if ((await this.#store.activeJobs()).length === 0) return;
    await this.#store.reconcile(now);
  }

  /** The reservations still counting, oldest first, those of gone processes ended first. */
  async activeJobs(): Promise<ActiveJob[]> {
    await this.reconcile();
    return this.#store.activeJobs();
  }
}
