/**
 * One tree of typed errors. Every error has a stable `code` that callers
 * (bots, node, CLI) switch on; messages are for people and never carry secrets.
 */

export const ERROR_CODES = [
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
  'timeout',
  'aborted',
  'stream_broken',
] as const;

export type PictorErrorCode = (typeof ERROR_CODES)[number];

export class PictorError extends Error {
  readonly code: PictorErrorCode;

  constructor(code: PictorErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Input that breaks a rule of the spec. Raised before anything is sent. */
export class ValidationError extends PictorError {
  /** The field at fault, as the spec names it (`size`, `output_format`, `image[2]`). */
  readonly param: string;
  /** What the field accepts, in words. */
  readonly allowed: string | undefined;
  /** Every problem found, when there is more than one. */
  readonly issues: readonly { param: string; message: string }[];

  constructor(param: string, message: string, options: { allowed?: string; issues?: { param: string; message: string }[] } = {}) {
    super('validation_error', message);
    this.param = param;
    this.allowed = options.allowed;
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

  constructor(code: PictorErrorCode, message: string, details: APIErrorDetails) {
    super(code, message, { cause: details.cause });
    this.status = details.status;
    this.headers = details.headers ?? {};
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

/** No answer could be had: DNS, refused or reset connection before any response. */
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
  constructor(kind: 'idle' | 'total', timeoutMs: number, options: { cause?: unknown } = {}) {
    super(
      'timeout',
      kind === 'idle'
        ? `the service sent nothing for ${Math.round(timeoutMs / 1000)} s`
        : `the request took longer than ${Math.round(timeoutMs / 1000)} s`,
      options,
    );
    this.kind = kind;
    this.timeoutMs = timeoutMs;
  }
}

export class AbortedError extends PictorError {
  constructor(message = 'the request was cancelled', options: { cause?: unknown } = {}) {
    super('aborted', message, options);
  }
}

/** A stream started but broke: reset, malformed event, or ended before its result. */
export class StreamBrokenError extends PictorError {
  readonly requestId: string | undefined;
  constructor(message: string, options: { cause?: unknown; requestId?: string | undefined } = {}) {
    super('stream_broken', message, { cause: options.cause });
    this.requestId = options.requestId;
  }
}

/** Type guard that works across copies of this module (by shape, not only `instanceof`). */
export function isPictorError(value: unknown): value is PictorError {
  return (
    value instanceof PictorError ||
    (value instanceof Error &&
      typeof (value as { code?: unknown }).code === 'string' &&
      (ERROR_CODES as readonly string[]).includes((value as unknown as { code: string }).code))
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
  const serviceCode = err?.code ?? undefined;
  const serviceType = err?.type ?? undefined;
  const details: APIErrorDetails = {
    status: input.status,
    headers: input.headers,
    requestId: input.requestId,
    serviceCode,
    serviceType,
    param: err?.param ?? undefined,
  };
  const where = input.method && input.url ? ` (${input.method} ${input.url})` : '';
  const statusText = input.status === undefined ? 'error' : `${input.status}`;
  const serviceMessage = err?.message ?? summarizeText(input.rawText);
  const message = `${statusText}${serviceMessage ? ` ${serviceMessage}` : ' (no error details in the response)'}${where}`;

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
      if (serviceCode === 'rate_limit_exceeded') return new RateLimitError(message, { ...details, retryAfterMs: input.retryAfterMs });
      if (serviceCode === 'server_error') return new ServerError('server_error', message, details);
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
  const stripped = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!stripped) return undefined;
  return stripped.length > 200 ? `${stripped.slice(0, 200)}…` : stripped;
}
