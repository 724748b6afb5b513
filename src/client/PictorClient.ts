import { inspect } from 'node:util';
import { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import {
  APIError,
  AbortedError,
  ANSWERED_ERROR_CODES,
  isPictorError,
  registerSecret,
  makeAPIError,
  RateLimitError,
  TimeoutError,
  ValidationError,
  type PictorError,
} from '../core/errors.js';
import { describeDuration, describeTimeLeft } from '../core/describe-duration.js';
import { ImageLimiter } from '../core/image-limiter.js';
import { readBounded } from '../core/read-bounded.js';
import { estimateOf, type PriceQuote } from '../core/pricing.js';
import { AS_VALIDATION_ERROR, timerMsOf, type TimerMsRule } from '../core/timer-ms.js';
import { PATHS } from '../spec/constants.js';
import { isEditRequest, type EditInput, type GenerationInput, type ImageRequest } from '../spec/request-schemas.js';
import { isParsedRequest, parseEditRequest, parseGenerationRequest } from '../spec/validate.js';
import { endpointURL, normalizeBaseURL } from './base-url.js';
import { ImageEventStream, type OpenedStream } from './event-stream.js';
import { completedEventsOf, imagesOfFailure, type ImageJobResult, type RequestedJob } from './job-result.js';
import { readJsonResult } from './read-json-body.js';
import { chainBeforeSend, chainOnRetry, endWatch, tellImage, type HookedRequest, type RequestHook, type RequestWatch } from './request-hook.js';
import { sleep } from '../core/sleep.js';
import { backoffDelay, serviceWaitFromHeaders, serviceWaitOf } from './retry-timing.js';
import { classifyTransportError, discardBody, send, type RawResponse } from './transport.js';

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
  /**
   * Follows every request of this client (see `RequestHook`): called once per request after it is validated and
   * before it is queued, it may refuse it (nothing is sent) or give a watch that is told just before each send, of
   * each finished image and of how the request ended. The spend guard is such a hook.
   */
  onRequest?: RequestHook | undefined;
  /** undici dispatcher (proxy, custom agent). Default: one connection pool per service origin, shared by every client of this process, never undici's global dispatcher. */
  dispatcher?: Dispatcher | undefined;
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
  idleTimeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  /** While queued in the limiter: how many requests are ahead. */
  onQueuePosition?: ((ahead: number) => void) | undefined;
  /**
   * When the request leaves the queue: the limiter gave it a slot (again on each retry). It is not sent yet: `beforeSend`
   * comes first, and `onSend` says when it leaves.
   */
  onStart?: (() => void) | undefined;
  /**
   * Awaited after the limiter lets the request go and just before its body is
   * sent (again on each retry): the spend guard records that it may be billed.
   * A rejection stops the request unsent.
   */
  beforeSend?: (() => Promise<void>) | undefined;
  /**
   * When the request really leaves (again on each retry): `beforeSend` resolved (the spend guard has recorded that it
   * may be billed) and it is handed to the connection. Not called when it was cancelled before that: such a cancel
   * leaves nothing at the service (`AbortedError.mayBeBilled` false).
   */
  onSend?: (() => void) | undefined;
  /**
   * The service took the request (a success status): it will not be sent again, so its input images are no longer
   * needed — the client keeps no reference to them from here on. Called once.
   */
  onAccepted?: (() => void) | undefined;
  /** While queued in a limiter shared through Redis: Redis failed, the request keeps its place and waits. */
  onQueueTrouble?: ((error: unknown) => void) | undefined;
  /** Before waiting to retry. */
  onRetry?: ((info: { attempt: number; delayMs: number; error: PictorError }) => void) | undefined;
}


const DEFAULT_TIMEOUT_MS = 15 * 60_000;
const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60_000;
const DEFAULT_MAX_RETRIES = 2;
const USER_AGENT = 'pictor/0.1';

/** The connection pool of each service origin, shared by every client of this process that talks to it. */
const pools = new Map<string, Pool>();
/**
 * Our own dispatcher rather than undici's process-wide default: libraries that
 * bundle another undici major (discord.js does) share that global, and a
 * dispatcher of one major cannot send the other's form data.
 *
 * A pool per origin that lives as long as the process, rather than an Agent:
 * every request opens a fresh connection (see `send`), and an Agent drops its
 * pool for an origin as soon as that origin has no connection left, so it built
 * a pool and a client, and tore them down again (an error object each time),
 * for every request. A pool keeps its clients and only their sockets come and
 * go; an idle pool holds no socket and no timer.
 */
function sharedPool(origin: string): Pool {
  let pool = pools.get(origin);
  if (pool) {
    // The most recently used last: an origin in steady use is never the one let go.
    pools.delete(origin);
    pools.set(origin, pool);
  } else {
    // A process that talks to many services (an n8n host whose users each set a base URL) keeps the latest few:
    // the oldest is closed once its requests in flight are done (`close` lets them finish); a client looks its
    // pool up per request, so its next request to that origin gets a new one.
    if (pools.size >= MAX_POOLS) {
      const [oldest, closing] = pools.entries().next().value!;
      pools.delete(oldest);
      void closing.close().catch(() => undefined);
    }
    pool = new Pool(origin);
    pools.set(origin, pool);
  }
  return pool;
}

/** Origins whose pool is kept at once. */
const MAX_POOLS = 16;

const noopLogger: LoggerLike = { debug() {}, info() {}, warn() {}, error() {} };

export class PictorClient {
  readonly baseURL: string;
  readonly limiter: ImageLimiter;
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxRetries: number;
  readonly #apiKey: string;
  readonly #logger: LoggerLike;
  /** The caller's dispatcher; undefined: the shared pool of the service's origin, looked up per request (see `sharedPool`). */
  readonly #dispatcher: Dispatcher | undefined;
  readonly #origin: string;
  readonly #onRequest: RequestHook | undefined;

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
    checkApiKey(apiKey, 'apiKey');
    registerSecret(apiKey);
    this.#apiKey = apiKey;
    this.limiter = options.limiter ?? new ImageLimiter();
    this.timeoutMs = timerMsOf('timeoutMs', options.timeoutMs ?? DEFAULT_TIMEOUT_MS, TIMEOUT_RULE);
    this.idleTimeoutMs = timerMsOf('idleTimeoutMs', options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, TIMEOUT_RULE);
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#logger = options.logger ?? noopLogger;
    this.#dispatcher = options.dispatcher;
    this.#origin = new URL(this.baseURL).origin;
    this.#onRequest = options.onRequest;
  }

  /** Generates images and resolves when all are done. Throws ValidationError before anything is sent. */
  async generate(input: GenerationInput, options: RequestOptions = {}): Promise<ImageJobResult> {
    return this.#complete(parseGenerationRequest({ ...input, stream: false }), options);
  }

  /** Edits images (multipart, `image[]` parts). Throws ValidationError before anything is sent. */
  async edit(input: EditInput, options: RequestOptions = {}): Promise<ImageJobResult> {
    return this.#complete(parseEditRequest({ ...input, stream: false }), options);
  }

  /**
   * Streams a generation: partial images, then one completed event per image. Validates at once (throws); a
   * streamed request made by `parseGenerationRequest` is taken as it is, not parsed again.
   */
  generateStream(input: GenerationInput, options: RequestOptions = {}): ImageEventStream {
    return this.#stream(isParsedStream(input, false) ? input : parseGenerationRequest({ ...input, stream: true }), options);
  }

  /** Streams an edit. Validates at once (throws); a streamed request made by `parseEditRequest` (or `editRequestOf`) is taken as it is. */
  editStream(input: EditInput, options: RequestOptions = {}): ImageEventStream {
    return this.#stream(isParsedStream(input, true) ? input : parseEditRequest({ ...input, stream: true }), options);
  }

  /** What a request will cost at most, before it is sent (validates it too). */
  estimate(operation: 'generate', input: GenerationInput): PriceQuote;
  estimate(operation: 'edit', input: EditInput): PriceQuote;
  estimate(operation: 'generate' | 'edit', input: GenerationInput | EditInput): PriceQuote {
    const req = operation === 'edit' ? parseEditRequest(input) : parseGenerationRequest(input);
    return estimateOf({ operation, size: req.size, quality: req.quality, n: req.n });
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
    const watch = await this.#watch(this.#onRequest && hookedRequest(request));
    if (!watch) return this.#send(request, options);
    let result: ImageJobResult;
    try {
      result = await this.#send(request, followed(options, watch));
    } catch (error) {
      // The good images of a bad answer are the caller's (on the error), and the watch is told of them.
      for (const image of imagesOfFailure(error)) tellImage(watch, image, (error as { requestId?: string }).requestId, this.#logger);
      endWatch(watch, { kind: 'failed', error, requestId: (error as { requestId?: string }).requestId }, this.#logger);
      throw error;
    }
    for (const image of completedEventsOf(result)) tellImage(watch, image, result.requestId, this.#logger);
    endWatch(watch, { kind: 'completed', requestId: result.requestId }, this.#logger);
    return result;
  }

  /** Asks the client's hook for the request's watch (it may refuse the request by throwing). */
  async #watch(request: HookedRequest | undefined): Promise<RequestWatch | undefined> {
    if (!this.#onRequest || !request) return undefined;
    return (await this.#onRequest(request)) ?? undefined;
  }

  async #send(request: ImageRequest, options: RequestOptions): Promise<ImageJobResult> {
    const link = linkedController(options.signal);
    const { controller } = link;
    try {
      const opened = await this.#open(request, options, controller);
      const { response } = opened;
      try {
        let result: ImageJobResult;
        const classify = (error: unknown) => this.#classifyBody(error, controller, options);
        try {
          // A body that breaks off is told as `classify` tells it, with the whole images that came before it.
          result = await readJsonResult(response, requestedJob(request), { classify, logger: this.#logger });
        } catch (error) {
          throw classify(error);
        }
        if (result.missing) this.#logger.warn({ requestId: result.requestId, missing: result.missing }, 'the service left labels out of its result: taken from the request');
        return result;
      } finally {
        // Closes the connection too when the service sent the whole result but kept it open.
        discardBody(response.body);
        opened.release();
      }
    } finally {
      link.unlink();
    }
  }

  #stream(request: ImageRequest, options: RequestOptions): ImageEventStream {
    const controller = new AbortController();
    // The caller's signal is followed from the moment the stream is read, so a stream never read leaves no listener behind.
    let unlink = () => {};
    // Handed to the one opening of the stream, then let go: the stream does not keep an edit's images while it is read.
    let toSend: ImageRequest | undefined = request;
    // What the hook is told, without the request's input images.
    const hooked = this.#onRequest ? hookedRequest(request) : undefined;
    return new ImageEventStream({
      controller,
      meta: requestedJob(request),
      partialImages: request.partial_images,
      watch: hooked ? () => this.#watch(hooked) : undefined,
      open: (watch) => {
        unlink = linkSignal(controller, options.signal);
        const sending = toSend!;
        toSend = undefined;
        return this.#open(sending, watch ? followed(options, watch) : options, controller);
      },
      classifyBodyError: (error) => this.#classifyBody(error, controller, options),
      onEnd: () => unlink(),
      logger: this.#logger,
    });
  }

  #classifyBody(error: unknown, controller: AbortController, options: RequestOptions): PictorError {
    // The answer was arriving, so the request had been sent: a timeout now may be billed.
    if (error instanceof TimeoutError) return error.afterSending();
    if (isPictorError(error)) return error;
    return classifyTransportError(error, {
      signal: controller.signal,
      url: '',
      idleTimeoutMs: options.idleTimeoutMs ?? this.idleTimeoutMs,
      headersTimeoutMs: options.timeoutMs ?? this.timeoutMs,
      phase: 'body',
    });
  }

  /**
   * Waits for the limiter, sends, and retries what cannot have been billed.
   * Resolves with a 200 response whose body is still unread; the caller must
   * call `release` when it is done with it.
   */
  async #open(initial: ImageRequest, options: RequestOptions, controller: AbortController): Promise<OpenedStream> {
    // The registry keeps the most recently registered secrets only: a client that lives long beside many made since
    // (a process making one per user's key) registers its key again with each request, so an answer that echoes it is
    // still hidden whatever its shape.
    registerSecret(this.#apiKey);
    let request = initial;
    const url = endpointURL(this.baseURL, isEditRequest(request) ? PATHS.edits : PATHS.generations);
    const maxRetries = options.maxRetries ?? this.maxRetries;
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const idleTimeoutMs = options.idleTimeoutMs ?? this.idleTimeoutMs;
    let totalTimer: NodeJS.Timeout | undefined;
    let deadline = Number.POSITIVE_INFINITY;
    const startTotalTimer = () => {
      if (totalTimer) return;
      deadline = Date.now() + timeoutMs;
      totalTimer = setTimeout(() => controller.abort(new TimeoutError('total', timeoutMs)), timeoutMs);
      totalTimer.unref?.();
    };
    const stopTotalTimer = () => clearTimeout(totalTimer);

    /** How long to wait before the next attempt: the retry delay of the one before it. */
    let waitMs = 0;
    for (let attempt = 0; ; attempt++) {
      let release: () => void;
      try {
        release = await this.#clearToSend(request, options, controller, waitMs);
        waitMs = 0;
      } catch (error) {
        stopTotalTimer();
        // Whatever ended it here (a cancel, the limiter stopped or failed, `beforeSend`), no byte of it left: an
        // earlier attempt had an answer that bills nothing, or it would not have been retried.
        throw unsent(error);
      }
      startTotalTimer();
      // Cancelled while `beforeSend` waited (a ledger busy with another process): the request does not leave; `send`
      // answers the cancel as one before any byte left.
      if (!controller.signal.aborted) options.onSend?.();
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
          dispatcher: this.#dispatcher ?? sharedPool(this.#origin),
          signal: controller.signal,
          headersTimeoutMs: timeoutMs,
          idleTimeoutMs,
        });
        if (response.status >= 200 && response.status < 300) {
          options.onAccepted?.();
          return { response, release: done };
        }
        error = await this.#errorFrom(response, url);
      } catch (thrown) {
        error = isPictorError(thrown) ? thrown : asAborted(thrown, controller);
      }
      release();
      // Counted where the send happened, so whoever words the failure says how many times it was sent, not how many it could have been.
      if (error instanceof APIError) error.attempts = attempt + 1;

      if (error.code === 'bad_request' && request.partial_images !== undefined && mentionsPartialImages(error as APIError)) {
        this.#logger.warn({ requestId: (error as APIError).requestId }, 'the service rejected partial_images; sending the request again without it');
        const { partial_images: _dropped, ...rest } = request;
        request = rest as ImageRequest;
        attempt--;
        continue;
      }
      if (error instanceof RateLimitError) {
        // Held here at once; telling the other processes sharing the limiter (Redis) may fail, which must not turn
        // the service's answer — a 429, billing nothing, retried below — into a failure of its own.
        await this.limiter.pause(Math.min(error.retryAfterMs ?? backoffDelay(attempt), MAX_LIMITER_PAUSE_MS)).catch((paused: unknown) => {
          this.#logger.warn({ err: paused }, 'could not tell the processes sharing the limiter to wait after a 429; this one waits');
        });
      }
      if (!isRetryable(error) || attempt >= maxRetries) {
        stopTotalTimer();
        throw error;
      }
      const askedMs = error instanceof RateLimitError || error.code === 'server_error' ? serviceWaitOf(error as Partial<RateLimitError>) : undefined;
      const delayMs = askedMs ?? backoffDelay(attempt);
      const leftMs = deadline - Date.now();
      if (delayMs > leftMs) {
        // Waiting would outlast the request's timeout: say so now rather than sleep into a timeout, and whose wait it
        // was: the service's (its retry-after) or, when it named none, the client's own backoff.
        stopTotalTimer();
        const left = `longer than the ${describeTimeLeft(leftMs)} left of the request's timeout`;
        error.message =
          askedMs !== undefined
            ? `${error.message}; the service asked to wait ${describeDuration(delayMs)} before trying again, ${left}`
            : `${error.message}; ${error instanceof APIError ? 'the service named no wait, and ' : ''}the client's own wait before trying again, ${describeDuration(delayMs)}, is ${left}`;
        if (error instanceof APIError) error.stoppedFor = askedMs !== undefined ? 'service_wait' : 'backoff';
        throw error;
      }
      this.#logger.warn({ attempt: attempt + 1, delayMs, code: error.code }, 'retrying image request');
      options.onRetry?.({ attempt: attempt + 1, delayMs, error });
      waitMs = delayMs;
    }
  }

  /**
   * What comes before an attempt leaves: the wait to retry (`waitMs`), the limiter's slot, then `beforeSend`. Resolves
   * with what frees the slot; what it throws ended the request before any byte of this attempt left.
   */
  async #clearToSend(request: ImageRequest, options: RequestOptions, controller: AbortController, waitMs: number): Promise<() => void> {
    let release: () => void;
    try {
      if (waitMs > 0) await sleep(waitMs, controller.signal);
      release = await this.limiter.acquire({
        weight: request.n,
        signal: controller.signal,
        onQueuePosition: options.onQueuePosition,
        onStart: options.onStart,
        onDatastoreTrouble: options.onQueueTrouble,
      });
    } catch (error) {
      throw controller.signal.reason instanceof TimeoutError ? controller.signal.reason : asAborted(error, controller);
    }
    try {
      await options.beforeSend?.();
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  async #errorFrom(response: RawResponse, url: string): Promise<APIError> {
    const path = new URL(url).pathname;
    if (response.status >= 300 && response.status < 400) {
      discardBody(response.body);
      const location = response.headers.location;
      let target = 'no Location given';
      if (location) {
        try {
          const to = new URL(location, url);
          target = `to ${to.origin}${to.pathname}`;
        } catch {
          target = `to ${JSON.stringify(location)}`;
        }
      }
      return makeAPIError({
        status: response.status,
        body: { error: { message: `redirect (${target}); redirects are not followed, so check the base URL`, type: 'redirect' } },
        headers: response.headers,
        requestId: response.requestId,
        method: 'POST',
        url: path,
      });
    }
    let rawText = '';
    try {
      // Its first 64 KiB, the rest dropped with the connection: the start of a long error page still says what went wrong.
      const body = Readable.toWeb(response.body) as ReadableStream<Uint8Array>;
      rawText = (await readBounded({ body }, MAX_ERROR_BODY_BYTES, (error) => error, { cut: true })).toString('utf8');
    } catch {
      // The error body broke off: classify by status alone.
    } finally {
      discardBody(response.body);
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
      retryAfterMs: serviceWaitFromHeaders(response.headers),
      method: 'POST',
      url: path,
    });
  }
}

/** The caller's options with the watch told of each send and each retry (it decides what may be billed). */
function followed(options: RequestOptions, watch: RequestWatch): RequestOptions {
  return { ...options, beforeSend: chainBeforeSend(options.beforeSend, watch), onRetry: chainOnRetry(options.onRetry, watch) };
}

/** Most of an error body that is read; the rest is dropped with the connection. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** Longest a 429 pauses the whole limiter, whatever the header said. */
const MAX_LIMITER_PAUSE_MS = 5 * 60_000;

function requestedJob(request: ImageRequest): RequestedJob {
  return {
    operation: isEditRequest(request) ? 'edit' : 'generate',
    n: request.n,
    output_format: request.output_format,
    size: request.size,
    quality: request.quality,
    background: request.background,
  };
}

function hookedRequest(request: ImageRequest): HookedRequest {
  return { ...requestedJob(request), prompt: request.prompt };
}

/** A timeout of the client: above 0, refused as bad input (`ValidationError`) like any other option. */
const TIMEOUT_RULE: TimerMsRule = { ...AS_VALIDATION_ERROR, aboveZero: true };

/** A key goes into a header: characters a header cannot carry (a newline from a pasted file) are refused before anything is sent. */
export function checkApiKey(key: string, param: string): void {
  if (!/^[\x21-\x7e]+$/.test(key)) {
    throw new ValidationError(param, `${param} contains characters an HTTP header cannot carry (spaces, newlines or non-ASCII); check for a stray line break`);
  }
}

/**
 * The answers retried: of the codes that bill nothing (`ANSWERED_ERROR_CODES`, the list the charge rule reads, which
 * the type holds them to), the ones that may go another way when sent again: a request that never reached the service,
 * a 429, a 5xx.
 */
const RETRIED_CODES: ReadonlySet<string> = new Set<(typeof ANSWERED_ERROR_CODES)[number]>(['connection_failed', 'rate_limited', 'server_error']);

/** Retried: nothing can have been billed. Never moderation, quota, bad input or a broken stream. */
export function isRetryable(error: PictorError): boolean {
  return RETRIED_CODES.has(error.code);
}

function mentionsPartialImages(error: APIError): boolean {
  return error.param === 'partial_images' || /partial_images/.test(error.message);
}

/**
 * An error that ended a request before any byte of it left: a cancel says so (`AbortedError.mayBeBilled` false), the
 * one fact the charge rule and the surfaces read. A timeout then already does; other errors say nothing of billing.
 */
function unsent(error: unknown): unknown {
  return error instanceof AbortedError ? error.beforeSending() : error;
}

function asAborted(error: unknown, controller: AbortController): PictorError {
  const reason: unknown = controller.signal.reason;
  if (isPictorError(reason)) return reason;
  if (isPictorError(error)) return error;
  return new AbortedError('the request was cancelled', { cause: error });
}

/**
 * A controller that follows the caller's signal for as long as the request
 * lives. `unlink` removes the listener from the caller's signal (many requests
 * may share one), and is called when the request ends, however it ends.
 */
function linkedController(signal: AbortSignal | undefined): { controller: AbortController; unlink: () => void } {
  const controller = new AbortController();
  return { controller, unlink: linkSignal(controller, signal) };
}

/** Aborts `controller` when `signal` does; returns what removes the listener again. */
function linkSignal(controller: AbortController, signal: AbortSignal | undefined): () => void {
  if (!signal) return () => {};
  const forward = () => controller.abort(new AbortedError('the request was cancelled', { cause: signal.reason }));
  if (signal.aborted) {
    forward();
    return () => {};
  }
  signal.addEventListener('abort', forward, { once: true });
  return () => signal.removeEventListener('abort', forward);
}

/** A streamed request of the kind asked that the spec's parser made: valid as it is (see `isParsedRequest`). */
function isParsedStream(input: unknown, edit: boolean): input is ImageRequest {
  return isParsedRequest(input) && input.stream === true && isEditRequest(input) === edit;
}
