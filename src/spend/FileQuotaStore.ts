import { constants, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { access, readFile, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { removeLeftoverTemps, restoreFromBackup, unreadFileOf, unwrittenFileOf, writeFileAtomically } from '../core/atomic-file.js';
import { isPictorError } from '../core/errors.js';
import { describeFileError } from '../core/system-errors.js';
import { capOverrideNanos, CapOverridesFileSchema, type CapOverridesFile } from './cap-overrides.js';
import { LedgerBusyError, LedgerUnreadableError } from './errors.js';
import { FileLockBusyError, withFileLock } from './file-lock.js';
import { breakerStatesIn, countRefusalsIn, emptyLedger, endingGoneIn, inReservationOrder, leasesIn, markAliveIn, firstRefusalDay, parseLedger, reconcileIn, recordedOfGoneIn, reserveIn, restoredIn, resumeIn, sentIn, settleIn, unheldDroppedIn, usedIn } from './ledger-document.js';
import type { LeaseState, Ledger, Reservation } from './ledger-document.js';
import { backupOf, LEDGER_FILES } from './ledger-files.js';
import { fromNanos, periodKey, roundToNanoUsd, toNanos } from './rules.js';
import { createSerialQueue } from './serial-queue.js';
import { safeJson } from '../core/safe-json.js';
import { forgetPromptsIn, StoreProcess } from './store-process.js';
import { DAY_MS, utcDay, utcDayStart } from './utc-period.js';
import type { ActiveJob, BreakerState, CapOverrides, LedgerOptions, LedgerStorage, LegacyBotRecords, LegacyLeft, OverridableCap, QuotaStore, ReconcileReport, RefusalCounts } from './types.js';
import type { ReserveInput, ReserveResult, SettleInfo, UsageFeed, UsageQuery, UsageRecord } from './types.js';
import { appendUsage, dayFileOf, daysIn, dropDaysBefore, feedEpochIn, forgetPromptsIn as forgetPromptFilesIn, moveOldUsageFile, readFrom, readUsage, undefinedIfMissing } from './usage-days.js';
import { damagedLinesAt, damagedWithin, usageMatching } from './usage-records.js';

export interface FileQuotaStoreOptions extends LedgerOptions {
  /** The data folder; created if missing. */
  dir: string;
  /**
   * Told when a step found the ledger file gone or damaged while the process ran and put its backup copy back (as
   * `open()` does, which says so in its answer instead; `brokenCopy`: where the damaged one was moved): the step went on.
   */
  onRestored?: ((restored: { brokenCopy?: string | undefined }) => void) | undefined;
}

const SeenFileSchema = z.object({ version: z.literal(1), seen: z.record(z.string(), z.number()) });
const CAPS_UNREADABLE = "cannot be read (the chat admins' caps)";
const CAP_OVERRIDES_REMEDY = "Fix it or move it away and start again (the operator's caps then apply until chat admins set theirs again).";

/** A change of the ledger: its answer, whether it changed it, its usage record, what may be done only once written; `ended`: jobs settled before it in the commit. */
type Operation<T> = (ledger: Ledger, reconciled: ReconcileReport, ended: Set<string>) => { result: T; changed: boolean; usage?: UsageRecord | undefined; committed?: () => void };

/** The Slack signatures an older version's `slack-replay.json` holds that have not lapsed at `now`, with when each lapses; none when it is missing or damaged. */
async function liveSeenIn(replay: string, now: number): Promise<[id: string, until: number][]> {
  const seen = SeenFileSchema.safeParse(safeJson(await readFile(replay, 'utf8').catch(() => '')));
  return seen.success ? Object.entries(seen.data.seen).filter(([, until]) => until > now) : [];
}

/** Ledgers open in this process: one store per file per process (processes share it through the lock). */
const OPEN_LEDGERS = new Set<string>();

/**
 * The embedded QuotaStore: one JSON file (`ledger-document.ts`) shared by one machine's processes, with its usage
 * records (`usage/`, one file a day: `usage-days.ts`) and `cap-overrides.json` beside it (docs/spend-guard.md, "Without Redis" and "Start checks"). Every change is written
 * before it answers. A commit awaits only its fsyncs: `markSent` stands between the limiter's grant and the send, and
 * each awaited call would wait a turn of a busy event loop.
 */
export class FileQuotaStore implements QuotaStore {
  readonly path: string;
  /** The folder of the usage records (`usage-days.ts`). */
  readonly usagePath: string;
  /** The caps chat admins set per scope (`cap-overrides.json` beside the ledger), written under the ledger's lock. */
  readonly capOverridesPath: string;
  readonly #dir: string;
  readonly #onRestored: FileQuotaStoreOptions['onRestored'];
  readonly #process: StoreProcess<Reservation>;
  readonly #serial = createSerialQueue();
  readonly #pending: { now: number; operation: Operation<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  /** The UTC day (by the store's clock) this process last dropped expired usage records in (once a day). */
  #usagePrunedDay: string | undefined;
  /** The ledger as `#peek` last read it, with the file's identity then (read again only when the file changed). */
  #peeked: { stamp: string; ledger: Ledger } | undefined;
  /** The ledger as this process last wrote it and the file's identity then: taken as it is while no other process wrote since. */
  #written: { stamp: string; ledger: Ledger } | undefined;

  constructor(options: FileQuotaStoreOptions) {
    this.#dir = options.dir;
    this.#onRestored = options.onRestored;
    this.path = resolve(join(options.dir, LEDGER_FILES.ledger));
    if (OPEN_LEDGERS.has(this.path)) {
      throw new Error(`the quota ledger ${this.path} is already open in this process; share one FileQuotaStore between the bots`);
    }
    OPEN_LEDGERS.add(this.path);
    this.usagePath = resolve(join(options.dir, LEDGER_FILES.usage));
    this.capOverridesPath = resolve(join(options.dir, LEDGER_FILES.capOverrides));
    this.#process = new StoreProcess(options, () => this.renewLease());
  }

  get storage(): LedgerStorage {
    return { kind: 'file', dir: resolve(this.#dir) };
  }

  get backupPath(): string {
    return backupOf(this.path);
  }

  /**
   * Checks every file before a surface takes jobs: a damaged ledger or caps file is moved aside and its backup put
   * back (the answer says so), or LedgerUnreadableError names it (one that cannot be read: untouched); the `usage/` folder must be readable
   * and writable. An older version's `usage.jsonl` is moved into it (`moveOldUsageFile`; the answer says how many records).
   */
  open(): Promise<{ restoredFromBackup: boolean; brokenCopy?: string | undefined; restoredCapOverrides?: boolean | undefined; movedUsage?: { records: number; damaged: number } | undefined }> {
    return this.#serial(() =>
      this.#locked(async () => {
        // What a write a crash stopped left (each a whole version, prompts too): every write of them takes the lock.
        await removeLeftoverTemps(this.#dir, Object.values(LEDGER_FILES));
        const movedUsage = await moveOldUsageFile(this.#dir, LEDGER_FILES.oldUsage, LEDGER_FILES.usage);
        await this.#checkUsageFolder();
        const unreadable = (cause: unknown) => new LedgerUnreadableError(this.capOverridesPath, CAPS_UNREADABLE, { cause, remedy: CAP_OVERRIDES_REMEDY });
        const caps = await this.#restore(this.capOverridesPath, (text) => CapOverridesFileSchema.safeParse(safeJson(text)).success, undefined, { unreadable, of: "the chat admins' caps", remedy: CAP_OVERRIDES_REMEDY });
        await this.#readCapOverrides();
        const ledger = await this.#restoreLedger();
        await this.#load();
        return { restoredFromBackup: ledger.restored, brokenCopy: ledger.brokenCopy, ...(caps.restored && { restoredCapOverrides: true }), ...(movedUsage && { movedUsage }) };
      }),
    );
  }

  /**
   * Held from the moment its commit is written (as a settle or release lets go of its job then): the next commit drops
   * this process's reservations it does not hold. One asked before `close` and reached under the lock after it (waiting
   * for another process's commit) writes nothing and is refused; one the store closed while its commit was being
   * written is refused too: no lease would keep it.
   */
  async reserve(input: ReserveInput): Promise<ReserveResult> {
    const answer = await this.#update<ReserveResult>(input.now, (ledger) => {
      // Under the lock, before anything is written: a store closed while this waited for the lock reserves nothing.
      this.#process.assertOpen();
      const refusal = reserveIn(ledger, input, this.#process.owner, this.#process.keepDays);
      // A refusal that tripped the breaker paused the scope: that is a change to write.
      if (refusal) return { result: refusal, changed: refusal.tripped === true };
      markAliveIn(ledger, this.#process.owner, this.#process.clock());
      const copy = { ...ledger.reservations[input.jobId]! };
      const committed = () => {
        if (!this.#process.closed) this.#process.hold(input.jobId, copy);
      };
      return { result: { ok: true }, changed: true, committed };
    });
    if (answer.ok) this.#process.assertOpen();
    return answer;
  }

  markSent(jobId: string): Promise<void> {
    const now = this.#process.clock();
    return this.#update(now, (ledger, _reconciled, ended) => {
      // A job settled earlier in this commit finds its copy still held: ended, not lost.
      const copy = ended.has(jobId) ? undefined : this.#process.held.get(jobId);
      const { changed, lost } = sentIn(ledger, jobId, copy, this.#process.owner, now);
      return { result: undefined, changed, ...(lost && { committed: () => this.#process.lost(jobId, copy!, 'send', undefined) }) };
    });
  }

  markUnsent(jobId: string): Promise<void> {
    return this.#update(this.#process.clock(), (ledger) => {
      const reservation = ledger.reservations[jobId];
      const changed = reservation?.sent === true;
      if (changed) reservation.sent = false;
      return { result: undefined, changed };
    });
  }

  async settle(jobId: string, actualUsd: number, info: SettleInfo = {}): Promise<boolean> {
    toNanos('actualUsd', actualUsd);
    const now = this.#process.clock();
    return this.#update(now, (ledger, _reconciled, ended) => {
      // A settle of a job settled earlier in this commit finds its copy still held: ended, not lost.
      const copy = ended.has(jobId) ? undefined : this.#process.held.get(jobId);
      const settled = settleIn(ledger, jobId, actualUsd, info, now, copy);
      if (settled) ended.add(jobId);
      const committed = () => {
        this.#process.held.delete(jobId);
        if (settled?.lost) this.#process.lost(jobId, copy!, 'settle', roundToNanoUsd(actualUsd));
      };
      return { result: settled !== undefined, changed: settled !== undefined, usage: settled?.usage, committed };
    });
  }

  release(jobId: string): Promise<void> {
    return this.#update(this.#process.clock(), (ledger) => {
      const changed = ledger.reservations[jobId] !== undefined;
      delete ledger.reservations[jobId];
      // Dropped once written, as a settle's: a release whose write failed leaves the reservation in the file, still held.
      return { result: undefined, changed, committed: () => this.#process.held.delete(jobId) };
    });
  }

  /** Counts the reservations of gone processes as their end will (`#endingGone`), as Redis ends them before it reads. */
  spentToday(key: string, now: number): Promise<number> {
    return this.#readLocked(async () => usedIn(await this.#endingGone(await this.#load(), now), key, 'day', now));
  }

  spentThisMonth(key: string, now: number): Promise<number> {
    return this.#readLocked(async () => usedIn(await this.#endingGone(await this.#load(), now), key, 'month', now));
  }

  /** From the ledger as last written, without the lock (`#peek`): one read however many keys, counted as `spentToday` counts. */
  async spentMany(keys: readonly string[], now: number): Promise<Map<string, { day: number; month: number }>> {
    const ledger = await this.#endingGone(await this.#peek(), now);
    return new Map(keys.map((key) => [key, { day: usedIn(ledger, key, 'day', now), month: usedIn(ledger, key, 'month', now) }]));
  }

  async settledKeys(now: number): Promise<string[]> {
    return Object.keys((await this.#peek()).spent[periodKey('month', now)] ?? {});
  }

  reconcile(now: number): Promise<ReconcileReport> {
    this.#process.reconcileEachLease(() => this.reconcile(this.#process.clock()));
    return this.#update(now, (_ledger, reconciled) => ({ result: reconciled, changed: false }));
  }

  usage(query: UsageQuery): Promise<UsageRecord[]> {
    // A record matches by its job's day (a damaged line too, `damagedWithin`), and is written when it is settled: the
    // day files read start a day before the day of since.
    const since = query.since === undefined ? undefined : utcDayStart(query.since);
    return this.#readLocked(async () => {
      const { records, damaged } = await readUsage(this.usagePath, since === undefined ? undefined : utcDay(since - DAY_MS), true);
      query.onDamagedLines?.(damagedWithin(damagedLinesAt(records, damaged), since, query.until));
      return usageMatching(records, query);
    });
  }

  capOverrides(scopeKey: string): Promise<CapOverrides> {
    return this.#readLocked(async () => ({ ...(await this.#readCapOverrides()).scopes[scopeKey] }));
  }

  async setCapOverride(scopeKey: string, cap: OverridableCap, usd: number | undefined, changedBy: string, now: number): Promise<{ previousUsd: number | undefined }> {
    const nanos = capOverrideNanos(cap, usd);
    return this.#readLocked(async () => {
      const file = await this.#readCapOverrides();
      const scope = (file.scopes[scopeKey] ??= {});
      const previousUsd = scope[cap]?.usd;
      if (nanos === undefined) delete scope[cap];
      else scope[cap] = { usd: fromNanos(nanos), by: changedBy, at: now };
      if (Object.keys(scope).length === 0) delete file.scopes[scopeKey];
      await this.#writeCapOverrides(file);
      return { previousUsd };
    });
  }

  async allCapOverrides(): Promise<Record<string, CapOverrides>> {
    // Replaced whole (rename) like the ledger: read without the lock.
    return structuredClone((await this.#readCapOverrides()).scopes);
  }

  async activeJobs(): Promise<ActiveJob[]> {
    const ledger = await this.#peek();
    return inReservationOrder(
      Object.entries(ledger.reservations).map(([jobId, r]): ActiveJob => ({ jobId, userKey: r.userKey, scopeKey: r.scopeKey, usd: r.usd, at: r.at, sent: r.sent, owner: r.owner, ...(r.job && { job: r.job }) })),
    );
  }

  /**
   * After `cursor` (`e<feed epoch>/<day>:<byte offset>` in that day's file), without the lock: appends are whole lines
   * written under it, and only complete lines are read. Everything is read again (`reset`) for a cursor of another
   * form (an older version's), after the feed epoch went up (a forget removed prompts the reader may keep, or records
   * went to a day before the newest, or the clean-up removed a day: its file may be made again under the cursor), or
   * when the records at and after it are gone (the folder was emptied: a feed epoch file made again starts at a random
   * value, which an old cursor does not hold).
   */
  async usageSince(cursor: string | undefined): Promise<UsageFeed> {
    this.#process.assertOpen();
    const epoch = feedEpochIn(this.usagePath);
    const [, readAt, day = '', offset = '0'] = /^e(\d+)\/(\d{4}-\d{2}-\d{2}):(\d+)$/.exec(cursor ?? '') ?? [];
    const days = daysIn(this.usagePath);
    const size = day === '' ? undefined : statSync(dayFileOf(this.usagePath, day), { throwIfNoEntry: false })?.size;
    const gone = size === undefined ? !days.some((d) => d > day) : size < Number(offset);
    const reset = cursor !== undefined && cursor !== '0:0' && (day === '' || Number(readAt) !== epoch || gone);
    const from = reset || day === '' ? { day: '', at: 0 } : { day, at: Number(offset) };
    const files = days.filter((d) => d >= from.day).map((d) => ({ day: d, at: d === from.day ? from.at : 0 }));
    const { parsed, end } = await readFrom(this.usagePath, files, true);
    const next = end ? `e${epoch}/${end.day}:${end.at}` : from.day === '' ? '0:0' : `e${epoch}/${from.day}:${from.at}`;
    return { records: parsed.records, cursor: next, reset, damagedAt: parsed.damaged };
  }

  countRefusals(counts: Readonly<Record<string, number>>, now: number): Promise<void> {
    return this.#update(now, (ledger) => {
      countRefusalsIn(ledger, counts, now);
      return { result: undefined, changed: Object.values(counts).some((n) => n > 0) };
    });
  }

  async refusals(sinceDay: string): Promise<RefusalCounts> {
    const ledger = await this.#peek();
    const from = firstRefusalDay(sinceDay, this.#process.clock());
    return Object.fromEntries(Object.entries(ledger.refusals ?? {}).filter(([day]) => day >= from));
  }

  async breakerStates(): Promise<Record<string, BreakerState>> {
    return breakerStatesIn(await this.#peek());
  }

  resumeScope(scopeKey: string, by: string, now: number): Promise<BreakerState | undefined> {
    return this.#update(now, (ledger) => {
      const before = resumeIn(ledger, scopeKey, by, now);
      return { result: before, changed: before !== undefined };
    });
  }

  async forgetPrompts(userKey: string): Promise<void> {
    await this.#readLocked(async () => {
      const ledger = await this.#load();
      forgetPromptsIn(Object.values(ledger.reservations), userKey);
      this.#process.forgetPrompts(userKey);
      // Twice: the backup copy is the version before, which may hold them too.
      await this.#write(ledger);
      await this.#write(ledger);
      await removeLeftoverTemps(this.#dir, Object.values(LEDGER_FILES));
      // Their prompts of usage records are files of their own: removed, nothing else rewritten; first those of a
      // usage.jsonl an older version's process made again are moved to them.
      await moveOldUsageFile(this.#dir, LEDGER_FILES.oldUsage, LEDGER_FILES.usage);
      await forgetPromptFilesIn(this.usagePath, userKey);
    });
  }

  /** The chat settings older versions kept in `cap-overrides.json`, and their `slack-replay.json` (`accept` runs outside the lock). */
  async takeLegacy(accept: (records: LegacyBotRecords) => Promise<LegacyLeft | void>): Promise<void> {
    const replay = join(this.#dir, LEDGER_FILES.replay);
    const taken = await this.#readLocked(async () => {
      const settings = (await this.#readCapOverrides()).settings ?? {};
      return { settings, seen: (await liveSeenIn(replay, this.#process.clock())).map(([id]) => id) };
    });
    const notTaken = new Set((await accept(taken))?.settingsOf);
    // Removed only once `accept` succeeded: a hand-over that fails leaves them for the next take. Only what was handed
    // over and taken: a setting an older version's process wrote meanwhile (its own lock), or of a scope `accept` left, stays for the next take.
    await this.#readLocked(async () => {
      const file = await this.#readCapOverrides();
      const handed = (scopeKey: string, name: string, entry: unknown) => !notTaken.has(scopeKey) && JSON.stringify(taken.settings[scopeKey]?.[name]) === JSON.stringify(entry);
      const left = Object.entries(file.settings ?? {}).flatMap(([scopeKey, entries]) => {
        const kept = Object.entries(entries).filter(([name, entry]) => !handed(scopeKey, name, entry));
        return kept.length > 0 ? [[scopeKey, Object.fromEntries(kept)] as const] : [];
      });
      if (file.settings) {
        if (left.length > 0) file.settings = Object.fromEntries(left);
        else delete file.settings;
        // Twice, so the backup copy no longer has them either (they live in the bots' state now).
        await this.#writeCapOverrides(file);
        await this.#writeCapOverrides(file);
      }
      // The signatures too: one an older version's process noted meanwhile (and not yet lapsed) stays for the next take.
      const handedIds = new Set(taken.seen);
      const seenLeft = (await liveSeenIn(replay, this.#process.clock())).filter(([id]) => !handedIds.has(id));
      if (seenLeft.length > 0) await writeFileAtomically(replay, JSON.stringify({ version: 1, seen: Object.fromEntries(seenLeft) }));
      else await rm(replay, { force: true });
    });
  }

  /** Renews the lease now, while this process holds reservations (the timer does it every third of `leaseMs`); once closed, nothing. */
  renewLease(): Promise<void> {
    if (this.#process.held.size === 0 || this.#process.closed) return Promise.resolve();
    const now = this.#process.clock();
    return this.#update(now, (ledger) => {
      markAliveIn(ledger, this.#process.owner, now);
      return { result: undefined, changed: true };
    });
  }

  /** Waits for pending operations and stops renewing the lease; later calls fail. */
  async close(): Promise<void> {
    if (this.#process.closed) return;
    this.#process.close();
    await this.#serial(async () => undefined);
    OPEN_LEDGERS.delete(this.path);
  }

  /** Whose lease holds, by this process's clock: leases are not the time a job counts in (`leasesIn`). */
  #leases(ledger: Ledger): (owner: string) => LeaseState {
    return leasesIn(ledger, this.#process.owner, this.#process.clock(), this.#process.leaseMs);
  }

  /** The ledger as the next commit's reconcile will leave it (`endingGoneIn`: not to be changed). */
  async #endingGone(ledger: Ledger, now: number): Promise<Ledger> {
    const lease = this.#leases(ledger);
    return endingGoneIn(ledger, lease, now, await recordedOfGoneIn(ledger, lease, (from) => this.#readUsage(from)));
  }

  async #update<T>(now: number, operation: Operation<T>): Promise<T> {
    this.#process.assertOpen();
    return new Promise<T>((resolve, reject) => {
      // Operations waiting means a flush is waiting too (it takes them all as it begins).
      const flushing = this.#pending.length > 0;
      this.#pending.push({ now, operation, resolve: resolve as (value: unknown) => void, reject });
      if (!flushing) void this.#serial(() => this.#flush());
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#pending.splice(0);
    try {
      const { outcomes, report } = await this.#locked(async () => {
        const ledger = await this.#load();
        let dirty = false;
        const usage: UsageRecord[] = [];
        // The reservations of gone processes are ended once per commit, as of its latest operation (whose process is
        // alive is asked once per owner): every operation of the commit then sees the same ledger.
        const now = batch.reduce((latest, op) => Math.max(latest, op.now), Number.NEGATIVE_INFINITY);
        const lease = this.#leases(ledger);
        const reconciled = reconcileIn(ledger, lease, now, await recordedOfGoneIn(ledger, lease, (from) => this.#readUsage(from)));
        if (reconciled.changed) dirty = true;
        // Its own ended jobs a restore by any process brought back: dropped as a restore of its own drops them.
        if (unheldDroppedIn(ledger, this.#process.owner, (jobId) => this.#process.held.has(jobId))) dirty = true;
        usage.push(...reconciled.usage);
        const ended = new Set<string>();
        const outcomes = batch.map(({ operation }) => {
          try {
            // An operation that throws does so before it changes anything (unknown job, duplicate, bad amount).
            const { result, changed, usage: record, committed } = operation(ledger, reconciled.report, ended);
            if (changed) dirty = true;
            if (record) usage.push(record);
            return { ok: true as const, result, committed };
          } catch (error) {
            return { ok: false as const, error };
          }
        });
        // Usage first: a crash between the two leaves a record whose settle the ledger lacks; when its dead process is
        // met, the job is charged what that record says (`reconcileIn`), not its estimate, and no record is added.
        if (dirty) await appendUsage(this.usagePath, this.#process.clock(), usage);
        if (dirty) await this.#write(ledger);
        // The first commit that writes in a UTC day other than the last clean-up's (by the store's clock, the one the
        // records' times are written by; either way: a clock that jumped ahead and back) drops the days past retention:
        // whole days, a few unlinks, at whatever hour the day's first write comes. A failure is told to `onError`; the
        // commit stands.
        const today = utcDay(this.#process.clock());
        if (dirty && today !== this.#usagePrunedDay) {
          this.#usagePrunedDay = today;
          await this.#cleanUpUsage();
        }
        return { outcomes, report: reconciled.report };
      });
      // What the commit ended of gone processes' reservations, told once, whichever operations it wrote.
      this.#process.reconciled(report);
      outcomes.forEach((outcome, i) => {
        if (!outcome.ok) return batch[i]!.reject(outcome.error);
        outcome.committed?.();
        batch[i]!.resolve(outcome.result);
      });
    } catch (error) {
      for (const op of batch) op.reject(error);
    }
  }

  #readLocked<T>(task: () => Promise<T>): Promise<T> {
    return this.#serial(async () => {
      this.#process.assertOpen();
      return this.#locked(task);
    });
  }

  #locked<T>(task: () => Promise<T>): Promise<T> {
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    return withFileLock(`${this.path}.lock`, task).catch((error: unknown) => {
      // The lock's own error names a file; the ledger's says what waits on it (nothing was sent).
      throw error instanceof FileLockBusyError ? new LedgerBusyError(error) : (unusableFileError(error) ?? error);
    });
  }

  /** The `usage/` folder must be a folder this process can read and add files to (or not exist yet). */
  async #checkUsageFolder(): Promise<void> {
    try {
      const info = await stat(this.usagePath);
      if (!info.isDirectory()) throw new Error('not a folder');
      await access(this.usagePath, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new LedgerUnreadableError(this.usagePath, 'is not a readable and writable folder (the usage records of settled jobs)', {
        cause,
        remedy: 'Move it away (or give this user access to it) and start again: spending is still counted by the ledger, but pictor usage and the chat usage summaries lose the records it held.',
      });
    }
  }

  /** The daily clean-up (under the lock): the day files and prompt folders of days past retention go, whole days only. */
  async #cleanUpUsage(): Promise<void> {
    try {
      await dropDaysBefore(this.usagePath, utcDay(this.#process.clock() - this.#process.usageRetentionMs));
    } catch (cause) {
      try {
        this.#process.onError?.(new Error('could not drop expired usage records', { cause }));
      } catch {
        // A hook that throws has no one left to tell: the commit stands.
      }
    }
  }

  /**
   * The one restore of the ledger, at `open()` and when a step finds the file gone or damaged while the process runs:
   * a good backup copy takes the place of a missing or damaged ledger (`restoreFromBackup`, which moves a damaged
   * one aside), brought up to what the usage records and this process's reservations say since (`restoredIn`) before one
   * write puts it in place: a crash never leaves the copy there without the charges recorded since, and usage records
   * that cannot be read stops it, nothing changed. Run under the lock: the ledger found good (the file's, or the one
   * put in its place) is kept as read.
   */
  async #restoreLedger(): Promise<{ restored: boolean; brokenCopy?: string | undefined }> {
    let good: Ledger | undefined;
    const check = (text: string) => {
      const parsed = parseLedger(safeJson(text));
      if (parsed.ok) good = parsed.ledger;
      return parsed.ok;
    };
    // Run once the backup copy's text passed the check: its ledger as the check parsed it (`good`), brought up to date, is what is written and kept.
    const restored = async () => {
      const records = await this.#readUsage().catch((cause: unknown) => {
        throw new LedgerUnreadableError(this.usagePath, 'cannot be read (the usage records of settled jobs), so the backup copy of the spend ledger was not put back', {
          cause,
          remedy: `Nothing was changed: make it readable and try again. Moving it away instead puts ${this.backupPath} back without the charges recorded since it was written: they go uncounted.`,
        });
      });
      const { owner, held } = this.#process;
      const copy = good!;
      restoredIn(copy, records, this.#process.clock() - this.#process.keepDays * DAY_MS, owner, (jobId) => held.has(jobId));
      return JSON.stringify(copy);
    };
    const remedy = 'Nothing was changed: give this user access to it and try again, or move it away (the ledger then has no copy to fall back on).';
    const answer = await this.#restore(this.path, check, restored, { unreadable: (cause) => this.#unreadable(cause), of: `the spend ledger ${this.path}`, remedy });
    if (good) this.#keep(good);
    return answer;
  }

  /** `restoreFromBackup` of `path` and its `backupOf`, one path for both files kept so: either that exists but cannot be read is named so (`unreadable`, or as the backup copy of `of`), not as damaged, nothing touched. */
  #restore(path: string, good: (text: string) => boolean, restored: ((backup: string) => Promise<string>) | undefined, named: { unreadable: (cause: unknown) => Error; of: string; remedy: string }) {
    const backupPath = backupOf(path);
    return restoreFromBackup(path, backupPath, good, { now: this.#process.clock(), restored }).catch((cause: unknown) => {
      const unread = unreadFileOf(cause);
      if (unread === path) throw named.unreadable(cause);
      if (unread !== backupPath) throw cause;
      throw new LedgerUnreadableError(backupPath, `cannot be read (the backup copy of ${named.of}), so it was neither checked nor put back`, { cause, remedy: named.remedy });
    });
  }

  /**
   * The ledger (an empty one when there is none yet); one missing or damaged beside its backup copy (deleted or damaged
   * while the process runs) is put back as at start (`#restoreLedger`) and told (`onRestored`). Throws
   * LedgerUnreadableError naming what is wrong when it cannot be.
   */
  async #load(): Promise<Ledger> {
    const written = this.#written;
    if (written && fileStamp(this.path) === written.stamp) return written.ledger;
    this.#written = undefined;
    const text = this.#readText();
    const read = text === undefined ? undefined : readLedger(text);
    if (read?.ok) return read.ledger;
    const hasBackup = existsSync(this.backupPath);
    if (!read && !hasBackup) return emptyLedger();
    const restored = hasBackup ? await this.#restoreLedger() : { restored: false };
    if (restored.restored) {
      this.#onRestored?.({ brokenCopy: restored.brokenCopy });
      return this.#load();
    }
    if (read) throw new LedgerUnreadableError(this.path, read.problem, { cause: read.cause });
    throw new LedgerUnreadableError(this.path, `is missing, and its backup copy ${this.backupPath} is damaged (not a spend ledger)`, {
      remedy: 'Restore a copy of the ledger, or move the backup copy away to start counting spending from zero (caps then ignore what was already spent).',
    });
  }

  /** The ledger file's text, undefined when there is none; one that exists but cannot be read is named so (`#unreadable`), with or without the lock. */
  #readText(): string | undefined {
    try {
      return readIfExists(this.path);
    } catch (cause) {
      throw this.#unreadable(cause);
    }
  }

  /** The ledger file exists but cannot be read (its permissions, a disk error): not damaged, so its backup copy is not put in its place. */
  #unreadable(cause: unknown): LedgerUnreadableError {
    return new LedgerUnreadableError(this.path, 'cannot be read (the spend ledger), so neither it nor its backup copy was touched', {
      cause,
      remedy: `Nothing was changed: give this user access to it (or mend the disk) and try again. Moving it away instead puts ${this.backupPath} back.`,
    });
  }

  /** The ledger as last written, without the lock (replaced whole by rename), read again only when the file changed: not to be changed. */
  async #peek(): Promise<Ledger> {
    this.#process.assertOpen();
    const stamp = fileStamp(this.path);
    // Gone beside its backup copy (or damaged, below): the locked read puts it back.
    if (stamp === undefined) return existsSync(this.backupPath) ? this.#readLocked(() => this.#load()) : emptyLedger();
    if (this.#peeked?.stamp === stamp) return this.#peeked.ledger;
    // Checked as a locked step checks it (`readLedger`, once per change of the file): one that fails is put back or named under the lock.
    const parsed = readLedger(this.#readText() ?? '');
    if (!parsed.ok) return this.#readLocked(() => this.#load());
    this.#peeked = { stamp, ledger: parsed.ledger };
    return parsed.ledger;
  }

  async #write(ledger: Ledger): Promise<void> {
    // Until the write is done the file is not known to be this ledger (a failed write: read again next time).
    this.#written = undefined;
    await writeFileAtomically(this.path, JSON.stringify(ledger), { backupPath: this.backupPath, inline: true });
    this.#keep(ledger);
  }

  /** Takes `ledger` as what the file holds now (just written or read under the lock), until the file changes. */
  #keep(ledger: Ledger): void {
    const stamp = fileStamp(this.path);
    this.#written = stamp === undefined ? undefined : { stamp, ledger };
  }

  /** The records of the day files that can hold those from `from` on (all without it), in the order written. */
  async #readUsage(from?: number): Promise<UsageRecord[]> {
    return (await readUsage(this.usagePath, from === undefined ? undefined : utcDay(from))).records;
  }

  /** `cap-overrides.json`, or none set when it does not exist; an unreadable one is an error naming it (never silently dropped). */
  async #readCapOverrides(): Promise<CapOverridesFile> {
    const unreadable = (problem: string, cause: unknown) => new LedgerUnreadableError(this.capOverridesPath, problem, { cause, remedy: CAP_OVERRIDES_REMEDY });
    let text: string | undefined;
    try {
      text = readIfExists(this.capOverridesPath);
    } catch (error) {
      throw unreadable(CAPS_UNREADABLE, error);
    }
    if (text === undefined) return { version: 1, scopes: {} };
    const parsed = CapOverridesFileSchema.safeParse(safeJson(text));
    if (parsed.success) return parsed.data;
    throw unreadable("is damaged (the chat admins' caps), and no good backup copy (.bak) is beside it", parsed.error);
  }

  async #writeCapOverrides(file: CapOverridesFile): Promise<void> {
    await writeFileAtomically(this.capOverridesPath, JSON.stringify(file), { backupPath: backupOf(this.capOverridesPath) });
  }
}

/** File-system errors that last until the operator mends something: a folder or a file in the way, no access, a read-only or full disk. */
const LASTING_FILE_ERRORS = new Set(['EISDIR', 'ENOTDIR', 'EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT']);

/**
 * The one mapping of a file-system error met by a step under the lock (a write of the ledger, its backup copy,
 * a usage file or the caps, or the lock itself: a folder in a file's place, a full disk, no permission) to the refusal
 * of a ledger file the process cannot use, naming that file (not the temporary file a write was making); undefined
 * for any other error. Only the operator can mend it: the CLI exits 2, and the bots tell the member to ask the operator
 * rather than failing every job as if the service had.
 */
function unusableFileError(error: unknown): LedgerUnreadableError | undefined {
  if (isPictorError(error) || !(error instanceof Error)) return undefined;
  const { code, syscall, path } = error as NodeJS.ErrnoException;
  // Only what lasts until someone mends it; a passing error (EAGAIN, EINTR, EMFILE, EIO) stays the error it is, which the next try may not meet.
  if (typeof code !== 'string' || typeof syscall !== 'string' || !LASTING_FILE_ERRORS.has(code)) return undefined;
  const file = unwrittenFileOf(error) ?? path;
  if (file === undefined) return undefined;
  return new LedgerUnreadableError(file, `cannot be used (a file of the spend ledger): ${describeFileError(error)} (${syscall})`, {
    cause: error,
    remedy: 'Make it a file this user can read and write (move away what is in its place, free disk space, or give access), then try again.',
  });
}

/** A file's identity and version (inode, size, modification time), or undefined when it does not exist. */
function fileStamp(path: string): string | undefined {
  const info = statSync(path, { throwIfNoEntry: false });
  return info && `${info.ino}:${info.size}:${info.mtimeMs}`;
}

/** A file's text, or undefined when it does not exist (read at once: see the class's doc on awaited calls). */
function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    return undefinedIfMissing(error as NodeJS.ErrnoException);
  }
}

/** The ledger a file's text holds, or what is wrong with it. */
function readLedger(text: string): { ok: true; ledger: Ledger } | { ok: false; problem: string; cause?: unknown } {
  if (text.trim() === '') return { ok: false, problem: 'is empty' };
  const json = safeJson(text);
  if (json === undefined) return { ok: false, problem: 'is not JSON (truncated or damaged)' };
  const parsed = parseLedger(json);
  return parsed.ok ? parsed : { ok: false, problem: 'is not a spend ledger (unknown shape)', cause: parsed.cause };
}
