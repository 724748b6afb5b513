import { describeSpendRefusal, type ValidationError } from '../../src/index.js';
import { describeValidation } from './describe-failure.js';
import { JobRefusedError } from './JobRefusedError.js';
import type { Platform, QuotaStore } from './types.js';

type Refusal = Extract<Awaited<ReturnType<QuotaStore['reserve']>>, { ok: false }>;

/** What a Discord server and a Slack workspace are called in a sentence. */
const SCOPE_NAMES: Record<Platform, string> = { discord: 'this server', slack: 'this workspace' };

/** A validation error of the core as a refusal naming the field and what it accepts. */
export function refusalFromValidation(error: ValidationError): JobRefusedError {
  return new JobRefusedError('validation_error', describeValidation(error), {
    field: error.param,
    allowed: error.allowed,
    cause: error,
  });
}

/** A store's refusal as a job refusal: the core's one sentence for it, with the limit and when it resets. */
export function refusalFromReservation(
  refusal: Refusal,
  context: { estimateUsd: number; platform: Platform; now: number },
): JobRefusedError {
  const { code, limit, used, resetsAt } = refusal;
  const message = describeSpendRefusal(refusal, { estimateUsd: context.estimateUsd, now: context.now, scopeName: SCOPE_NAMES[context.platform] });
  return new JobRefusedError(code, message, code === 'user_concurrency' ? { limit, used } : { limit, used, resetsAt });
}
