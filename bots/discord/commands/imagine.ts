import { InteractionContextType, MessageFlags, SlashCommandBuilder } from 'discord.js';
import { acknowledge } from '../acknowledge.js';
import { PROMPT_OPTION_MAX } from '../command-choices.js';
import { refusedPrivately } from '../refuse-privately.js';
import { requesterOf } from '../requester.js';
import { startJob } from '../start-job.js';
import type { SlashCommand } from './command.js';
import { addImageOptions, checkImageOptions, readImageOptions } from './job-options.js';

const data = addImageOptions(
  new SlashCommandBuilder()
    .setName('imagine')
    .setDescription('Draw images from a text prompt')
    .setContexts(InteractionContextType.Guild)
    .addStringOption((o) => o.setName('prompt').setDescription('What to draw').setRequired(true).setMaxLength(PROMPT_OPTION_MAX)),
  true,
);

/** `/imagine prompt [size] [quality] [background] [format] [count]` */
export default {
  kind: 'slash',
  personal: true,
  data: data.toJSON(),
  async execute(interaction, ctx) {
    const prompt = interaction.options.getString('prompt', true);
    const options = readImageOptions(interaction);
    const problem = checkImageOptions(prompt, options);
    if (problem) {
      await acknowledge('imagine: explain options', () => interaction.reply({ content: problem, flags: MessageFlags.Ephemeral }), ctx.logger);
      return;
    }
    const spec = { kind: 'generate' as const, prompt, options, requester: requesterOf(interaction, ctx.adminRoleIds) };
    if (await refusedPrivately(ctx, interaction, spec)) return;
    if ((await acknowledge('imagine: defer', () => interaction.deferReply(), ctx.logger)) === 'expired') return;
    await startJob(ctx, interaction, spec);
  },
} satisfies SlashCommand;
