import {
  describeDuration,
  isPictorError,
  parseResetDuration,
  retryAfterFromHeaders,
  type APIError,
  type PictorError,
  type PictorErrorCode,
  type RateLimitError,
  type TimeoutError,
  type ValidationError,
} from '../../src/index.js';
import { isJobRefusedError } from './JobRefusedError.js';
import type { FieldNames, RefusalCode } from './types.js';

/** Anything that is neither a core error nor a refusal: a bug of ours, reported without its details. */
export const INTERNAL_ERROR_CODE = 'internal_error' as const;

export type FailureCode = PictorErrorCode | RefusalCode | typeof INTERNAL_ERROR_CODE;

export interface FailureDescription {
  /** Stable: switch on it. */
  code: FailureCode;
  /** One sentence a person can act on; never a stack trace, a key or a service's raw answer. */
  message: string;
  /** Trying the same job again later may work (worth a Retry button). */
  retryable: boolean;
}

/**
 * Turns whatever a job failed with into a code and a kind sentence. Messages
 * are written here, never copied from the error, except the core's validation
 * messages (ours, naming the field and what it accepts).
 */
export function describeFailure(error: unknown): FailureDescription {
  if (isJobRefusedError(error)) {
    return { code: error.code, message: error.message, retryable: error.code === 'user_cooldown' || error.code === 'user_concurrency' || error.code === 'restarting' || error.code === 'queue_full' };
  }
  if (!isPictorError(error)) {
    return { code: INTERNAL_ERROR_CODE, message: 'Something went wrong inside the bot; try again, and tell the bot’s operator if it keeps happening.', retryable: true };
  }
  return { code: error.code, ...describeCoreError(error) };
}

function describeCoreError(error: PictorError): { message: string; retryable: boolean } {
  switch (error.code) {
    case 'validation_error':
      return { message: describeValidation(error as ValidationError), retryable: false };
    case 'moderation_blocked':
      return {
        message: 'The image service refused this request under its content policy; change the prompt (or the images) and try again.',
        retryable: false,
      };
    case 'rate_limited': {
      const wait = waitOf(error as RateLimitError);
      return {
        message: `The image service is busy right now; try again in ${wait === undefined ? 'about a minute' : `about ${describeDuration(wait)}`}.`,
        retryable: true,
      };
    }
    case 'quota_exhausted':
      return { message: 'The image service account is out of credit; tell the bot’s operator.', retryable: false };
    case 'authentication_failed':
      return { message: 'The image service did not accept the bot’s API key; tell the bot’s operator.', retryable: false };
    case 'permission_denied':
      return { message: 'The image service does not let the bot’s account use this model; tell the bot’s operator.', retryable: false };
    case 'not_found':
      return { message: 'The bot is set up with a wrong image service address; tell the bot’s operator.', retryable: false };
    case 'bad_request': {
      const param = (error as APIError).param;
      return {
        message: param
          ? `The image service rejected the option ${param}; change it and try again.`
          : 'The image service rejected the request; check the options and images and try again.',
        retryable: false,
      };
    }
    case 'server_error': {
      const apiError = error as APIError;
      const wait = waitOf(apiError);
      const when = wait === undefined ? 'in a few minutes' : `in about ${describeDuration(wait)}`;
      return {
        message:
          apiError.status === undefined
            ? `The image service reported an error while making the images; try again ${when}.`
            : apiError.status === 503
            ? `The image service is overloaded and did not answer after several tries; try again ${when}.`
            : `The image service had an internal error and did not recover after several tries; try again ${when}.`,
        retryable: true,
      };
    }
    case 'api_error':
      return { message: 'The image service answered with an unexpected error; try again in a few minutes.', retryable: true };
    case 'connection_failed':
      return { message: 'The bot could not reach the image service; try again in a few minutes.', retryable: true };
    case 'timeout': {
      const timeout = error as TimeoutError;
      const howLong = describeDuration(timeout.timeoutMs);
      return {
        message:
          timeout.kind === 'idle'
            ? `The image service sent nothing for ${howLong}, so the job was stopped. It had reached the service and may have been billed (its estimate counts against the budget), so it was not sent again; Retry starts a new job, perhaps at a lower quality.`
            : `The job took longer than ${howLong}, so it was stopped. It had reached the service and may have been billed (its estimate counts against the budget), so it was not sent again; Retry starts a new job, perhaps at a lower quality.`,
        retryable: true,
      };
    }
    case 'stream_broken':
      return {
        message:
          'The connection to the image service broke after the request reached it, before all the images arrived. It may have been billed (the estimate of each missing image counts against the budget), so it was not sent again; Retry starts a new job.',
        retryable: true,
      };
    case 'aborted':
      return { message: 'The job was stopped before it finished; try again.', retryable: true };
    case 'bad_response':
      return { message: 'The image service answered with something that is not the images asked for; it may have been billed, so it was not sent again.', retryable: false };
  }
}

/**
 * Said with a failed or cancelled job's final message when some of its images
 * had finished before it ended: they are shown (and charged) all the same.
 */
export function describeKeptImages(count: number): string {
  return count === 1 ? 'The image finished before that is here; it is charged.' : `The ${count} images finished before that are here; they are charged.`;
}

/** "The size option is not valid: size must be one of …": the field, then what it accepts. */
export function describeValidation(error: Pick<ValidationError, 'param' | 'message' | 'allowed'>, fieldNames: FieldNames = {}): string {
  const field = error.param.replace(/\[\d+\].*$/, '');
  // The spec's field names as the surface calls them (Discord's option `format`, Slack's `--format`), wherever they appear.
  const named = (text: string) => text.replace(SPEC_FIELDS, (name) => fieldNames[name] ?? name);
  const subject =
    field === 'prompt' ? 'The prompt is not valid' : field === 'image' ? 'An input image is not valid' : `The ${fieldNames[field] ?? error.param} option is not valid`;
  const allowed = error.allowed && !error.message.includes(error.allowed) ? ` (allowed: ${named(error.allowed)})` : '';
  return `${subject}: ${named(error.message)}${allowed}.`;
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
