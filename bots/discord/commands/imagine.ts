import { InteractionContextType } from 'discord.js';
import { slashCommand } from '../command-words.js';
import { requesterOf } from '../requester.js';
import { startJob } from '../start-job.js';
import type { SlashCommand } from './command.js';
import { addImageOptions, addPrivateOption, addPromptOption, addStyleOption, readImageOptions, readPrivate, readStyle, suggestStyles } from './job-options.js';

const data = addPrivateOption(addStyleOption(addImageOptions(
  addPromptOption(
    slashCommand('imagine')
      .setContexts(InteractionContextType.Guild),
    'discord.option.prompt_imagine',
  ),
  true,
)));

/** `/imagine prompt [size] [quality] [background] [format] [count] [style] [private]` */
export default {
  kind: 'slash',
  personal: true,
  data: data.toJSON(),
  async execute(interaction, ctx) {
    const prompt = interaction.options.getString('prompt', true);
    await startJob(ctx, interaction, { kind: 'generate', prompt, options: readImageOptions(interaction), style: readStyle(interaction), requester: requesterOf(interaction, ctx.adminRoleIds), private: readPrivate(interaction) }, 'reply');
  },
  autocomplete: suggestStyles,
} satisfies SlashCommand;
