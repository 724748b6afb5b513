import { within } from '../core/with-timeout.js';
import type { ActiveJob, QuotaStore } from '../spend/types.js';
import type { UsageIndex } from './usage-index.js';

export interface LedgerNowOptions {
  /**
   * The usage records the console adds up: brought up to date after the reconcile, before the reservations are read.
   * The store tells it when a step ended gone processes' reservations (its `onReconciled`: this one's reconcile, the
   * store's own each lease, a read that met them), and it alone decides whether its records are to be read again
   * (`catchUp`); this class neither reads the report nor counts writes of its own.
   */
  index: Pick<UsageIndex, 'refresh' | 'catchUp'>;
  /** How often, at most, the reservations of gone processes are ended before a read. Default 5 s. */
  everyMs?: number | undefined;
  now?: (() => number) | undefined;
  onError?: ((error: unknown) => void) | undefined;
  /**
   * How long each call waits for the reconcile under way: past it, it reads without it. A stalled one stays under way
   * (no other is started beside it) until it answers or fails. The console's one backend wait.
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
 * `readWaitMs`, leaves the read as it is. A stalled one is not started again
 * beside itself: later calls wait for that same one (each at most
 * `readWaitMs`), and the next starts once it has settled and `everyMs` have
 * passed since it began.
 */
export class LedgerNow {
  readonly #store: Pick<QuotaStore, 'reconcile' | 'activeJobs'>;
  readonly #everyMs: number;
  readonly #now: () => number;
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #readWaitMs: number;
  readonly #index: Pick<UsageIndex, 'refresh' | 'catchUp'>;
  #lastAt = Number.NEGATIVE_INFINITY;
  #running: Promise<void> | undefined;

  constructor(store: Pick<QuotaStore, 'reconcile' | 'activeJobs'>, options: LedgerNowOptions) {
    this.#store = store;
    this.#everyMs = options.everyMs ?? 5_000;
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError;
    this.#readWaitMs = options.readWaitMs;
    this.#index = options.index;
  }

  /**
   * Ends the reservations of gone processes, unless that was started less than `everyMs` ago; calls meanwhile share the
   * one under way, each waiting for it at most `readWaitMs` (never rejects). One that stalls stays the one under way
   * until it settles: no call starts another beside it, so a ledger that is away is not sent a pile of them to run
   * when it is back.
   */
  reconcile(): Promise<void> {
    // Kept shared while it stalls, unlike UsageIndex's read: a reconcile writes, and each one started beside it would queue on a Redis that is away, all run once it is back.
    if (!this.#running) {
      const now = this.#now();
      // Either way: a clock set back (it had jumped ahead) does not stop the reconciles until it catches up.
      if (Math.abs(now - this.#lastAt) < this.#everyMs) return Promise.resolve();
      this.#lastAt = now;
      const running = this.#endGone(now).catch((error: unknown) => this.#onError?.(error));
      this.#running = running;
      void running.finally(() => {
        if (this.#running === running) this.#running = undefined;
      });
    }
    return within(this.#running, this.#readWaitMs).then(() => undefined);
  }

  /** Ends the reservations of gone processes, when there are reservations at all (the store tells the usage index what that wrote). */
  async #endGone(now: number): Promise<void> {
    if ((await this.#store.activeJobs()).length === 0) return;
    await this.#store.reconcile(now);
  }

  /**
   * The usage records only, for a page that shows no reservation (the settings): the reservations of gone processes
   * ended first, then the usage index brought up to date, as `read` does before it reads the reservations. A read of
   * the records begun before the reconcile wrote (one that stalled, no longer shared) may be counted before this one,
   * which is then dropped as late: `catchUp` reads again, so the *interrupted* records are counted all the same.
   */
  async records(): Promise<void> {
    await this.reconcile();
    await this.#index.refresh();
    await this.#index.catchUp();
  }

  /**
   * The one order every page that lists reservations, the live list and the alert check read the ledger in: the
   * reservations of gone processes ended first, then the usage index brought up to date (`records`), then the
   * reservations still counting read, oldest first, then the usage records read again if the index was told of
   * records written since its read began (`catchUp`), so the *interrupted* record of a job gone from the reservations
   * answered is counted. Read in another order, a killed process's job was in neither list for one load, and the spend
   * page's records added up to less than the ledger settled (said as if retention had dropped them).
   */
  async read(): Promise<ActiveJob[]> {
    await this.records();
    const jobs = await this.#store.activeJobs();
    // A job a reconcile ended meanwhile (this one's, another call's, the store's own) is gone from `jobs`, and its record may be newer than the read of the records.
    await this.#index.catchUp();
    return jobs;
  }
}
