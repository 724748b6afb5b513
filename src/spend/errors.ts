import { PictorError } from '../core/errors.js';
import { formatUsd } from '../core/pricing.js';
import type { BudgetCode, SpendRefusal } from './types.js';

/** Whose cap, in words ("the account's daily cap"). */
const CAP_NAMES: Record<BudgetCode, string> = {
  budget_account_daily: "the account's daily cap",
  budget_account_monthly: "the account's monthly cap",
  budget_user_daily: 'your daily budget',
  budget_user_monthly: 'your monthly budget',
  budget_scope_daily: 'the daily budget of this server or workspace',
  budget_scope_monthly: 'the monthly budget of this server or workspace',
};

export const isBudgetCode = (code: string): code is BudgetCode => code in CAP_NAMES;

/** "2030-01-03 00:00 UTC". */
export function describeResetTime(at: number): string {
  return `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * A job was refused by a spending cap before anything was sent. `cap` says
 * which; `message` says how much is left and when the cap resets (UTC).
 */
export class BudgetExceededError extends PictorError<'budget_exceeded'> {
  readonly cap: BudgetCode;
  readonly limitUsd: number;
  readonly usedUsd: number;
  readonly leftUsd: number;
  readonly resetsAt: number;

  constructor(refusal: SpendRefusal & { code: BudgetCode }, estimateUsd: number) {
    const left = Math.max(0, refusal.limit - refusal.used);
    const name = CAP_NAMES[refusal.code];
    super(
      'budget_exceeded',
      `This job could cost up to ${formatUsd(estimateUsd)}, more than the ${formatUsd(left)} left of ${name} of ${formatUsd(refusal.limit)} ` +
        `(spent or reserved: ${formatUsd(refusal.used)}); it resets at ${describeResetTime(refusal.resetsAt)}.`,
    );
    this.cap = refusal.code;
    this.limitUsd = refusal.limit;
    this.usedUsd = refusal.used;
    this.leftUsd = left;
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
