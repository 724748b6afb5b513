import { words, type Words } from '../runner/words.js';
import { botSpaces, promptErased } from '../state/index.js';
import type { JobCost, JobUpdate } from '../runner/types.js';
import { COMMAND_NAMES } from './command-words.js';
import type { FinalShown, JobRecord, StoredImage } from './JobRecordStore.js';

// The rules read off a Discord job's record (which image an Edit button names, whether the job can run again, what its
// end shows): its store keeps the record, the buttons, views and sweep decide with these.

/** Which of the job's images a kept output is (0-based). */
export function outputIndex(img: StoredImage, position: number): number {
  return img.index ?? position;
}

/** A record's kept output that is the job's image `index` (what an Edit button names); undefined when it was not kept. */
export function keptOutput(record: Pick<JobRecord, 'outputs'>, index: number): StoredImage | undefined {
  return record.outputs.find((img, position) => outputIndex(img, position) === index);
}

/** How many images a finished job made (its buttons' count), whether or not each was kept. */
export function madeCount(record: Pick<JobRecord, 'outputs' | 'made'>): number {
  return record.made ?? record.outputs.length;
}

/** How long the images of a Discord job are kept (the images space's TTL, from their write as the job's record is made). */
export const KEPT_IMAGES_MS = botSpaces().discordImages.ttlMs;

/** Why a job cannot run again: the code a refused press is logged under, with the words its member is told. */
export type NotRunAgain = { code: 'prompt_erased' | 'no_images'; words: Words };

/**
 * Why a job cannot run again (Retry, Reroll), the one rule: its prompt was erased (`prompt_erased`), or it is an edit
 * with no kept inputs or, asked with `now` (whether a message offers Retry), older than kept images live (`no_images`).
 * Without `now` the buttons let `inputsKept` and the read decide: images an upgrade moved live from their move, not
 * their record's making.
 */
export function whyNotRunAgain(record: Pick<JobRecord, 'prompt' | 'kind' | 'inputs' | 'createdAt'>, now?: number): NotRunAgain | undefined {
  if (promptErased(record)) return { code: 'prompt_erased', words: words('job.prompt_erased') };
  const imagesGone = record.kind === 'edit' && (record.inputs.length === 0 || (now !== undefined && now - record.createdAt > KEPT_IMAGES_MS));
  if (imagesGone) return { code: 'no_images', words: words('discord.button.too_old', COMMAND_NAMES) };
  return undefined;
}

/** The facts of a final update its message shows (`FinalShown`): never its images. */
export function finalShownOf(final: Extract<JobUpdate, { type: 'completed' | 'failed' | 'cancelled' }>): FinalShown {
  switch (final.type) {
    case 'completed':
      return { type: 'completed' };
    case 'failed':
      return { type: 'failed', code: final.code, words: final.words, retryable: final.retryable, ...chargeOf(final) };
    case 'cancelled':
      return { type: 'cancelled', byUserId: final.byUserId, ...(final.reason && { reason: final.reason }), ...chargeOf(final) };
  }
}

/** A failed or cancelled job's charge as its final keeps it: the amount alone (none when it was released). */
function chargeOf(final: { cost?: JobCost | undefined }): { cost?: JobCost } {
  return final.cost ? { cost: { totalUsd: final.cost.totalUsd } } : {};
}
