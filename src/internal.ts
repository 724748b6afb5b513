/**
 * Pictor's internal entry (`import … from 'pictor/internal'`): what the bots (`bots/`) and the n8n node (`nodes/`)
 * share with the core beyond the public API (index.ts) — the spend guard and its ledgers, Redis, the limiter's
 * sharing, config and env helpers, logging, metrics, the console, small helpers. It has **no stability promise**:
 * names come, change and go with the surfaces that use them. A library user imports from `pictor`.
 */
export { registerSecret, redactSecrets, sanitizeServiceText, makeAPIError, MAX_SERVICE_TEXT, INTERNAL_ERROR_CODE, OUTPUT_NOT_WRITTEN_CODE, errorCodeOf, OPERATOR_FIX_CODES, operatorMustFix } from './core/errors.js';
export { usdDigits, formatUsdExact } from './core/pricing.js';
export { normalizeBaseURL } from './client/base-url.js';
export { checkApiKey } from './client/PictorClient.js';
export { imageOfPartial } from './client/partial-bound.js';
export { backoffDelay, parseResetDuration, serviceWaitFromHeaders, serviceWaitOf } from './client/retry-timing.js';
export { createImageLimiter, sharedLimiterWorks, type CreateImageLimiterOptions } from './core/shared-limiter.js';
export { bucketShape, DEFAULT_TOLERANCE_MS, type BucketShape, type ImageBucket } from './core/image-bucket.js';
export { RedisImageBucket } from './core/RedisImageBucket.js';
export { readRedisConfig, describeRedisConfig, DEFAULT_REDIS_PREFIX, type RedisConfig } from './core/redis-config.js';
export { connectRedis, checkRedis, closeRedis, pingRedis, RedisLink, RedisUnavailableError, type ConnectRedisOptions, type RedisLogger } from './core/redis-connection.js';
export { redactRedisUrl } from './core/redis-url.js';
export { renewLeaseKey } from './core/redis-lease-renewal.js';
export { envBoolean, envChoice, envError, envList, envNumber, envSeconds, envText, envUrl, writableFolder, type Env, type NumberRule } from './core/env.js';
export { createLogger, scrubSecrets, silentLogger, REDACT_PATHS, type Logger, type LoggerConfig } from './core/logger.js';
export { humanLogDestination } from './core/log-format.js';
export { runsInContainer } from './core/container.js';
export { processOutput } from './core/process-output.js';
export { sleep } from './core/sleep.js';
export { waitAtMost, withTimeout } from './core/with-timeout.js';
export { CLAIM_WAIT_MS } from './core/claim-wait.js';
export { AS_VALIDATION_ERROR, checkUntil, MAX_TIMER_MS, timerMsOf, waitWithin } from './core/timer-ms.js';
export { answerBoundMs, renewEvery, renewEveryThird } from './core/renewal.js';
export { RedisLease, deleteIfHeld, type RedisLeaseOptions } from './core/redis-lease.js';
export { definedOf } from './core/defined-of.js';
export { LATE, within, withinDeadline } from './core/with-timeout.js';
export { INTEGER_RANGES } from './spec/validation-rules.js';
export { SlotSemaphore } from './core/SlotSemaphore.js';
export { IMAGE_WORK_AT_ONCE, imageWorkNow, withImageWork } from './core/image-work.js';
export { closestWord } from './core/closest-word.js';
export {
  describeDuration,
  describeDurationParts,
  describeElapsed,
  describeReset,
  describeUtcTime,
  describeWaitUntil,
  durationParts,
  resetDays,
  saysDate,
  waitToSay,
  waitUntil,
  type DurationPart,
} from './core/describe-duration.js';
export { describeFileError, describeSystemError, describeUnreachable, systemErrorCode, systemFailure, type SystemFailure } from './core/system-errors.js';
export { removeLeftoverTemps, restoreFromBackup, unreadFileOf, writeFileAtomically, type WriteFileAtomicallyOptions } from './core/atomic-file.js';
export { withFileLock, type FileLockOptions } from './spend/file-lock.js';
export { holdDataFolder, DATA_FOLDER_LOCK, DATA_FOLDER_LOCK_STALE_MS } from './spend/data-folder-lock.js';
export * from './spend/index.js';
export { ledgerKindOf } from './spend/ledger-kind.js';
export { safeJson } from './core/safe-json.js';
export { loadDotEnv, loadDotEnvOrExit, readCoreConfig, type CoreConfig } from './config.js';
export { unknownSettingWarnings, PICTOR_SETTINGS } from './core/setting-names.js';
export { connect, type Connection } from './connect.js';
export { SERVICE_LIKE_LATENCY_MS, describeTiming, emulatorBanner, type BannerOptions } from './emulator/index.js';
export { readBounded } from './core/read-bounded.js';
export * from './metrics/index.js';
export * from './console/index.js';
