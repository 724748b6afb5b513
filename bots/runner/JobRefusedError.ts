import { PictorError } from 'pictor';
import { isSpendRefusalCode } from 'pictor/internal';
import { RUNNER_REFUSAL_CODES, type RefusalCode } from './types.js';
import { sayWords, type Words } from './words.js';

export interface JobRefusalDetails {
  /** Validation: the field at fault, as the spec names it (`size`, `image[2]`). */
  field?: string | undefined;
  /** Validation: what the field accepts, in words. */
  allowed?: string | undefined;
  /** Limits: the limit (USD for budgets, jobs for concurrency and the queue — bytes when the queue's input images refused an edit —, seconds for the cooldown). */
  limit?: number | undefined;
  /** Limits: how much of it is used (USD spent and reserved today, jobs active or queued, bytes of input images held, seconds since the last job). */
  used?: number | undefined;
  /** Limits: when the limit lets the user in again (ms since the epoch), when that is known. */
  resetsAt?: number | undefined;
  /** Rules: the blocked word the prompt holds (`blocked_word`). */
  word?: string | undefined;
  cause?: unknown;
}

/**
 * A job was refused before anything was queued or spent. `words` is one
 * sentence for the person who asked — the limit or field, and when it resets or
 * what is allowed — to be said in their language (`describeFailure`); `message`
 * is it in English, for the log. Switch on `code`, never on the message.
 */
export class JobRefusedError extends PictorError<RefusalCode> {
  readonly field: string | undefined;
  readonly allowed: string | undefined;
  readonly limit: number | undefined;
  readonly used: number | undefined;
  readonly resetsAt: number | undefined;
  readonly word: string | undefined;
  readonly words: Words;

  constructor(code: RefusalCode, words: Words, details: JobRefusalDetails = {}) {
    super(code, sayWords('en', words), details.cause === undefined ? undefined : { cause: details.cause });
    this.words = words;
    this.field = details.field;
    this.allowed = details.allowed;
    this.limit = details.limit;
    this.used = details.used;
    this.resetsAt = details.resetsAt;
    this.word = details.word;
  }
}

const RUNNER_CODES: ReadonlySet<string> = new Set(RUNNER_REFUSAL_CODES);

/** Type guard that works across copies of this module (by name and code, not only `instanceof`). */
export function isJobRefusedError(value: unknown): value is JobRefusedError {
  return (
    value instanceof JobRefusedError ||
    (value instanceof Error && value.name === 'JobRefusedError' && isRefusalCode((value as { code?: unknown }).code))
  );
}

/** Whether `code` is one a refusal carries: a cap's (src/spend) or the runner's own (types.ts lists both). */
export function isRefusalCode(code: unknown): code is RefusalCode {
  return typeof code === 'string' && (isSpendRefusalCode(code) || RUNNER_CODES.has(code));
}
