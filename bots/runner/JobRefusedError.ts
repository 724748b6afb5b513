import { PictorError } from '../../src/index.js';
import type { RefusalCode } from './types.js';

export interface JobRefusalDetails {
  /** Validation: the field at fault, as the spec names it (`size`, `image[2]`). */
  field?: string | undefined;
  /** Validation: what the field accepts, in words. */
  allowed?: string | undefined;
  /** Limits: the limit (USD for budgets, jobs for concurrency and the queue, seconds for the cooldown). */
  limit?: number | undefined;
  /** Limits: how much of it is used (USD spent and reserved today, jobs active, seconds since the last job). */
  used?: number | undefined;
  /** Limits: when the limit lets the user in again (ms since the epoch), when that is known. */
  resetsAt?: number | undefined;
  cause?: unknown;
}

/**
 * A job was refused before anything was queued or spent. `message` is one
 * sentence for the person who asked: the limit or field, and when it resets or
 * what is allowed. Switch on `code`, never on the message.
 */
export class JobRefusedError extends PictorError<RefusalCode> {
  readonly field: string | undefined;
  readonly allowed: string | undefined;
  readonly limit: number | undefined;
  readonly used: number | undefined;
  readonly resetsAt: number | undefined;

  constructor(code: RefusalCode, message: string, details: JobRefusalDetails = {}) {
    super(code, message, details.cause === undefined ? undefined : { cause: details.cause });
    this.field = details.field;
    this.allowed = details.allowed;
    this.limit = details.limit;
    this.used = details.used;
    this.resetsAt = details.resetsAt;
  }
}

const REFUSAL_CODES: readonly string[] = [
  'validation_error',
  'budget_account_daily',
  'budget_account_monthly',
  'budget_user_daily',
  'budget_user_monthly',
  'budget_scope_daily',
  'budget_scope_monthly',
  'user_concurrency',
  'user_cooldown',
  'restarting',
  'scope_not_allowed',
  'member_blocked',
  'channel_not_allowed',
  'member_not_allowed',
  'blocked_word',
  'too_many_images',
  'quality_not_allowed',
  'high_quality_not_allowed',
  'size_not_allowed',
  'moderation_not_allowed',
  'queue_full',
] satisfies RefusalCode[];

/** Type guard that works across copies of this module (by name and code, not only `instanceof`). */
export function isJobRefusedError(value: unknown): value is JobRefusedError {
  return (
    value instanceof JobRefusedError ||
    (value instanceof Error && value.name === 'JobRefusedError' && REFUSAL_CODES.includes((value as { code?: string }).code ?? ''))
  );
}
