export { PictorClient, isRetryable, type LoggerLike, type PictorClientOptions, type RequestOptions } from './PictorClient.js';
export { ImageEventStream } from './event-stream.js';
export { decodeImages, resultFromCompleted, completedEventsOf, imagesOfFailure, type ImageJobResult } from './job-result.js';
export { imageBytes } from './image-bytes.js';
export { normalizeBaseURL } from './base-url.js';
export { backoffDelay, parseResetDuration, serviceWaitFromHeaders, serviceWaitOf } from './retry-timing.js';
export type { HookedRequest, RequestEnding, RequestHook, RequestWatch } from './request-hook.js';
