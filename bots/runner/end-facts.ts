import type { JobEnd } from './job-history.js';
import type { JobOptions, MessageSeenBy } from './types.js';

// What the history and the audit channel record of an ended job, one rule for both: its facts and who can open its link.

/** An ended job's size and quality (a completed end's own, else those asked), and its cost when known, else its most. */
export function endFactsOf(final: JobEnd, options: Pick<JobOptions, 'size' | 'quality'>): { size: string | undefined; quality: string | undefined; costUsd?: number; mayCostUsd?: number } {
  const completed = final.type === 'completed' ? final : undefined;
  const mayCost = final.type === 'failed' && !final.cost ? final.mayCost : undefined;
  return {
    size: completed?.size || options.size,
    quality: completed?.quality || options.quality,
    ...(final.cost && { costUsd: final.cost.totalUsd }),
    ...(mayCost && { mayCostUsd: mayCost.totalUsd }),
  };
}

/**
 * Who can open a job's message through its link, the one rule for the history and the audit channel: a private job's
 * is its member's alone, whatever its surface says; any other as its surface says. A `member` link is kept in the
 * member's own history only, never in the audit channel.
 */
export function linkSeenBy(job: { private?: boolean | undefined; seenBy?: MessageSeenBy | undefined }): MessageSeenBy {
  return job.private === true ? 'member' : (job.seenBy ?? 'everyone');
}
