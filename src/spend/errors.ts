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
export class BudgetExceededError extends Error {
  readonly code = 'budget_exceeded' as const;
  readonly cap: BudgetCode;
  readonly limitUsd: number;
  readonly usedUsd: number;
  readonly leftUsd: number;
  readonly resetsAt: number;

  constructor(refusal: SpendRefusal & { code: BudgetCode }, estimateUsd: number) {
    const left = Math.max(0, refusal.limit - refusal.used);
    const name = CAP_NAMES[refusal.code];
    super(
      `This job could cost up to ${formatUsd(estimateUsd)}, more than the ${formatUsd(left)} left of ${name} of ${formatUsd(refusal.limit)} ` +
        `(spent or reserved: ${formatUsd(refusal.used)}); it resets at ${describeResetTime(refusal.resetsAt)}.`,
    );
    this.name = 'BudgetExceededError';
    this.cap = refusal.code;
    this.limitUsd = refusal.limit;
    this.usedUsd = refusal.used;
    this.leftUsd = left;
    this.resetsAt = refusal.resetsAt;
  }
}

/**
 * The ledger file cannot be read (empty, truncated, not a ledger) and no good
 * backup copy was beside it. Starting anyway would forget what was spent.
 */
export class LedgerUnreadableError extends Error {
  readonly code = 'ledger_unreadable' as const;
  readonly path: string;

  constructor(path: string, problem: string, options?: { cause?: unknown }) {
    super(
      `the spend ledger ${path} ${problem}, and no good backup copy (${path}.bak) is beside it. ` +
        `Restore a copy of it, or move it away to start counting spending from zero (caps then ignore what was already spent).`,
      options,
    );
    this.name = 'LedgerUnreadableError';
    this.path = path;
  }
}
