import { isPictorError, type APIError, type PictorError, type PictorErrorCode, type RateLimitError, type TimeoutError, type ValidationError } from 'pictor';
import { parseResetDuration, retryAfterFromHeaders } from 'pictor/internal';
import { isJobRefusedError } from './JobRefusedError.js';
import type { FieldNames, RefusalCode } from './types.js';
import { isRangeField, rangeWords } from './range-words.js';
import { duration, nested, say, sayWords, words, type MessageValues, type Words } from './words.js';

/** Anything that is neither a core error nor a refusal: a bug of ours, reported without its details. */
export const INTERNAL_ERROR_CODE = 'internal_error' as const;

export type FailureCode = PictorErrorCode | RefusalCode | typeof INTERNAL_ERROR_CODE;

export interface FailureDescription {
  /** Stable: switch on it. */
  code: FailureCode;
  /** One sentence a person can act on, in the locale asked for; never a stack trace, a key or a service's raw answer. */
  message: string;
  /** The same sentence not yet said: a surface says it in its reader's language (`sayWords`). */
  words: Words;
  /** Trying the same job again later may work (worth a Retry button). */
  retryable: boolean;
}

/**
 * Turns whatever a job failed with into a code and a kind sentence in `locale`
 * (English by default: the log's). Messages are the catalog's, never copied
 * from the error, except the core's validation details (ours, naming the field
 * and what it accepts). A refusal that tells the person a command to type
 * (`{command} settings --private off`) names `command`, the surface's own as
 * configured (a Slack app's renamed `/imagine`), or `/imagine` when none is given.
 */
export function describeFailure(error: unknown, locale?: string, command?: string): FailureDescription {
  const { code, words: said, retryable } = failureOf(error);
  const what = command !== undefined && said.values?.command !== undefined ? words(said.key, { ...said.values, command }) : said;
  return { code, message: sayWords(locale, what), words: what, retryable };
}

function failureOf(error: unknown): { code: FailureCode; words: Words; retryable: boolean } {
  if (isJobRefusedError(error)) {
    return { code: error.code, words: error.words, retryable: error.code === 'user_cooldown' || error.code === 'user_concurrency' || error.code === 'restarting' || error.code === 'queue_full' };
  }
  if (!isPictorError(error)) return { code: INTERNAL_ERROR_CODE, words: words('failure.internal_error'), retryable: true };
  return { code: error.code, ...describeCoreError(error) };
}

function describeCoreError(error: PictorError): { words: Words; retryable: boolean } {
  switch (error.code) {
    case 'validation_error':
      return { words: validationWords(error as ValidationError), retryable: false };
    case 'moderation_blocked':
    case 'quota_exhausted':
    case 'authentication_failed':
    case 'permission_denied':
    case 'not_found':
    case 'bad_response':
      return { words: words(`failure.${error.code}`), retryable: false };
    case 'api_error':
    case 'connection_failed':
    case 'aborted':
    case 'stream_broken':
      return { words: words(`failure.${error.code}`), retryable: true };
    case 'rate_limited':
      return { words: words('failure.rate_limited', waitValues(waitOf(error as RateLimitError))), retryable: true };
    case 'bad_request': {
      const param = (error as APIError).param;
      return { words: param ? words('failure.bad_request_option', { option: param }) : words('failure.bad_request'), retryable: false };
    }
    case 'server_error': {
      const apiError = error as APIError;
      const kind = apiError.status === undefined ? 'stream' : apiError.status === 503 ? 'overloaded' : 'internal';
      return { words: words('failure.server_error', { kind, ...waitValues(waitOf(apiError)) }), retryable: true };
    }
    case 'timeout': {
      const timeout = error as TimeoutError;
      return { words: words('failure.timeout', { kind: timeout.kind === 'idle' ? 'idle' : 'total', howLong: duration(timeout.timeoutMs) }), retryable: true };
    }
  }
}

/** A wait the service named (`wait`), or none (`known`: `no`): "in about 45 s", "in a few minutes". */
function waitValues(waitMs: number | undefined): MessageValues {
  return waitMs === undefined ? { known: 'no', wait: '' } : { known: 'yes', wait: duration(waitMs) };
}

/**
 * Said with a failed or cancelled job's final message when some of its images
 * had finished before it ended: they are shown (and charged) all the same.
 */
export function describeKeptImages(count: number, locale?: string): string {
  return say(locale, 'job.kept_images', { count });
}

/** "The size option is not valid: size must be one of …": the field, then what it accepts. */
export function describeValidation(error: Pick<ValidationError, 'param' | 'message' | 'allowed'>, fieldNames: FieldNames = {}, locale?: string): string {
  return sayWords(locale, validationWords(error, fieldNames));
}

/**
 * A validation error's words: the field as the surface calls it, the core's detail (its schema's own sentence,
 * in English: the core speaks to the CLI and n8n too) and what the field accepts. A field a member sets to an
 * integer in a range (`n`, `output_compression`, out of range or with a format it does not go with) is answered
 * wholly in the reader's language: what it accepts, from `rangeWords`.
 */
export function validationWords(error: Pick<ValidationError, 'param' | 'message' | 'allowed'>, fieldNames: FieldNames = {}): Words {
  const field = error.param.replace(/\[\d+\].*$/, '');
  if (isRangeField(field)) {
    const option = fieldNames[field] ?? field;
    const range = rangeWords(field, fieldNames);
    return words('failure.validation', { subject: 'option', option, detail: nested('failure.validation_range', { option, range: nested(range.key, range.values) }), allowed: 'none', values: '' });
  }
  // The spec's field names as the surface calls them (Discord's option `format`, Slack's `--format`), wherever they appear.
  const named = (text: string) => text.replace(SPEC_FIELDS, (name) => fieldNames[name] ?? name);
  const subject = field === 'prompt' ? 'prompt' : field === 'image' ? 'image' : 'option';
  const allowed = error.allowed && !error.message.includes(error.allowed) ? named(error.allowed) : '';
  return words('failure.validation', { subject, option: fieldNames[field] ?? error.param, detail: named(error.message), allowed: allowed === '' ? 'none' : 'some', values: allowed });
}

/** The request fields a chat user can set, as whole words in a validation message. */
const SPEC_FIELDS = /\b(?:n|size|quality|background|output_format|output_compression|moderation)\b/g;

function waitOf(error: APIError): number | undefined {
  const fromError = (error as Partial<RateLimitError>).retryAfterMs;
  if (fromError !== undefined) return fromError;
  const headers = error.headers ?? {};
  const reset = headers['x-ratelimit-reset-requests'];
  return retryAfterFromHeaders(headers) ?? (reset === undefined ? undefined : parseResetDuration(reset));
}
