/**
 * Pictor's public API (`import … from 'pictor'`): the client, its errors, the spec's schemas and types, pricing and
 * the emulator. What the bots and the n8n node share with the core beyond this is `pictor/internal` (internal.ts),
 * which has no stability promise.
 */
export * from './spec/index.js';
export {
  ANSWERED_ERROR_CODES,
  ERROR_CODES,
  PictorError,
  ValidationError,
  APIError,
  BadRequestError,
  AuthenticationError,
  PermissionDeniedError,
  NotFoundError,
  ModerationError,
  RateLimitError,
  QuotaExhaustedError,
  ServerError,
  ConnectionError,
  TimeoutError,
  AbortedError,
  StreamBrokenError,
  BadResponseError,
  isPictorError,
  type APIErrorDetails,
  type PictorErrorCode,
  type ValidationRule,
} from './core/errors.js';
export { PRICE_TABLE, estimatePrice, priceOfResult, formatUsd, describeQuote, type DescribeQuoteOptions, type PriceBasis, type PriceQuery, type PriceQuote } from './core/pricing.js';
export { ImageLimiter, type ImageLimiterOptions, type LimiterCoordinator, type LimiterStats, type ScheduleOptions } from './core/image-limiter.js';
// The images-per-minute bucket limiters share through `ImageLimiterOptions.bucket` (docs/shared-limits.md, "A coordinator of your own").
export { LocalImageBucket, type BucketShape, type ImageBucket } from './core/image-bucket.js';
export { PictorClient, isRetryable, type LoggerLike, type PictorClientOptions, type RequestOptions } from './client/PictorClient.js';
export type { HookedRequest, RequestEnding, RequestHook, RequestWatch } from './client/request-hook.js';
export { ImageEventStream } from './client/event-stream.js';
export { decodeImages, resultFromCompleted, completedEventsOf, imagesOfFailure, type ImageJobResult, type RequestedJob } from './client/job-result.js';
export { imageBytes } from './client/image-bytes.js';
export {
  createEmulator,
  DEV_API_KEY,
  DEFAULT_SETTINGS,
  FAULT_NAMES,
  EmulatedConnectionReset,
  type Emulator,
  type EmulatorLogger,
  type EmulatorOptions,
  type EmulatorSettings,
  type FaultName,
  type InjectFaultOptions,
  type PendingFault,
  type Route,
  type EmulatorServer,
  type ListenOptions,
  type EmulatorStats,
  type ReceivedRequest,
  type ReceivedImagePart,
} from './emulator/index.js';
