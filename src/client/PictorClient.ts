import { inspect } from 'node:util';
import { Agent, type Dispatcher } from 'undici';
import {
  AbortedError,
  isPictorError,
  makeAPIError,
  RateLimitError,
  StreamBrokenError,
  TimeoutError,
  ValidationError,
  type APIError,
  type PictorError,
} from '../core/errors.js';
import { ImageLimiter } from '../core/image-limiter.js';
import { estimatePrice, priceOfResult, type PriceQuote } from '../core/pricing.js';
import { PATHS } from '../spec/constants.js';
import { isEditRequest, type EditInput, type GenerationInput, type ImageRequest } from '../spec/request-schemas.js';
import { ImageResultSchema } from '../spec/result-schemas.js';
import { parseEditRequest, parseGenerationRequest } from '../spec/validate.js';
import { endpointURL, normalizeBaseURL } from './base-url.js';
import { ImageEventStream, type OpenedStream } from './event-stream.js';
import type { ImageJobResult } from './job-result.js';
import { backoffDelay, retryAfterFromHeaders, sleep } from './retry-timing.js';
import { classifyTransportError, send, type RawResponse } from './transport.js';

/** Any logger with pino's call shape (a pino logger or a child of one fits). */
export interface LoggerLike {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface PictorClientOptions {
  /** Bearer key. Default: `PICTOR_API_KEY`. */
  apiKey?: string | undefined;
  /** The service's `{base_url}` (a trailing `/v1` is tolerated). Default: `PICTOR_BASE_URL`. */
  baseURL?: string | undefined;
  /** Longest time one request may take once sent, stream included. Default 15 minutes. */
  timeoutMs?: number | undefined;
  /** Longest silence while a response arrives. Default 5 minutes. */
  idleTimeoutMs?: number | undefined;
  /** Retries of what cannot have been billed (connection failures before a response, 429 rate limits, 5xx). Default 2. */
  maxRetries?: number | undefined;
  /** Shared throttle; every surface of one process should pass the same one. Default: a local limiter of 4 concurrent requests. */
  limiter?: ImageLimiter | undefined;
  logger?: LoggerLike | undefined;
  /** undici dispatcher (proxy, custom agent). Default: one agent shared by every client of this process, never undici's global one. */
  dispatcher?: Dispatcher | undefined;
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  idleTimeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  /** While queued in the limiter: how many requests are ahead. */
  onQueuePosition?: ((ahead: number) => void) | undefined;
  /** When the request leaves the queue and is sent (again on each retry). */
  onStart?: (() => void) | undefined;
  /**
   * Awaited after the limiter lets the request go and just before its body is
   * sent (again on each retry): the spend guard records that it may be billed.
   * A rejection stops the request unsent.
   */
  beforeSend?: (() => Promise<void>) | undefined;
  /** While queued in a limiter shared through Redis: Redis failed, the request keeps its place and waits. */
  onQueueTrouble?: ((error: unknown) => void) | undefined;
  /** Before waiting to retry. */
  onRetry?: ((info: { attempt: number; delayMs: number; error: PictorError }) => void) | undefined;
}


const DEFAULT_TIMEOUT_MS = 15 * 60_000;
const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60_000;
const DEFAULT_MAX_RETRIES = 2;
const USER_AGENT = 'pictor/0.1';

let agent: Agent | undefined;
/**
 * Our own agent rather than undici's process-wide default: libraries that
 * bundle another undici major (discord.js does) share that global, and an agent
 * of one major cannot send the other's form data.
 */
function sharedAgent(): Agent {
  agent ??= new Agent({ keepAliveTimeout: 10_000 });
  return agent;
}

const noopLogger: LoggerLike = { debug() {}, info() {}, warn() {}, error() {} };

export class PictorClient {
  readonly baseURL: string;
  readonly limiter: ImageLimiter;
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxRetries: number;
  readonly #apiKey: string;
  readonly #logger: LoggerLike;
  readonly #dispatcher: Dispatcher;

  constructor(options: PictorClientOptions = {}) {
    const apiKey = options.apiKey ?? process.env.PICTOR_API_KEY;
    const baseURL = options.baseURL ?? process.env.PICTOR_BASE_URL;
    if (!apiKey) throw new ValidationError('apiKey', 'apiKey is missing: pass { apiKey } or set PICTOR_API_KEY');
    if (!baseURL) throw new ValidationError('baseURL', 'baseURL is missing: pass { baseURL } or set PICTOR_BASE_URL');
    try {
      this.baseURL = normalizeBaseURL(baseURL);
    } catch (error) {
      throw new ValidationError('baseURL', (error as Error).message);
    }
    this.#apiKey = apiKey;
    this.limiter = options.limiter ?? new ImageLimiter();
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#logger = options.logger ?? noopLogger;
    this.#dispatcher = options.dispatcher ?? sharedAgent();
  }

  /** Generates images and resolves when all are done. Throws ValidationError before anything is sent. */
  async generate(input: GenerationInput, options: RequestOptions = {}): Promise<ImageJobResult> {
    return this.#complete(parseGenerationRequest({ ...input, stream: false }), options);
  }

  /** Edits images (multipart, `image[]` parts). Throws ValidationError before anything is sent. */
  async edit(input: EditInput, options: RequestOptions = {}): Promise<ImageJobResult> {
    return this.#complete(parseEditRequest({ ...input, stream: false }), options);
  }

  /** Streams a generation: partial images, then one completed event per image. Validates at once (throws). */
  generateStream(input: GenerationInput, options: RequestOptions = {}): ImageEventStream {
    return this.#stream(parseGenerationRequest({ ...input, stream: true }), options);
  }

  /** Streams an edit. Validates at once (throws). */
  editStream(input: EditInput, options: RequestOptions = {}): ImageEventStream {
    return this.#stream(parseEditRequest({ ...input, stream: true }), options);
  }

  /** What a request will cost at most, before it is sent (validates it too). */
  estimate(operation: 'generate', input: GenerationInput): PriceQuote;
  estimate(operation: 'edit', input: EditInput): PriceQuote;
  estimate(operation: 'generate' | 'edit', input: GenerationInput | EditInput): PriceQuote {
    const req = operation === 'edit' ? parseEditRequest(input) : parseGenerationRequest(input);
    return estimatePrice({ operation, size: req.size, quality: req.quality, n: req.n });
  }

  toString(): string {
    return `PictorClient(${this.baseURL})`;
  }

  toJSON(): Record<string, unknown> {
    return { baseURL: this.baseURL, timeoutMs: this.timeoutMs, maxRetries: this.maxRetries };
  }

  [inspect.custom](): string {
    return `PictorClient { baseURL: '${this.baseURL}', apiKey: [redacted] }`;
  }

  async #complete(request: ImageRequest, options: RequestOptions): Promise<ImageJobResult> {
    const controller = linkedController(options.signal);
    const opened = await this.#open(request, options, controller);
    const { response } = opened;
    try {
      let text: string;
      try {
        text = await response.body.text();
      } catch (error) {
        throw this.#classifyBody(error, controller, options, response);
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (cause) {
        throw new StreamBrokenError('the service answered 200 with a body that is not JSON', { cause, requestId: response.requestId });
      }
      const parsed = ImageResultSchema.safeParse(json);
      if (!parsed.success) {
        throw new StreamBrokenError('the service answered 200 with an unexpected result shape', {
          cause: parsed.error,
          requestId: response.requestId,
        });
      }
      const body = parsed.data;
      const operation = isEditRequest(request) ? 'edit' : 'generate';
      const size = body.size ?? request.size;
      const quality = body.quality ?? request.quality;
      return {
        operation,
        created: body.created,
        data: body.data.map((d) => ({ b64_json: d.b64_json })),
        usage: body.usage,
        size,
        quality,
        background: body.background ?? request.background,
        output_format: body.output_format ?? request.output_format,
        requestId: response.requestId,
        cost: priceOfResult({ operation, requested: request, reported: { size, quality }, images: body.data.length }),
      };
    } finally {
      opened.release();
    }
  }

  #stream(request: ImageRequest, options: RequestOptions): ImageEventStream {
    const controller = linkedController(options.signal);
    let response: RawResponse | undefined;
    return new ImageEventStream({
      controller,
      meta: { operation: isEditRequest(request) ? 'edit' : 'generate', size: request.size, quality: request.quality },
      open: async () => {
        const opened = await this.#open(request, options, controller);
        response = opened.response;
        return opened;
      },
      classifyBodyError: (error) => this.#classifyBody(error, controller, options, response),
    });
  }

  #classifyBody(error: unknown, controller: AbortController, options: RequestOptions, response: RawResponse | undefined): PictorError {
    const classified = classifyTransportError(error, {
      signal: controller.signal,
      url: '',
      idleTimeoutMs: options.idleTimeoutMs ?? this.idleTimeoutMs,
      headersTimeoutMs: options.timeoutMs ?? this.timeoutMs,
      phase: 'body',
    });
    if (classified.code === 'connection_failed') {
      return new StreamBrokenError('the connection broke while the result was arriving; the job may already be billed, so it is not retried', {
        cause: error,
        requestId: response?.requestId,
      });
    }
    return classified;
  }

  /**
   * Waits for the limiter, sends, and retries what cannot have been billed.
   * Resolves with a 200 response whose body is still unread; the caller must
   * call `release` when it is done with it.
   */
  async #open(initial: ImageRequest, options: RequestOptions, controller: AbortController): Promise<OpenedStream> {
    let request = initial;
    const url = endpointURL(this.baseURL, isEditRequest(request) ? PATHS.edits : PATHS.generations);
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const idleTimeoutMs = options.idleTimeoutMs ?? this.idleTimeoutMs;
    let totalTimer: NodeJS.Timeout | undefined;
    const startTotalTimer = () => {
      totalTimer ??= setTimeout(() => controller.abort(new TimeoutError('total', timeoutMs)), timeoutMs);
      totalTimer.unref?.();
    };
    const stopTotalTimer = () => clearTimeout(totalTimer);

    for (let attempt = 0; ; attempt++) {
      let release: () => void;
      try {
        release = await this.limiter.acquire({
          weight: request.n,
          signal: controller.signal,
          onQueuePosition: options.onQueuePosition,
          onStart: options.onStart,
          onDatastoreTrouble: options.onQueueTrouble,
        });
      } catch (error) {
        stopTotalTimer();
        throw controller.signal.reason instanceof TimeoutError ? controller.signal.reason : asAborted(error, controller);
      }
      if (options.beforeSend) {
        try {
          await options.beforeSend();
        } catch (error) {
          release();
          stopTotalTimer();
          throw error;
        }
      }
      startTotalTimer();
      const done = () => {
        release();
        stopTotalTimer();
      };

      let error: PictorError;
      try {
        this.#logger.debug({ url, attempt, n: request.n, stream: request.stream }, 'sending image request');
        const response = await send({
          url,
          apiKey: this.#apiKey,
          request,
          userAgent: USER_AGENT,
          dispatcher: this.#dispatcher,
          signal: controller.signal,
          headersTimeoutMs: timeoutMs,
          idleTimeoutMs,
        });
        if (response.status < 400) return { response, release: done };
        error = await this.#errorFrom(response, url);
      } catch (thrown) {
        error = isPictorError(thrown) ? thrown : asAborted(thrown, controller);
      }
      release();

      if (error.code === 'bad_request' && request.partial_images !== undefined && mentionsPartialImages(error as APIError)) {
        this.#logger.warn({ requestId: (error as APIError).requestId }, 'the service rejected partial_images; sending the request again without it');
        const { partial_images: _dropped, ...rest } = request;
        request = rest as ImageRequest;
        attempt--;
        continue;
      }
      if (error instanceof RateLimitError) {
        await this.limiter.pause(error.retryAfterMs ?? backoffDelay(attempt));
      }
      if (!isRetryable(error) || attempt >= maxRetries) {
        stopTotalTimer();
        throw error;
      }
      const delayMs = (error instanceof RateLimitError || error.code === 'server_error' ? retryAfterOf(error) : undefined) ?? backoffDelay(attempt);
      this.#logger.warn({ attempt: attempt + 1, delayMs, code: error.code }, 'retrying image request');
      options.onRetry?.({ attempt: attempt + 1, delayMs, error });
      try {
        await sleep(delayMs, controller.signal);
      } catch {
        stopTotalTimer();
        throw controller.signal.reason instanceof TimeoutError ? controller.signal.reason : asAborted(controller.signal.reason, controller);
      }
    }
  }

  async #errorFrom(response: RawResponse, url: string): Promise<APIError> {
    let rawText = '';
    try {
      rawText = await response.body.text();
    } catch {
      // The error body broke off: classify by status alone.
    }
    let body: unknown;
    try {
      body = rawText ? JSON.parse(rawText) : undefined;
    } catch {
      body = undefined;
    }
    return makeAPIError({
      status: response.status,
      body,
      rawText,
      headers: response.headers,
      requestId: response.requestId,
      retryAfterMs: retryAfterFromHeaders(response.headers),
      method: 'POST',
      url: new URL(url).pathname,
    });
  }
}

/** Retried: nothing can have been billed. Never moderation, quota, bad input or a broken stream. */
export function isRetryable(error: PictorError): boolean {
  return error.code === 'connection_failed' || error.code === 'rate_limited' || error.code === 'server_error';
}

function retryAfterOf(error: PictorError): number | undefined {
  if (error instanceof RateLimitError) return error.retryAfterMs;
  const headers = (error as Partial<APIError>).headers;
  return headers ? retryAfterFromHeaders(headers) : undefined;
}

function mentionsPartialImages(error: APIError): boolean {
  return error.param === 'partial_images' || /partial_images/.test(error.message);
}

function asAborted(error: unknown, controller: AbortController): PictorError {
  const reason: unknown = controller.signal.reason;
  if (isPictorError(reason)) return reason;
  if (isPictorError(error)) return error;
  return new AbortedError('the request was cancelled', { cause: error });
}

function linkedController(signal: AbortSignal | undefined): AbortController {
  const controller = new AbortController();
  if (signal) {
    const forward = () => controller.abort(new AbortedError('the request was cancelled', { cause: signal.reason }));
    if (signal.aborted) forward();
    else signal.addEventListener('abort', forward, { once: true });
  }
  return controller;
}


