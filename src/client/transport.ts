import { Blob } from 'node:buffer';
import { FormData, request, type Dispatcher } from 'undici';
import { EDIT_FILE_FIELD, FILE_EXTENSIONS, mimeTypeOf, sniffImageType } from '../spec/index.js';
import { isEditRequest, wireFields, type ImageRequest } from '../spec/request-schemas.js';
import { AbortedError, ConnectionError, TimeoutError, type PictorError } from '../core/errors.js';

/** One HTTP exchange with the service, as the client sees it. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Dispatcher.ResponseData['body'];
  requestId: string | undefined;
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
}

/** Builds the body: JSON for generations, multipart with `image[]` parts of real content types for edits. */
export function encodeBody(req: ImageRequest): { body: string | FormData; contentType: string | undefined } {
  const fields = wireFields(req);
  if (!isEditRequest(req)) return { body: JSON.stringify(fields), contentType: 'application/json' };
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) form.append(key, String(value));
  req.image.forEach((img, i) => {
    const format = sniffImageType(img.data) ?? 'png';
    const filename = img.filename ?? `image-${i + 1}.${FILE_EXTENSIONS[format]}`;
    form.append(EDIT_FILE_FIELD, new Blob([img.data], { type: mimeTypeOf(format) }), filename);
  });
  // undici sets the multipart boundary itself.
  return { body: form, contentType: undefined };
}

export function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

export async function send(options: SendOptions): Promise<RawResponse> {
  const { body, contentType } = encodeBody(options.request);
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.apiKey}`,
    accept: options.request.stream ? 'text/event-stream' : 'application/json',
    'user-agent': options.userAgent,
  };
  if (contentType) headers['content-type'] = contentType;
  try {
    const res = await request(options.url, {
      method: 'POST',
      headers,
      body,
      signal: options.signal,
      dispatcher: options.dispatcher,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
    });
    const flat = flattenHeaders(res.headers);
    return { status: res.statusCode, headers: flat, body: res.body, requestId: flat['x-request-id'] };
  } catch (error) {
    throw classifyTransportError(error, { signal: options.signal, url: options.url, idleTimeoutMs: options.idleTimeoutMs, headersTimeoutMs: options.headersTimeoutMs, phase: 'connect' });
  }
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

/**
 * Maps what undici throws to our tree. `signal.reason` says why we aborted:
 * a TimeoutError (total timeout) or the caller's cancel.
 */
export function classifyTransportError(
  error: unknown,
  ctx: { signal: AbortSignal; url: string; idleTimeoutMs: number; headersTimeoutMs: number; phase: 'connect' | 'body' },
): PictorError {
  if (ctx.signal.aborted) {
    const reason: unknown = ctx.signal.reason;
    if (reason instanceof TimeoutError || reason instanceof AbortedError) return reason;
    return new AbortedError('the request was cancelled', { cause: reason });
  }
  const code = errorCode(error);
  if (code === 'UND_ERR_BODY_TIMEOUT') return new TimeoutError('idle', ctx.idleTimeoutMs, { cause: error });
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new TimeoutError('total', ctx.headersTimeoutMs, { cause: error });
  if (ctx.phase === 'body') {
    return new ConnectionError('the connection broke while the response was arriving', { cause: error, url: ctx.url });
  }
  const what = code && CONNECTION_CODES.has(code) ? code : error instanceof Error ? error.message : 'unknown error';
  return new ConnectionError(`could not reach the image service at ${new URL(ctx.url).origin} (${what})`, { cause: error, url: ctx.url });
}
