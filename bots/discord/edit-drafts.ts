import type { InputImage } from '../runner/index.js';
import type { BotContext } from './bot-context.js';
import { downloadImages } from './download-images.js';
import type { JobRecord } from './JobRecordStore.js';

/**
 * "Edit image" drafts: a menu opened, its modal not yet sent. A draft keeps
 * only the attachments' links; the images are downloaded once, when the
 * modal is submitted (and the budget still allows a job), and the draft is
 * removed then. Each member keeps a few drafts at most.
 */

/** Drafts one member may have open at once; opening another drops their oldest. */
export const MAX_DRAFTS_PER_USER = 3;

/** The member's drafts beyond what may be kept: the keys to drop, oldest first. */
export function draftsToDrop(drafts: readonly JobRecord[], userId: string): string[] {
  const own = drafts.filter((r) => r.status === 'draft' && r.requester.userId === userId).sort((a, b) => a.createdAt - b.createdAt);
  return own.slice(0, Math.max(0, own.length - MAX_DRAFTS_PER_USER)).map((r) => r.key);
}

/** A draft's images, downloaded now from its links (checked by content and size as every input is). */
export async function draftImages(ctx: BotContext, key: string): Promise<InputImage[]> {
  const record = await ctx.store.get(key);
  if (record && record.inputs.length) return ctx.store.readInputs(key);
  return downloadImages(record?.sources ?? [], ctx.downloadPolicy);
}
