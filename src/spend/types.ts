import type { BreakerSettings } from './breaker.js';
import type { BUDGETS } from './rules.js';

/**
 * The spend guard's contract: every surface (CLI, chat bots, n8n node) reserves
 * a job's upper-bound price before the request is sent, marks it sent just
 * before it leaves, and settles it at the real cost (or releases it when
 * nothing can have been billed). Caps are checked atomically with the
 * reservation, so two processes can never both spend the last dollar.
 */

/** Spending caps (USD) and per-user rules. Undefined means no limit. */
export interface SpendLimits {
  /** USD for the whole account (every surface, every process) per UTC day. */
  accountDailyUsd?: number | undefined;
  /** USD for the whole account per UTC calendar month. */
  accountMonthlyUsd?: number | undefined;
  /** USD per user per UTC day. */
  userDailyUsd?: number | undefined;
  /** USD per user per UTC calendar month. */
  userMonthlyUsd?: number | undefined;
  /** USD per Discord server / Slack workspace per UTC day. */
  scopeDailyUsd?: number | undefined;
  /** USD per Discord server / Slack workspace per UTC calendar month. */
  scopeMonthlyUsd?: number | undefined;
  /** Jobs one user may have queued or running at once. */
  userConcurrentJobs?: number | undefined;
  /** Seconds between two jobs of one user. */
  userCooldownSeconds?: number | undefined;
  /**
   * The breaker (`PICTOR_BREAKER_*`): a server, workspace or DM user whose last
   * hour passes both its factor times its own trailing hourly average and the
   * floor is paused until resumed from the console. Undefined: off.
   */
  breaker?: BreakerSettings | undefined;
}

/** Which cap refused a job (`BUDGETS` in the rulebook lists them). Stable: surfaces switch on it. */
export type BudgetCode = (typeof BUDGETS)[number]['code'];

/** The spend guard's refusals of a user's pace (`PICTOR_USER_CONCURRENT_JOBS`, `PICTOR_USER_COOLDOWN_SECONDS`), beside the caps'. */
export const USER_PACE_CODES = ['user_concurrency', 'user_cooldown'] as const;

/** The breaker's refusal: the job's server, workspace or DM user is paused until the owner resumes it. */
export const BREAKER_CODE = 'scope_paused' as const;

export type SpendRefusalCode = BudgetCode | (typeof USER_PACE_CODES)[number] | typeof BREAKER_CODE;

/** Why a reservation was refused: the limit, how much of it is used, and when it lets the job in again (ms). */
export interface SpendRefusal {
  ok: false;
  code: SpendRefusalCode;
  limit: number;
  used: number;
  resetsAt: number;
  /** `scope_paused` only: this very job tripped the breaker (the scope was paused by this refusal). */
  tripped?: boolean | undefined;
}

export type ReserveResult = { ok: true } | SpendRefusal;

export interface ReserveInput {
  jobId: string;
  /** Who spends (`discord:<id>`, `slack:<id>`, `cli:<name>`). */
  userKey: string;
  /** Where (`discord:<guild>`, `slack:<team>`, `cli`). */
  scopeKey: string;
  /** The job's upper-bound price. */
  estimateUsd: number;
  limits: SpendLimits;
  now: number;
  /** What the job is, kept with the reservation for its usage record (also when a dead process's job is settled). */
  job?: JobDetails | undefined;
}

/** What a job was, for its usage record. */
export interface JobDetails {
  operation: 'generate' | 'edit';
  n: number;
  size: string;
  quality: string;
  /** Only when the operator asked for prompts in usage records (`PICTOR_USAGE_PROMPTS=1`). */
  prompt?: string | undefined;
}

/**
 * One settled job, as `pictor usage` and the chat usage commands read it.
 * Every settle writes exactly one; a release writes none. The costs of the
 * records of a period add up to what the ledger counts as spent in it.
 */
export interface UsageRecord {
  jobId: string;
  /** When it was settled (ms). */
  time: number;
  /** The UTC day (`YYYY-MM-DD`) its cost counts for: the day it was reserved (not settled), as in the ledger. */
  day: string;
  /** The UTC month (`YYYY-MM`) its cost counts for: the month it was reserved in. */
  month: string;
  /** The user key's prefix: `cli`, `discord`, `slack`, `n8n`. */
  surface: string;
  userKey: string;
  scopeKey: string;
  operation?: 'generate' | 'edit' | undefined;
  n?: number | undefined;
  size?: string | undefined;
  quality?: string | undefined;
  costUsd: number;
  /**
   * How `costUsd` was found. `table`: every charged image came back, priced from the table. `estimate`: some or
   * all of the charge is the job's upper-bound estimate, charged by the live process (images that may have been
   * billed never arrived, or their quality was unknown). `uncertain`: charged at the estimate by a reconcile after
   * the sending process died. Records of older versions read back as `table` (`actual`) and `uncertain`
   * (`estimate` without a `month`).
   */
  basis: UsageBasis;
  /** Set when the charge exceeded the job's reservation (the service reported a dearer job than was reserved): what was reserved. */
  reservedUsd?: number | undefined;
  requestId?: string | undefined;
  prompt?: string | undefined;
  /**
   * How the job ended: `completed`, `failed` or `cancelled` (its process said so), or `interrupted` (its process died
   * after sending it; basis `uncertain`). Absent in records of older versions.
   */
  outcome?: JobOutcomeKind | undefined;
  /** When the job was reserved (ms): `time - reservedAt` is how long it took. Absent in records of older versions. */
  reservedAt?: number | undefined;
  /** The images that came back (absent in records of older versions, and of interrupted jobs: unknown). */
  images?: number | undefined;
}

/** How a job that was charged ended. */
export type JobOutcomeKind = 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** How a settle's amount was found: priced from the table, or (in part) the upper-bound estimate. */
export type ChargeBasis = 'table' | 'estimate';

/** A usage record's basis: a settle's, or `uncertain` when reconcile charged the estimate of a job whose process died. */
export type UsageBasis = ChargeBasis | 'uncertain';

/** What a settle tells the ledger beside the amount, for the usage record. */
export interface SettleInfo {
  /** The service's id of the request. */
  requestId?: string | undefined;
  /** Default `table`. */
  basis?: ChargeBasis | undefined;
  /** How the job ended, for the usage record (`completed`, `failed`, `cancelled`). */
  outcome?: Exclude<JobOutcomeKind, 'interrupted'> | undefined;
  /** The images that came back, for the usage record. */
  images?: number | undefined;
  /**
   * The size and quality the service reported for the images that came back (those the charge is the table price
   * of): the usage record keeps them in place of those asked. Absent (no image came back): those asked stay.
   */
  size?: string | undefined;
  quality?: string | undefined;
}

/**
 * Which records: of jobs that count in [since, until) (ms) — the UTC day a job
 * counts in is the day it was reserved, whenever it was settled — optionally
 * of one user or scope.
 */
export interface UsageQuery {
  since?: number | undefined;
  until?: number | undefined;
  userKey?: string | undefined;
  scopeKey?: string | undefined;
  /**
   * Told how many lines of the usage day files the read met damaged and skipped that may hold a record of the days asked for
   * (the file ledger; `damagedWithin`; a last line still being written is none of them): their records are missing
   * from the answer. Never told on Redis.
   */
  onDamagedLines?: ((lines: number) => void) | undefined;
}

/**
 * A reservation the ledger had lost while its process still held it: Redis restarted without its data or was
 * flushed, or a ledger file was replaced by an older copy. Its job is never left unpaid: put back from the process's
 * copy before the job was sent (`send`), or charged from that copy at its settle (`settle`, with what was charged).
 */
export interface LostReservation {
  jobId: string;
  userKey: string;
  scopeKey: string;
  /** The UTC day it was reserved in (and is charged to). */
  day: string;
  foundAt: 'send' | 'settle';
  chargedUsd: number | undefined;
}

/** What `reconcile` did with the reservations of processes that are gone. */
export interface ReconcileReport {
  /** Jobs that were only queued: nothing was sent, so nothing was charged. */
  released: string[];
  /** Jobs whose request had been sent: charged at their estimate and marked uncertain. */
  settledAtEstimate: string[];
  /**
   * Jobs whose settle their process had recorded in the usage records but not yet in the ledger when it died (the file
   * ledger writes the record first): charged what that record says, no record added. Absent when there is none.
   */
  settledAsRecorded?: string[] | undefined;
  /** What the jobs settled here (both lists) were charged in all (USD): spending the metrics count too. */
  chargedUsd: number;
}

/**
 * Where reservations and spending live: a JSON file shared by the processes of
 * one machine (FileQuotaStore) or Redis shared by every process of the account
 * (RedisQuotaStore). Every method is atomic with respect to every other caller
 * of the same ledger, in this process or another.
 *
 * A reservation counts for as long as the process that made it lives (it
 * renews a lease while it holds reservations). When a process is gone, its
 * reservations are settled at their estimate if their request had been sent
 * (`markSent`), marked uncertain, and released otherwise.
 */
export interface QuotaStore {
  /** Where this ledger is kept, for tools that keep their own records beside it (the console's alerts). */
  readonly storage?: LedgerStorage | undefined;
  /**
   * Checks every limit and, if all pass, reserves `estimateUsd` and marks the job active for the user. A reservation
   * answered once the store is closed (asked before `close`) is not handed out: it throws `QuotaStoreClosedError` (`quota_store_closed`). The file
   * store checks before it writes, under the lock: closed while it waited for the lock, it reserved nothing. What a
   * reservation already under way reserved (a Redis command already sent) ends within the lease, as the closed store's
   * other reservations do.
   */
  reserve(input: ReserveInput): Promise<ReserveResult>;
  /**
   * Records that the job's request is about to leave: from now on it may be billed. Call before every send. Rejects
   * (the job must not be sent) when the reservation has ended; one the ledger lost is put back first.
   */
  markSent(jobId: string): Promise<void>;
  /**
   * Records that what the job sent was answered with an error that bills nothing and it waits to be sent again
   * (`markSent` marks it again before the next send): a reconcile now releases it. A job whose reservation ended, or
   * was lost, is left as it is.
   */
  markUnsent(jobId: string): Promise<void>;
  /**
   * Replaces the job's reservation with what it really cost, and ends it; appends its usage record. Resolves true;
   * false when the reservation had already ended (settled before, or settled at its estimate by a reconcile after
   * this process's lease lapsed): then nothing is charged or recorded. A reservation the ledger lost while this
   * process held it (see `LostReservation`) is no reason to charge nothing: the job is charged and recorded from the
   * process's copy of it, and the store says so (its `onReservationLost`).
   */
  settle(jobId: string, actualUsd: number, info?: SettleInfo): Promise<boolean>;
  /** Drops the job's reservation (nothing was billed). */
  release(jobId: string): Promise<void>;
  /** Spent plus reserved in the UTC day of `now`, for a user key, a scope key or `ACCOUNT_KEY`. */
  spentToday(key: string, now: number): Promise<number>;
  /** Spent plus reserved in the UTC month of `now`. */
  spentThisMonth(key: string, now: number): Promise<number>;
  /** `spentToday` and `spentThisMonth` of many keys in one read, by key (for pages that show every cap at once). */
  spentMany(keys: readonly string[], now: number): Promise<Map<string, { day: number; month: number }>>;
  /**
   * Every key (user, scope, `ACCOUNT_KEY`) with an amount settled in the UTC month of `now`, each once, in no order: for
   * the console, whose users with spend may have no usage record left (records are kept `PICTOR_USAGE_RETENTION_DAYS`,
   * the month's amounts for the month). What is only reserved is not listed (`activeJobs` has it), nor what a gone
   * process reserved before a `reconcile` ended it.
   */
  settledKeys(now: number): Promise<string[]>;
  /**
   * Settles or releases the reservations of processes that are gone, on any host (called at start, then by the store
   * itself once per `leaseMs` until it is closed; and lazily by `reserve`).
   */
  reconcile(now: number): Promise<ReconcileReport>;
  /** The usage records of settled jobs, oldest first (kept `PICTOR_USAGE_RETENTION_DAYS`). */
  usage(query: UsageQuery): Promise<UsageRecord[]>;
  /** The caps chat admins set for one server/workspace (scope key), with who set each and when; `{}` when none. */
  capOverrides(scopeKey: string): Promise<CapOverrides>;
  /**
   * Sets (or, with `usd` undefined, clears) one cap of a scope, atomically, and
   * answers what it was before. Checks nothing against the operator's caps:
   * that is the caller's rule (see `effectiveLimits`).
   */
  setCapOverride(scopeKey: string, cap: OverridableCap, usd: number | undefined, changedBy: string, now: number): Promise<{ previousUsd: number | undefined }>;
  /**
   * Erases the prompts of a user's usage records and open reservations (`PICTOR_USAGE_PROMPTS=1`), backups included;
   * the amounts stay, so the ledger still adds up.
   */
  forgetPrompts(userKey: string): Promise<void>;
  /**
   * What versions before the bots' state layer kept in the ledger for the bots (chat admins' settings, Slack request
   * signatures seen lately), handed to `accept` (which writes it into the bots' state) and removed from the ledger only
   * once `accept` has resolved: an `accept` that throws, or a process stopped before it resolved, leaves all of it for
   * the next take (so `accept` must merge, not overwrite). The scopes `accept` answers it left (`LegacyLeft`) keep their
   * settings in the ledger too. `accept` must not call this store.
   */
  takeLegacy(accept: (records: LegacyBotRecords) => Promise<LegacyLeft | void>): Promise<void>;
  /** Every scope whose caps a chat admin changed, with those caps (who set each, and when). */
  allCapOverrides(): Promise<Record<string, CapOverrides>>;
  /**
   * The reservations the ledger holds, oldest first: the jobs queued (not yet sent) and in flight of every process
   * sharing it — a gone process's too, until a step ends them (a `reconcile`; on Redis any script that meets them), so
   * a list that is not empty says a reconcile may have something to end. Read after a `reconcile` for those still
   * counting (the console and the crash sweeps do).
   */
  activeJobs(): Promise<ActiveJob[]>;
  /**
   * The usage records written after `cursor` (undefined: from the first), in the order written, and the cursor to
   * ask from next: for a reader that keeps its own totals (the console). `reset`: the cursor no longer points into
   * the records (old ones were dropped, or the storage was rewritten), so these are all of them, read again. A job
   * may have two records (see `latestPerJob`); the later one counts.
   */
  usageSince(cursor: string | undefined): Promise<UsageFeed>;
  /** Adds refusals (how many of each code) to the counts of the UTC day of `now`. */
  countRefusals(counts: Readonly<Record<string, number>>, now: number): Promise<void>;
  /** The refusals counted, per UTC day (`YYYY-MM-DD`, from `sinceDay` on) and code. */
  refusals(sinceDay: string): Promise<RefusalCounts>;
  /** The breaker's state of every scope it paused (and of those resumed since), by scope key. */
  breakerStates(): Promise<Record<string, BreakerState>>;
  /**
   * Resumes a scope the breaker paused: its jobs are taken again and its last hour counts from zero. Answers its
   * state as it was, or undefined when it was not paused (nothing changed).
   */
  resumeScope(scopeKey: string, by: string, now: number): Promise<BreakerState | undefined>;
  /** Closes the store; what it still waits for (Redis: a rewrite to ask after a forget) it waits for no later than `until`. */
  close(options?: { until?: number | undefined }): Promise<void>;
}

/** Where a ledger is kept: a data folder, or a Redis prefix (with the store's connection). */
export type LedgerStorage = { kind: 'file'; dir: string } | { kind: 'redis'; redis: import('ioredis').Redis; prefix: string };

/** A reservation the ledger holds: a job queued or in flight, in any process sharing the ledger (see `activeJobs`). */
export interface ActiveJob {
  jobId: string;
  userKey: string;
  scopeKey: string;
  /** What it reserved: its upper-bound price. */
  usd: number;
  /** When it was reserved (ms). */
  at: number;
  /** Its request may have left (`markSent`): in flight. False: still queued. */
  sent: boolean;
  /** The process holding it (`<host>:<pid>:<random>`). */
  owner: string;
  job?: JobDetails | undefined;
}

/** What `usageSince` answers. */
export interface UsageFeed {
  records: UsageRecord[];
  cursor: string;
  reset: boolean;
  /**
   * The lines of the usage day files this read met damaged and skipped (the file ledger; absent on Redis), their records
   * missing: each given as how many of `records` were before it (`damagedLinesAt`).
   */
  damagedAt?: number[] | undefined;
}

/** Refusals counted per UTC day and code. */
export type RefusalCounts = Record<string, Record<string, number>>;

/** What the breaker did to one scope. */
export interface BreakerState {
  /** Paused since (ms); undefined once resumed. */
  pausedAt?: number | undefined;
  /** What the scope had spent (settled and reserved) in the hour before it was paused, with the job that tripped it. */
  pausedUsd?: number | undefined;
  /** The limit it passed: the larger of its factor times its trailing hourly average, and the floor (USD per hour). */
  limitUsd?: number | undefined;
  /** When it was last resumed (ms), and by whom. */
  resumedAt?: number | undefined;
  resumedBy?: string | undefined;
}

/** What both ledgers (the file and Redis stores) are opened with. */
export interface LedgerOptions {
  /**
   * A process renews its lease every third of this while it holds reservations; when it lapses (the process died,
   * or on this host its pid is gone), its reservations are settled at their estimate if sent, released if not. On the
   * file ledger, a lapsed lease whose process still lives on this host (idle, or stalled, stopped, failing to renew)
   * charges nothing: its unsent reservations are dropped; its sent ones stay, counted, until that process's next write
   * drops those it no longer holds, or until it is gone (then charged at their estimate). Redis sees no pids: there a
   * lapsed lease's sent reservations are charged at their estimate whether or not its process lives. Default 60 s.
   */
  leaseMs?: number | undefined;
  /** UTC days of daily spending kept, today included. Default 7 (months: this one and the last). */
  keepDays?: number | undefined;
  /**
   * Lease renewal failures, once per streak: told again only after a renewal passed (each is tried again at the next
   * third of the lease). A renewal not answered within 2 s (a third of the lease when that is shorter) counts as failed.
   * A failed drop of expired usage records is told here too (Redis's hourly trim, the file ledger's daily clean-up of
   * its usage day files), the commit that started it written all the same; a hook that throws fails no step.
   */
  onError?: ((error: unknown) => void) | undefined;
  /** Days usage records are kept (`PICTOR_USAGE_RETENTION_DAYS`). Default 400. */
  usageRetentionDays?: number | undefined;
  /**
   * Told of each reservation the ledger had lost while this process held it (Redis restarted empty or was flushed,
   * the ledger file was replaced by an older copy or deleted), put back before its job was sent or charged at its
   * settle.
   */
  onReservationLost?: ((lost: LostReservation) => void) | undefined;
  /**
   * Told what each step that ended a dead process's reservations did: a `reconcile` (at start, once per lease after, a
   * sweep's, the console's), or any other that met them first (a reserve; on Redis a read of what is spent,
   * on the file ledger any write). Once per step, so what it charged can be counted as spent exactly once.
   */
  onReconciled?: ((report: ReconcileReport) => void) | undefined;
  /** The clock settles, releases and lease renewals use; must be the one the callers' `now` comes from. Default `Date.now`. */
  clock?: (() => number) | undefined;
}

/** What `takeLegacy` hands over: settings by scope key, and the Slack request signatures still worth refusing again. */
export interface LegacyBotRecords {
  settings: Record<string, ScopeSettingEntries>;
  seen: string[];
}

/** What `takeLegacy`'s `accept` did not take: the scope keys whose settings stay in the ledger for a later take. */
export interface LegacyLeft {
  settingsOf: string[];
}

/** The caps a chat admin may change for their own server/workspace. The account's caps never are. */
export type OverridableCap = 'userDailyUsd' | 'userMonthlyUsd' | 'scopeDailyUsd' | 'scopeMonthlyUsd';

/** One cap a chat admin set: the amount, who set it (a user key) and when (ms). */
export interface CapOverride {
  usd: number;
  by: string;
  at: number;
}

/** The caps chat admins set for one scope; a cap not listed follows the operator's setting. */
export type CapOverrides = Partial<Record<OverridableCap, CapOverride>>;

/** One setting a chat admin chose for their scope, as older versions kept it: its value (JSON), who set it (a user key) and when (ms). */
export interface ScopeSettingEntry {
  value: unknown;
  by: string;
  at: number;
}

/** The settings chat admins chose for one scope, by name; a setting not listed has its default. */
export type ScopeSettingEntries = Record<string, ScopeSettingEntry>;

/** The key the whole account's spending is counted under. */
export const ACCOUNT_KEY = 'account';
