import { PictorError } from '../core/errors.js';
import { describeSpendRefusal } from './describe-refusal.js';
import type { FileLockBusyError } from './file-lock.js';
import { BUDGETS, leftOf } from './rules.js';
import { BREAKER_CODE, USER_PACE_CODES, type BudgetCode, type SpendRefusal, type SpendRefusalCode } from './types.js';

export const isBudgetCode = (code: string): code is BudgetCode => BUDGETS.some((b) => b.code === code);

/** Whether `code` is a refusal of the spend guard: a cap's, a user's pace, or the breaker's. */
export const isSpendRefusalCode = (code: string): code is SpendRefusalCode =>
  isBudgetCode(code) || (USER_PACE_CODES as readonly string[]).includes(code) || code === BREAKER_CODE;

/**
 * A job was refused by a spending cap before anything was sent. `code` names
 * the cap (`budget_account_daily`, … — the same codes on every surface);
 * `message` is the one sentence of `describeSpendRefusal`: how much is left and
 * when the cap resets (UTC).
 */
export class BudgetExceededError extends PictorError<BudgetCode> {
  readonly limitUsd: number;
  readonly usedUsd: number;
  readonly leftUsd: number;
  readonly resetsAt: number;

  constructor(refusal: SpendRefusal & { code: BudgetCode }, estimateUsd: number, now: number = Date.now()) {
    super(refusal.code, describeSpendRefusal(refusal, { estimateUsd, now }));
    this.limitUsd = refusal.limit;
    this.usedUsd = refusal.used;
    this.leftUsd = leftOf(refusal.limit, refusal.used);
    this.resetsAt = refusal.resetsAt;
  }
}

/**
 * A file of the ledger (the ledger itself, the chat admins' caps, the usage
 * records, the Slack replay record) cannot be read and no good backup copy
 * was beside it. Starting anyway would forget what was spent or allowed, so
 * every surface refuses to start (or to run a job) and names the file and
 * what to do.
 */
export class LedgerUnreadableError extends PictorError<'ledger_unreadable'> {
  readonly path: string;

  constructor(path: string, problem: string, options?: { cause?: unknown; remedy?: string | undefined }) {
    super(
      'ledger_unreadable',
      options?.remedy
        ? `${path} ${problem}. ${options.remedy}`
        : `the spend ledger ${path} ${problem}, and no good backup copy (${path}.bak) is beside it. ` +
            `Restore a copy of it, or move it away to start counting spending from zero (caps then ignore what was already spent).`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.path = path;
  }
}

/**
 * The other meaning of `ledger_busy`, on Redis only: a member's forget could not look through the usage records
 * first (the look failed, or other processes wrote more than a batch after each of its three looks). Nothing was
 * erased; asking again in a moment works (`retryable`).
 */
export class LedgerLookFailedError extends PictorError<'ledger_busy'> {
  /** Asking the same forget again works once the look can end. */
  readonly retryable = true;

  constructor(cause: unknown) {
    super('ledger_busy', 'could not look through the usage records before erasing the prompts: nothing was erased; try again in a moment', { cause });
  }
}

/**
 * A file of the ledger stayed locked by another live process longer than a write waits (10 s): another Pictor
 * process writing it, or one stopped in the middle of a write (suspended, paused in a debugger). Nothing was written,
 * so a job refused so was not sent and nothing was charged; trying again once that process lets go works
 * (`retryable`). A lock whose process is gone is not this: it is broken and taken over at once.
 */
export class LedgerBusyError extends PictorError<'ledger_busy'> {
  /** The lock file. */
  readonly path: string;
  /** Trying the same job again once the other process lets go works. */
  readonly retryable = true;

  /** `cause`: the lock's own error, whose sentence (lock, holder, wait) this one carries with the ledger's advice. */
  constructor(cause: FileLockBusyError) {
    super(
      'ledger_busy',
      `the spend ledger is busy: its ${cause.message} ` +
        `(another Pictor process writing it, or one stopped while it did). Try again in a moment; if that process is stopped, let it go on or end it`,
      { cause },
    );
    this.path = cause.path;
  }
}

/**
 * A call on a quota store after its `close()` (a job the stop gave up on, ending late; a reservation answered as it
 * closed): nothing is read or written, and a reservation so answered is not handed out.
 */
export class QuotaStoreClosedError extends PictorError<'quota_store_closed'> {
  constructor() {
    super('quota_store_closed', 'the quota store is closed');
  }
}

/** Every call of a quota store, on either backend, begins here: once it is closed, nothing is read or written. */
export function refuseIfClosed(closed: boolean): void {
  if (closed) throw new QuotaStoreClosedError();
}
