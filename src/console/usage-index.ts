import { addUsage, roundToNanoUsd, type UsageTotals } from '../spend/usage-totals.js';
import type { QuotaStore, UsageRecord } from '../spend/types.js';
import { damagedLinesAt, damagedWithin, type DamagedLine } from '../spend/usage-records.js';
import { utcMonthBefore } from '../spend/utc-period.js';
import { LATE, within } from '../core/with-timeout.js';

/** Jobs, images and cost of a group of usage records (`addUsage` defines them). */
export type Totals = Omit<UsageTotals, 'key'>;

/**
 * What one UTC day's records add up to: in all, by surface, and — for the days of this month and the last, which the
 * caps and the tables of the month need — by server/workspace and by user (older days keep only the first two, so the
 * index stays small however long records are kept).
 */
export interface DayTotals {
  total: Totals;
  surfaces: Map<string, Totals>;
  scopes: Map<string, Totals>;
  users: Map<string, Totals>;
  /** Which user spent in which server/workspace (`<user key> <scope key>`): a member's caps are their scope's. */
  members: Set<string>;
}

export interface UsageIndexOptions {
  store: Pick<QuotaStore, 'usageSince'>;
  now?: (() => number) | undefined;
  /** Records kept whole, newest last, for the list of recent jobs. Default 2000. */
  recentJobs?: number | undefined;
  /**
   * How long calls share a read under way: past it the next `refresh` asks the ledger again, so a read that stalls
   * does not stop every later one (what the late read brings is dropped once a later one was counted). The console's
   * one backend wait, read at its start and passed down (the live list's and the alerts' reads wait as long).
   */
  readWaitMs: number;
}

const HOUR_MS = 60 * 60_000;
const DAY_MS = 24 * HOUR_MS;
/** A job whose record is older than this is not expected to get a second one (a reconcile comes within the lease). */
const REPLACEABLE_FOR_MS = 8 * DAY_MS;
/** Images per hour are kept this long. */
const HOURS_KEPT_MS = 8 * DAY_MS;

const zero = (): Totals => ({ jobs: 0, images: 0, usd: 0, uncertainUsd: 0 });

/**
 * The usage records of a ledger, added up as they are written: every figure
 * of the console comes from here, so a page reads a few small maps instead of
 * every record. The first `refresh` reads them all; later ones read only what
 * was written since (`QuotaStore.usageSince`), or everything again when the
 * store says so (`reset`: a forget erased prompts this index may hold). A job's later record replaces its earlier one, as
 * `latestPerJob` has it, for records of the last 8 days. Not thread-safe
 * across processes: each process keeps its own.
 */
export class UsageIndex {
  readonly #store: Pick<QuotaStore, 'usageSince'>;
  readonly #now: () => number;
  readonly #recentJobs: number;
  #cursor: string | undefined;
  #days = new Map<string, DayTotals>();
  /** Images asked for by the jobs settled in each hour (the hour's start, ms). */
  #hours = new Map<number, number>();
  #recent: UsageRecord[] = [];
  /** The record counted for each job of the last days, so a later one replaces it. */
  #byJob = new Map<string, UsageRecord>();
  /** The read under way that calls share, what they are answered, and `#writes` when it began. */
  #sharing: { read: Promise<void>; shared: Promise<void>; writes: number } | undefined;
  /** How many times the store said it wrote records (`written`). */
  #writes = 0;
  /** `#writes` when the read counted last began: records told of after it may be missing. */
  #countedWrites = 0;
  readonly #readWaitMs: number;
  /** How many reads were counted: a read that answers after another one was counted since it began is dropped. */
  #reads = 0;
  #records = 0;
  /** The damaged lines of the usage records read, each with the times it may be of; one after the last record read waits for the next for its `before`. */
  #damaged: DamagedLine[] = [];
  /** The time of the last record read: a damaged line read after it was written after it. */
  #lastTime: number | undefined;
  #prunedAt = 0;

  constructor(options: UsageIndexOptions) {
    this.#store = options.store;
    this.#now = options.now ?? Date.now;
    this.#recentJobs = options.recentJobs ?? 2000;
    this.#readWaitMs = options.readWaitMs;
  }

  /**
   * Reads what was written since the last refresh; calls made while one runs share it, for `readWaitMs` (past that a
   * call reads again: the stalled read is left to answer or not), unless it began before the console last wrote records
   * (`written`): then the call waits for it (at most `readWaitMs`) and reads again, so those records are counted.
   */
  refresh(): Promise<void> {
    const under = this.#sharing;
    if (under && this.#beganBeforeWrites(under.writes)) return this.#refreshAfter(under);
    if (under) return under.shared;
    const read = this.#refresh();
    const shared = this.#shareWithin(read);
    this.#sharing = { read, shared, writes: this.#writes };
    return shared;
  }

  /**
   * Records were just written by this process (a reconcile's *interrupted* records of the jobs it ended, told by the
   * store's `onReconciled`, whichever step of it ended them): a read under way, which may have begun before them, is no
   * longer shared, and `catchUp` reads again. Reads that wrote nothing keep sharing one read.
   */
  written(): void {
    this.#writes++;
  }

  /**
   * Reads again when records were written (`written`) since the read counted last began, sharing a read begun after
   * them; otherwise answers at once. For a caller that read something else after a `refresh` (the reservations): a job
   * a reconcile ended meanwhile is gone from what it read, and its record may be newer than the records counted.
   */
  catchUp(): Promise<void> {
    return this.#beganBeforeWrites(this.#countedWrites) ? this.refresh() : Promise.resolve();
  }

  /** The one rule of both: a read begun when `written` had been told `writes` times may miss records told of since. */
  #beganBeforeWrites(writes: number): boolean {
    return writes !== this.#writes;
  }

  /** Waits for `under`, begun before records were written, (at most `readWaitMs`) and reads again: waited for, not read beside, so it cannot be counted after the new one. */
  async #refreshAfter(under: { read: Promise<void>; shared: Promise<void> }): Promise<void> {
    // Its failure is its own callers' to hear: this call's is the read after it.
    await within(under.shared, this.#readWaitMs).catch(() => undefined);
    this.#unshare(under.read);
    return this.refresh();
  }

  /** `read`'s outcome; it is shared until it settles (before its callers go on) or has had its wait, whichever comes first. */
  async #shareWithin(read: Promise<void>): Promise<void> {
    try {
      if ((await within(read, this.#readWaitMs)) !== LATE) return;
      // Past its wait: later calls read again; this one's callers still get what it ends with.
      // Dropped, unlike LedgerNow's stalled reconcile: a read writes nothing, so asking again is cheap, and what it brings late is not counted twice (`#refresh`).
      this.#unshare(read);
      await read;
    } finally {
      this.#unshare(read);
    }
  }

  #unshare(read: Promise<void>): void {
    if (this.#sharing?.read === read) this.#sharing = undefined;
  }

  /** Whether a read was counted yet: before it, `recent` knows no record. */
  get ready(): boolean {
    return this.#reads > 0;
  }

  /** How many records have been counted (a job's replaced record included). */
  get records(): number {
    return this.#records;
  }

  /** How many lines of the usage records damaged and skipped (a file ledger) may hold a record of [since, until) (`damagedWithin`): missing from its totals. */
  damagedLinesWithin(since: number, until: number): number {
    return damagedWithin(this.#damaged, since, until);
  }

  async #refresh(): Promise<void> {
    const counted = this.#reads;
    const writes = this.#writes;
    const feed = await this.#store.usageSince(this.#cursor);
    // Late: a later read was counted meanwhile, from where this one began; counting this one too would count twice.
    if (counted !== this.#reads) return;
    this.#reads++;
    this.#countedWrites = writes;
    if (feed.reset) this.#clear();
    const first = feed.records[0];
    if (first) for (const line of this.#damaged) line.before ??= first.time;
    for (const line of damagedLinesAt(feed.records, feed.damagedAt ?? [])) this.#damaged.push({ after: line.after ?? this.#lastTime, before: line.before });
    this.#lastTime = feed.records.at(-1)?.time ?? this.#lastTime;
    for (const record of feed.records) this.#add(record);
    this.#cursor = feed.cursor;
    const now = this.#now();
    if (now - this.#prunedAt > HOUR_MS) this.#prune(now);
  }

  #clear(): void {
    this.#days = new Map();
    this.#hours = new Map();
    this.#recent = [];
    this.#byJob = new Map();
    this.#records = 0;
    this.#damaged = [];
    this.#lastTime = undefined;
  }

  #add(record: UsageRecord): void {
    const earlier = this.#byJob.get(record.jobId);
    if (earlier) {
      this.#count(earlier, -1);
      const at = this.#recent.lastIndexOf(earlier);
      if (at >= 0) this.#recent.splice(at, 1);
    }
    this.#count(record, 1);
    this.#records++;
    if (record.time > this.#now() - REPLACEABLE_FOR_MS) this.#byJob.set(record.jobId, record);
    this.#recent.push(record);
    if (this.#recent.length > this.#recentJobs * 1.25) this.#recent = this.#recent.slice(-this.#recentJobs);
  }

  /** The first UTC month whose days keep their totals by scope and user: the last month (so this month's are whole after the 1st). */
  #detailedFrom(): string {
    return utcMonthBefore(this.#now(), 1);
  }

  #count(record: UsageRecord, sign: 1 | -1): void {
    let day = this.#days.get(record.day);
    if (!day) {
      day = { total: zero(), surfaces: new Map(), scopes: new Map(), users: new Map(), members: new Set() };
      this.#days.set(record.day, day);
    }
    addUsage(day.total, record, sign);
    const detailed = record.month >= this.#detailedFrom();
    if (detailed && sign > 0) day.members.add(`${record.userKey} ${record.scopeKey}`);
    for (const [map, key] of [
      [day.surfaces, record.surface],
      ...(detailed
        ? ([
            [day.scopes, record.scopeKey],
            [day.users, record.userKey],
          ] as const)
        : []),
    ] as const) {
      let totals = map.get(key);
      if (!totals) map.set(key, (totals = zero()));
      addUsage(totals, record, sign);
    }
    const hour = Math.floor(record.time / HOUR_MS) * HOUR_MS;
    this.#hours.set(hour, (this.#hours.get(hour) ?? 0) + sign * (record.n ?? 0));
  }

  #prune(now: number): void {
    this.#prunedAt = now;
    for (const [jobId, record] of this.#byJob) if (record.time <= now - REPLACEABLE_FOR_MS) this.#byJob.delete(jobId);
    for (const hour of this.#hours.keys()) if (hour < now - HOURS_KEPT_MS) this.#hours.delete(hour);
    const detailedFrom = this.#detailedFrom();
    for (const [day, totals] of this.#days) {
      if (day.slice(0, 7) >= detailedFrom) continue;
      totals.scopes.clear();
      totals.users.clear();
      totals.members.clear();
    }
  }

  /** One UTC day's totals (`YYYY-MM-DD`), or undefined when nothing was settled for it. */
  day(day: string): DayTotals | undefined {
    return this.#days.get(day);
  }

  /** The totals of every day whose key starts with `prefix` (`YYYY-MM` for a month), merged. */
  period(prefix: string): DayTotals {
    const merged: DayTotals = { total: zero(), surfaces: new Map(), scopes: new Map(), users: new Map(), members: new Set() };
    for (const [day, totals] of this.#days) {
      if (!day.startsWith(prefix)) continue;
      mergeInto(merged.total, totals.total);
      for (const member of totals.members) merged.members.add(member);
      for (const key of ['surfaces', 'scopes', 'users'] as const) {
        for (const [k, t] of totals[key]) {
          let into = merged[key].get(k);
          if (!into) merged[key].set(k, (into = zero()));
          mergeInto(into, t);
        }
      }
    }
    return merged;
  }

  /** Every UTC day with records. */
  days(): string[] {
    return [...this.#days.keys()].sort();
  }

  /** Images asked for by the jobs settled in each hour from `from` (ms, an hour's start) to `to`, oldest first. */
  imagesPerHour(from: number, to: number): { hour: number; images: number }[] {
    const hours: { hour: number; images: number }[] = [];
    for (let hour = Math.floor(from / HOUR_MS) * HOUR_MS; hour < to; hour += HOUR_MS) hours.push({ hour, images: this.#hours.get(hour) ?? 0 });
    return hours;
  }

  /** The last records counted, newest first, those `keep` accepts, at most `limit`. */
  recent(keep: (record: UsageRecord) => boolean, limit: number): UsageRecord[] {
    const found: UsageRecord[] = [];
    for (let i = this.#recent.length - 1; i >= 0 && found.length < limit; i--) {
      const record = this.#recent[i]!;
      if (keep(record)) found.push(record);
    }
    return found;
  }
}

function mergeInto(into: Totals, from: Totals): void {
  into.jobs += from.jobs;
  into.images += from.images;
  into.usd += from.usd;
  into.uncertainUsd += from.uncertainUsd;
}

/** Totals as shown: amounts rounded to the nano-dollar (as `sumUsage` gives them). */
export function rounded(totals: Totals): Totals {
  return { jobs: totals.jobs, images: totals.images, usd: roundToNanoUsd(totals.usd), uncertainUsd: roundToNanoUsd(totals.uncertainUsd) };
}
