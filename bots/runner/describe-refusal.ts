import { formatUsd, type ValidationError } from '../../src/index.js';
import { describeDuration, describeReset } from './describe-duration.js';
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

/**
 * A store's refusal as one sentence naming the limit and when it resets:
 * "You have reached your daily budget of $1.00 (spent $0.98); it resets at
 * 00:00 UTC (in 3 h 12 min)."
 */
export function refusalFromReservation(
  refusal: Refusal,
  context: { estimateUsd: number; platform: Platform; now: number },
): JobRefusedError {
  const { code, limit, used, resetsAt } = refusal;
  const details = { limit, used, resetsAt };
  const inWords = describeReset(resetsAt, context.now);
  switch (code) {
    case 'budget_user_daily':
    case 'budget_user_monthly':
    case 'budget_scope_daily':
    case 'budget_scope_monthly':
    case 'budget_account_daily':
    case 'budget_account_monthly': {
      const [whose, whoHas, its] = capOwner(code, context.platform);
      const period = code.endsWith('_daily') ? 'daily' : 'monthly';
      const left = Math.max(0, limit - used);
      const message =
        left < 0.000_001 || used >= limit
          ? `${whoHas} reached ${its} ${period} budget of ${formatUsd(limit)} (spent ${formatUsd(used)}, $0.00 left); it resets at ${inWords}.`
          : `This job could cost up to ${formatUsd(context.estimateUsd)}, more than the ${formatUsd(left)} left of ${whose} ${period} budget of ${formatUsd(limit)} (spent ${formatUsd(used)}); fewer or cheaper images may fit, and the budget resets at ${inWords}.`;
      return new JobRefusedError(code, message, details);
    }
    case 'user_concurrency':
      return new JobRefusedError(
        code,
        `You already have ${used} ${used === 1 ? 'job' : 'jobs'} queued or running, the most allowed at once (${limit}); wait for one to finish or cancel it.`,
        { limit, used },
      );
    case 'user_cooldown':
      return new JobRefusedError(
        code,
        `You can start one job every ${describeDuration(limit * 1000)}; try again in ${describeDuration(resetsAt - context.now)}.`,
        details,
      );
  }
}

/** Whose cap, three ways: "your" / "You have" / "your"; "this server’s" / "This server has" / "its"; "the bot’s" … */
function capOwner(code: string, platform: Platform): [string, string, string] {
  if (code.startsWith('budget_user_')) return ['your', 'You have', 'your'];
  if (code.startsWith('budget_scope_')) return [`${SCOPE_NAMES[platform]}’s`, `${capitalize(SCOPE_NAMES[platform])} has`, 'its'];
  return ['the whole account’s', 'The whole account (every server, workspace and tool sharing this API key) has', 'its'];
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
