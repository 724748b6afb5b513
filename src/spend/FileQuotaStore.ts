import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, open, readFile, rename } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { writeFileAtomically } from '../core/atomic-file.js';
import { LedgerUnreadableError } from './errors.js';
import { isProcessAlive, THIS_HOST, withFileLock } from './file-lock.js';
import { createSerialQueue } from './serial-queue.js';
import { budgetsOf } from './caps.js';
import { CapOverridesFileSchema, isOverridableCap, type CapOverridesFile } from './cap-overrides.js';
import { ACCOUNT_KEY, type CapOverrides, type OverridableCap, type QuotaStore, type ReconcileReport, type ReserveInput, type ReserveResult, type SettleInfo, type SpendRefusal, type UsageQuery, type UsageRecord } from './types.js';
import { DEFAULT_USAGE_RETENTION_DAYS, JobDetailsSchema, latestPerJob, matchesQuery, usageRecord, UsageRecordSchema } from './usage-records.js';
import { roundToNanoUsd } from './usage-totals.js';
import { nextUtcMidnight, nextUtcMonth, utcDay, utcDayBefore, utcMonth, utcMonthBefore } from './utc-period.js';

export interface FileQuotaStoreOptions {
  /** The data folder; created if missing. */
  dir: string;
  /** Default `quota-ledger.json`. */
  fileName?: string | undefined;
  /**
   * A process renews its lease on the ledger every third of this while it
   * holds reservations; one that stops renewing (or whose pid is gone) is dead,
   * and its reservations are settled or released. Default 60 s.
   */
  leaseMs?: number | undefined;
  /** UTC days of daily spending kept in the file, today included. Default 7 (months: this one and the last). */
  keepDays?: number | undefined;
  /** The clock lease renewals use; must be the one the callers' `now` comes from. Default `Date.now`. */
  clock?: (() => number) | undefined;
  /** Lease renewal failures (tried again on the next renewal). */
  onError?: ((error: unknown) => void) | undefined;
  /** Days usage records are kept in `usage.jsonl` (`PICTOR_USAGE_RETENTION_DAYS`). Default 400. */
  usageRetentionDays?: number | undefined;
}

const DEFAULT_FILE_NAME = 'quota-ledger.json';
const USAGE_FILE_NAME = 'usage.jsonl';
const CAP_OVERRIDES_FILE_NAME = 'cap-overrides.json';
const DEFAULT_LEASE_MS = 60_000;
const DEFAULT_KEEP_DAYS = 7;
const DAY_MS = 24 * 60 * 60_000;
/** Below a millionth of a cent, two amounts are the same. */
const EPSILON_USD = 1e-9;

const ReservationSchema = z.object({
  userKey: z.string(),
  scopeKey: z.string(),
  usd: z.number().nonnegative(),
  /** The UTC day and month the amount counts for, settled or not. */
  day: z.string(),
  month: z.string(),
  /** When it was made (ms). */
  at: z.number(),
  /** The process that holds it (see `owners`). */
  owner: z.string(),
  /** Its request may have reached the service: if its process dies, it is charged at its estimate. */
  sent: z.boolean(),
  /** What the job is, for its usage record. */
  job: JobDetailsSchema.optional(),
});

const OwnerSchema = z.object({ pid: z.number(), host: z.string(), renewedAt: z.number() });

const UncertainSchema = z.object({ userKey: z.string(), scopeKey: z.string(), usd: z.number(), day: z.string(), at: z.number() });

const LedgerV2Schema = z.object({
  version: z.literal(2),
  /** USD settled per UTC day (`YYYY-MM-DD`) and per UTC month (`YYYY-MM`), per user, scope or `account` key. */
  spent: z.record(z.string(), z.record(z.string(), z.number())),
  reservations: z.record(z.string(), ReservationSchema),
  owners: z.record(z.string(), OwnerSchema),
  /** Jobs charged at their estimate because their process died after sending them: the real cost is unknown. */
  uncertain: z.record(z.string(), UncertainSchema),
  /** When each user last had a job reserved (ms), for the cooldown. */
  lastJobAt: z.record(z.string(), z.number()),
});

/** The first format (daily spending, reservations with a time to live); read and upgraded. */
const LedgerV1Schema = z.object({
  version: z.literal(1),
  spent: z.record(z.string(), z.record(z.string(), z.number())),
  reservations: z.record(z.string(), z.object({ userKey: z.string(), scopeKey: z.string(), usd: z.number(), day: z.string(), at: z.number() })),
  lastJobAt: z.record(z.string(), z.number()),
});

type Ledger = z.output<typeof LedgerV2Schema>;
type Operation<T> = (ledger: Ledger, reconciled: ReconcileReport) => { result: T; changed: boolean; usage?: UsageRecord | undefined };
type Reservation = z.output<typeof ReservationSchema>;

/** Ledgers open in this process: one store per file per process (processes share it through the lock). */
const OPEN_LEDGERS = new Set<string>();

const emptyLedger = (): Ledger => ({ version: 2, spent: {}, reservations: {}, owners: {}, uncertain: {}, lastJobAt: {} });

/**
 * The embedded QuotaStore: one JSON file in the data folder, shared by the
 * processes of one machine. Every change takes the ledger's lock file, reads
 * the ledger, changes it and writes it atomically (temporary file, fsync,
 * rename) before it lets go and answers, so two processes never both spend
 * the last dollar and a crash loses nothing that was answered. Changes that
 * arrive while the ledger is busy are committed together (one write). The previous
 * version is kept beside it (`<file>.bak`); `open()` checks the ledger at
 * start and restores that copy when the ledger is unreadable.
 */
export class FileQuotaStore implements QuotaStore {
  readonly path: string;
  readonly #dir: string;
  readonly #leaseMs: number;
  readonly #keepDays: number;
  readonly #clock: () => number;
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #serial = createSerialQueue();
  /** Operations waiting for the next group commit. */
  readonly #pending: { now: number; operation: Operation<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  #flushScheduled = false;
  /** This process's name in `owners`. */
  readonly #owner = `${THIS_HOST}:${process.pid}:${randomBytes(4).toString('hex')}`;
  /** Reservations this store made and has not ended. */
  readonly #held = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly usagePath: string;
  /** The caps chat admins set per scope (`cap-overrides.json` beside the ledger), written under the ledger's lock. */
  readonly capOverridesPath: string;
  readonly #usageRetentionMs: number;
  /** When this process last dropped expired usage records (at most once a day). */
  #usagePrunedAt = Number.NEGATIVE_INFINITY;
  /** Usage records of the reservations the current commit settled at their estimate (dead processes). */
  #reconciledUsage: UsageRecord[] = [];

  constructor(options: FileQuotaStoreOptions) {
    this.#dir = options.dir;
    this.path = resolve(join(options.dir, options.fileName ?? DEFAULT_FILE_NAME));
    if (OPEN_LEDGERS.has(this.path)) {
      throw new Error(`the quota ledger ${this.path} is already open in this process; share one FileQuotaStore between the bots`);
    }
    OPEN_LEDGERS.add(this.path);
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#keepDays = Math.max(1, Math.floor(options.keepDays ?? DEFAULT_KEEP_DAYS));
    this.#clock = options.clock ?? Date.now;
    this.#onError = options.onError;
    this.usagePath = resolve(join(options.dir, USAGE_FILE_NAME));
    this.capOverridesPath = resolve(join(options.dir, CAP_OVERRIDES_FILE_NAME));
    this.#usageRetentionMs = Math.max(1, options.usageRetentionDays ?? DEFAULT_USAGE_RETENTION_DAYS) * DAY_MS;
  }

  get backupPath(): string {
    return `${this.path}.bak`;
  }

  /**
   * Checks the ledger before a surface starts taking jobs. An unreadable one
   * (empty, truncated, not a ledger) is moved aside and its backup copy put
   * back — the answer says so; with no good copy it throws
   * LedgerUnreadableError naming the file and what to do.
   */
  open(): Promise<{ restoredFromBackup: boolean; brokenCopy?: string | undefined }> {
    return this.#serial(() =>
      this.#locked(async () => {
        const main = await this.#read(this.path);
        if (main.ok) return { restoredFromBackup: false };
        const backup = await this.#read(this.backupPath);
        // No ledger and no backup: a fresh start. No ledger but a backup: it was lost, not never made.
        if (main.problem === undefined && !backup.ok && backup.problem === undefined) return { restoredFromBackup: false };
        if (!backup.ok) throw new LedgerUnreadableError(this.path, main.problem ?? 'is missing', { cause: main.ok ? undefined : main.cause });
        if (main.problem === undefined) {
          await copyFile(this.backupPath, this.path);
          return { restoredFromBackup: true };
        }
        const brokenCopy = `${this.path}.broken-${new Date(this.#clock()).toISOString().replace(/[:.]/g, '-')}`;
        await rename(this.path, brokenCopy).catch(() => undefined);
        await copyFile(this.backupPath, this.path);
        return { restoredFromBackup: true, brokenCopy };
      }),
    );
  }

  reserve(input: ReserveInput): Promise<ReserveResult> {
    return this.#update<ReserveResult>(input.now, (ledger) => {
      const { jobId, userKey, scopeKey, estimateUsd, limits, now } = input;
      if (!(Number.isFinite(estimateUsd) && estimateUsd >= 0)) throw new RangeError(`estimateUsd must be a non-negative number, not ${estimateUsd}`);
      if (ledger.reservations[jobId]) throw new Error(`job ${jobId} already has a reservation`);
      this.#prune(ledger, now);
      const refusal = this.#check(ledger, { userKey, scopeKey, estimateUsd, limits, now });
      if (refusal) return { result: refusal, changed: false };
      ledger.reservations[jobId] = {
        userKey,
        scopeKey,
        usd: roundToNanoUsd(estimateUsd),
        day: utcDay(now),
        month: utcMonth(now),
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
    return this.#update(this.#clock(), (ledger) => {
      const reservation = ledger.reservations[jobId];
      if (!reservation) throw new Error(`job ${jobId} has no reservation: it must not be sent`);
      if (reservation.sent) return { result: undefined, changed: false };
      reservation.sent = true;
      return { result: undefined, changed: true };
    });
  }

  settle(jobId: string, actualUsd: number, info: SettleInfo = {}): Promise<boolean> {
    if (!(Number.isFinite(actualUsd) && actualUsd >= 0)) return Promise.reject(new RangeError(`actualUsd must be a non-negative number, not ${actualUsd}`));
    const now = this.#clock();
    return this.#update(now, (ledger) => {
      this.#held.delete(jobId);
      const reservation = ledger.reservations[jobId];
      if (!reservation) return { result: false, changed: false };
      delete ledger.reservations[jobId];
      charge(ledger, reservation, actualUsd);
      const usage = { ...recordOf(jobId, reservation, roundToNanoUsd(actualUsd), info.basis ?? 'table', now, info.requestId), ...(info.reservedUsd !== undefined && { reservedUsd: info.reservedUsd }) };
      return { result: true, changed: true, usage };
    });
  }

  release(jobId: string): Promise<void> {
    return this.#update(this.#clock(), (ledger) => {
      this.#held.delete(jobId);
      if (!ledger.reservations[jobId]) return { result: undefined, changed: false };
      delete ledger.reservations[jobId];
      return { result: undefined, changed: true };
    });
  }

  spentToday(key: string, now: number): Promise<number> {
    return this.#query((ledger) => this.#used(ledger, key, 'day', now));
  }

  spentThisMonth(key: string, now: number): Promise<number> {
    return this.#query((ledger) => this.#used(ledger, key, 'month', now));
  }

  reconcile(now: number): Promise<ReconcileReport> {
    return this.#update(now, (_ledger, reconciled) => ({ result: reconciled, changed: false }));
  }

  /** The usage records in `usage.jsonl` beside the ledger, one per settled job, oldest first. */
  usage(query: UsageQuery): Promise<UsageRecord[]> {
    return this.#serial(() => {
      if (this.#closed) return Promise.reject(new Error('the quota store is closed'));
      return this.#locked(async () => (await this.#readUsage()).filter((r) => matchesQuery(r, query)));
    });
  }

  capOverrides(scopeKey: string): Promise<CapOverrides> {
    return this.#serial(() => {
      if (this.#closed) return Promise.reject(new Error('the quota store is closed'));
      return this.#locked(async () => ({ ...(await this.#readCapOverrides()).scopes[scopeKey] }));
    });
  }

  setCapOverride(scopeKey: string, cap: OverridableCap, usd: number | undefined, changedBy: string, now: number): Promise<{ previousUsd: number | undefined }> {
    if (!isOverridableCap(cap)) return Promise.reject(new RangeError(`${String(cap)} cannot be changed from chat`));
    if (usd !== undefined && !(Number.isFinite(usd) && usd >= 0)) return Promise.reject(new RangeError(`usd must be a non-negative number, not ${usd}`));
    return this.#serial(() => {
      if (this.#closed) return Promise.reject(new Error('the quota store is closed'));
      return this.#locked(async () => {
        const file = await this.#readCapOverrides();
        const scope = (file.scopes[scopeKey] ??= {});
        const previousUsd = scope[cap]?.usd;
        if (usd === undefined) delete scope[cap];
        else scope[cap] = { usd: roundToNanoUsd(usd), by: changedBy, at: now };
        if (Object.keys(scope).length === 0) delete file.scopes[scopeKey];
        await writeFileAtomically(this.capOverridesPath, JSON.stringify(file));
        return { previousUsd };
      });
    });
  }

  /** `cap-overrides.json`, or none set when it does not exist; an unreadable one is an error naming it (never silently dropped). */
  async #readCapOverrides(): Promise<CapOverridesFile> {
    let text: string;
    try {
      text = await readFile(this.capOverridesPath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, scopes: {} };
      throw error;
    }
    try {
      return CapOverridesFileSchema.parse(JSON.parse(text));
    } catch (cause) {
      throw new Error(`the chat admins' caps in ${this.capOverridesPath} cannot be read; fix or move the file away (the operator's caps then apply)`, { cause });
    }
  }

  /** Waits for pending operations and stops renewing the lease; later calls fail. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#serial(async () => undefined);
    OPEN_LEDGERS.delete(this.path);
  }

  #check(ledger: Ledger, input: Omit<ReserveInput, 'jobId'>): SpendRefusal | undefined {
    const { userKey, scopeKey, estimateUsd, limits, now } = input;
    if (limits.userConcurrentJobs !== undefined) {
      const mine = Object.values(ledger.reservations).filter((r) => r.userKey === userKey);
      if (mine.length >= limits.userConcurrentJobs) {
        return { ok: false, code: 'user_concurrency', limit: limits.userConcurrentJobs, used: mine.length, resetsAt: now };
      }
    }
    const cooldownMs = (limits.userCooldownSeconds ?? 0) * 1000;
    const last = ledger.lastJobAt[userKey];
    if (cooldownMs > 0 && last !== undefined && now < last + cooldownMs) {
      return { ok: false, code: 'user_cooldown', limit: limits.userCooldownSeconds!, used: (now - last) / 1000, resetsAt: last + cooldownMs };
    }
    for (const { code, key, period, limit } of budgetsOf(limits, userKey, scopeKey)) {
      if (limit === undefined) continue;
      const used = this.#used(ledger, key, period, now);
      if (used + estimateUsd > limit + EPSILON_USD) {
        return { ok: false, code, limit, used, resetsAt: period === 'day' ? nextUtcMidnight(now) : nextUtcMonth(now) };
      }
    }
    return undefined;
  }

  /** Settled plus reserved in the day or month of `now`. Reservations of dead processes count until they are reconciled. */
  #used(ledger: Ledger, key: string, period: 'day' | 'month', now: number): number {
    const current = period === 'day' ? utcDay(now) : utcMonth(now);
    let used = ledger.spent[current]?.[key] ?? 0;
    for (const r of Object.values(ledger.reservations)) {
      if (r[period] === current && keysOf(r).has(key)) used += r.usd;
    }
    return roundToNanoUsd(used);
  }

  #isAlive(ledger: Ledger, owner: string, now: number): boolean {
    if (owner === this.#owner) return true;
    const entry = ledger.owners[owner];
    if (!entry) return false;
    if (entry.host === THIS_HOST && !isProcessAlive(entry.pid)) return false;
    return now - entry.renewedAt < this.#leaseMs;
  }

  /** Ends the reservations of dead processes: sent ones charged at their estimate (uncertain), the others released. */
  #reconcile(ledger: Ledger, now: number): ReconcileReport {
    const report: ReconcileReport = { released: [], settledAtEstimate: [] };
    for (const [jobId, r] of Object.entries(ledger.reservations)) {
      if (this.#isAlive(ledger, r.owner, now)) continue;
      delete ledger.reservations[jobId];
      if (r.sent) {
        charge(ledger, r, r.usd);
        ledger.uncertain[jobId] = { userKey: r.userKey, scopeKey: r.scopeKey, usd: r.usd, day: r.day, at: now };
        this.#reconciledUsage.push(recordOf(jobId, r, r.usd, 'uncertain', now, undefined));
        report.settledAtEstimate.push(jobId);
      } else {
        report.released.push(jobId);
      }
    }
    for (const owner of Object.keys(ledger.owners)) {
      if (owner !== this.#owner && !this.#isAlive(ledger, owner, now)) delete ledger.owners[owner];
    }
    return report;
  }

  /** Drops days and months older than the kept ones, old uncertain marks, and cooldowns long past. */
  #prune(ledger: Ledger, now: number): void {
    const oldestDay = utcDayBefore(now, this.#keepDays - 1);
    const oldestMonth = utcMonthBefore(now, 1);
    for (const period of Object.keys(ledger.spent)) {
      if (period.length === 7 ? period < oldestMonth : period < oldestDay) delete ledger.spent[period];
    }
    const forgetBefore = now - this.#keepDays * DAY_MS;
    for (const [jobId, u] of Object.entries(ledger.uncertain)) if (u.at < forgetBefore) delete ledger.uncertain[jobId];
    for (const [key, at] of Object.entries(ledger.lastJobAt)) if (at < forgetBefore) delete ledger.lastJobAt[key];
  }

  #hold(jobId: string): void {
    this.#held.add(jobId);
    this.#timer ??= setInterval(() => void this.#renew(), Math.max(50, Math.floor(this.#leaseMs / 3))).unref();
  }

  /** Renews this process's lease while it holds reservations. */
  #renew(): Promise<void> {
    if (this.#held.size === 0 || this.#closed) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return Promise.resolve();
    }
    const now = this.#clock();
    return this.#update(now, (ledger) => {
      ledger.owners[this.#owner] = { pid: process.pid, host: THIS_HOST, renewedAt: now };
      return { result: undefined, changed: true };
    }).catch((error: unknown) => this.#onError?.(error));
  }

  /** Renews the lease now (the timer does it every third of `leaseMs`). */
  renewLease(): Promise<void> {
    return this.#renew();
  }

  /**
   * Queues one operation for the next group commit: every operation waiting
   * when the ledger is free runs in turn, under one lock, on one fresh read of
   * the ledger (after the reservations of dead processes are ended), and all
   * of them are answered only once that one write (one fsync) is done — so
   * nothing answered is lost on a crash, and a failed write changes nothing.
   */
  #update<T>(now: number, operation: Operation<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('the quota store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({ now, operation, resolve: resolve as (value: unknown) => void, reject });
      if (this.#flushScheduled) return;
      this.#flushScheduled = true;
      void this.#serial(() => this.#flush());
    });
  }

  async #flush(): Promise<void> {
    this.#flushScheduled = false;
    const batch = this.#pending.splice(0);
    if (batch.length === 0) return;
    try {
      const outcomes = await this.#locked(async () => {
        const ledger = await this.#load();
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
        if (dirty) await this.#appendUsage([...this.#reconciledUsage, ...usage], batch[batch.length - 1]!.now);
        if (dirty) await this.#write(ledger);
        return outcomes;
      });
      // Answered once the write is on disk and the lock is free.
      outcomes.forEach((outcome, i) => (outcome.ok ? batch[i]!.resolve(outcome.result) : batch[i]!.reject(outcome.error)));
    } catch (error) {
      for (const op of batch) op.reject(error);
    }
  }

  #query<T>(read: (ledger: Ledger) => T): Promise<T> {
    return this.#serial(() => {
      if (this.#closed) return Promise.reject(new Error('the quota store is closed'));
      return this.#locked(async () => read(await this.#load()));
    });
  }

  async #locked<T>(task: () => Promise<T>): Promise<T> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    return withFileLock(`${this.path}.lock`, task);
  }

  async #read(path: string): Promise<{ ok: true; ledger: Ledger } | { ok: false; problem: string | undefined; cause?: unknown }> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, problem: undefined };
      throw error;
    }
    if (text.trim() === '') return { ok: false, problem: 'is empty' };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      return { ok: false, problem: 'is not JSON (truncated or damaged)', cause };
    }
    const v2 = LedgerV2Schema.safeParse(json);
    if (v2.success) return { ok: true, ledger: v2.data };
    const v1 = LedgerV1Schema.safeParse(json);
    if (v1.success) return { ok: true, ledger: upgrade(v1.data) };
    return { ok: false, problem: 'is not a spend ledger (unknown shape)', cause: v2.error };
  }

  async #load(): Promise<Ledger> {
    const read = await this.#read(this.path);
    if (read.ok) return read.ledger;
    if (read.problem === undefined) {
      // No ledger: a fresh start, unless a backup shows there was one (`open()` restores it).
      const backup = await this.#read(this.backupPath);
      if (backup.ok || backup.problem !== undefined) throw new LedgerUnreadableError(this.path, 'is missing although a backup exists');
      return emptyLedger();
    }
    throw new LedgerUnreadableError(this.path, read.problem, { cause: read.cause });
  }

  /** Appends records to `usage.jsonl` (0600) and syncs it; drops expired records at most once a day. */
  async #appendUsage(records: UsageRecord[], now: number): Promise<void> {
    if (now - this.#usagePrunedAt >= DAY_MS) {
      this.#usagePrunedAt = now;
      const lines = await this.#readUsageLines();
      const kept = lines.filter((r) => r.time >= now - this.#usageRetentionMs);
      if (kept.length < lines.length) {
        await writeFileAtomically(this.usagePath, kept.map((r) => `${JSON.stringify(r)}\n`).join(''));
      }
    }
    if (records.length === 0) return;
    const handle = await open(this.usagePath, 'a+', 0o600);
    try {
      // A line a crash cut short is left as it is (it is skipped when read); the next record starts on a line of its own.
      const { size } = await handle.stat();
      const last = Buffer.alloc(1);
      const cut = size > 0 && (await handle.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] !== 0x0a;
      await handle.appendFile(`${cut ? '\n' : ''}${records.map((r) => `${JSON.stringify(r)}\n`).join('')}`);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /** Every readable line of `usage.jsonl`, in file order (a line cut short by a crash is skipped). */
  async #readUsageLines(): Promise<UsageRecord[]> {
    let text: string;
    try {
      text = await readFile(this.usagePath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const records: UsageRecord[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const parsed = UsageRecordSchema.safeParse(JSON.parse(line));
        if (parsed.success) records.push(parsed.data);
      } catch {
        // A torn last line: its settle never reached the ledger either.
      }
    }
    return records;
  }

  async #readUsage(): Promise<UsageRecord[]> {
    return latestPerJob(await this.#readUsageLines());
  }

  /** Temporary file, fsync, then the current version becomes the backup and the new one takes its place. */
  async #write(ledger: Ledger): Promise<void> {
    await writeFileAtomically(this.path, JSON.stringify(ledger), { backupPath: this.backupPath });
  }

}

function recordOf(jobId: string, r: Reservation, costUsd: number, basis: UsageRecord['basis'], now: number, requestId: string | undefined): UsageRecord {
  return usageRecord({ jobId, time: now, day: r.day, userKey: r.userKey, scopeKey: r.scopeKey, job: r.job, costUsd, basis, requestId });
}

function keysOf(r: Pick<Reservation, 'userKey' | 'scopeKey'>): Set<string> {
  return new Set([r.userKey, r.scopeKey, ACCOUNT_KEY]);
}

/** Adds what a job cost to its day and month, for its user, its scope and the account. */
function charge(ledger: Ledger, r: Reservation, usd: number): void {
  for (const period of [r.day, r.month]) {
    const totals = (ledger.spent[period] ??= {});
    for (const key of keysOf(r)) totals[key] = roundToNanoUsd((totals[key] ?? 0) + usd);
  }
}


/** Version 1 had daily totals and reservations with a time to live: they become reservations of a gone process. */
function upgrade(v1: z.output<typeof LedgerV1Schema>): Ledger {
  const ledger = emptyLedger();
  ledger.lastJobAt = v1.lastJobAt;
  for (const [day, totals] of Object.entries(v1.spent)) {
    ledger.spent[day] = { ...totals };
    const month = (ledger.spent[day.slice(0, 7)] ??= {});
    for (const [key, usd] of Object.entries(totals)) month[key] = roundToNanoUsd((month[key] ?? 0) + usd);
  }
  for (const [jobId, r] of Object.entries(v1.reservations)) {
    // Whether it was sent is unknown: it is charged at its estimate when reconciled, the safe side of a cap.
    ledger.reservations[jobId] = { ...r, month: r.day.slice(0, 7), owner: 'version-1', sent: true };
  }
  return ledger;
}
