import type { CoreConfig } from '../config.js';
import { accountCaps } from './caps.js';
import type { LedgerKind } from './open-store.js';

/** The ledger a process's jobs count in: the emulator's own when no `PICTOR_BASE_URL` is set, never the account's. */
export function ledgerKindOf(config: Pick<CoreConfig, 'baseURL'>): LedgerKind {
  return config.baseURL ? 'account' : 'emulator';
}

/**
 * Whether a process that sends requests itself (the CLI) keeps a ledger:
 * always for the real service (every paid job is recorded, for
 * `pictor usage`, even with no cap); for the embedded emulator only when
 * something is enforced there (a cap, or Redis), in the emulator's own ledger.
 */
export function needsSpendGuard(config: Pick<CoreConfig, 'baseURL' | 'redis' | 'spend'>): boolean {
  const limits = accountCaps(config.spend.caps);
  const capped = limits.accountDailyUsd !== undefined || limits.accountMonthlyUsd !== undefined;
  return ledgerKindOf(config) === 'account' || config.redis !== undefined || capped;
}
