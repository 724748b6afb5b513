import { InteractionContextType } from 'discord.js';
import { EDIT_IMAGE_OPTION_NAMES } from '../command-choices.js';
import { described, slashCommand } from '../command-words.js';
import { checkSources, declaredBytesOf, downloadImages, InputImageError, type AttachmentSource } from '../download-images.js';
import { refuseInputPrivately } from '../refuse-privately.js';
import { requesterOf } from '../requester.js';
import { startJob } from '../start-job.js';
import type { SlashCommand } from './command.js';
import { addImageOptions, addPrivateOption, addPromptOption, addStyleOption, readImageOptions, readPrivate, readStyle, suggestStyles } from './job-options.js';

const builder = addPromptOption(slashCommand('edit').setContexts(InteractionContextType.Guild), 'discord.option.prompt_edit');
for (const [i, name] of EDIT_IMAGE_OPTION_NAMES.entries()) {
  builder.addAttachmentOption((o) =>
    described(o.setName(name), 'discord.option.image', { first: i === 0 ? 'yes' : 'no' }).setRequired(i === 0),
  );
}

/** `/edit prompt image1 [image2 … image16] [size] [quality] [background] [format] [style] [private]` */
export default {
  kind: 'slash',
  personal: true,
  data: addPrivateOption(addStyleOption(addImageOptions(builder, false))).toJSON(),
  async execute(interaction, ctx) {
    const sources: AttachmentSource[] = [];
    for (const name of EDIT_IMAGE_OPTION_NAMES) {
      const attachment = interaction.options.getAttachment(name);
      if (attachment) sources.push({ label: name, filename: attachment.name, url: attachment.url, size: attachment.size });
    }
    try {
      // What Discord reported of the attachments (host, size), privately and before anything else.
      checkSources(sources, ctx.downloadPolicy);
    } catch (error) {
      if (!(error instanceof InputImageError)) throw error;
      return refuseInputPrivately(ctx, interaction, error);
    }
    await startJob(
      ctx,
      interaction,
      {
        kind: 'edit',
        prompt: interaction.options.getString('prompt', true),
        options: readImageOptions(interaction),
        style: readStyle(interaction),
        requester: requesterOf(interaction, ctx.adminRoleIds),
        private: readPrivate(interaction),
        // Downloaded once the job is admitted and answered: downloads can take longer than Discord's 3 s.
        images: { declaredBytes: declaredBytesOf(sources), fetch: () => downloadImages(sources, ctx.downloadPolicy) },
      },
      'reply',
    );
  },
  autocomplete: suggestStyles,
} satisfies SlashCommand;
