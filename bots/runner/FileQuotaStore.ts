import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { createSerialQueue } from './serial-queue.js';
import type { QuotaStore, SpendLimits } from './types.js';
import { nextUtcMidnight, utcDay, utcDayBefore } from './utc-day.js';

export interface FileQuotaStoreOptions {
  /** The data folder; created if missing. */
  dir: string;
  /** Default `quota-ledger.json`. */
  fileName?: string | undefined;
  /** A reservation older than this stops counting, so a crash never blocks anyone for long. Default 30 min. */
  reservationTtlMs?: number | undefined;
  /** UTC days of spending kept in the file, today included. Default 7. */
  keepDays?: number | undefined;
}

const DEFAULT_FILE_NAME = 'quota-ledger.json';
const DEFAULT_RESERVATION_TTL_MS = 30 * 60_000;
const DEFAULT_KEEP_DAYS = 7;
/** Below a millionth of a cent, two amounts are the same. */
const EPSILON_USD = 1e-9;

const ReservationSchema = z.object({
  userKey: z.string(),
  scopeKey: z.string(),
  usd: z.number().nonnegative(),
  /** The UTC day the amount counts for, settled or not. */
  day: z.string(),
  /** When it was made (ms). */
  at: z.number(),
});

const LedgerSchema = z.object({
  version: z.literal(1),
  /** USD settled per UTC day per user or scope key. */
  spent: z.record(z.string(), z.record(z.string(), z.number())),
  reservations: z.record(z.string(), ReservationSchema),
  /** When each user last had a job reserved (ms), for the cooldown. */
  lastJobAt: z.record(z.string(), z.number()),
});

type Ledger = z.output<typeof LedgerSchema>;
type Reservation = z.output<typeof ReservationSchema>;
type ReserveResult = Awaited<ReturnType<QuotaStore['reserve']>>;

/** Ledgers open in this process: two stores on one file would overwrite each other's changes. */
const OPEN_LEDGERS = new Set<string>();

const emptyLedger = (): Ledger => ({ version: 1, spent: {}, reservations: {}, lastJobAt: {} });
const roundUsd = (usd: number): number => Math.round(usd * 1e9) / 1e9;

/**
 * The embedded QuotaStore: one JSON file in the data folder, rewritten
 * atomically (temporary file, fsync, rename) after every change, so it survives
 * a restart or a crash. Operations are serialized in this process; one store
 * per data folder, shared by every bot of the process (opening the same ledger
 * twice throws), and one process per data folder (share budgets between
 * processes with a Redis store).
 *
 * An expired reservation stops counting against budgets and concurrency but is
 * kept for two days, so a job that outlives it is still charged to the right
 * user and scope when it settles.
 */
export class FileQuotaStore implements QuotaStore {
  readonly path: string;
  readonly #dir: string;
  readonly #ttlMs: number;
  readonly #keepDays: number;
  readonly #serial = createSerialQueue();
  #ledger: Ledger | undefined;
  #closed = false;

  constructor(options: FileQuotaStoreOptions) {
    this.#dir = options.dir;
    this.path = resolve(join(options.dir, options.fileName ?? DEFAULT_FILE_NAME));
    if (OPEN_LEDGERS.has(this.path)) {
      throw new Error(`the quota ledger ${this.path} is already open in this process; share one FileQuotaStore between the bots`);
    }
    OPEN_LEDGERS.add(this.path);
    this.#ttlMs = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
    this.#keepDays = Math.max(1, Math.floor(options.keepDays ?? DEFAULT_KEEP_DAYS));
  }

  reserve(input: Parameters<QuotaStore['reserve']>[0]): Promise<ReserveResult> {
    return this.#update<ReserveResult>((ledger) => {
      const { jobId, userKey, scopeKey, estimateUsd, limits, now } = input;
      if (ledger.reservations[jobId]) throw new Error(`job ${jobId} already has a reservation`);
      this.#prune(ledger, now);
      const refusal = this.#check(ledger, { userKey, scopeKey, estimateUsd, limits, now });
      if (refusal) return { result: refusal, changed: false };
      ledger.reservations[jobId] = { userKey, scopeKey, usd: roundUsd(estimateUsd), day: utcDay(now), at: now };
      ledger.lastJobAt[userKey] = now;
      return { result: { ok: true }, changed: true };
    });
  }

  settle(jobId: string, actualUsd: number): Promise<void> {
    if (!(Number.isFinite(actualUsd) && actualUsd >= 0)) return Promise.reject(new RangeError(`actualUsd must be a non-negative number, not ${actualUsd}`));
    return this.#update((ledger) => {
      const reservation = ledger.reservations[jobId];
      if (!reservation) return { result: undefined, changed: false };
      delete ledger.reservations[jobId];
      const day = (ledger.spent[reservation.day] ??= {});
      for (const key of new Set([reservation.userKey, reservation.scopeKey])) {
        day[key] = roundUsd((day[key] ?? 0) + actualUsd);
      }
      return { result: undefined, changed: true };
    });
  }

  release(jobId: string): Promise<void> {
    return this.#update((ledger) => {
      if (!ledger.reservations[jobId]) return { result: undefined, changed: false };
      delete ledger.reservations[jobId];
      return { result: undefined, changed: true };
    });
  }

  spentToday(key: string, now: number): Promise<number> {
    return this.#serial(async () => {
      if (this.#closed) throw new Error('the quota store is closed');
      return this.#usedToday(await this.#load(), key, now);
    });
  }

  /** Waits for pending operations; later calls fail. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#serial(async () => undefined);
    OPEN_LEDGERS.delete(this.path);
  }

  #check(
    ledger: Ledger,
    input: { userKey: string; scopeKey: string; estimateUsd: number; limits: SpendLimits; now: number },
  ): Extract<ReserveResult, { ok: false }> | undefined {
    const { userKey, scopeKey, estimateUsd, limits, now } = input;
    if (limits.userConcurrentJobs !== undefined) {
      const mine = this.#active(ledger, now).filter((r) => r.userKey === userKey);
      if (mine.length >= limits.userConcurrentJobs) {
        const firstExpiry = Math.min(...mine.map((r) => r.at + this.#ttlMs));
        return { ok: false, code: 'user_concurrency', limit: limits.userConcurrentJobs, used: mine.length, resetsAt: firstExpiry };
      }
    }
    const cooldownMs = (limits.userCooldownSeconds ?? 0) * 1000;
    const last = ledger.lastJobAt[userKey];
    if (cooldownMs > 0 && last !== undefined && now < last + cooldownMs) {
      return { ok: false, code: 'user_cooldown', limit: limits.userCooldownSeconds!, used: (now - last) / 1000, resetsAt: last + cooldownMs };
    }
    const budgets = [
      { code: 'budget_user_daily', key: userKey, limit: limits.userDailyUsd },
      { code: 'budget_scope_daily', key: scopeKey, limit: limits.scopeDailyUsd },
    ] as const;
    for (const { code, key, limit } of budgets) {
      if (limit === undefined) continue;
      const used = this.#usedToday(ledger, key, now);
      if (used + estimateUsd > limit + EPSILON_USD) return { ok: false, code, limit, used, resetsAt: nextUtcMidnight(now) };
    }
    return undefined;
  }

  #active(ledger: Ledger, now: number): Reservation[] {
    return Object.values(ledger.reservations).filter((r) => now - r.at < this.#ttlMs);
  }

  #usedToday(ledger: Ledger, key: string, now: number): number {
    const day = utcDay(now);
    let used = ledger.spent[day]?.[key] ?? 0;
    for (const r of this.#active(ledger, now)) {
      if (r.day === day && (r.userKey === key || r.scopeKey === key)) used += r.usd;
    }
    return roundUsd(used);
  }

  /** Drops days older than the kept ones, reservations expired for two days, and cooldowns long past. */
  #prune(ledger: Ledger, now: number): void {
    const oldestKept = utcDayBefore(now, this.#keepDays - 1);
    for (const day of Object.keys(ledger.spent)) if (day < oldestKept) delete ledger.spent[day];
    const forgetBefore = now - this.#ttlMs - 2 * 24 * 60 * 60_000;
    for (const [jobId, r] of Object.entries(ledger.reservations)) if (r.at < forgetBefore) delete ledger.reservations[jobId];
    const cooldownsBefore = now - this.#keepDays * 24 * 60 * 60_000;
    for (const [key, at] of Object.entries(ledger.lastJobAt)) if (at < cooldownsBefore) delete ledger.lastJobAt[key];
  }

  /**
   * Runs one operation on a copy of the ledger, in turn with the others, and
   * writes the copy before it replaces the ledger: a failed write changes nothing.
   */
  #update<T>(operation: (ledger: Ledger) => { result: T; changed: boolean }): Promise<T> {
    return this.#serial(async () => {
      if (this.#closed) throw new Error('the quota store is closed');
      const current = await this.#load();
      const draft = structuredClone(current);
      const { result, changed } = operation(draft);
      if (changed) {
        await this.#write(draft);
        this.#ledger = draft;
      }
      return result;
    });
  }

  async #load(): Promise<Ledger> {
    if (this.#ledger) return this.#ledger;
    await mkdir(this.#dir, { recursive: true });
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.#ledger = emptyLedger();
      return this.#ledger;
    }
    let parsed: ReturnType<typeof LedgerSchema.safeParse>;
    try {
      parsed = LedgerSchema.safeParse(JSON.parse(text));
    } catch (cause) {
      throw new Error(`the quota ledger ${this.path} is not JSON; fix it or move it away (budgets start again from zero)`, { cause });
    }
    if (!parsed.success) {
      throw new Error(`the quota ledger ${this.path} has an unknown shape; fix it or move it away (budgets start again from zero)`, {
        cause: parsed.error,
      });
    }
    this.#ledger = parsed.data;
    return this.#ledger;
  }

  async #write(ledger: Ledger): Promise<void> {
    const temp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      const handle = await open(temp, 'w', 0o600);
      try {
        await handle.writeFile(JSON.stringify(ledger));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, this.path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }
}
