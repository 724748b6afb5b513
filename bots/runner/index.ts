/** The platform-neutral job runner shared by the Discord and Slack bots. */
export { JobRunner, type JobRunnerOptions } from './JobRunner.js';
export { FileQuotaStore, type FileQuotaStoreOptions } from './FileQuotaStore.js';
export { RedisQuotaStore, type RedisQuotaStoreOptions } from './RedisQuotaStore.js';
export { JobRefusedError, isJobRefusedError, type JobRefusalDetails } from './JobRefusedError.js';
export { describeFailure, describeValidation, INTERNAL_ERROR_CODE, type FailureCode, type FailureDescription } from './describe-failure.js';
export { describeDuration, describeUtcTime } from './describe-duration.js';
export { mayCancel } from './may-cancel.js';
export { readRunnerConfig, type RunnerConfig } from './config.js';
export type * from './types.js';
