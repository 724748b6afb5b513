import { MessageFlags, type ModalSubmitInteraction } from 'discord.js';
import type { ImagesToFetch } from '../runner/index.js';
import { acknowledge } from './acknowledge.js';
import type { BotContext } from './bot-context.js';
import type { CustomIdData } from './custom-ids.js';
import { declaredBytesOf, InputImageError } from './download-images.js';
import { draftImages } from './edit-drafts.js';
import { promptOf } from './edit-modal.js';
import { editOptionsFrom, inScope } from './handle-buttons.js';
import { requesterOf } from './requester.js';
import { startJob } from './start-job.js';

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
  const requester = requesterOf(interaction, ctx.adminRoleIds);
  if (id.action === 'edit-result') {
    const index = id.index ?? 0;
    const kept = record.outputs[index];
    const images: ImagesToFetch = {
      // Read once the job is admitted (its size as saved holds room in the queue until then).
      declaredBytes: declaredBytesOf(kept ? [kept] : []),
      fetch: async () => {
        const image = await ctx.store.readOutput(record.key, index);
        if (!image) throw new InputImageError('no_images', 'That image is no longer kept; edit a newer one, or use /edit with the file.');
        return [image];
      },
    };
    await startJob(ctx, interaction, { kind: 'edit', prompt, options: editOptionsFrom(record), images, requester }, 'reply');
    return;
  }
  const images: ImagesToFetch = {
    // Downloaded once the job is admitted (the sizes Discord reported hold room in the queue until then).
    declaredBytes: declaredBytesOf(record.inputs.length ? record.inputs : (record.sources ?? [])),
    fetch: () => draftImages(ctx, record.key),
  };
  await startJob(ctx, interaction, { kind: 'edit', prompt, options: {}, images, requester }, 'reply');
  // The draft has served its purpose: a job that started has a record of its own; a refused one, none.
  await ctx.store.remove(record.key);
}
