/** The spend guard: the ledger every surface reserves, marks sent, settles and releases through, with the account's caps. */
export * from './types.js';
export { FileQuotaStore, type FileQuotaStoreOptions } from './FileQuotaStore.js';
export { RedisQuotaStore, type RedisQuotaStoreOptions } from './RedisQuotaStore.js';
export { readSpendCaps, readSpendConfig, accountCaps, budgetsOf, SPEND_CAP_VARIABLES, type SpendCaps, type SpendConfig } from './caps.js';
export { BudgetExceededError, LedgerUnreadableError, isBudgetCode, describeResetTime } from './errors.js';
export { SpendGuard, GuardedPictorClient, type SpendGuardOptions } from './guarded-client.js';
export { effectiveLimits, isOverridableCap, OVERRIDABLE_CAPS } from './cap-overrides.js';
export { roundToNanoUsd, sumUsage, usageByKey, type UsageTotals } from './usage-totals.js';
export { interruptedCostUsd, mayBeBilled, chargeOf, type JobEnding, type JobOutcome, type Charge, type ChargedRequest } from './charge-rules.js';
export { JobLedger, ChargedJob, type JobLedgerOptions, type JobSettlement, type ChargedSettle, type BeginInput } from './job-ledger.js';
export { utcDay, utcMonth, nextUtcMidnight, nextUtcMonth, utcDayBefore, utcMonthBefore } from './utc-period.js';
export { createSerialQueue } from './serial-queue.js';
