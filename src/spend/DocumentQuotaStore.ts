import { randomBytes } from 'node:crypto';
import { isOverridableCap, type CapOverridesFile } from './cap-overrides.js';
import { isProcessAlive, THIS_HOST } from './file-lock.js';
import { chargeIn, checkIn, pruneIn, recordOf, usedIn, type Ledger, type LedgerOwner } from './ledger-document.js';
import { periodKey, roundToNanoUsd, toNanos } from './rules.js';
import { createSerialQueue } from './serial-queue.js';
import type { CapOverrides, LegacyBotRecords, OverridableCap, QuotaStore, ReconcileReport, ReserveInput, ReserveResult, SettleInfo, UsageQuery, UsageRecord } from './types.js';
import { DEFAULT_USAGE_RETENTION_DAYS, latestPerJob, matchesQuery, withoutPromptOf } from './usage-records.js';

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
}

const DEFAULT_LEASE_MS = 60_000;
const DEFAULT_KEEP_DAYS = 7;
const DAY_MS = 24 * 60 * 60_000;

type Operation<T> = (ledger: Ledger, reconciled: ReconcileReport) => { result: T; changed: boolean; usage?: UsageRecord | undefined };

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
  readonly #held = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  protected readonly usageRetentionMs: number;
  #reconciledUsage: UsageRecord[] = [];

  constructor(options: DocumentQuotaStoreOptions) {
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#keepDays = Math.max(1, Math.floor(options.keepDays ?? DEFAULT_KEEP_DAYS));
    this.clock = options.clock ?? Date.now;
    this.#onError = options.onError;
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
  /** Replaces every usage record (durably). */
  protected abstract replaceUsage(records: UsageRecord[]): Promise<void>;
  protected abstract readCapOverrides(): Promise<CapOverridesFile>;
  protected abstract writeCapOverrides(file: CapOverridesFile): Promise<void>;
  /** The Slack request signatures an older version kept (still worth refusing at `now`), removed as they are taken. */
  protected abstract takeLegacySeen(now: number): Promise<string[]>;

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
      if (refusal) return { result: refusal, changed: false };
      ledger.reservations[jobId] = {
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
      ledger.owners[this.#owner] = { pid: process.pid, host: THIS_HOST, renewedAt: now };
      ledger.lastJobAt[userKey] = now;
      this.#hold(jobId);
      return { result: { ok: true }, changed: true };
    });
  }

  markSent(jobId: string): Promise<void> {
    return this.#update(this.clock(), (ledger) => {
      const reservation = ledger.reservations[jobId];
      if (!reservation) throw new Error(`job ${jobId} has no reservation: it must not be sent`);
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
      this.#held.delete(jobId);
      const reservation = ledger.reservations[jobId];
      if (!reservation) return { result: false, changed: false };
      delete ledger.reservations[jobId];
      chargeIn(ledger, reservation, actualUsd);
      const usage = recordOf(jobId, reservation, roundToNanoUsd(actualUsd), info.basis ?? 'table', now, info.requestId);
      return { result: true, changed: true, usage };
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

  forgetPrompts(userKey: string): Promise<void> {
    return this.#readLocked(async () => {
      const ledger = await this.load();
      for (const r of Object.values(ledger.reservations)) if (r.userKey === userKey && r.job) r.job = withoutPromptOf(r.job);
      // Twice: the backup copy is the version before, which may hold them too.
      await this.write(ledger);
      await this.write(ledger);
      const records = await this.readUsageLines();
      if (records.some((r) => r.userKey === userKey && r.prompt !== undefined)) await this.replaceUsage(records.map((r) => (r.userKey === userKey ? withoutPromptOf(r) : r)));
    });
  }

  takeLegacy(): Promise<LegacyBotRecords> {
    return this.#readLocked(async () => {
      const file = await this.readCapOverrides();
      const settings = file.settings ?? {};
      if (file.settings) {
        delete file.settings;
        // Twice, so the backup copy no longer has them either (they live in the bots' state now).
        await this.writeCapOverrides(file);
        await this.writeCapOverrides(file);
      }
      return { settings, seen: await this.takeLegacySeen(this.clock()) };
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
        chargeIn(ledger, r, r.usd);
        ledger.uncertain[jobId] = { userKey: r.userKey, scopeKey: r.scopeKey, usd: r.usd, day: r.day, at: now };
        this.#reconciledUsage.push(recordOf(jobId, r, r.usd, 'uncertain', now, undefined));
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

  #hold(jobId: string): void {
    this.#held.add(jobId);
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
            const { result, changed, usage: record } = operation(ledger, reconciled);
            if (changed) dirty = true;
            if (record) usage.push(record);
            return { ok: true as const, result };
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
      outcomes.forEach((outcome, i) => (outcome.ok ? batch[i]!.resolve(outcome.result) : batch[i]!.reject(outcome.error)));
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

