import { describe, expect, it } from 'vitest';
import { BudgetExceededError } from '../../src/spend/errors.js';

const NOW = Date.UTC(2030, 0, 2, 20, 48);
const MIDNIGHT = Date.UTC(2030, 0, 3);

describe("BudgetExceededError, a cap's refusal", () => {
  it('says what is left of the cap in whole nano-dollars, as the ledger counts it, not with the noise of a float subtraction', () => {
    // $0.03 a day after four low images of $0.00636: $0.00456 left (a float subtraction gives 0.004559999999999998).
    const refusal = { ok: false as const, code: 'budget_account_daily' as const, limit: 0.03, used: 0.02544, resetsAt: MIDNIGHT };
    const error = new BudgetExceededError(refusal, 0.00636, NOW);
    expect(error.leftUsd).toBe(0.00456);
    expect(error).toMatchObject({ limitUsd: 0.03, usedUsd: 0.02544 });
  });

  it('says nothing is left, never less, when the cap is spent past its limit', () => {
    const refusal = { ok: false as const, code: 'budget_account_monthly' as const, limit: 1, used: 1.2, resetsAt: MIDNIGHT };
    expect(new BudgetExceededError(refusal, 0.1, NOW).leftUsd).toBe(0);
  });
});
