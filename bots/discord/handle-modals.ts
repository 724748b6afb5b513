import { MessageFlags, type ModalSubmitInteraction } from 'discord.js';
import type { InputImage } from '../runner/index.js';
import { acknowledge } from './acknowledge.js';
import type { BotContext } from './bot-context.js';
import { checkImageOptions } from './commands/job-options.js';
import type { CustomIdData } from './custom-ids.js';
import { draftImages } from './edit-drafts.js';
import { promptOf } from './edit-modal.js';
import { editOptionsFrom, inScope } from './handle-buttons.js';
import { refusedPrivately } from './refuse-privately.js';
import { requesterOf } from './requester.js';
import { showInputProblem, showRefusal, startJob } from './start-job.js';
import { InputImageError } from './download-images.js';
import { declaredBytesOf, fetchWithinQueue } from './fetch-within-queue.js';

const EXPIRED = '✋ This edit form is too old: I no longer have its images. Use “Edit image” on the message again.';

async function tell(ctx: BotContext, interaction: ModalSubmitInteraction, content: string): Promise<void> {
  await acknowledge('modal: explain', () => interaction.reply({ content, flags: MessageFlags.Ephemeral }), ctx.logger);
}

/** The prompt of an edit: for the images of a message ("Edit image" menu), or for one image of a result (Edit button). */
export async function handleModal(ctx: BotContext, interaction: ModalSubmitInteraction, id: CustomIdData): Promise<void> {
  const prompt = promptOf(interaction);
  const record = await ctx.store.get(id.key);
  if (!record || !inScope(record, interaction)) return tell(ctx, interaction, EXPIRED);
  // A draft holds the images one member chose: only they may submit it.
  if (id.action === 'edit-message' && (record.status !== 'draft' || record.requester.userId !== interaction.user.id)) return tell(ctx, interaction, EXPIRED);
  const options = id.action === 'edit-result' ? editOptionsFrom(record) : {};
  const problem = checkImageOptions(prompt, options);
  if (problem) return tell(ctx, interaction, problem);
  const requester = requesterOf(interaction, ctx.adminRoleIds);
  // The server's rules (who, where, what) before anything public or any download; a refused draft is dropped.
  if (await refusedPrivately(ctx, interaction, { kind: 'edit', prompt, options, requester })) {
    if (id.action === 'edit-message') await ctx.store.remove(record.key);
    return;
  }
  if ((await acknowledge('modal: defer', () => interaction.deferReply(), ctx.logger)) === 'expired') return;

  let images: InputImage[];
  if (id.action === 'edit-result') {
    const index = id.index ?? 0;
    const kept = record.outputs[index];
    // A full queue refuses the edit before the image is read (its size as saved counts until then).
    const fetched = await fetchWithinQueue(ctx, requester, declaredBytesOf(kept ? [kept] : []), async () => {
      const image = await ctx.store.readOutput(record.key, index);
      return image ? [image] : [];
    });
    if ('refusal' in fetched) {
      await showRefusal(ctx, interaction, requester.userId, { kind: 'edit', prompt }, fetched.refusal);
      return;
    }
    if (fetched.images.length === 0) {
      const gone = new InputImageError('no_images', 'That image is no longer kept; edit a newer one, or use /edit with the file.');
      await showInputProblem(ctx, interaction, requester.userId, { kind: 'edit', prompt }, gone);
      return;
    }
    images = fetched.images;
  } else {
    const refusal = await ctx.runner.budgetRefusal?.(requester);
    if (refusal) {
      // The draft is dropped and nothing is downloaded.
      await ctx.store.remove(record.key);
      await showRefusal(ctx, interaction, requester.userId, { kind: 'edit', prompt }, refusal);
      return;
    }
    let fetched;
    try {
      // A full queue refuses the edit before anything is downloaded (the sizes Discord reported count until then).
      const declared = declaredBytesOf(record.inputs.length ? record.inputs : (record.sources ?? []));
      fetched = await fetchWithinQueue(ctx, requester, declared, () => draftImages(ctx, record.key));
    } catch (error) {
      await showInputProblem(ctx, interaction, requester.userId, { kind: 'edit', prompt }, error);
      await ctx.store.remove(record.key);
      return;
    }
    // The draft has served its purpose: the job gets a record of its own (or, refused, none).
    await ctx.store.remove(record.key);
    if ('refusal' in fetched) {
      await showRefusal(ctx, interaction, requester.userId, { kind: 'edit', prompt }, fetched.refusal);
      return;
    }
    images = fetched.images;
  }
  await startJob(ctx, interaction, { kind: 'edit', prompt, options, images, requester });
}
