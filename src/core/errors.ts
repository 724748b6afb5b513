/**
 * One tree of typed errors. Every error has a stable `code` that callers
 * (bots, node, CLI) switch on; messages are for people and never carry secrets.
 */

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
 * Secret values (API keys) that must never appear in an error. A client
 * registers its key here when it is made, so an error built anywhere in the
 * process — even from a server that echoes the key back — is scrubbed.
 */
const knownSecrets = new Set<string>();

/** Keys shorter than this are not scrubbed by value (too likely to hit ordinary words). */
const MIN_SECRET_LENGTH = 6;

export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= MIN_SECRET_LENGTH) knownSecrets.add(secret);
}

/**
 * Anything shaped like a credential, even one never registered: `Bearer <token>`, `Basic <base64 of user:password>`,
 * `sk-…` style keys, and the value of a credential field (`Authorization`, `x-api-key`, `api_key`, `api-key`,
 * `access_token`, followed by `:` or `=`). Secrecy wins over keeping words: a field's whole value goes, whatever it
 * looks like, and only the words outside it stay as written.
 */
const BEARER = /\bBearer(\s+|\+|%20)(["'{]?)([A-Za-z0-9._~+/=-]+)/gi;
const BASIC = /\bBasic(\s+)([A-Za-z0-9+/]+={0,2})(?![A-Za-z0-9+/=])/gi;
/** A credential field's name and its separator (after the closing quote of a JSON key, if any); its value follows. */
const CREDENTIAL_FIELD = /(?<![A-Za-z0-9])(authorization|(?:x-)?api[_-]key|access[_-]token)(["']?\s*[:=]\s*)/gi;
/** A quoted value up to its matching closing quote on the same line (a backslash escapes one). */
const QUOTED_VALUE = /(["'])((?:\\.|(?!\1)[^\\\r\n])*)(\1)/y;
/**
 * A quoted value without a closing quote on its line: up to the end of its clause (`,` `;` `.` `!` `?` before a space),
 * an HTML tag or the end of the line. The words after it are the message's, not the value's.
 */
const UNCLOSED_VALUE = /(["'])((?:\\.|(?!<\/?[A-Za-z][^<>]{0,200}>)[^\\\r\n,;.!?]|[,;.!?](?=\S))*)()/y;
/** A word: characters up to a space, a quote, `,`, `}` or an HTML tag (`</p>` ends a word, it is not part of it). */
const WORD = String.raw`(?:(?!<\/?[A-Za-z][^<>]{0,200}>)[^\s"',}])+`;
/** A quoted string, closed on its line or (see `UNCLOSED_VALUE`) not. */
const QUOTED = String.raw`"(?:\\.|[^"\\\r\n])*"|'(?:\\.|[^'\\\r\n])*'|["'](?:\\.|(?!<\/?[A-Za-z][^<>]{0,200}>)[^\\\r\n,;.!?]|[,;.!?](?=\S))*`;
/** An unquoted first word of a value. */
const FIRST_WORD = new RegExp(WORD, 'y');
/** The word after a first word: a quoted string or a plain word. */
const NEXT_WORD = new RegExp(String.raw`(\s+)(${QUOTED}|${WORD})`, 'y');
/** An auth-param of RFC 9110 (`name=value`, `name="…"`). */
const AUTH_PARAM = String.raw`[!#$%&*+.^_\x60|~0-9A-Za-z-]+[ \t]*=[ \t]*(?:${QUOTED}|${WORD})`;
/**
 * The credentials after a scheme (RFC 9110), on its line (or an indented continuation line): a comma-separated list of
 * auth-params, or else one token68 (taken as any word, or a quoted string, so that odd characters are hidden too).
 * What follows them is no longer the field's.
 */
const AUTH_CREDENTIALS = new RegExp(String.raw`((?:\r?\n)?[ \t]+)(${AUTH_PARAM}(?:\s*,(?:\s*,)*\s*${AUTH_PARAM})*|${QUOTED}|${WORD})`, 'y');
/** Authorization schemes whose credential is the one word (or quoted string) after them (Discord's `Bot`, `Token`). */
const ONE_WORD_SCHEMES = new Set(['bearer', 'basic', 'token', 'bot']);
/** Other known schemes (RFC 9110 and common services): their auth-params or token68 are the credential. */
const OTHER_SCHEMES = new Set(['digest', 'negotiate', 'ntlm', 'apikey', 'dpop', 'oauth', 'hoba', 'mutual', 'vapid']);
/** What this module shows instead of a credential. */
const REDACTED = '[redacted]';
/**
 * A value redacted already (perhaps quoted, its closing quote lost to a line end since): redacting it again hides no
 * more, though a message is redacted again once its lines are folded into one (an error built from service text).
 */
const ALREADY_REDACTED = /["']?\[redacted\](?=["'\s,;.!?]|$)/y;
/** A placeholder standing for a credential in a message (`<API_KEY>`, `‹token›`), perhaps ending a sentence. */
const PLACEHOLDER = /^(?:<[^<>\s]+>|‹[^‹›\s]+›)[.;:!?)]*$/;
/**
 * `sk-` at the start of a key and the characters of a key after it. Only a letter, digit, `_` or `-` before it makes it
 * part of a name (`risk-sk-levels`); after `/`, `+`, `%3D` or a quote it is a key.
 */
const SK_KEY = /(?:(?<=%[0-9A-Fa-f]{2})|(?<![A-Za-z0-9_-]))sk-([A-Za-z0-9_-]+)/g;

/** A bearer token, not a word: it has a digit or punctuation in it, or is longer than any English word. */
function looksLikeToken(value: string): boolean {
  return /[0-9._~+/=-]/.test(value) || value.length >= 24;
}

/** Matches `pattern` (sticky) at `at` in `text`. */
function matchAt(pattern: RegExp, text: string, at: number): RegExpExecArray | null {
  pattern.lastIndex = at;
  return pattern.exec(text);
}

/** The inside of a quoted field value, redacted: a known scheme and a lone placeholder stay, everything else goes. */
function redactQuotedValue(inside: string): string {
  const trimmed = inside.trim();
  if (trimmed === '' || PLACEHOLDER.test(trimmed) || ONE_WORD_SCHEMES.has(trimmed.toLowerCase()) || OTHER_SCHEMES.has(trimmed.toLowerCase())) return inside;
  const scheme = /^(\S+)(\s+)(.*)$/s.exec(inside);
  if (scheme) {
    const [, first = '', space = '', rest = ''] = scheme;
    const name = first.toLowerCase();
    if (ONE_WORD_SCHEMES.has(name) && name !== 'basic' && PLACEHOLDER.test(rest.trim())) return inside;
    if (ONE_WORD_SCHEMES.has(name) || OTHER_SCHEMES.has(name)) return `${first}${space}[redacted]`;
  }
  return REDACTED;
}

/**
 * The value of a credential field starting at `at`, redacted: where it ends and what is shown instead, or nothing
 * when it holds no credential. A quoted value goes up to its closing quote (see `UNCLOSED_VALUE` without one); after
 * `Bearer`, `Basic`, `Token` or `Bot` the one word (or quoted string) after the scheme goes; after another known scheme
 * its auth-params or token68 go (see `AUTH_CREDENTIALS`); any other first word goes with the word after it, or with the
 * auth-params after it in an `Authorization` field. The words after that stay.
 */
function redactedFieldValue(text: string, at: number, authorization: boolean): { end: number; shown: string } | undefined {
  if (matchAt(ALREADY_REDACTED, text, at)) return undefined;
  const quoted = matchAt(QUOTED_VALUE, text, at) ?? matchAt(UNCLOSED_VALUE, text, at);
  if (quoted) {
    const [whole, open = '', inside = '', close = ''] = quoted;
    return { end: at + whole.length, shown: `${open}${redactQuotedValue(inside)}${close}` };
  }
  const word = matchAt(FIRST_WORD, text, at);
  if (!word || PLACEHOLDER.test(word[0])) return undefined;
  const first = word[0];
  const scheme = first.toLowerCase();
  const afterFirst = at + first.length;
  if (ONE_WORD_SCHEMES.has(scheme) || (authorization && OTHER_SCHEMES.has(scheme))) {
    const next = matchAt(ONE_WORD_SCHEMES.has(scheme) ? NEXT_WORD : AUTH_CREDENTIALS, text, afterFirst);
    if (!next) return undefined;
    const [whole, space = '', value = ''] = next;
    if (scheme !== 'basic' && PLACEHOLDER.test(value)) return undefined;
    return { end: afterFirst + whole.length, shown: `${first}${space}${REDACTED}` };
  }
  const next = matchAt(authorization ? AUTH_CREDENTIALS : NEXT_WORD, text, afterFirst);
  if (next && PLACEHOLDER.test(next[2] ?? '')) return undefined;
  return { end: afterFirst + (next?.[0].length ?? 0), shown: REDACTED };
}

/** `text` with the value of every credential field redacted (see `redactedFieldValue`). */
function redactCredentialFields(text: string): string {
  let out = '';
  let kept = 0;
  CREDENTIAL_FIELD.lastIndex = 0;
  for (let field = CREDENTIAL_FIELD.exec(text); field !== null; field = CREDENTIAL_FIELD.exec(text)) {
    const at = field.index + field[0].length;
    const value = redactedFieldValue(text, at, (field[1] ?? '').toLowerCase() === 'authorization');
    if (!value) continue;
    out += text.slice(kept, at) + value.shown;
    kept = value.end;
    CREDENTIAL_FIELD.lastIndex = value.end;
  }
  return out + text.slice(kept);
}

/**
 * What follows `sk-` is a key, not a name, when a hyphen-separated part of it with a digit is 4 characters or more
 * (`sk-ant-api03-…`, `sk-abc123`) or the whole of it is 16 or more. `sk-guidelines-v2` is a name.
 */
function looksLikeKeyBody(body: string): boolean {
  return body.split('-').some((part) => part.length >= 4 && /[0-9]/.test(part)) || body.length >= 16;
}

/** Basic credentials are base64 of `user:password`: decoded, printable text with a colon. */
function looksLikeBasicCredentials(value: string): boolean {
  if (value.length < 4 || value.replace(/=+$/, '').length % 4 === 1) return false;
  const decoded = Buffer.from(value, 'base64').toString('latin1');
  return decoded.includes(':') && /^[\x20-\x7e]+$/.test(decoded);
}

/** Replaces registered secrets and anything credential-shaped with `[redacted]`. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const secret of knownSecrets) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  // In a credential field the whole value goes; elsewhere only what looks like a credential.
  return redactCredentialFields(out)
    .replace(BEARER, (whole: string, space: string, quote: string, value: string) =>
      looksLikeToken(value) ? `${whole.slice(0, 6)}${space}${quote}[redacted]` : whole,
    )
    .replace(BASIC, (whole: string, space: string, value: string) => (looksLikeBasicCredentials(value) ? `${whole.slice(0, 5)}${space}[redacted]` : whole))
    .replace(SK_KEY, (whole: string, body: string) => (looksLikeKeyBody(body) ? 'sk-[redacted]' : whole));
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
  constructor(kind: 'idle' | 'total', timeoutMs: number, options: { cause?: unknown; mayBeBilled?: boolean } = {}) {
    const what =
      kind === 'idle' ? `the service sent nothing for ${Math.round(timeoutMs / 1000)} s` : `the request took longer than ${Math.round(timeoutMs / 1000)} s`;
    super('timeout', options.mayBeBilled ? `${what}; the request had been sent, so the job may have been billed and was not sent again` : what, options);
    this.kind = kind;
    this.timeoutMs = timeoutMs;
    this.mayBeBilled = options.mayBeBilled ?? false;
  }

  /** The same timeout, known to have struck after the request was sent. */
  afterSending(): TimeoutError {
    return this.mayBeBilled ? this : new TimeoutError(this.kind, this.timeoutMs, { cause: this.cause, mayBeBilled: true });
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
  const details: APIErrorDetails = {
    status: input.status,
    headers: input.headers,
    requestId: input.requestId,
    serviceCode,
    serviceType,
    param: err?.param == null ? undefined : sanitizeServiceText(err.param, 100),
  };
  const statusText = input.status === undefined ? 'error' : `${input.status}`;
  const rawMessage = err?.message ?? summarizeText(input.rawText);
  const serviceMessage = rawMessage === undefined ? undefined : sanitizeServiceText(rawMessage) || undefined;
  // The request is named once: not again when the service's own message already names its path ("Invalid URL (POST /v1/…)").
  const where = input.method && input.url && !serviceMessage?.includes(input.url) ? ` (${input.method} ${input.url})` : '';
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
  const stripped = sanitizeServiceText(text.slice(0, 64 * 1024).replace(/<[^>]*>/g, ' '), 200);
  return stripped || undefined;
}
