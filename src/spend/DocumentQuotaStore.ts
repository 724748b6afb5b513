import { randomBytes } from 'node:crypto';
import { isOverridableCap, ScopeSettingEntrySchema, type CapOverridesFile } from './cap-overrides.js';
import { isProcessAlive, THIS_HOST } from './file-lock.js';
import { breakerStatesIn, chargeIn, checkIn, countRefusalsIn, pauseIn, pruneIn, recordOf, resumeIn, usedIn, type Ledger, type LedgerOwner, type Reservation } from './ledger-document.js';
import { periodKey, roundToNanoUsd, toNanos } from './rules.js';
import { createSerialQueue } from './serial-queue.js';
import {
  MAX_SEEN_REQUESTS,
  type ActiveJob,
  type BreakerState,
  type CapOverrides,
  type LostReservation,
  type OverridableCap,
  QuotaStore,
  type RefusalCounts,
  type ScopeSettingEntries,
  ReconcileReport,
  ReserveInput,
  ReserveResult,
  SettleInfo,
  type SpendRefusal,
  type UsageFeed,
  UsageQuery,
  UsageRecord,
} from './types.js';
import { DEFAULT_USAGE_RETENTION_DAYS, latestPerJob, matchesQuery } from './usage-records.js';

export interface DocumentQuotaStoreOptions {
  /**
   * A process renews its lease on the ledger every third of this while it
   * holds reservations; one that stops renewing (or whose pid is gone) is dead,
   * and its reservations are settled or released. Default 60 s.
   */
  leaseMs?: number | undefined;
  /** UTC days of daily spending kept, today included. Default 7 (months: this one and the last). */
  keepDays?: number | undefined;
  /** The clock lease renewals and settles use; must be the one the callers' `now` comes from. Default `Date.now`. */
  clock?: (() => number) | undefined;
  /** Lease renewal failures (tried again on the next renewal). */
  onError?: ((error: unknown) => void) | undefined;
  /** Days usage records are kept (`PICTOR_USAGE_RETENTION_DAYS`). Default 400. */
  usageRetentionDays?: number | undefined;
  /** Told of each reservation the ledger had lost (its file replaced by an older copy, or deleted), put back before its job was sent or charged at its settle. */
  onReservationLost?: ((lost: LostReservation) => void) | undefined;
}

const DEFAULT_LEASE_MS = 60_000;
const DEFAULT_KEEP_DAYS = 7;
const DAY_MS = 24 * 60 * 60_000;

/** One step on the ledger; `committed` runs once the step is written (what may be told or forgotten only then). */
type Operation<T> = (ledger: Ledger, reconciled: ReconcileReport) => { result: T; changed: boolean; usage?: UsageRecord | undefined; committed?: () => void };

/**
 * A QuotaStore whose ledger is one document (see `ledger-document.ts`): the
 * steps and their order are here, the rules are the rulebook's, and a
 * subclass only stores — loads the document, writes it, appends usage records
 * and keeps the chat admins' caps, under a lock that holds across every
 * process sharing the storage. The file store and the memory store are this.
 *
 * Changes that arrive while the ledger is busy are committed together: every
 * waiting operation runs in turn on one fresh read of the ledger (after the
 * reservations of dead processes are ended), and all are answered once that
 * one write is done — so nothing answered is lost, and a failed write changes
 * nothing.
 */
export abstract class DocumentQuotaStore implements QuotaStore {
  readonly #leaseMs: number;
  readonly #keepDays: number;
  protected readonly clock: () => number;
  readonly #onError: ((error: unknown) => void) | undefined;
  protected readonly serial = createSerialQueue();
  readonly #pending: { now: number; operation: Operation<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  #flushScheduled = false;
  /** This process's name in `owners`. */
  readonly #owner = `${THIS_HOST}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /**
   * Reservations this process made and has not ended, with a copy of each: one the ledger loses (its file replaced
   * by an older copy or deleted) is put back from it before its job is sent, or charged from it at its settle.
   */
  readonly #held = new Map<string, Reservation>();
  readonly #onReservationLost: ((lost: LostReservation) => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  protected readonly usageRetentionMs: number;
  #reconciledUsage: UsageRecord[] = [];

  constructor(options: DocumentQuotaStoreOptions) {
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#keepDays = Math.max(1, Math.floor(options.keepDays ?? DEFAULT_KEEP_DAYS));
    this.clock = options.clock ?? Date.now;
    this.#onError = options.onError;
    this.#onReservationLost = options.onReservationLost;
    this.usageRetentionMs = Math.max(1, options.usageRetentionDays ?? DEFAULT_USAGE_RETENTION_DAYS) * DAY_MS;
  }

  // --- storage: what a subclass provides ---

  /** Runs `task` holding the ledger's lock (every process sharing the storage waits for it). */
  protected abstract locked<T>(task: () => Promise<T>): Promise<T>;
  /** The ledger document (an empty one when there is none yet); throws when it cannot be read. */
  protected abstract load(): Promise<Ledger>;
  protected abstract write(ledger: Ledger): Promise<void>;
  /** Appends usage records (durably) and drops expired ones now and then. */
  protected abstract appendUsage(records: UsageRecord[], now: number): Promise<void>;
  /** Every stored usage record, in the order written. */
  protected abstract readUsageLines(): Promise<UsageRecord[]>;
  /** The usage records written after `cursor` (see `QuotaStore.usageSince`); may be called without the lock. */
  protected abstract readUsageSince(cursor: string | undefined): Promise<UsageFeed>;
  /**
   * The ledger as last written, read without taking the lock, for readers that change nothing (the console, `check`):
   * the caller must not change what it gets. Default: under the lock.
   */
  protected peek(): Promise<Ledger> {
    return this.#readLocked(() => this.load());
  }

  /** The chat admins' caps as last written, likewise without the lock where the storage allows it. Default: under the lock. */
  protected peekCapOverrides(): Promise<CapOverridesFile> {
    return this.#readLocked(() => this.readCapOverrides());
  }
  protected abstract readCapOverrides(): Promise<CapOverridesFile>;
  protected abstract writeCapOverrides(file: CapOverridesFile): Promise<void>;
  /** The request ids seen lately, with when each may be forgotten (ms). */
  protected abstract readSeen(): Promise<Record<string, number>>;
  protected abstract writeSeen(seen: Record<string, number>): Promise<void>;

  /** Whether another process's lease still holds. */
  protected isOwnerAlive(entry: LedgerOwner, now: number): boolean {
    if (entry.host === THIS_HOST && !isProcessAlive(entry.pid)) return false;
    return now - entry.renewedAt < this.#leaseMs;
  }

  // --- the QuotaStore ---

  reserve(input: ReserveInput): Promise<ReserveResult> {
    return this.#update<ReserveResult>(input.now, (ledger) => {
      const { jobId, userKey, scopeKey, estimateUsd, now } = input;
      toNanos('estimateUsd', estimateUsd);
      if (ledger.reservations[jobId]) throw new Error(`job ${jobId} already has a reservation`);
      pruneIn(ledger, now, this.#keepDays);
      const refusal = checkIn(ledger, input);
      if (refusal?.tripped) {
        // This job took its scope past the breaker: the scope stays paused (every process sees it) until resumed.
        pauseIn(ledger, scopeKey, refusal, now);
        return { result: refusal, changed: true };
      }
      if (refusal) return { result: refusal, changed: false };
      const reservation: Reservation = {
        userKey,
        scopeKey,
        usd: roundToNanoUsd(estimateUsd),
        day: periodKey('day', now),
        month: periodKey('month', now),
        at: now,
        owner: this.#owner,
        sent: false,
        ...(input.job && { job: input.job }),
      };
      ledger.reservations[jobId] = reservation;
      ledger.owners[this.#owner] = { pid: process.pid, host: THIS_HOST, renewedAt: now };
      ledger.lastJobAt[userKey] = now;
      this.#hold(jobId, { ...reservation });
      return { result: { ok: true }, changed: true };
    });
  }

  async check(input: Omit<ReserveInput, 'jobId' | 'job'>): Promise<SpendRefusal | undefined> {
    toNanos('estimateUsd', input.estimateUsd);
    const refusal = checkIn(await this.peek(), input);
    if (!refusal) return undefined;
    const { tripped: _, ...rest } = refusal;
    return rest;
  }

  markSent(jobId: string): Promise<void> {
    const now = this.clock();
    return this.#update(now, (ledger) => {
      const reservation = ledger.reservations[jobId];
      if (!reservation) {
        // Lost by the ledger while queued (not ended: a reconcile that charged it leaves it `uncertain`): put back, sent.
        const copy = this.#held.get(jobId);
        if (!copy || ledger.uncertain[jobId]) throw new Error(`job ${jobId} has no reservation: it must not be sent`);
        ledger.reservations[jobId] = { ...copy, owner: this.#owner, sent: true };
        ledger.owners[this.#owner] = { pid: process.pid, host: THIS_HOST, renewedAt: now };
        return { result: undefined, changed: true, committed: () => this.#lost(jobId, copy, 'send', undefined) };
      }
      if (reservation.sent) return { result: undefined, changed: false };
      reservation.sent = true;
      return { result: undefined, changed: true };
    });
  }

  settle(jobId: string, actualUsd: number, info: SettleInfo = {}): Promise<boolean> {
    try {
      toNanos('actualUsd', actualUsd);
    } catch (error) {
      return Promise.reject(error);
    }
    const now = this.clock();
    return this.#update(now, (ledger) => {
      const copy = this.#held.get(jobId);
      const forget = () => this.#held.delete(jobId);
      let reservation = ledger.reservations[jobId];
      let lost = false;
      if (!reservation) {
        // Ended before (settled by this process, or charged by a reconcile: `uncertain`), or lost by the ledger: then
        // charged all the same, from this process's copy — the service answered the job.
        if (!copy || ledger.uncertain[jobId]) return { result: false, changed: false, committed: forget };
        reservation = copy;
        lost = true;
      }
      delete ledger.reservations[jobId];
      chargeIn(ledger, reservation, actualUsd, now);
      const usage = recordOf(jobId, reservation, roundToNanoUsd(actualUsd), info.basis ?? 'table', now, info);
      const committed = () => {
        forget();
        if (lost) this.#lost(jobId, copy!, 'settle', roundToNanoUsd(actualUsd));
      };
      return { result: true, changed: true, usage, committed };
    });
  }

  release(jobId: string): Promise<void> {
    return this.#update(this.clock(), (ledger) => {
      this.#held.delete(jobId);
      if (!ledger.reservations[jobId]) return { result: undefined, changed: false };
      delete ledger.reservations[jobId];
      return { result: undefined, changed: true };
    });
  }

  spentToday(key: string, now: number): Promise<number> {
    return this.#query((ledger) => usedIn(ledger, key, 'day', now));
  }

  spentThisMonth(key: string, now: number): Promise<number> {
    return this.#query((ledger) => usedIn(ledger, key, 'month', now));
  }

  reconcile(now: number): Promise<ReconcileReport> {
    return this.#update(now, (_ledger, reconciled) => ({ result: reconciled, changed: false }));
  }

  /** The usage records, one per settled job, oldest first. */
  usage(query: UsageQuery): Promise<UsageRecord[]> {
    return this.#readLocked(async () => latestPerJob(await this.readUsageLines()).filter((r) => matchesQuery(r, query)));
  }

  capOverrides(scopeKey: string): Promise<CapOverrides> {
    return this.#readLocked(async () => ({ ...(await this.readCapOverrides()).scopes[scopeKey] }));
  }

  setCapOverride(scopeKey: string, cap: OverridableCap, usd: number | undefined, changedBy: string, now: number): Promise<{ previousUsd: number | undefined }> {
    if (!isOverridableCap(cap)) return Promise.reject(new RangeError(`${String(cap)} cannot be changed from chat`));
    if (usd !== undefined && !(Number.isFinite(usd) && usd >= 0)) return Promise.reject(new RangeError(`usd must be a non-negative number, not ${usd}`));
    return this.#readLocked(async () => {
      const file = await this.readCapOverrides();
      const scope = (file.scopes[scopeKey] ??= {});
      const previousUsd = scope[cap]?.usd;
      if (usd === undefined) delete scope[cap];
      else scope[cap] = { usd: roundToNanoUsd(usd), by: changedBy, at: now };
      if (Object.keys(scope).length === 0) delete file.scopes[scopeKey];
      await this.writeCapOverrides(file);
      return { previousUsd };
    });
  }

  scopeSettings(scopeKey: string): Promise<ScopeSettingEntries> {
    return this.#readLocked(async () => structuredClone((await this.readCapOverrides()).settings?.[scopeKey] ?? {}));
  }

  setScopeSetting(scopeKey: string, name: string, value: unknown, changedBy: string, now: number): Promise<{ previous: unknown }> {
    return this.#readLocked(async () => {
      const file = await this.readCapOverrides();
      const settings = (file.settings ??= {});
      const scope = (settings[scopeKey] ??= {});
      const previous = scope[name]?.value;
      if (value === undefined) delete scope[name];
      else scope[name] = { value: ScopeSettingEntrySchema.shape.value.parse(value), by: changedBy, at: now };
      if (Object.keys(scope).length === 0) delete settings[scopeKey];
      await this.writeCapOverrides(file);
      return { previous };
    });
  }

  async allCapOverrides(): Promise<Record<string, CapOverrides>> {
    return structuredClone((await this.peekCapOverrides()).scopes);
  }

  async activeJobs(): Promise<ActiveJob[]> {
    const ledger = await this.peek();
    return Object.entries(ledger.reservations)
      .map(([jobId, r]): ActiveJob => ({ jobId, userKey: r.userKey, scopeKey: r.scopeKey, usd: r.usd, at: r.at, sent: r.sent, owner: r.owner, ...(r.job && { job: r.job }) }))
      .sort((a, b) => a.at - b.at || a.jobId.localeCompare(b.jobId));
  }

  usageSince(cursor: string | undefined): Promise<UsageFeed> {
    if (this.#closed) return Promise.reject(new Error('the quota store is closed'));
    return this.readUsageSince(cursor);
  }

  countRefusals(counts: Readonly<Record<string, number>>, now: number): Promise<void> {
    return this.#update(now, (ledger) => {
      countRefusalsIn(ledger, counts, now);
      return { result: undefined, changed: Object.values(counts).some((n) => n > 0) };
    });
  }

  async refusals(sinceDay: string): Promise<RefusalCounts> {
    const ledger = await this.peek();
    return Object.fromEntries(Object.entries(ledger.refusals ?? {}).filter(([day]) => day >= sinceDay));
  }

  async breakerStates(): Promise<Record<string, BreakerState>> {
    return breakerStatesIn(await this.peek());
  }

  resumeScope(scopeKey: string, by: string, now: number): Promise<BreakerState | undefined> {
    return this.#update(now, (ledger) => {
      const before = resumeIn(ledger, scopeKey, by, now);
      return { result: before, changed: before !== undefined };
    });
  }

  firstSight(id: string, until: number, now: number): Promise<boolean> {
    return this.#readLocked(async () => {
      const seen = await this.readSeen();
      const live = Object.entries(seen).filter(([, at]) => at > now);
      if (live.some(([known]) => known === id)) return false;
      // Bounded: past the limit, the ids soonest to expire are forgotten first.
      live.sort((a, b) => a[1] - b[1]);
      const kept = live.slice(Math.max(0, live.length - (MAX_SEEN_REQUESTS - 1)));
      await this.writeSeen(Object.fromEntries([...kept, [id, until]]));
      return true;
    });
  }

  /** Renews the lease now (the timer does it every third of `leaseMs`). */
  renewLease(): Promise<void> {
    return this.#renew();
  }

  /** Waits for pending operations and stops renewing the lease; later calls fail. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.serial(async () => undefined);
  }

  protected get closed(): boolean {
    return this.#closed;
  }

  #isAlive(ledger: Ledger, owner: string, now: number): boolean {
    if (owner === this.#owner) return true;
    const entry = ledger.owners[owner];
    return entry !== undefined && this.isOwnerAlive(entry, now);
  }

  /** Ends the reservations of dead processes: sent ones charged at their estimate (uncertain), the others released. */
  #reconcile(ledger: Ledger, now: number): ReconcileReport {
    const report: ReconcileReport = { released: [], settledAtEstimate: [], chargedUsd: 0 };
    for (const [jobId, r] of Object.entries(ledger.reservations)) {
      if (this.#isAlive(ledger, r.owner, now)) continue;
      delete ledger.reservations[jobId];
      if (r.sent) {
        chargeIn(ledger, r, r.usd, now);
        ledger.uncertain[jobId] = { userKey: r.userKey, scopeKey: r.scopeKey, usd: r.usd, day: r.day, at: now };
        this.#reconciledUsage.push(recordOf(jobId, r, r.usd, 'uncertain', now, {}));
        report.settledAtEstimate.push(jobId);
        report.chargedUsd = roundToNanoUsd(report.chargedUsd + r.usd);
      } else {
        report.released.push(jobId);
      }
    }
    for (const owner of Object.keys(ledger.owners)) {
      if (owner !== this.#owner && !this.#isAlive(ledger, owner, now)) delete ledger.owners[owner];
    }
    return report;
  }

  #lost(jobId: string, copy: Reservation, foundAt: LostReservation['foundAt'], chargedUsd: number | undefined): void {
    this.#onReservationLost?.({ jobId, userKey: copy.userKey, scopeKey: copy.scopeKey, day: copy.day, foundAt, chargedUsd });
  }

  #hold(jobId: string, copy: Reservation): void {
    this.#held.set(jobId, copy);
    this.#timer ??= setInterval(() => void this.#renew(), Math.max(50, Math.floor(this.#leaseMs / 3))).unref();
  }

  #renew(): Promise<void> {
    if (this.#held.size === 0 || this.#closed) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return Promise.resolve();
    }
    const now = this.clock();
    return this.#update(now, (ledger) => {
      ledger.owners[this.#owner] = { pid: process.pid, host: THIS_HOST, renewedAt: now };
      return { result: undefined, changed: true };
    }).catch((error: unknown) => this.#onError?.(error));
  }

  #update<T>(now: number, operation: Operation<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the quota store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ now, operation, resolve: resolve as (value: unknown) => void, reject });
      if (this.#flushScheduled) return;
      this.#flushScheduled = true;
      void this.serial(() => this.#flush());
    });
  }

  async #flush(): Promise<void> {
    this.#flushScheduled = false;
    const batch = this.#pending.splice(0);
    if (batch.length === 0) return;
    try {
      const outcomes = await this.locked(async () => {
        const ledger = await this.load();
        let dirty = false;
        const usage: UsageRecord[] = [];
        this.#reconciledUsage = [];
        const outcomes = batch.map(({ now, operation }) => {
          const reconciled = this.#reconcile(ledger, now);
          if (reconciled.released.length + reconciled.settledAtEstimate.length > 0) dirty = true;
          try {
            // An operation that throws does so before it changes anything (unknown job, duplicate, bad amount).
            const { result, changed, usage: record, committed } = operation(ledger, reconciled);
            if (changed) dirty = true;
            if (record) usage.push(record);
            return { ok: true as const, result, committed };
          } catch (error) {
            return { ok: false as const, error };
          }
        });
        // Usage first: a crash between the two leaves a record whose settle the ledger lacks; the job is then settled
        // again at its estimate when its dead process is met, and the later record is the one read (latestPerJob).
        if (dirty) await this.appendUsage([...this.#reconciledUsage, ...usage], batch[batch.length - 1]!.now);
        if (dirty) await this.write(ledger);
        return outcomes;
      });
      outcomes.forEach((outcome, i) => {
        if (!outcome.ok) return batch[i]!.reject(outcome.error);
        outcome.committed?.();
        batch[i]!.resolve(outcome.result);
      });
    } catch (error) {
      for (const op of batch) op.reject(error);
    }
  }

  #query<T>(read: (ledger: Ledger) => T): Promise<T> {
    return this.#readLocked(async () => read(await this.load()));
  }

  #readLocked<T>(task: () => Promise<T>): Promise<T> {
    return this.serial(() => {
      if (this.#closed) return Promise.reject(new Error('the quota store is closed'));
      return this.locked(task);
    });
  }
}

