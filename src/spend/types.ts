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

/** Which cap refused a job. Stable: surfaces switch on it. */
export type BudgetCode =
  | 'budget_account_daily'
  | 'budget_account_monthly'
  | 'budget_user_daily'
  | 'budget_user_monthly'
  | 'budget_scope_daily'
  | 'budget_scope_monthly';

export type SpendRefusalCode = BudgetCode | 'user_concurrency' | 'user_cooldown';

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
}

/** What `reconcile` did with the reservations of processes that are gone. */
export interface ReconcileReport {
  /** Jobs that were only queued: nothing was sent, so nothing was charged. */
  released: string[];
  /** Jobs whose request had been sent: charged at their estimate and marked uncertain. */
  settledAtEstimate: string[];
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
  /** Replaces the job's reservation with what it really cost, and ends it. */
  settle(jobId: string, actualUsd: number): Promise<void>;
  /** Drops the job's reservation (nothing was billed). */
  release(jobId: string): Promise<void>;
  /** Spent plus reserved in the UTC day of `now`, for a user key, a scope key or `ACCOUNT_KEY`. */
  spentToday(key: string, now: number): Promise<number>;
  /** Spent plus reserved in the UTC month of `now`. */
  spentThisMonth(key: string, now: number): Promise<number>;
  /** Settles or releases the reservations of processes that are gone (called at start, and lazily by `reserve`). */
  reconcile(now: number): Promise<ReconcileReport>;
  close(): Promise<void>;
}

/** The key the whole account's spending is counted under. */
export const ACCOUNT_KEY = 'account';
