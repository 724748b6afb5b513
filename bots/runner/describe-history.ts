import type { HistoryEntry } from './job-history.js';
import { say, usd, usdAtMost, type MessageValues } from './words.js';

/**
 * The values every history line shows, on both surfaces (`discord.history.line`, `slack.history.line`): how many
 * images, size and quality (the defaults when unset), the cost (or `≤` what it may cost, not settled yet) — or, when
 * it is not known, how the job ended.
 */
export function historyLineValues(e: HistoryEntry): MessageValues {
  // Not settled as its end was recorded (a job a stop cut off): at most that much.
  const cost = e.costUsd !== undefined ? usd(e.costUsd) : e.mayCostUsd !== undefined ? usdAtMost(e.mayCostUsd) : undefined;
  return {
    n: e.n,
    size: e.size ?? 'default',
    quality: e.quality ?? 'default',
    costKnown: cost === undefined ? 'no' : 'yes',
    cost: cost ?? '',
    status: e.status,
  };
}

/**
 * The answer to `forget`: the history entries erased and, when there were any, the audit posts whose prompts were
 * erased, and those the platform did not let us edit yet (their prompt still shows there until a retry edits them).
 */
export function describeForgotten(erased: { entries: number; auditPosts: number; auditPending: number }, locale: string | undefined, icon: string): string {
  const parts = [say(locale, 'history.erased', { icon, count: erased.entries })];
  if (erased.auditPosts > 0) parts.push(say(locale, 'audit.forgotten', { count: erased.auditPosts }));
  if (erased.auditPending > 0) parts.push(say(locale, 'audit.forgetPending', { count: erased.auditPending }));
  return parts.join(' ');
}
