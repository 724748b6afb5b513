/**
 * One tree of typed errors. Every error has a stable `code` that callers
 * (bots, node, CLI) switch on; messages are for people and never carry secrets.
 */

import { describeDuration } from './describe-duration.js';
import { redactSecrets } from './redact-secrets.js';

export { redactSecrets, registerSecret } from './redact-secrets.js';

/**
 * Codes of an error answer of the service, or of a request that never reached it: the service made nothing beyond
 * the images it had already sent. Every other code leaves the outcome at the service unknown. The spend guard's
 * billing rule (src/spend/charge-rules.ts) reads this split; a new code must take a side here.
 */
export const ANSWERED_ERROR_CODES = [
  'validation_error',
  'authentication_failed',
  'permission_denied',
  'moderation_blocked',
  'rate_limited',
  'quota_exhausted',
  'bad_request',
  'not_found',
  'server_error',
  'api_error',
  'connection_failed',
] as const;

/** Codes of an ending whose outcome at the service is unknown: it may have made, and billed, images we never saw. */
const UNKNOWN_OUTCOME_CODES = ['timeout', 'aborted', 'stream_broken', 'bad_response'] as const;

export const ERROR_CODES = [...ANSWERED_ERROR_CODES, ...UNKNOWN_OUTCOME_CODES] as const;

export type PictorErrorCode = (typeof ERROR_CODES)[number];

/**
 * The code of a failure that is none of the project's errors (a bug of ours, or a library's throw): not a code of the
 * tree above, the one word the CLI's --json lines, the chat bots and the n8n node give it, so every failure they report
 * has a stable code.
 */
export const INTERNAL_ERROR_CODE = 'internal_error' as const;

/**
 * The code of a job whose images the service made (and billed) but that could not all be kept where the surface keeps
 * them (the CLI's output folder, n8n's binary data store): the images that were kept are delivered, and this code says
 * how many were not. Not a failure of the service, so not one of ERROR_CODES.
 */
export const OUTPUT_NOT_WRITTEN_CODE = 'output_not_written' as const;

/**
 * The root of every error the project raises. The core's own errors use the
 * codes above; an error of a part above the core (the spend guard, the bots,
 * the CLI) names its own stable code as `C`.
 */
export class PictorError<C extends string = PictorErrorCode> extends Error {
  readonly code: C;

  constructor(code: C, message: string, options?: { cause?: unknown }) {
    super(redactSecrets(message), options);
    this.code = code;
    this.name = new.target.name;
  }
}

/**
 * The stable code every surface (the CLI's --json lines, the n8n node's failed items) reports for a failure: a project
 * error keeps its own `code` (`quota_store_closed`, `ledger_busy`, …), anything else is INTERNAL_ERROR_CODE.
 */
export function errorCodeOf(error: unknown): string {
  return error instanceof PictorError ? error.code : INTERNAL_ERROR_CODE;
}

/**
 * Codes of a failure only the operator can end, by changing a setting (`validation_error`) or a file the project
 * keeps (restore it, make it readable to the process, or move it aside: the spend ledger's, the bots' state's, what
 * an older version left). Their messages name the setting or the file and what to do. `npm start` refused by one
 * exits 2 with its message as it is; any other failure to start (a network, a service, Redis: trying again may work)
 * exits 1 as "could not start". An error of that kind, whatever part raises it, takes its code here.
 */
export const OPERATOR_FIX_CODES = ['validation_error', 'ledger_unreadable', 'job_store_unreadable', 'history_store_unreadable', 'old_file_unreadable', 'state_records_unreadable'] as const;

/** Whether only the operator can end `error` (its `code` is one of `OPERATOR_FIX_CODES`): by code, so it works for any error carrying one and across copies of this module. */
export function operatorMustFix(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && (OPERATOR_FIX_CODES as readonly string[]).includes(code);
}

/** Longest piece of server-provided text kept in an error message. */
export const MAX_SERVICE_TEXT = 300;

/**
 * Server-provided text made safe to print: secrets redacted, ANSI escapes and
 * control characters removed, whitespace collapsed, cut to a sane length.
 * Redaction sees the text's lines, so a value without its closing quote ends
 * at its line's end at the latest, never at the end of the message.
 */
export function sanitizeServiceText(text: string, maxLength = MAX_SERVICE_TEXT): string {
  const lines = text
    // eslint-disable-next-line no-control-regex
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(\u0007|\u001b\\)?|\u001b[@-_]?/g, '')
    .replace(/\r\n?|[\n\u2028\u2029]/g, '\n')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g, ' ');
  const cleaned = redactSecrets(lines).replace(/\s+/g, ' ').trim();
  return cleaned.length > maxLength ? `${cleaned.slice(0, maxLength)}…` : cleaned;
}

/**
 * Which rule of the spec a field broke, and its values, for a caller that words it itself (the bots say it in a
 * member's language): the message says the same in English. `empty` and `too_long` are a text's (the prompt's);
 * `one_of` a field that takes one of `values`; `integer_range` a whole number from `min` to `max`;
 * `transparent_format` and `compression_format` an `output_format` (`given`) that the background or the compression
 * does not go with, and the `formats` that do. Every rule names the request `fields` it is about (the field at fault
 * among them): one for a field's own rule, both for a rule between two (`background` and `output_format`), so a caller
 * that must tell which of its choices a rule is about (a bot's house style) reads them here, never from a list of its own.
 */
export type ValidationRule = { readonly fields: readonly string[] } & (
  | { readonly kind: 'empty' }
  | { readonly kind: 'too_long'; readonly max: number }
  | { readonly kind: 'one_of'; readonly values: readonly string[] }
  | { readonly kind: 'integer_range'; readonly min: number; readonly max: number }
  | { readonly kind: 'transparent_format' | 'compression_format'; readonly formats: readonly string[]; readonly given: string }
);

/** Input that breaks a rule of the spec. Raised before anything is sent. */
export class ValidationError extends PictorError {
  /** The field at fault, as the spec names it (`size`, `output_format`, `image[2]`). */
  readonly param: string;
  /** What the field accepts, in words. */
  readonly allowed: string | undefined;
  /** The rule `param` broke, when it is one of the kinds above (the first problem's, when there are more). */
  readonly rule: ValidationRule | undefined;
  /** Every problem found, when there is more than one. */
  readonly issues: readonly { param: string; message: string }[];

  constructor(param: string, message: string, options: { allowed?: string; rule?: ValidationRule; issues?: { param: string; message: string }[] } = {}) {
    super('validation_error', message);
    this.param = param;
    this.allowed = options.allowed;
    this.rule = options.rule;
    this.issues = options.issues ?? [{ param, message }];
  }
}

export interface APIErrorDetails {
  status: number | undefined;
  headers?: Record<string, string> | undefined;
  requestId?: string | undefined;
  /** The service's own `error.code`, e.g. `rate_limit_exceeded`. */
  serviceCode?: string | undefined;
  /** The service's `error.type`. */
  serviceType?: string | undefined;
  /** The service's `error.param`: the field it rejected. */
  param?: string | undefined;
  cause?: unknown;
}

/** The service answered with an error (or sent one inside a stream). */
export class APIError extends PictorError {
  readonly status: number | undefined;
  readonly headers: Record<string, string>;
  readonly requestId: string | undefined;
  readonly serviceCode: string | undefined;
  readonly serviceType: string | undefined;
  readonly param: string | undefined;
  /**
   * How many times the client sent the request whose answer this is, when the client gave up on it: with retries, it
   * may be fewer than Max Retries allows (the wait before the next attempt was longer than the request's time left:
   * `stoppedFor` says whose wait it was). Undefined
   * for an error event inside a stream, which is never retried.
   */
  attempts: number | undefined;
  /**
   * Why the client stopped before its retries ran out, when it did: the wait before the next attempt was longer than
   * the request's time left, and that wait was the one the service asked for (`service_wait`: its `retry-after`) or
   * the client's own backoff, the service having named none (`backoff`). Undefined when it did not stop early.
   */
  stoppedFor: 'service_wait' | 'backoff' | undefined;

  constructor(code: PictorErrorCode, message: string, details: APIErrorDetails) {
    super(code, message, { cause: details.cause });
    this.status = details.status;
    this.headers = Object.fromEntries(Object.entries(details.headers ?? {}).map(([k, v]) => [k, redactSecrets(v)]));
    this.requestId = details.requestId;
    this.serviceCode = details.serviceCode;
    this.serviceType = details.serviceType;
    this.param = details.param;
  }
}

export class BadRequestError extends APIError {}
export class AuthenticationError extends APIError {}
export class PermissionDeniedError extends APIError {}
export class NotFoundError extends APIError {}
/** The prompt or an image was refused by moderation. Never retried. */
export class ModerationError extends APIError {}
/** 429 `rate_limit_exceeded`: wait and retry. */
export class RateLimitError extends APIError {
  /** How long the service asked us to wait, when it said. */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, details: APIErrorDetails & { retryAfterMs?: number | undefined }) {
    super('rate_limited', message, details);
    this.retryAfterMs = details.retryAfterMs;
  }
}
/** 429 `insufficient_quota`: out of credit. Never retried. */
export class QuotaExhaustedError extends APIError {}
export class ServerError extends APIError {}

/** The request never reached the service (DNS, refused connection, connect timeout, closed before the body left): safe to send again. */
export class ConnectionError extends PictorError {
  readonly url: string | undefined;
  constructor(message: string, options: { cause?: unknown; url?: string } = {}) {
    super('connection_failed', message, { cause: options.cause });
    this.url = options.url;
  }
}

export class TimeoutError extends PictorError {
  /** `idle`: nothing arrived for too long; `total`: the whole request took too long. */
  readonly kind: 'idle' | 'total';
  readonly timeoutMs: number;
  /** The request had been sent when time ran out: the job may be billed, so it is not sent again. */
  readonly mayBeBilled: boolean;
  /** The whole images of a JSON answer that arrived before time ran out (see `withPartial`): they may be paid for. */
  readonly partial: unknown;
  constructor(kind: 'idle' | 'total', timeoutMs: number, options: { cause?: unknown; mayBeBilled?: boolean; partial?: unknown } = {}) {
    const what = kind === 'idle' ? `the service sent nothing for ${describeDuration(timeoutMs)}` : `the request took longer than ${describeDuration(timeoutMs)}`;
    super('timeout', options.mayBeBilled ? `${what}; the request had been sent, so the job may have been billed and was not sent again` : what, options);
    this.kind = kind;
    this.timeoutMs = timeoutMs;
    this.mayBeBilled = options.mayBeBilled ?? false;
    this.partial = options.partial;
  }

  /** The same timeout, known to have struck after the request was sent: made anew, as its message words that. */
  afterSending(): TimeoutError {
    return this.mayBeBilled ? this : new TimeoutError(this.kind, this.timeoutMs, { cause: this.cause, mayBeBilled: true, partial: this.partial });
  }
}

export class AbortedError extends PictorError {
  /**
   * The request may have reached the service before the cancel: true unless the client saw that no byte of it left
   * (`beforeSending`): cancelled before it started, in the queue or in a retry wait, the limiter stopped or failed, or
   * `beforeSend` stopped it with a cancel.
   */
  readonly mayBeBilled: boolean;
  /** The whole images of a JSON answer that arrived before the cancel (see `withPartial`): they may be paid for. */
  readonly partial: unknown;
  constructor(message = 'the request was cancelled', options: { cause?: unknown; mayBeBilled?: boolean; partial?: unknown } = {}) {
    super('aborted', message, options);
    this.mayBeBilled = options.mayBeBilled ?? true;
    this.partial = options.partial;
  }

  /** The same cancel (its message, cause, images and stack), known to have struck before any byte of the request left. */
  beforeSending(): AbortedError {
    return this.mayBeBilled ? copyWith(this, { mayBeBilled: false }) : this;
  }
}

/** A stream started but broke: reset, malformed event, or ended before its result. */
export class StreamBrokenError extends PictorError {
  readonly requestId: string | undefined;
  /** The whole images of a JSON answer that arrived before it broke off (see `withPartial`): they may be paid for. */
  readonly partial: unknown;
  constructor(message: string, options: { cause?: unknown; requestId?: string | undefined; partial?: unknown } = {}) {
    super('stream_broken', message, { cause: options.cause });
    this.requestId = options.requestId;
    this.partial = options.partial;
  }
}

/**
 * The service answered 200 with something that is not what was asked: no
 * images, too few or too many, bytes that are not an image of the requested
 * format, more `completed` events than images. The job may have been billed,
 * so it is never sent again.
 */
export class BadResponseError extends PictorError {
  readonly requestId: string | undefined;
  /** What did arrive (for example the images of a result with too many or too few), so a paid image is not lost. */
  readonly partial: unknown;
  constructor(message: string, options: { cause?: unknown; requestId?: string | undefined; partial?: unknown } = {}) {
    super('bad_response', `${message}; the job may have been billed, so it was not sent again`, { cause: options.cause });
    this.requestId = options.requestId;
    this.partial = options.partial;
  }
}

/**
 * `error` (a failure while a 200's body arrived: `stream_broken`, `timeout`, `aborted` or `bad_response`) carrying
 * `partial`, the whole images that came before it (a result, as `BadResponseError.partial` is): a copy with the same
 * class, code, message, labels, cause and stack, so a paid image reaches the caller whatever ended the answer. The
 * request id is added to a `stream_broken` or `bad_response` that has none. Any other error, or no images (`partial`
 * undefined), is `error` as it is.
 */
export function withPartial(error: PictorError, partial: unknown, requestId?: string | undefined): PictorError {
  if (partial === undefined || !carriesPartial(error)) return error;
  const named = 'requestId' in error ? { requestId: error.requestId ?? requestId } : {};
  return copyWith(error, { partial, ...named });
}

/**
 * `error` without the images it carries: a copy with the same class, code, message, labels, cause and stack, for a
 * caller that was handed them already (a stream hands each image on as an event, and its error does not carry it
 * again). An error that carries none is `error` as it is.
 */
export function withoutPartial(error: PictorError): PictorError {
  return carriesPartial(error) && error.partial !== undefined ? copyWith(error, { partial: undefined }) : error;
}

/** Whether `error` is of a kind that carries the whole images that came before it: a failure while a 200's body arrived. */
function carriesPartial(error: PictorError): error is StreamBrokenError | TimeoutError | AbortedError | BadResponseError {
  return error instanceof StreamBrokenError || error instanceof TimeoutError || error instanceof AbortedError || error instanceof BadResponseError;
}

/**
 * A copy of `error` (its class, message, labels, cause and stack) with `changes`, for changes its message does not
 * word (a timeout's `mayBeBilled` is worded, so a timeout that changes it is made anew). The copy is made from a real
 * Error, as Node tells one (`util.types.isNativeError`): on Node 22 and later only one of those keeps a stack (a copy
 * made otherwise has none, and is printed without one).
 */
function copyWith<E extends PictorError>(error: E, changes: Record<string, unknown>): E {
  const copy = Object.setPrototypeOf(new Error(), Object.getPrototypeOf(error) as object | null) as E;
  Object.defineProperties(copy, { ...Object.getOwnPropertyDescriptors(error), stack: { value: error.stack, writable: true, configurable: true } });
  return Object.assign(copy, changes);
}

/**
 * Whether an error is one of the core's (its code among `ERROR_CODES`): what a
 * request to the service can fail with. Works across copies of this module (by
 * code, not `instanceof`). Errors of the parts above the core are PictorErrors
 * too, with codes of their own, and have their own guards.
 */
export function isPictorError(value: unknown): value is PictorError {
  return (
    value instanceof Error &&
    typeof (value as { code?: unknown }).code === 'string' &&
    (ERROR_CODES as readonly string[]).includes((value as unknown as { code: string }).code)
  );
}

/**
 * Maps an error answer of the service to the right class. `body` is whatever
 * came back: the service's JSON error shape, or anything else (an HTML page from
 * a proxy, an empty body), which still yields a useful error.
 */
export function makeAPIError(input: {
  status: number | undefined;
  body: unknown;
  rawText?: string | undefined;
  headers?: Record<string, string> | undefined;
  requestId?: string | undefined;
  retryAfterMs?: number | undefined;
  method?: string | undefined;
  url?: string | undefined;
}): APIError {
  const err = extractErrorObject(input.body);
  const serviceCode = err?.code == null ? undefined : sanitizeServiceText(err.code, 100);
  const serviceType = err?.type == null ? undefined : sanitizeServiceText(err.type, 100);
  /** What the service says went wrong: its `code`, or its `type` when it sent no code. */
  const serviceKind = serviceCode ?? serviceType;
  const details: APIErrorDetails = {
    status: input.status,
    headers: input.headers,
    requestId: input.requestId,
    serviceCode,
    serviceType,
    param: err?.param == null ? undefined : sanitizeServiceText(err.param, 100),
  };
  const rawMessage = err?.message ?? summarizeText(input.rawText);
  const serviceMessage = rawMessage === undefined ? undefined : sanitizeServiceText(rawMessage) || undefined;
  // The request is named once: not again when the service's own message already names its path ("Invalid URL (POST /v1/…)").
  const where = input.method && input.url && !serviceMessage?.includes(input.url) ? ` (${input.method} ${input.url})` : '';
  // An HTTP answer leads with its status; an error event inside a stream has none, so the service's words stand alone.
  const said =
    input.status === undefined
      ? (serviceMessage ?? 'the service sent an error event without details')
      : `${input.status}${serviceMessage ? ` ${serviceMessage}` : ' (no error details in the response)'}`;
  const message = `${said}${where}`;

  if (serviceCode === 'moderation_blocked' || serviceType === 'image_generation_user_error') {
    return new ModerationError('moderation_blocked', message, details);
  }
  if (serviceCode === 'insufficient_quota' || serviceType === 'insufficient_quota') {
    return new QuotaExhaustedError('quota_exhausted', message, details);
  }
  switch (input.status) {
    case 400:
    case 409:
    case 413:
    case 415:
    case 422:
      return new BadRequestError('bad_request', message, details);
    case 401:
      return new AuthenticationError('authentication_failed', message, details);
    case 403:
      return new PermissionDeniedError('permission_denied', message, details);
    case 404:
      return new NotFoundError('not_found', message, details);
    case 429:
      return new RateLimitError(message, { ...details, retryAfterMs: input.retryAfterMs });
    default:
      if (input.status !== undefined && input.status >= 500) return new ServerError('server_error', message, details);
      // Without a status (an error event inside a stream) the service's words decide: its `code`, else its `type`
      // (`"type": "server_error", "code": null`), as for moderation and quota above.
      if (serviceKind === 'rate_limit_exceeded') return new RateLimitError(message, { ...details, retryAfterMs: input.retryAfterMs });
      if (serviceKind === 'server_error') return new ServerError('server_error', message, details);
      return new APIError('api_error', message, details);
  }
}

function extractErrorObject(body: unknown): { message?: string; type?: string | null; param?: string | null; code?: string | null } | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const inner = (body as { error?: unknown }).error;
  const candidate = inner && typeof inner === 'object' ? inner : body;
  const rec = candidate as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const message = str(rec.message);
  const code = str(rec.code) ?? (typeof rec.code === 'number' ? String(rec.code) : undefined);
  if (message === undefined && code === undefined && str(rec.type) === undefined) return undefined;
  return { message, type: str(rec.type), param: str(rec.param), code };
}

function summarizeText(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const stripped = sanitizeServiceText(text.slice(0, 64 * 1024).replace(/<[^>]*>/g, ' '), 200);
  return stripped || undefined;
}
