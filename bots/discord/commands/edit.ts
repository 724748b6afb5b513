import { InteractionContextType, MessageFlags, SlashCommandBuilder } from 'discord.js';
import { acknowledge } from '../acknowledge.js';
import { EDIT_IMAGE_OPTION_NAMES, PROMPT_OPTION_MAX } from '../command-choices.js';
import { downloadImages, type AttachmentSource } from '../download-images.js';
import { declaredBytesOf, fetchWithinQueue } from '../fetch-within-queue.js';
import { refusedPrivately } from '../refuse-privately.js';
import { requesterOf } from '../requester.js';
import { showInputProblem, showRefusal, startJob } from '../start-job.js';
import type { SlashCommand } from './command.js';
import { addImageOptions, checkImageOptions, readImageOptions } from './job-options.js';

const builder = new SlashCommandBuilder()
  .setName('edit')
  .setDescription('Edit or combine images with a text prompt')
  .setContexts(InteractionContextType.Guild)
  .addStringOption((o) => o.setName('prompt').setDescription('What to change').setRequired(true).setMaxLength(PROMPT_OPTION_MAX));
for (const [i, name] of EDIT_IMAGE_OPTION_NAMES.entries()) {
  builder.addAttachmentOption((o) =>
    o
      .setName(name)
      .setDescription(i === 0 ? 'The image to edit (PNG, JPEG or WebP)' : 'Another image (PNG, JPEG or WebP)')
      .setRequired(i === 0),
  );
}

/** `/edit prompt image1 [image2 … image16] [size] [quality] [background] [format]` */
export default {
  kind: 'slash',
  personal: true,
  data: addImageOptions(builder, false).toJSON(),
  async execute(interaction, ctx) {
    const prompt = interaction.options.getString('prompt', true);
    const options = readImageOptions(interaction);
    const problem = checkImageOptions(prompt, options);
    if (problem) {
      await acknowledge('edit: explain options', () => interaction.reply({ content: problem, flags: MessageFlags.Ephemeral }), ctx.logger);
      return;
    }
    const requester = requesterOf(interaction, ctx.adminRoleIds);
    if (await refusedPrivately(ctx, interaction, { kind: 'edit', prompt, options, requester })) return;
    // Downloads can take longer than Discord's 3 s: answer first.
    if ((await acknowledge('edit: defer', () => interaction.deferReply(), ctx.logger)) === 'expired') return;
    const sources: AttachmentSource[] = [];
    for (const name of EDIT_IMAGE_OPTION_NAMES) {
      const attachment = interaction.options.getAttachment(name);
      if (attachment) sources.push({ label: name, filename: attachment.name, url: attachment.url, size: attachment.size });
    }
    let fetched;
    try {
      // A full queue refuses the edit before anything is downloaded (the sizes Discord reported count until then).
      fetched = await fetchWithinQueue(ctx, requester, declaredBytesOf(sources), () => downloadImages(sources, ctx.downloadPolicy));
    } catch (error) {
      await showInputProblem(ctx, interaction, requester.userId, { kind: 'edit', prompt }, error);
      return;
    }
    if ('refusal' in fetched) {
      await showRefusal(ctx, interaction, requester.userId, { kind: 'edit', prompt }, fetched.refusal);
      return;
    }
    await startJob(ctx, interaction, { kind: 'edit', prompt, options, images: fetched.images, requester });
  },
} satisfies SlashCommand;
