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
}

/** Which cap refused a job (`BUDGETS` in the rulebook lists them). Stable: surfaces switch on it. */
export type BudgetCode = (typeof BUDGETS)[number]['code'];

/** The spend guard's refusals of a user's pace (`PICTOR_USER_CONCURRENT_JOBS`, `PICTOR_USER_COOLDOWN_SECONDS`), beside the caps'. */
export const USER_PACE_CODES = ['user_concurrency', 'user_cooldown'] as const;

export type SpendRefusalCode = BudgetCode | (typeof USER_PACE_CODES)[number];

/** Why a reservation was refused: the limit, how much of it is used, and when it lets the job in again (ms). */
export interface SpendRefusal {
  ok: false;
  code: SpendRefusalCode;
  limit: number;
  used: number;
  resetsAt: number;
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
}

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
}

/** What `reconcile` did with the reservations of processes that are gone. */
export interface ReconcileReport {
  /** Jobs that were only queued: nothing was sent, so nothing was charged. */
  released: string[];
  /** Jobs whose request had been sent: charged at their estimate and marked uncertain. */
  settledAtEstimate: string[];
  /** What those were charged in all (USD): spending the metrics count too. */
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
  /** Checks every limit and, if all pass, reserves `estimateUsd` and marks the job active for the user. */
  reserve(input: ReserveInput): Promise<ReserveResult>;
  /** Records that the job's request is about to leave: from now on it may be billed. Call before every send. */
  markSent(jobId: string): Promise<void>;
  /**
   * Replaces the job's reservation with what it really cost, and ends it; appends its usage record. Resolves true;
   * false when the reservation had already ended (settled before, or settled at its estimate by a reconcile after
   * this process's lease lapsed): then nothing is charged or recorded.
   */
  settle(jobId: string, actualUsd: number, info?: SettleInfo): Promise<boolean>;
  /** Drops the job's reservation (nothing was billed). */
  release(jobId: string): Promise<void>;
  /** Spent plus reserved in the UTC day of `now`, for a user key, a scope key or `ACCOUNT_KEY`. */
  spentToday(key: string, now: number): Promise<number>;
  /** Spent plus reserved in the UTC month of `now`. */
  spentThisMonth(key: string, now: number): Promise<number>;
  /** Settles or releases the reservations of processes that are gone (called at start, and lazily by `reserve`). */
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
   * signatures seen lately), removed from the ledger as it is taken: the bots' state keeps it now.
   */
  takeLegacy(): Promise<LegacyBotRecords>;
  close(): Promise<void>;
}

/** What both ledgers (the file and Redis stores) are opened with. */
export interface LedgerOptions {
  /**
   * A process renews its lease every third of this while it holds reservations; when it lapses (the process died,
   * or on this host its pid is gone), its reservations are settled at their estimate if sent, released if not.
   * Default 60 s.
   */
  leaseMs?: number | undefined;
  /** UTC days of daily spending kept, today included. Default 7 (months: this one and the last). */
  keepDays?: number | undefined;
  /** Lease renewal failures (tried again on the next renewal). */
  onError?: ((error: unknown) => void) | undefined;
  /** Days usage records are kept (`PICTOR_USAGE_RETENTION_DAYS`). Default 400. */
  usageRetentionDays?: number | undefined;
}

/** What `takeLegacy` hands over: settings by scope key, and the Slack request signatures still worth refusing again. */
export interface LegacyBotRecords {
  settings: Record<string, ScopeSettingEntries>;
  seen: string[];
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
