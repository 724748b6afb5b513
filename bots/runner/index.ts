/** The platform-neutral job runner shared by the Discord and Slack bots. */
export { JobRunner, type JobRunnerOptions } from './JobRunner.js';
export {
  AMOUNT_HINT,
  ChatBudgets,
  CAP_NAMES,
  capOfName,
  describeCap,
  notAdminMessage,
  parseCapAmount,
  TOP_USERS,
  type CapChange,
  type CapChangeRefusal,
  type CapName,
  type CapStatus,
  type ChatBudgetsOptions,
  type UsageSummary,
} from './chat-budgets.js';
/** The ledger lives in the core's spend guard; re-exported for the bots. */
export { FileQuotaStore, RedisQuotaStore, type FileQuotaStoreOptions, type RedisQuotaStoreOptions } from '../../src/index.js';
export { JobRefusedError, isJobRefusedError, type JobRefusalDetails } from './JobRefusedError.js';
export { describeFailure, describeKeptImages, describeValidation, INTERNAL_ERROR_CODE, type FailureCode, type FailureDescription } from './describe-failure.js';
export { describeUsage, type UsageMarkup } from './describe-usage.js';
export { mayCancel } from './may-cancel.js';
export { readRunnerConfig, type RunnerConfig } from './config.js';
export type * from './types.js';
