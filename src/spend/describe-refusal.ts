import { describeDuration, describeReset, describeWaitUntil } from '../core/describe-duration.js';
import { formatUsd } from '../core/pricing.js';
import { BUDGETS, leftOf } from './rules.js';
import type { SpendRefusal } from './types.js';

/** What a surface knows when it words a refusal. */
export interface RefusalContext {
  /** What the refused job could have cost (its reservation). */
  estimateUsd: number;
  now: number;
  /** How the surface calls the scope of a scope cap: "this server", "this workspace". */
  scopeName?: string | undefined;
}

/**
 * The one sentence for a job the spend guard refused, on every surface (chat
 * reply, CLI stderr, n8n item error): which limit, how much of it is used or
 * left, and when it lets the job in again — "This job could cost up to $0.224,
 * more than the $0.050 left of your daily budget of $1.00 (spent $0.95); fewer
 * or cheaper images may fit, and the budget resets at 00:00 UTC (in 3 h 12 min)."
 */
export function describeSpendRefusal(refusal: Pick<SpendRefusal, 'code' | 'limit' | 'used' | 'resetsAt'>, context: RefusalContext): string {
  const { code, limit, used, resetsAt } = refusal;
  switch (code) {
    case 'user_concurrency':
      return `You already have ${used} ${used === 1 ? 'job' : 'jobs'} queued or running, the most allowed at once (${limit}); wait for one to finish or cancel it.`;
    case 'user_cooldown':
      return `You can start one job every ${describeDuration(limit * 1000)}; try again in ${describeWaitUntil(resetsAt, context.now)}.`;
    case 'scope_paused': {
      const scope = context.scopeName ?? 'this server or workspace';
      return (
        `${scope.charAt(0).toUpperCase()}${scope.slice(1)} is paused: it spent ${formatUsd(used)} in the last hour, more than the ${formatUsd(limit)} an hour its usual use allows. ` +
        'No new jobs are taken until the bot’s operator (who pays for its API key) resumes it from the Pictor console.'
      );
    }
    default: {
      const budget = BUDGETS.find((b) => b.code === code);
      if (!budget) return `This job was refused by the limit ${code as string}.`;
      const [whose, whoHas] = OWNERS[budget.owner](context.scopeName ?? 'this server or workspace');
      const period = budget.period === 'day' ? 'daily' : 'monthly';
      const left = leftOf(limit, used);
      const inWords = describeReset(resetsAt, context.now);
      return left < 0.000_001 || used >= limit
        ? `${whoHas} reached ${whose === 'your' ? 'your' : 'its'} ${period} budget of ${formatUsd(limit)} (spent ${formatUsd(used)}, $0.00 left); it resets at ${inWords}.`
        : `This job could cost up to ${formatUsd(context.estimateUsd)}, more than the ${formatUsd(left)} left of ${whose} ${period} budget of ${formatUsd(limit)} (spent ${formatUsd(used)}); fewer or cheaper images may fit, and the budget resets at ${inWords}.`;
    }
  }
}

/** Whose cap, two ways: "your" / "You have"; "this server’s" / "This server has"; the account's. */
const OWNERS: Record<(typeof BUDGETS)[number]['owner'], (scopeName: string) => [string, string]> = {
  user: () => ['your', 'You have'],
  scope: (scopeName) => [`${scopeName}’s`, `${scopeName.charAt(0).toUpperCase()}${scopeName.slice(1)} has`],
  account: () => ['the whole account’s', 'The whole account (every server, workspace and tool sharing this API key) has'],
};
