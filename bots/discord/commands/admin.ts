import { InteractionContextType, MessageFlags, PermissionFlagsBits, SlashCommandBuilder } from 'discord.js';
import { acknowledge } from '../acknowledge.js';
import { budgetRequesterOf } from '../requester.js';
import { AMOUNT_HINT, CAP_NAMES, capOfName, notAdminMessage, parseCapAmount } from '../../runner/index.js';
import { addSettingsSubcommands, answerSettings } from './admin-settings.js';
import type { SlashCommand } from './command.js';

const data = addSettingsSubcommands(new SlashCommandBuilder()
  .setName('imagine-admin')
  .setDescription('Server admins: change this server’s image budgets')
  .setContexts(InteractionContextType.Guild)
  .setDefaultMemberPermissions(PermissionFlagsBits.ManageGuild)
  .addSubcommand((sub) =>
    sub
      .setName('budget')
      .setDescription('Set a budget of this server, at most the operator’s cap; clear goes back to the operator’s setting')
      .addStringOption((o) =>
        o
          .setName('cap')
          .setDescription('Which budget')
          .setRequired(true)
          .addChoices(...Object.keys(CAP_NAMES).map((name) => ({ name, value: name }))),
      )
      .addStringOption((o) =>
        o.setName('usd').setDescription('US dollars, 0 or more (e.g. 2.50), or clear for the operator’s setting').setRequired(true).setMaxLength(20),
      ),
  ));

/** `/imagine-admin budget cap [usd]`, `settings`, `set setting value`: only for admins (the answer is private either way). */
export default {
  kind: 'slash',
  data: data.toJSON(),
  async execute(interaction, ctx) {
    if (interaction.options.getSubcommand() !== 'budget') return answerSettings(interaction, ctx);
    const say = (content: string) => interaction.editReply({ content, allowedMentions: { parse: [] } });
    if ((await acknowledge('admin: defer', () => interaction.deferReply({ flags: MessageFlags.Ephemeral }), ctx.logger)) === 'expired') return;
    const requester = budgetRequesterOf(interaction, ctx.adminRoleIds);
    const cap = capOfName(interaction.options.getString('cap', true));
    const amount = parseCapAmount(interaction.options.getString('usd', true));
    if (!cap) {
      await say(`Choose one of ${Object.keys(CAP_NAMES).join(', ')}.`);
      return;
    }
    if (!amount.ok) {
      // Who may change budgets is told first, as `setCap` does.
      await say(`✋ ${requester.isAdmin ? AMOUNT_HINT : notAdminMessage('discord')}`);
      return;
    }
    const change = await ctx.runner.budgets.setCap(requester, cap, amount.usd);
    await say(change.ok ? `✅ ${change.message}` : `✋ ${change.message}`);
  },
} satisfies SlashCommand;
