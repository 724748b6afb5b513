import { closeSync, constants, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { access, open as openFile, readFile, rm, stat, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { removeLeftoverTemps, restoreFromBackup, unreadFileOf, unwrittenFileOf, writeAllAndSync, writeFileAtomically } from '../core/atomic-file.js';
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
import { DAY_MS, utcDayStart } from './utc-period.js';
import type { ActiveJob, BreakerState, CapOverrides, LedgerOptions, LedgerStorage, LegacyBotRecords, OverridableCap, QuotaStore, ReconcileReport, RefusalCounts } from './types.js';
import type { ReserveInput, ReserveResult, SettleInfo, UsageFeed, UsageQuery, UsageRecord } from './types.js';
import { damagedLinesAt, damagedWithin, usageMatching, UsageRecordSchema, withoutPromptOf } from './usage-records.js';

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

/** Lines of `usage.jsonl` as a rewrite leaves them, and whether it changed any. */
interface Rewritten {
  lines: string[];
  changed: boolean;
}

/**
 * A rewrite of `usage.jsonl` made ready without the lock (`#lookThroughUsage`; a forget's, the daily clean-up's), for
 * `#commitUsageRewrite` to finish under it.
 */
export interface UsageLook {
  seen: { file: string; size: number; bytes: Buffer };
  /** Where the last whole line seen ends. */
  end: number;
  /** The whole lines seen, rewritten, and whether that changed any. */
  ready: Rewritten;
}

/** What a forget's look through `usage.jsonl` found (`FileQuotaStore.lookForPromptsOf`). */
export interface ForgetLook extends UsageLook {
  /** The member's id as JSON writes it, without its quotes. */
  key: string;
}

/** Ledgers open in this process: one store per file per process (processes share it through the lock). */
const OPEN_LEDGERS = new Set<string>();

/**
 * The embedded QuotaStore: one JSON file (`ledger-document.ts`) shared by one machine's processes, with `usage.jsonl`
 * and `cap-overrides.json` beside it (docs/spend-guard.md, "Without Redis" and "Start checks"). Every change is written
 * before it answers. A commit awaits only its fsyncs: `markSent` stands between the limiter's grant and the send, and
 * each awaited call would wait a turn of a busy event loop.
 */
export class FileQuotaStore implements QuotaStore {
  readonly path: string;
  readonly usagePath: string;
  /** The caps chat admins set per scope (`cap-overrides.json` beside the ledger), written under the ledger's lock. */
  readonly capOverridesPath: string;
  readonly #dir: string;
  readonly #onRestored: FileQuotaStoreOptions['onRestored'];
  readonly #process: StoreProcess<Reservation>;
  readonly #serial = createSerialQueue();
  readonly #pending: { now: number; operation: Operation<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void }[] = [];
  /** When this process last dropped expired usage records (at most once a day). */
  #usagePrunedAt = Number.NEGATIVE_INFINITY;
  /** The daily clean-up under way, if any (`#cleanUpUsage`): `close` waits for it. */
  #cleaning: Promise<void> | undefined;
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
   * back (the answer says so), or LedgerUnreadableError names it (one that cannot be read: untouched); `usage.jsonl` must be readable (torn lines are skipped).
   */
  open(): Promise<{ restoredFromBackup: boolean; brokenCopy?: string | undefined; restoredCapOverrides?: boolean | undefined }> {
    return this.#serial(() =>
      this.#locked(async () => {
        // What a write a crash stopped left (each a whole version, prompts too): every write of them takes the lock.
        await removeLeftoverTemps(this.#dir, Object.values(LEDGER_FILES));
        await this.#checkUsageFile();
        const unreadable = (cause: unknown) => new LedgerUnreadableError(this.capOverridesPath, CAPS_UNREADABLE, { cause, remedy: CAP_OVERRIDES_REMEDY });
        const caps = await this.#restore(this.capOverridesPath, (text) => CapOverridesFileSchema.safeParse(safeJson(text)).success, undefined, { unreadable, of: "the chat admins' caps", remedy: CAP_OVERRIDES_REMEDY });
        await this.#readCapOverrides();
        const ledger = await this.#restoreLedger();
        await this.#load();
        return { restoredFromBackup: ledger.restored, brokenCopy: ledger.brokenCopy, ...(caps.restored && { restoredCapOverrides: true }) };
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
    // A record matches by its job's day (a damaged line too, `damagedWithin`): the tail read starts a day before the start of the day of since.
    const since = query.since === undefined ? undefined : utcDayStart(query.since);
    const from = since === undefined ? undefined : since - DAY_MS;
    return this.#readLocked(async () => {
      const { records, damaged } = await this.#readUsageLines(from);
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
   * After `cursor` (`<rewrite id>/<inode>:<byte offset>`), without the lock: appends are whole lines written under it,
   * and only complete lines are read. A file rewritten since (pruned, prompts forgotten: a new rewrite id, even when
   * the file system handed the new file the old one's inode and it grew past the offset), another file, or one shorter
   * than the cursor is read whole (`reset`). A file an older version wrote has no rewrite id (`''`), as its cursors
   * (`<inode>:<byte offset>`) had: they hold until its first rewrite.
   */
  async usageSince(cursor: string | undefined): Promise<UsageFeed> {
    this.#process.assertOpen();
    // No cursor, or one from before the file existed (`0:0`): from its start, as a first read.
    const fresh = (cursor ?? '0:0') === '0:0';
    const [, cursorFile, cursorOffset] = /^(.*):(\d+)$/s.exec(cursor ?? '') ?? [];
    const at = fresh ? 0 : Number(cursorOffset ?? 0);
    let read = await this.#readUsageBytes(at);
    if (read.file === '') return { records: [], cursor: '0:0', reset: !fresh, damagedAt: [] };
    const reset = !fresh && ((cursorFile?.includes('/') ? cursorFile : `/${cursorFile}`) !== read.file || !(at <= read.size));
    if (reset) read = await this.#readUsageBytes(0);
    // A short read only leaves more lines for the next call: the cursor stops after the last whole line read.
    const end = read.bytes.lastIndexOf(0x0a) + 1;
    const { records, damaged } = parseUsageLines(read.bytes.toString('utf8', 0, end));
    return { records, cursor: `${read.file}:${(reset ? 0 : at) + end}`, reset, damagedAt: damaged };
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
    });
    // usage.jsonl is looked through and its rewrite made ready without the lock (appends are whole lines written under
    // it): every step of every process waits only for the lines appended since and the write, and not at all when
    // nothing of theirs is in it (200,000 records: bench/file-forget.ts).
    const look = await this.lookForPromptsOf(userKey);
    if (!look) return;
    await this.#readLocked(() => this.#commitUsageRewrite(look, (text) => withoutPromptsOf(text, look.key, userKey)));
  }

  /**
   * The look of `forgetPrompts` through `usage.jsonl`, without the lock: the file as seen (its bytes and which file
   * they are of), where its last whole line ends, and those lines with the member's prompts erased; undefined when
   * nothing in it may be theirs. Another process may append to the file or rewrite it before the lock is taken.
   */
  async lookForPromptsOf(userKey: string): Promise<ForgetLook | undefined> {
    const key = JSON.stringify(userKey).slice(1, -1);
    // Nothing naming them (the cheap check first): nothing to rewrite.
    const look = await this.#lookThroughUsage((text) => withoutPromptsOf(text, key, userKey), (bytes) => bytes.includes(key));
    // After the last whole line: one being written, or one a crash cut short (theirs or not: decided under the lock).
    return look && (look.ready.changed || look.seen.bytes.includes(key, look.end)) ? { ...look, key } : undefined;
  }

  /**
   * The daily clean-up's look through `usage.jsonl`, without the lock: its whole lines without the records past
   * retention as of `now`; undefined when none is.
   */
  async lookForExpiredUsage(now: number): Promise<UsageLook | undefined> {
    const look = await this.#lookThroughUsage(withoutExpiredInTurns(now - this.#process.usageRetentionMs));
    return look?.ready.changed ? look : undefined;
  }

  /**
   * The daily clean-up (on a process's first commit of the day that writes), made ready without the lock as a forget's
   * rewrite is (`#commitUsageRewrite`): every step of every process waits only for the lines appended since and the
   * write, and not at all when no record is past retention (200,000 records: bench/file-prune.ts). It runs behind the
   * commit that started it, whose steps have answered (a reserve is decided within a chat's deadline whatever the
   * file's size); one at a time, and `close` waits for it. A failure is told to `onError`: that commit is written, and a
   * hook that throws fails no step and no `close` either.
   */
  #cleanUpUsage(now: number): Promise<void> {
    // One at a time: after the one under way, if any.
    const before = this.#cleaning;
    const cleaning = (async () => {
      await before;
      const look = await this.lookForExpiredUsage(now);
      if (look) await this.#serial(() => this.#locked(() => this.#commitUsageRewrite(look, withoutExpired(now - this.#process.usageRetentionMs))));
    })().catch((cause: unknown) => {
      try {
        this.#process.onError?.(new Error('could not drop expired usage records', { cause }));
      } catch {
        // A hook that throws has no one left to tell: the commit stands, and so does `close`.
      }
    });
    this.#cleaning = cleaning;
    return cleaning;
  }

  /**
   * The one way `usage.jsonl` is rewritten: read and `rewrite` without the lock (whole lines only; another process may
   * append or rewrite the file meanwhile); undefined when `mayChange` says nothing in the bytes read can change.
   */
  async #lookThroughUsage(rewrite: (text: string) => Rewritten | Promise<Rewritten>, mayChange: (bytes: Buffer) => boolean = () => true): Promise<UsageLook | undefined> {
    const seen = await this.#readUsageBytes(0);
    if (!mayChange(seen.bytes)) return undefined;
    const end = seen.bytes.lastIndexOf(0x0a) + 1;
    return { seen, end, ready: await rewrite(seen.bytes.toString('utf8', 0, end)) };
  }

  /**
   * Under the lock: writes a rewrite `#lookThroughUsage` made ready, with the lines appended since rewritten too; a file
   * rewritten or replaced since the look (the daily clean-up, a forget) is read again whole, so nothing the other
   * rewrite took out comes back, and rewritten only when that read finds something to change (the other rewrite may
   * have done it all: the look's finding is of a file no longer there).
   */
  async #commitUsageRewrite({ seen, end, ready }: UsageLook, rewrite: (text: string) => Rewritten): Promise<void> {
    const now = await this.#readUsageBytes(end);
    const since = now.file === seen.file && now.size >= end ? now : { bytes: (await this.#readUsageBytes(0)).bytes };
    const rest = rewrite(since.bytes.toString('utf8'));
    if (rest.changed || (since === now && ready.changed)) await this.#replaceUsage(since === now ? [...ready.lines, ...rest.lines] : rest.lines);
  }

  /** The chat settings older versions kept in `cap-overrides.json`, and their `slack-replay.json` (`accept` runs outside the lock). */
  async takeLegacy(accept: (records: LegacyBotRecords) => Promise<void>): Promise<void> {
    const replay = join(this.#dir, LEDGER_FILES.replay);
    const taken = await this.#readLocked(async () => {
      const settings = (await this.#readCapOverrides()).settings ?? {};
      const seen = SeenFileSchema.safeParse(safeJson(await readFile(replay, 'utf8').catch(() => '')));
      const now = this.#process.clock();
      return { settings, seen: seen.success ? Object.entries(seen.data.seen).flatMap(([id, until]) => (until > now ? [id] : [])) : [] };
    });
    await accept(taken);
    // Removed only once `accept` succeeded: a hand-over that fails leaves them for the next take.
    await this.#readLocked(async () => {
      const file = await this.#readCapOverrides();
      if (file.settings) {
        delete file.settings;
        // Twice, so the backup copy no longer has them either (they live in the bots' state now).
        await this.#writeCapOverrides(file);
        await this.#writeCapOverrides(file);
      }
      await rm(replay, { force: true });
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
    await this.#cleaning;
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
      const { outcomes, report, wrote } = await this.#locked(async () => {
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
        if (dirty) await this.#appendUsage(usage);
        if (dirty) await this.#write(ledger);
        return { outcomes, report: reconciled.report, wrote: dirty };
      });
      // What the commit ended of gone processes' reservations, told once, whichever operations it wrote.
      this.#process.reconciled(report);
      const last = batch[batch.length - 1]!.now;
      outcomes.forEach((outcome, i) => {
        if (!outcome.ok) return batch[i]!.reject(outcome.error);
        outcome.committed?.();
        batch[i]!.resolve(outcome.result);
      });
      // The day's first commit that wrote starts the clean-up behind its answers, outside this turn of the queue. It
      // looks after the commit, at records settled since too: what is past retention is reckoned by the store's clock,
      // the clock those records' times are written by, not by the time the commit's steps were given.
      if (wrote && last - this.#usagePrunedAt >= DAY_MS) {
        this.#usagePrunedAt = last;
        void this.#cleanUpUsage(this.#process.clock());
      }
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

  /** `usage.jsonl` must be a file this process can read and append to (or not exist yet). */
  async #checkUsageFile(): Promise<void> {
    try {
      const info = await stat(this.usagePath);
      if (!info.isFile()) throw new Error('not a file');
      await access(this.usagePath, constants.R_OK | constants.W_OK);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new LedgerUnreadableError(this.usagePath, 'is not a readable and writable file (the usage records of settled jobs)', {
        cause,
        remedy: 'Move it away (or give this user access to it) and start again: spending is still counted by the ledger, but pictor usage and the chat usage summaries lose the records it held.',
      });
    }
  }

  /**
   * The one restore of the ledger, at `open()` and when a step finds the file gone or damaged while the process runs:
   * a good backup copy takes the place of a missing or damaged ledger (`restoreFromBackup`, which moves a damaged
   * one aside), brought up to what `usage.jsonl` and this process's reservations say since (`restoredIn`) before one
   * write puts it in place: a crash never leaves the copy there without the charges recorded since, and a `usage.jsonl`
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

  /** Appends records to `usage.jsonl` (0600; one made anew starts with its rewrite line) and syncs it. */
  async #appendUsage(records: UsageRecord[]): Promise<void> {
    if (records.length === 0) return;
    const fd = openSync(this.usagePath, 'a+', 0o600);
    try {
      // A line a crash cut short is left as it is (it is skipped when read); the next record starts on a line of its own.
      const { size } = fstatSync(fd);
      const last = Buffer.alloc(1);
      const cut = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a;
      await writeAllAndSync(fd, `${size === 0 ? rewriteLine() : cut ? '\n' : ''}${records.map((r) => `${JSON.stringify(r)}\n`).join('')}`);
    } catch (error) {
      // A write through the descriptor names no file: name it, so a full disk is told of usage.jsonl (`unusableFileError`).
      if (error instanceof Error && (error as NodeJS.ErrnoException).path === undefined) (error as NodeJS.ErrnoException).path = this.usagePath;
      throw error;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * The records of `usage.jsonl` in file order; with `from`, read from the end back 64 KiB at a time until a whole chunk
   * is older than `from`: records are appended in time order give or take a day (a job counts in the day it was reserved).
   */
  async #readUsage(from?: number): Promise<UsageRecord[]> {
    return (await this.#readUsageLines(from)).records;
  }

  /** `#readUsage`, with how many lines it met damaged and skipped (`parseUsageLines`). */
  async #readUsageLines(from?: number): Promise<ParsedUsage> {
    if (from === undefined) return parseUsageLines((await readFile(this.usagePath, 'utf8').catch(undefinedIfMissing)) ?? '');
    const handle = await openFile(this.usagePath, 'r').catch(undefinedIfMissing);
    if (!handle) return { records: [], damaged: [] };
    try {
      // The chunk older than `from` too: its last record is the time a damaged line after it was written after.
      const chunks: ParsedUsage[] = [];
      // The bytes before the first line that begins in a chunk (all of them when none does) go with the chunk before.
      let [end, carried] = [(await handle.stat()).size, Buffer.alloc(0)];
      while (end > 0) {
        const start = Math.max(0, end - 2 ** 16);
        const { buffer, bytesRead } = await handle.read(Buffer.allocUnsafe(end - start), 0, end - start, start);
        const bytes = Buffer.concat([buffer.subarray(0, bytesRead), carried]);
        const cut = start === 0 ? 0 : bytes.indexOf(0x0a) + 1 || bytes.length;
        const parsed = parseUsageLines(bytes.toString('utf8', cut));
        chunks.push(parsed);
        if (parsed.records.length > 0 && parsed.records.every((r) => r.time < from)) break;
        [end, carried] = [start, bytes.subarray(0, cut)];
      }
      const joined: ParsedUsage = { records: [], damaged: [] };
      for (const chunk of chunks.reverse()) {
        joined.damaged.push(...chunk.damaged.map((at) => at + joined.records.length));
        joined.records.push(...chunk.records);
      }
      return joined;
    } finally {
      await handle.close();
    }
  }

  /** `usage.jsonl`'s bytes from `from` on, its size, and which file they are of (rewrite id and inode); none when there is no file. */
  async #readUsageBytes(from: number): Promise<{ file: string; size: number; bytes: Buffer }> {
    const handle = await openFile(this.usagePath, 'r').catch(undefinedIfMissing);
    if (!handle) return { file: '', size: 0, bytes: Buffer.alloc(0) };
    try {
      const { ino, size } = await handle.stat();
      const length = Math.max(0, size - from);
      const { buffer, bytesRead } = await handle.read(Buffer.allocUnsafe(length), 0, length, from);
      return { file: `${await rewriteIdOf(handle, size)}/${ino}`, size, bytes: buffer.subarray(0, bytesRead) };
    } finally {
      await handle.close();
    }
  }

  /** Every rewrite of `usage.jsonl` (a new file of `lines` renamed into place) goes through here: a new rewrite line tells readers to read it all again. */
  async #replaceUsage(lines: string[]): Promise<void> {
    await writeFileAtomically(this.usagePath, `${rewriteLine()}${lines.map((line) => `${line}\n`).join('')}`);
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
 * `usage.jsonl` or the caps, or the lock itself: a folder in a file's place, a full disk, no permission) to the refusal
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

/** undefined for a file that does not exist; any other error is thrown again. */
function undefinedIfMissing(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}

/** A file's text, or undefined when it does not exist (read at once: see the class's doc on awaited calls). */
function readIfExists(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    return undefinedIfMissing(error as NodeJS.ErrnoException);
  }
}

/**
 * The first line of a `usage.jsonl` this version writes, with a rewrite id of its own: every rewrite (and a file made
 * anew) has a new one, so a reader's cursor from before it never points into it. Not a usage record: skipped when read.
 */
function rewriteLine(): string {
  return `${JSON.stringify({ rewrite: randomBytes(8).toString('hex') })}\n`;
}

const RewriteLineSchema = z.object({ rewrite: z.string().regex(/^[0-9a-f]{16}$/) }).strict();

function isRewriteLine(line: string): boolean {
  return RewriteLineSchema.safeParse(safeJson(line)).success;
}

/** The rewrite id of an open `usage.jsonl` of `size` bytes; `''` for one without a rewrite line (an older version's). */
async function rewriteIdOf(handle: FileHandle, size: number): Promise<string> {
  const { buffer, bytesRead } = await handle.read(Buffer.alloc(64), 0, Math.min(64, size), 0);
  const line = buffer.toString('utf8', 0, bytesRead).split('\n', 2);
  return line.length === 2 ? (RewriteLineSchema.safeParse(safeJson(line[0]!)).data?.rewrite ?? '') : '';
}

/**
 * The lines of `usage.jsonl` text with a member's prompts erased (`key`: their id as JSON writes it), and whether any
 * was: only a line naming them is parsed (another member's id may begin with theirs); any other is kept as written,
 * but for the rewrite line and blank ones. A line a crash cut short (skipped when read) may hold a prompt: it goes when
 * it is theirs — its user key is their whole id (`"userKey":"<id>"`), or it was cut right after their id — and is
 * kept as written (still told as skipped) when their id is only text in it (another member's id beginning with
 * theirs, a prompt naming them).
 */
function withoutPromptsOf(text: string, key: string, userKey: string): Rewritten {
  const userKeyField = `"userKey":"${key}"`;
  let erased = false;
  const lines = text.split('\n').flatMap((line, i) => {
    if (line.trim() === '' || (i === 0 && isRewriteLine(line))) return [];
    if (!line.includes(key)) return [line];
    const record = parseUsageLine(line);
    if (record ? record.userKey !== userKey || record.prompt === undefined : !line.includes(userKeyField) && !line.trimEnd().endsWith(userKeyField.slice(0, -1))) return [line];
    erased = true;
    return record ? [JSON.stringify(withoutPromptOf(record))] : [];
  });
  return { lines, changed: erased };
}

/**
 * The daily clean-up's rewrite of lines of `usage.jsonl`: the records from `from` on, and whether one before it was
 * dropped; every other line (a damaged one, the rewrite line, blank ones) goes with the rewrite.
 */
function withoutExpired(from: number): (text: string) => Rewritten {
  return (text) => expiredOut(text.split('\n'), from);
}

/** `withoutExpired` of lines already split. */
function expiredOut(lines: readonly string[], from: number): Rewritten {
  let changed = false;
  const kept = lines.flatMap((line) => {
    const record = parseUsageLine(line);
    if (record && record.time < from) changed = true;
    return record && record.time >= from ? [JSON.stringify(record)] : [];
  });
  return { lines: kept, changed };
}

/** Lines `withoutExpiredInTurns` parses in one turn of the event loop. */
const LINES_PER_TURN = 2_000;

/**
 * `withoutExpired` for the clean-up's look without the lock, a slice of lines at a time: parsing 200,000 lines takes
 * seconds, during which the process's other steps, and its answers to chats, would wait.
 */
function withoutExpiredInTurns(from: number): (text: string) => Promise<Rewritten> {
  return async (text) => {
    const all = text.split('\n');
    const done: Rewritten = { lines: [], changed: false };
    for (let at = 0; at < all.length; at += LINES_PER_TURN) {
      if (at > 0) await new Promise((resolve) => setImmediate(resolve));
      const slice = expiredOut(all.slice(at, at + LINES_PER_TURN), from);
      done.lines.push(...slice.lines);
      done.changed ||= slice.changed;
    }
    return done;
  };
}

/** The usage records of lines of `usage.jsonl`, and where its damaged lines were among them (`damagedLinesAt`). */
interface ParsedUsage {
  records: UsageRecord[];
  damaged: number[];
}

/**
 * The usage records of lines of `usage.jsonl`: the one place its lines are counted. A line that is no record is skipped
 * and kept as damaged, by its place among the records (`damagedLinesAt`: a line a crash cut short, whose settle never
 * reached the ledger, or one damaged since), but for a rewrite line, a blank one, and the text after the last newline
 * that is no record: a line still being written.
 */
function parseUsageLines(text: string): ParsedUsage {
  const lines = text.split('\n');
  const records: UsageRecord[] = [];
  const damaged: number[] = [];
  lines.forEach((line, i) => {
    const record = parseUsageLine(line);
    if (record) records.push(record);
    else if (i < lines.length - 1 && line.trim() !== '' && !isRewriteLine(line)) damaged.push(records.length);
  });
  return { records, damaged };
}

/** The usage record of one line of `usage.jsonl`; undefined for a line cut short (or blank). */
function parseUsageLine(line: string): UsageRecord | undefined {
  return UsageRecordSchema.safeParse(safeJson(line)).data;
}

/** The ledger a file's text holds, or what is wrong with it. */
function readLedger(text: string): { ok: true; ledger: Ledger } | { ok: false; problem: string; cause?: unknown } {
  if (text.trim() === '') return { ok: false, problem: 'is empty' };
  const json = safeJson(text);
  if (json === undefined) return { ok: false, problem: 'is not JSON (truncated or damaged)' };
  const parsed = parseLedger(json);
  return parsed.ok ? parsed : { ok: false, problem: 'is not a spend ledger (unknown shape)', cause: parsed.cause };
}
