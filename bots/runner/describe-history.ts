import type { HistoryEntry } from './job-history.js';
import { usd, type MessageValues } from './words.js';

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
