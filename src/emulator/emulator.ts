import { randomBytes } from 'node:crypto';
import { EMULATOR_HEADER } from '../core/emulator-identity.js';
import { PATHS, wireFields } from '../spec/index.js';
import { checkBearer } from './auth.js';
import {
  htmlBadGateway,
  insufficientQuota,
  invalidApiKey,
  methodNotAllowed,
  moderationBlocked,
  notFound,
  rateLimitExceeded,
  serverError,
  serviceUnavailable,
  badRequest,
  tooManyRequestsInFlight,
} from './error-response.js';
import {
  FaultQueue,
  connectionResetError,
  isConnectionReset,
  isStreamFault,
  type AppliedFault,
  type FaultName,
  type InjectFaultOptions,
  type PendingFault,
  type Route,
} from './faults.js';
import { parseEditCall } from './handle-edits.js';
import { parseGenerationCall } from './handle-generations.js';
import { listenWithNodeHttp, type EmulatorServer, type ListenOptions } from './node-server.js';
import { DEFAULT_SETTINGS, applySettings, type EmulatorOptions, type EmulatorSettings } from './options.js';
import { rateLimitHeaders } from './rate-limit-headers.js';
import { ImageRenderer } from './render-image.js';
import { RequestLog, type EmulatorStats, type ReceivedRequest } from './request-log.js';
import { respondWithImages } from './respond-images.js';
import { TokenBucket } from './token-bucket.js';

/** The wait a request refused for too many in flight is told to take. */
const IN_FLIGHT_RETRY_AFTER_MS = 1000;

/** A local stand-in for the image service: answers in process (`fetch`) or over HTTP (`listen`). */
export interface Emulator {
  /** Answers a web-standard request in process, like `fetch` (no port). Bound: pass it around as a fetch implementation. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Serves the same handler over node:http. */
  listen(options?: ListenOptions): Promise<EmulatorServer>;
  /** Changes settings at runtime; a key that is present (even undefined) replaces the setting. */
  configure(patch: EmulatorOptions): void;
  /** The current settings (a copy). */
  readonly settings: Readonly<EmulatorSettings>;
  /** Breaks the next matching (authorized, valid) request(s) the way `fault` says. */
  injectFault(fault: FaultName, options?: InjectFaultOptions): void;
  clearFaults(): void;
  /** Faults not yet used up, in the order they will apply. */
  pendingFaults(): readonly PendingFault[];
  /** The last requests received (up to `maxRecordedRequests`), oldest first. */
  readonly requests: readonly ReceivedRequest[];
  stats(): EmulatorStats;
  /** Forgets requests, counters and faults, and refills the rate-limit bucket. Settings stay. */
  reset(): void;
  /** Ends every open stream and pending answer, and closes every server started with `listen`. */
  close(): Promise<void>;
}

export function createEmulator(options: EmulatorOptions = {}): Emulator {
  return new LocalImageService(options);
}

const ROUTES: Record<string, Route> = {
  [PATHS.generations]: 'generations',
  [PATHS.edits]: 'edits',
};

class LocalImageService implements Emulator {
  #settings: EmulatorSettings;
  #bucket: TokenBucket | undefined;
  readonly #faults = new FaultQueue();
  readonly #log: RequestLog;
  readonly #renderer = new ImageRenderer();
  readonly #inflight = new Set<AbortController>();
  readonly #servers = new Set<EmulatorServer>();
  /** Image requests being answered now (see `maxRequestsInFlight`). */
  #imageRequests = 0;

  constructor(options: EmulatorOptions) {
    this.#settings = applySettings({ ...DEFAULT_SETTINGS }, options);
    this.#log = new RequestLog(this.#settings.maxRecordedRequests);
    this.#bucket = makeBucket(this.#settings.imagesPerMinute);
  }

  get settings(): Readonly<EmulatorSettings> {
    return { ...this.#settings };
  }

  get requests(): readonly ReceivedRequest[] {
    return this.#log.records;
  }

  configure(patch: EmulatorOptions): void {
    const before = this.#settings;
    this.#settings = applySettings(before, patch);
    if (this.#settings.imagesPerMinute !== before.imagesPerMinute) this.#bucket = makeBucket(this.#settings.imagesPerMinute);
    this.#log.setLimit(this.#settings.maxRecordedRequests);
  }

  injectFault(fault: FaultName, options?: InjectFaultOptions): void {
    this.#faults.inject(fault, options);
  }

  clearFaults(): void {
    this.#faults.clear();
  }

  pendingFaults(): readonly PendingFault[] {
    return this.#faults.pending();
  }

  stats(): EmulatorStats {
    return this.#log.stats();
  }

  reset(): void {
    this.#faults.clear();
    this.#log.clear();
    this.#bucket = makeBucket(this.#settings.imagesPerMinute);
  }

  async close(): Promise<void> {
    for (const controller of this.#inflight) controller.abort(connectionResetError('mid_stream'));
    this.#inflight.clear();
    await Promise.all([...this.#servers].map((server) => server.close()));
    this.#servers.clear();
  }

  async listen(options: ListenOptions = {}): Promise<EmulatorServer> {
    const server = await listenWithNodeHttp(
      {
        handle: (request) => this.fetch(request),
        badRequest: () => this.#decorate(badRequest('The Host header of the request is not valid.', null, 'invalid_host'), newRequestId()),
        internalError: () => this.#decorate(serverError(), newRequestId()),
      },
      options,
    );
    const tracked: EmulatorServer = {
      url: server.url,
      port: server.port,
      close: async () => {
        this.#servers.delete(tracked);
        await server.close();
      },
    };
    this.#servers.add(tracked);
    return tracked;
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request && init === undefined ? input : new Request(resolveUrl(input), init);
    if (request.signal.aborted) throw request.signal.reason;

    // "Are you an emulator?" (a Pictor client asks before its first job): the headers alone, not recorded.
    if (request.method === 'HEAD') return this.#decorate(new Response(null, { status: 405, headers: { allow: 'POST' } }), newRequestId());
    const url = new URL(request.url);
    const id = newRequestId();
    const record = this.#log.start({ id, method: request.method, path: url.pathname });
    const controller = new AbortController();
    const onCallerAbort = () => controller.abort(request.signal.reason);
    request.signal.addEventListener('abort', onCallerAbort, { once: true });
    this.#inflight.add(controller);
    let streamOpen = false;
    let admitted = false;
    const admit = (): boolean => {
      if (this.#imageRequests >= this.#settings.maxRequestsInFlight) return false;
      this.#imageRequests++;
      admitted = true;
      return true;
    };
    const release = () => {
      request.signal.removeEventListener('abort', onCallerAbort);
      this.#inflight.delete(controller);
      if (admitted) {
        admitted = false;
        this.#imageRequests--;
      }
    };

    try {
      const response = await this.#answer(request, url, record, controller, admit, (state) => {
        this.#log.stream(state);
        if (state === 'open') streamOpen = true;
        else release();
      });
      return await this.#finish(response, record);
    } catch (err) {
      if (isConnectionReset(err)) {
        this.#log.answered(record, 0);
        throw err;
      }
      if (controller.signal.aborted) {
        this.#log.answered(record, 0);
        throw controller.signal.reason;
      }
      this.#settings.logger?.error({ err, requestId: id, path: url.pathname }, 'the emulator failed to answer a request');
      return this.#finish(serverError(), record);
    } finally {
      if (!streamOpen) release();
    }
  };

  async #answer(
    request: Request,
    url: URL,
    record: ReceivedRequest,
    controller: AbortController,
    admit: () => boolean,
    onStream: (state: 'open' | 'closed') => void,
  ): Promise<Response> {
    const route = ROUTES[url.pathname];
    if (!route) return notFound(request.method, url.pathname);
    record.route = route;
    if (request.method !== 'POST') return methodNotAllowed(request.method, url.pathname);

    const settings = this.#settings;
    const auth = checkBearer(request.headers.get('authorization'), settings.apiKeys);
    record.authorized = auth === 'ok';
    if (auth !== 'ok') return invalidApiKey(auth);
    // Before its body is read: an edit's inputs are image work too.
    if (!admit()) return tooManyRequestsInFlight(settings.maxRequestsInFlight, IN_FLIGHT_RETRY_AFTER_MS);

    const call = route === 'generations' ? await parseGenerationCall(request) : await parseEditCall(request, settings, controller.signal);
    record.fields = call.fields;
    record.images = call.images;
    if (!call.ok) return call.response;
    const job = call.job;
    record.parsed = wireFields(job.request);
    record.stream = job.request.stream;

    const fault = this.#faults.take(route, call.fields);
    if (fault) {
      record.fault = fault.fault;
      this.#log.count('faultsApplied');
      const answer = faultAnswer(fault, settings);
      if (answer) return answer;
    }

    if (settings.quotaExhausted) return insufficientQuota();
    const marker = settings.moderationMarker;
    if (marker && job.request.prompt.toLowerCase().includes(marker.toLowerCase())) return moderationBlocked();
    if (this.#bucket) {
      const taken = this.#bucket.take(job.request.n);
      if (!taken.ok) return rateLimitExceeded(this.#bucket.capacity, taken.retryAfterMs);
    }

    return respondWithImages(job, {
      renderer: this.#renderer,
      latencyMs: settings.latencyMs,
      latencyScales: settings.latencyScales,
      defaultPartialImages: settings.defaultPartialImages,
      padImageBytes: settings.padImageBytes,
      fault: fault && isStreamFault(fault.fault) ? fault.fault : undefined,
      missingFields: fault?.fields ?? [],
      signal: controller.signal,
      cancel: (reason) => controller.abort(reason),
      renderFailed: (err) => {
        // Its caller has gone (its image work left the line): no answer, as for any request whose caller went away.
        if (controller.signal.aborted) throw controller.signal.reason;
        if (job.kind === 'edit') return badRequest('The input images could not be read as images.', 'image', 'invalid_image_file');
        settings.logger?.error({ err, requestId: record.id }, 'the emulator failed to render an image');
        return serverError();
      },
      onPartialSent: () => this.#log.count('partialImagesSent'),
      onImageSent: () => this.#log.count('imagesGenerated'),
      onStream,
    });
  }

  async #finish(response: Response, record: ReceivedRequest): Promise<Response> {
    this.#decorate(response, record.id);
    this.#log.answered(record, response.status, await errorOf(response));
    return response;
  }

  #decorate(response: Response, id: string): Response {
    response.headers.set('x-request-id', id);
    if (this.#settings.identifyAsEmulator) response.headers.set(EMULATOR_HEADER, '1');
    if (this.#bucket) {
      for (const [name, value] of Object.entries(rateLimitHeaders(this.#bucket))) response.headers.set(name, value);
    }
    return response;
  }
}

/** The answer that replaces the normal one, for faults that do; stream faults and resets are handled elsewhere. */
function faultAnswer(fault: AppliedFault, settings: EmulatorSettings): Response | undefined {
  switch (fault.fault) {
    case 'reset_before_response':
      throw connectionResetError('before_response');
    case 'server_error':
      return serverError();
    case 'service_unavailable':
      return serviceUnavailable(fault.retryAfterMs);
    case 'rate_limited':
      return rateLimitExceeded(settings.imagesPerMinute || undefined, fault.retryAfterMs);
    case 'html_error':
      return htmlBadGateway();
    case 'unknown_partial_images':
      return badRequest("Unknown parameter: 'partial_images'.", 'partial_images', 'unknown_parameter');
    default:
      return undefined;
  }
}

function makeBucket(imagesPerMinute: number | undefined): TokenBucket | undefined {
  return imagesPerMinute && imagesPerMinute > 0 ? new TokenBucket(imagesPerMinute) : undefined;
}

function newRequestId(): string {
  return `req_${randomBytes(16).toString('hex')}`;
}

/** Relative paths (`/v1/images/generations`) are taken as paths on the emulator. */
function resolveUrl(input: string | URL | Request): string | URL | Request {
  if (typeof input === 'string' && input.startsWith('/')) return new URL(input, 'http://emulator.local');
  return input;
}

async function errorOf(response: Response): Promise<ReceivedRequest['error']> {
  if (response.status < 400 || !(response.headers.get('content-type') ?? '').includes('json')) return undefined;
  try {
    const body = (await response.clone().json()) as { error?: { type?: unknown; code?: unknown; param?: unknown } };
    const str = (v: unknown) => (typeof v === 'string' ? v : null);
    return body.error ? { type: str(body.error.type), code: str(body.error.code), param: str(body.error.param) } : undefined;
  } catch {
    return undefined;
  }
}
