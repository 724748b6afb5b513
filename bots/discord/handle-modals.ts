import { MessageFlags, type ModalSubmitInteraction } from 'discord.js';
import { PressRefusedError, sayWords, words, type ImagesToFetch } from '../runner/index.js';
import { acknowledge } from './acknowledge.js';
import type { BotContext } from './bot-context.js';
import { COMMAND_NAMES } from './command-words.js';
import type { CustomIdData } from './custom-ids.js';
import { declaredBytesOf, InputImageError } from './download-images.js';
import { draftImages } from './edit-drafts.js';
import { promptOf } from './edit-modal.js';
import { editOptionsFrom, pressedBy, refuseWho } from './handle-buttons.js';
import { keptOutput } from './job-rules.js';
import type { JobRecord } from './JobRecordStore.js';
import { refuseInputPrivately } from './refuse-privately.js';
import { startJob } from './start-job.js';

/**
 * The edit form has outlived what it needs, or names what is not the sender's: logged once with `code`
 * (`refuseInputPrivately`), and said privately, in their language, as expired whatever the code.
 */
async function tellExpired(ctx: BotContext, interaction: ModalSubmitInteraction, code: 'job_gone' | 'job_other_scope' | 'not_requester'): Promise<void> {
  const refusal = new PressRefusedError(code, words('discord.edit.form_expired'));
  const content = `✋ ${sayWords(interaction.locale, refusal.words)}`;
  await refuseInputPrivately(ctx, interaction, refusal, () => acknowledge('modal: explain', () => interaction.reply({ content, flags: MessageFlags.Ephemeral }), ctx.logger));
}

/** The prompt of an edit: for the images of a message ("Edit image" menu), or for one image of a result (Edit button). Its job's `record` was read once by the router. */
export async function handleModal(ctx: BotContext, interaction: ModalSubmitInteraction, id: CustomIdData, record: JobRecord | undefined): Promise<void> {
  const prompt = promptOf(interaction);
  // Where it counts as its Edit button decided (`pressedBy`): a private server job's form sent in its member's DM, in that server.
  const requester = record && (await pressedBy(ctx, record, interaction, id.action));
  // Its record gone (past its day, deleted; a draft sent once already), or another server's: told as expired, logged as what it is.
  if (!record) return tellExpired(ctx, interaction, 'job_gone');
  if (!requester) return tellExpired(ctx, interaction, 'job_other_scope');
  if ('refused' in requester) return refuseWho(ctx, interaction, requester);
  // A draft holds the images one member chose: only they may submit it. A key that names a job, not a draft: gone as a draft.
  if (id.action === 'edit-message' && record.status !== 'draft') return tellExpired(ctx, interaction, 'job_gone');
  if (id.action === 'edit-message' && record.requester.userId !== interaction.user.id) return tellExpired(ctx, interaction, 'not_requester');
  if (id.action === 'edit-result') {
    const index = id.index ?? 0;
    const kept = keptOutput(record, index);
    const images: ImagesToFetch = {
      // Read once the job is admitted (its size as saved holds room in the queue until then).
      declaredBytes: declaredBytesOf(kept ? [kept] : []),
      fetch: async () => {
        const image = await ctx.store.readOutput(record.key, index);
        if (!image) throw new InputImageError('no_images', words('discord.edit.image_gone', COMMAND_NAMES));
        return [image];
      },
    };
    // An edit of a private result is private too; of a public one, as the member's default says. A form: a refusal of
    // its private rule (turned off while it was open) names no option the form lacks.
    await startJob(ctx, interaction, { kind: 'edit', prompt, options: editOptionsFrom(record), images, requester, private: record.private === true ? true : undefined, inForm: true }, 'reply');
    return;
  }
  const images: ImagesToFetch = {
    // Downloaded once the job is admitted (the sizes Discord reported hold room in the queue until then).
    declaredBytes: declaredBytesOf(record.inputs.length ? record.inputs : (record.sources ?? [])),
    fetch: () => draftImages(ctx, record.key),
  };
  await startJob(ctx, interaction, { kind: 'edit', prompt, options: {}, images, requester, inForm: true }, 'reply');
  // The draft has served its purpose: a job that started has a record of its own; a refused one, none.
  await ctx.store.remove(record.key);
}
