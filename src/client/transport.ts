import { randomBytes } from 'node:crypto';
import { Agent, Client, Dispatcher, EnvHttpProxyAgent, getGlobalDispatcher, Pool, ProxyAgent, request } from 'undici';
import { EDIT_FILE_FIELD, FILE_EXTENSIONS, mimeTypeOf, sniffImageType } from '../spec/index.js';
import { isEditRequest, wireFields, type ImageRequest } from '../spec/request-schemas.js';
import { AbortedError, ConnectionError, redactSecrets, sanitizeServiceText, StreamBrokenError, TimeoutError, type PictorError } from '../core/errors.js';

/** One HTTP exchange with the service, as the client sees it. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Dispatcher.ResponseData['body'];
  /** The service's `x-request-id`, with any secret in it redacted (`requestIdOf`). */
  requestId: string | undefined;
  /**
   * The whole response has arrived: the service ended the body, whose end may still wait in its buffer
   * (reading on reaches it at once). False while more may come, or when the dispatcher does not say.
   */
  ended: () => boolean;
}

export interface SendOptions {
  url: string;
  apiKey: string;
  request: ImageRequest;
  userAgent: string;
  dispatcher?: Dispatcher | undefined;
  signal: AbortSignal;
  /** Longest wait for the response headers (a non-streamed job answers only when done). */
  headersTimeoutMs: number;
  /** Longest silence between two pieces of the body. */
  idleTimeoutMs: number;
  /** Filled in as the request goes out (to tell later failures that may be billed from ones that cannot). */
  progress?: SendProgress | undefined;
}

/** A request body: its bytes (read once), their type and their length. */
export interface EncodedBody {
  body: string | Iterable<Uint8Array>;
  contentType: string;
  contentLength: number;
}

/**
 * Builds the body: JSON for generations; for edits multipart/form-data (the
 * WHATWG encoding, as a browser or undici's FormData sends it) with `image[]`
 * parts of real content types, whose bytes are the caller's own buffers: an
 * input image is never copied (no Blob per part), and each part is let go as
 * soon as it has been handed to the connection.
 */
export function encodeBody(req: ImageRequest): EncodedBody {
  const fields = wireFields(req);
  if (!isEditRequest(req)) {
    const json = JSON.stringify(fields);
    return { body: json, contentType: 'application/json', contentLength: Buffer.byteLength(json) };
  }
  const boundary = `----pictor-${randomBytes(12).toString('hex')}`;
  const parts: Uint8Array[] = [];
  for (const [key, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${escapeFormName(key)}"\r\n\r\n${normalizeLineBreaks(String(value))}\r\n`));
  }
  req.image.forEach((img, i) => {
    const format = sniffImageType(img.data) ?? 'png';
    const filename = img.filename ?? `image-${i + 1}.${FILE_EXTENSIONS[format]}`;
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${escapeFormName(EDIT_FILE_FIELD)}"; filename="${escapeFormName(filename)}"\r\nContent-Type: ${mimeTypeOf(format)}\r\n\r\n`),
      img.data,
      CRLF,
    );
  });
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  const contentLength = parts.reduce((sum, part) => sum + part.byteLength, 0);
  return { body: handOnce(parts), contentType: `multipart/form-data; boundary=${boundary}`, contentLength };
}

const CRLF = Buffer.from('\r\n');

/** The parts in order, each dropped from the list as it is handed on: once written, nothing here keeps it. */
function* handOnce(parts: Uint8Array[]): Generator<Uint8Array> {
  for (let part = parts.shift(); part !== undefined; part = parts.shift()) yield part;
}

/** A name or file name in a Content-Disposition header, as the WHATWG encoding escapes it. */
function escapeFormName(name: string): string {
  return normalizeLineBreaks(name).replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/"/g, '%22');
}

/** Line breaks as CRLF, as the WHATWG encoding sends a text field. */
function normalizeLineBreaks(text: string): string {
  return text.replace(/\r?\n|\r/g, '\r\n');
}

export function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/**
 * What became of one request on the wire, as undici reports it to the
 * request's handler: whether a connection was made for it, and whether any
 * byte of its body was handed to the socket. This is what decides a retry.
 */
export class SendProgress {
  /** A connection was made and the request was about to be written. */
  connected = false;
  /** Bytes of the body handed to the socket. */
  bodyBytesSent = 0;
  /** The whole request (head and body) was written. */
  requestSent = false;
  /** A response began to arrive. */
  responseStarted = false;
  /** The whole response arrived (its body may not have been read yet). */
  responseEnded = false;

  /**
   * The request may have reached the service. With an undici dispatcher of
   * this package's major (`tracksBodyProgress`), body progress is reported, so
   * a connection that closed before the first body byte is still safe. With
   * any other dispatcher (composed interceptors do not pass body progress on),
   * a made connection counts as sent, and so does any timeout or cancel (`classifyTransportError`).
   */
  mayHaveReachedService(tracksBody: boolean): boolean {
    if (this.bodyBytesSent > 0 || this.requestSent || this.responseStarted) return true;
    return this.connected && !tracksBody;
  }
}

/**
 * Passes every call to an inner dispatcher and reports the request's progress
 * (connection made, body bytes written) through the handler's own callbacks,
 * which undici calls on the handler it was given.
 */
class ProgressDispatcher extends Dispatcher {
  readonly #inner: Dispatcher;
  readonly #progress: SendProgress;

  constructor(inner: Dispatcher, progress: SendProgress) {
    super();
    this.#inner = inner;
    this.#progress = progress;
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const progress = this.#progress;
    const legacy = handler as LegacyHandler;
    const tracked: LegacyHandler = {
      onConnect: (abort, context) => {
        progress.connected = true;
        return legacy.onConnect?.(abort, context);
      },
      onBodySent: (chunk) => {
        progress.bodyBytesSent += chunk.length;
        return legacy.onBodySent?.(chunk);
      },
      onRequestSent: () => {
        progress.requestSent = true;
        return legacy.onRequestSent?.();
      },
      onResponseStarted: () => {
        progress.responseStarted = true;
        return legacy.onResponseStarted?.();
      },
      onHeaders: (statusCode, rawHeaders, resume, statusText) => {
        progress.responseStarted = true;
        return legacy.onHeaders?.(statusCode, rawHeaders, resume, statusText) ?? true;
      },
      onUpgrade: (statusCode, rawHeaders, socket) => legacy.onUpgrade?.(statusCode, rawHeaders, socket),
      onData: (chunk) => legacy.onData?.(chunk) ?? true,
      onComplete: (trailers) => {
        progress.responseEnded = true;
        return legacy.onComplete?.(trailers);
      },
      onError: (error) => legacy.onError?.(error),
    };
    return this.#inner.dispatch(options, tracked as Dispatcher.DispatchHandler);
  }

  override close(): Promise<void> {
    return Promise.resolve();
  }

  override destroy(): Promise<void> {
    return Promise.resolve();
  }
}

/** The callbacks undici's `request()` gives a dispatcher (its handler style that reports body progress). */
interface LegacyHandler {
  onConnect?: (abort: (err?: Error) => void, context?: unknown) => void;
  onBodySent?: (chunk: Uint8Array) => void;
  onRequestSent?: () => void;
  onResponseStarted?: () => void;
  onHeaders?: (statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string) => boolean;
  onUpgrade?: (statusCode: number, rawHeaders: Buffer[] | string[] | null, socket: unknown) => void;
  onData?: (chunk: Buffer) => boolean;
  onComplete?: (trailers: string[] | null) => void;
  onError?: (error: Error) => void;
}

/**
 * Dispatchers of this undici major that hand a request's own handler to the connection, so body progress reaches us:
 * one of these classes whose `dispatch` is still the class's own. A composed one (`new Agent().compose(…)`) is still an
 * instance of its class (undici's `compose` returns a proxy of it) but dispatches through interceptors that pass no
 * body progress on, as does a subclass with a `dispatch` of its own.
 */
function tracksBodyProgress(dispatcher: Dispatcher): boolean {
  return [Agent, Pool, Client, ProxyAgent, EnvHttpProxyAgent].some((Class) => dispatcher instanceof Class && dispatcher.dispatch === Class.prototype.dispatch);
}

export async function send(options: SendOptions): Promise<RawResponse> {
  const { body, contentType, contentLength } = encodeBody(options.request);
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.apiKey}`,
    accept: options.request.stream ? 'text/event-stream' : 'application/json',
    'user-agent': options.userAgent,
    'content-type': contentType,
    'content-length': String(contentLength),
  };
  const inner = options.dispatcher ?? getGlobalDispatcher();
  const progress = options.progress ?? new SendProgress();
  // A request cancelled (or timed out) before it is handed to undici never leaves, whatever the dispatcher.
  const tracked = options.signal.aborted || tracksBodyProgress(inner);
  try {
    const res = await request(options.url, {
      method: 'POST',
      headers,
      // undici takes an iterable body (its Dispatcher docs), which its request() typings leave out.
      body: body as unknown as Dispatcher.DispatchOptions['body'],
      signal: options.signal,
      dispatcher: new ProgressDispatcher(inner, progress),
      // A fresh connection per request: a reused keep-alive connection that the server (or a proxy) has just closed
      // fails after the body was written, and such a request may not be sent again. A handshake is cheap next to an image.
      reset: true,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
    });
    const flat = flattenHeaders(res.headers);
    return { status: res.statusCode, headers: flat, body: res.body, requestId: requestIdOf(flat), ended: () => progress.responseEnded };
  } catch (error) {
    throw classifyTransportError(error, {
      signal: options.signal,
      url: options.url,
      idleTimeoutMs: options.idleTimeoutMs,
      headersTimeoutMs: options.headersTimeoutMs,
      phase: progress.mayHaveReachedService(tracked) ? 'sent' : 'connect',
      bodyTracked: tracked,
    });
  }
}

/**
 * The request id a response names, as every error, result, log line and usage record carries it: through the one
 * redaction, so a service that echoes the key (or a token) back as its id never hands it on. A plain id is kept as sent.
 */
export function requestIdOf(headers: Record<string, string>): string | undefined {
  const id = headers['x-request-id'];
  return id === undefined ? undefined : redactSecrets(id);
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
]);

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function describeCause(error: unknown): string {
  const code = errorCode(error);
  if (code && CONNECTION_CODES.has(code)) return code;
  return error instanceof Error ? sanitizeServiceText(error.message, 120) : 'unknown error';
}

/**
 * Maps what undici throws to our tree. `signal.reason` says why we aborted:
 * a TimeoutError (total timeout) or the caller's cancel; either says whether
 * it struck before any byte of the body left (`mayBeBilled`), the one fact the
 * charge rule reads (src/spend/charge-rules.ts). `phase` says how far
 * the request got: `connect` (no byte of the body left: safe to send again),
 * `sent` (the body, or part of it, left before the connection broke: may be
 * billed) or `body` (the answer was arriving). `bodyTracked: false`: the
 * dispatcher does not tell us what left (`tracksBodyProgress`), so a timeout
 * or a cancel counts as after sending whatever `phase` says: only a dispatcher
 * that reports body progress can show that no byte of the body left.
 */
export function classifyTransportError(
  error: unknown,
  ctx: { signal: AbortSignal; url: string; idleTimeoutMs: number; headersTimeoutMs: number; phase: 'connect' | 'sent' | 'body'; bodyTracked?: boolean | undefined },
): PictorError {
  const sent = ctx.phase !== 'connect';
  if (ctx.signal.aborted) {
    const reason: unknown = ctx.signal.reason;
    if (reason instanceof TimeoutError) return sent || ctx.bodyTracked === false ? reason.afterSending() : reason;
    if (reason instanceof AbortedError) return sent || ctx.bodyTracked === false ? reason : reason.beforeSending();
    return new AbortedError('the request was cancelled', { cause: reason });
  }
  const code = errorCode(error);
  if (code === 'UND_ERR_BODY_TIMEOUT') return new TimeoutError('idle', ctx.idleTimeoutMs, { cause: error, mayBeBilled: true });
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new TimeoutError('total', ctx.headersTimeoutMs, { cause: error, mayBeBilled: true });
  if (ctx.phase === 'body') {
    return new StreamBrokenError(`the connection broke while the result was arriving (${describeCause(error)}); the job may have been billed, so it was not sent again`, {
      cause: error,
    });
  }
  if (ctx.phase === 'sent') {
    return new StreamBrokenError(
      `the connection broke after the request was sent and before any answer (${describeCause(error)}); the job may have been billed, so it was not sent again`,
      { cause: error },
    );
  }
  return new ConnectionError(`could not reach the image service at ${new URL(ctx.url).origin} (${describeCause(error)})`, { cause: error, url: ctx.url });
}

/** Drops a response body (and its connection, unless it was read to the end); the abort this causes is expected, not an error. */
export function discardBody(body: RawResponse['body']): void {
  if (body.destroyed) return;
  body.on('error', () => {});
  body.destroy();
}
