/** Pictor's public API. Everything a surface (CLI, bots, n8n node) needs comes from here. */
export * from './spec/index.js';
export * from './core/errors.js';
export * from './core/pricing.js';
export { ImageLimiter, type ImageLimiterOptions, type LimiterCoordinator, type LimiterStats, type ScheduleOptions } from './core/image-limiter.js';
export { createImageLimiter, type CreateImageLimiterOptions } from './core/shared-limiter.js';
export { bucketShape, DEFAULT_TOLERANCE_MS, LocalImageBucket, type BucketShape, type ImageBucket } from './core/image-bucket.js';
export { readRedisConfig, describeRedisConfig, DEFAULT_REDIS_PREFIX, type RedisConfig } from './core/redis-config.js';
export { connectRedis, checkRedis, closeRedis, pingRedis, RedisUnavailableError, type ConnectRedisOptions, type RedisLogger } from './core/redis-connection.js';
export { redactRedisUrl } from './core/redis-url.js';
export { envBoolean, envChoice, envError, envList, envNumber, envText, envUrl, type Env, type NumberRule } from './core/env.js';
export { createLogger, scrubSecrets, silentLogger, REDACT_PATHS, type Logger, type LoggerConfig } from './core/logger.js';
export * from './client/index.js';
export { withTimeout } from './core/with-timeout.js';
export { describeDuration, describeReset, describeUtcTime } from './core/describe-duration.js';
export { describeFileError, describeSystemError, describeUnreachable, systemErrorCode } from './core/system-errors.js';
export { writeFileAtomically, type WriteFileAtomicallyOptions } from './core/atomic-file.js';
export * from './spend/index.js';
export { NO_METRICS, type JobMetrics } from './metrics/job-metrics.js';
