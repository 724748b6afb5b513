import { InteractionContextType, MessageFlags } from 'discord.js';
import { acknowledge } from '../acknowledge.js';
import { slashCommand } from '../command-words.js';
import { renderUsage } from '../render-usage.js';
import { budgetRequesterOf } from '../requester.js';
import type { SlashCommand } from './command.js';

const data = slashCommand('usage')
  .setContexts(InteractionContextType.Guild);

/** `/imagine-usage`: a private answer; server admins also see the server's totals and top users (mentions that ping nobody). */
export default {
  kind: 'slash',
  personal: true,
  data: data.toJSON(),
  async execute(interaction, ctx) {
    if ((await acknowledge('usage: defer', () => interaction.deferReply({ flags: MessageFlags.Ephemeral }), ctx.logger)) === 'expired') return;
    const summary = await ctx.runner.budgets.summary(budgetRequesterOf(interaction, ctx.adminRoleIds));
    await interaction.editReply({ content: renderUsage(summary, interaction.locale), allowedMentions: { parse: [] } });
  },
} satisfies SlashCommand;
