import type { HistoryEntry } from './job-history.js';
import { say, usd, type MessageValues } from './words.js';

/**
 * The values every history line shows, on both surfaces (`discord.history.line`, `slack.history.line`): how many
 * images, size and quality (the defaults when unset), the cost — or, when it is not known, how the job ended.
 */
export function historyLineValues(e: HistoryEntry): MessageValues {
  return {
    n: e.n,
    size: e.size ?? 'default',
    quality: e.quality ?? 'default',
    costKnown: e.costUsd === undefined ? 'no' : 'yes',
    cost: e.costUsd === undefined ? '' : usd(e.costUsd),
    status: e.status,
  };
}

/** The answer to `forget`: the history entries erased and, when there were any, the audit posts whose prompts were erased. */
export function describeForgotten(erased: { entries: number; auditPosts: number }, locale: string | undefined, icon: string): string {
  const history = say(locale, 'history.erased', { icon, count: erased.entries });
  return erased.auditPosts > 0 ? `${history} ${say(locale, 'audit.forgotten', { count: erased.auditPosts })}` : history;
}
