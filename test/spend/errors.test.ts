import { describe, expect, it } from 'vitest';
import { BudgetExceededError, LedgerBusyError } from '../../src/spend/errors.js';
import { FileLockBusyError } from '../../src/spend/file-lock.js';

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

describe('LedgerBusyError, a ledger another process keeps locked', () => {
  it("carries the lock's own error as its cause and its sentence (the wait rounded once, by the lock), with the ledger's advice", () => {
    const busy = new FileLockBusyError('/data/quota-ledger.json.lock', 'process 42 on host-a', 10_049);
    const error = new LedgerBusyError(busy);
    expect(error.cause).toBe(busy);
    expect(error).toMatchObject({ code: 'ledger_busy', retryable: true, path: '/data/quota-ledger.json.lock' });
    expect(error.message).toContain(`its ${busy.message} (another Pictor process writing it`);
    expect(error.message).toContain('for more than 10 s');
  });
});
