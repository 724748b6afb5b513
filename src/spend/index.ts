/** The spend guard: the ledger every surface reserves, marks sent, settles and releases through, with the account's caps. */
export * from './types.js';
export { FileQuotaStore, type FileQuotaStoreOptions } from './FileQuotaStore.js';
export { BUDGETS, EPSILON_USD, evaluate, resetsAt, periodKey, type Budget, type CapPeriod, type LedgerSnapshot } from './rules.js';
export { LEDGER_FILES } from './ledger-files.js';
export { openQuotaStore, ledgerDir, ledgerRedis, type LedgerKind, type OpenQuotaStoreOptions } from './open-store.js';
export { RedisQuotaStore, type RedisQuotaStoreOptions } from './RedisQuotaStore.js';
export { DM_SCOPE_PREFIX, isDmScopeKey, readDmCaps, readSpendCaps, readSpendConfig, readUsageRetentionDays, userStateDir, accountCaps, budgetsOf, SPEND_CAP_VARIABLES, type SpendCaps, type SpendConfig } from './caps.js';
export { BudgetExceededError, LedgerUnreadableError, isBudgetCode, isSpendRefusalCode } from './errors.js';
export { describeSpendRefusal, type RefusalContext } from './describe-refusal.js';
export { SpendGuard, type SpendGuardOptions } from './spend-guard.js';
export { effectiveLimits, isOverridableCap, OVERRIDABLE_CAPS } from './cap-overrides.js';
export { addUsage, roundToNanoUsd, sumUsage, usageByKey, type UsageTotals } from './usage-totals.js';
export { readBreakerSettings, breakerApplies, breakerLimit, type BreakerSettings } from './breaker.js';
export { interruptedCostUsd, mayBeBilled, chargeOf, type JobEnding, type JobOutcome, type Charge, type ChargedRequest } from './charge-rules.js';
export { JobLedger, ChargedJob, type JobLedgerOptions, type JobSettlement, type ChargedSettle, type BeginInput } from './job-ledger.js';
export { utcDay, utcMonth, nextUtcMidnight, nextUtcMonth, utcDayBefore, utcMonthBefore } from './utc-period.js';
export { createSerialQueue } from './serial-queue.js';
export { RefusalTally } from './refusal-tally.js';
