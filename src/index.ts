/** Pictor's public API. Everything a surface (CLI, bots, n8n node) needs comes from here. */
export * from './spec/index.js';
export * from './core/errors.js';
export * from './core/pricing.js';
export { ImageLimiter, type ImageLimiterOptions, type LimiterStats, type ScheduleOptions } from './core/image-limiter.js';
export { createLogger, scrubSecrets, silentLogger, REDACT_PATHS, type Logger, type LoggerConfig } from './core/logger.js';
export * from './client/index.js';
