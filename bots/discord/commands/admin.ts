import { InteractionContextType, PermissionFlagsBits, Routes, type APIRole, type ChatInputCommandInteraction } from 'discord.js';
import { described, slashCommand, typedChoice } from '../command-words.js';
import { amountHint, CAP_NAMES, capOfName, notAdminMessage, parseCapAmount, say as sayIn, type CapChange, type Requester } from '../../runner/index.js';
import type { BotContext } from '../bot-context.js';
import { addSettingsSubcommands, answerAdmin, answerSettings } from './admin-settings.js';
import { addStyleSubcommands, answerStyles } from './admin-styles.js';
import { addAuditSubcommand, answerAudit } from './admin-audit.js';
import type { SlashCommand } from './command.js';

const data = addAuditSubcommand(addStyleSubcommands(addSettingsSubcommands(slashCommand('admin')
  .setContexts(InteractionContextType.Guild)
  .setDefaultMemberPermissions(PermissionFlagsBits.ManageGuild)
  .addSubcommand((sub) =>
    described(sub.setName('budget'), 'discord.command.admin.budget')
      .addStringOption((o) =>
        described(o.setName('cap'), 'discord.option.cap')
          .setRequired(true)
          .addChoices(...Object.keys(CAP_NAMES).map(typedChoice)),
      )
      .addStringOption((o) =>
        described(o.setName('usd'), 'discord.option.usd').setRequired(true).setMaxLength(20),
      )
      .addRoleOption((o) => described(o.setName('role'), 'discord.option.role')),
  ))));

/** `/imagine-admin budget cap usd [role]`, `settings`, `set setting value`, `repair`, `style name text …`, `styles`, `audit [channel] [off]`: only for admins (the answer is private either way). */
export default {
  kind: 'slash',
  data: data.toJSON(),
  async execute(interaction, ctx) {
    const subcommand = interaction.options.getSubcommand();
    if (subcommand === 'style' || subcommand === 'styles') return answerStyles(interaction, ctx);
    if (subcommand === 'audit') return answerAudit(interaction, ctx);
    if (subcommand === 'budget') return answerBudget(interaction, ctx);
    return answerSettings(interaction, ctx);
  },
} satisfies SlashCommand;

/**
 * `/imagine-admin budget cap usd [role]`: a cap of the server, or with a role that role's budget of each member
 * holding it; @everyone (the role whose id is the server's) is every member: the cap of each user.
 */
async function answerBudget(interaction: ChatInputCommandInteraction, ctx: BotContext): Promise<void> {
  await answerAdmin(interaction, ctx, `✋ ${notAdminMessage('discord', interaction.locale)}`, async (requester, say) => {
    const cap = capOfName(interaction.options.getString('cap', true));
    const amount = parseCapAmount(interaction.options.getString('usd', true));
    if (!cap) {
      await say(sayIn(interaction.locale, 'settings.unknown', { names: Object.keys(CAP_NAMES).join(', ') }));
      return;
    }
    if (!amount.ok) {
      await say(`✋ ${amountHint(interaction.locale)}`);
      return;
    }
    const role = interaction.options.getRole('role');
    let change: CapChange;
    if (role && role.id !== interaction.guildId) {
      const set = () => ctx.runner.budgets.setRoleBudget(requester, { id: role.id, name: role.name }, cap, amount.usd);
      change = await set();
      if (!change.ok && change.code === 'too_many_roles' && (await forgetDeletedRoles(interaction, ctx, requester))) change = await set();
    } else change = await ctx.runner.budgets.setCap(requester, cap, amount.usd);
    await say(change.ok ? `✅ ${change.message}` : `✋ ${change.message}`);
  });
}

/**
 * Once the server's places for role budgets are full: drops those of roles deleted since (no admin can pick a deleted
 * role to clear it), from the server's roles as Discord lists them. True when one was dropped; a failure keeps them all.
 */
async function forgetDeletedRoles(interaction: ChatInputCommandInteraction, ctx: BotContext, requester: Requester): Promise<boolean> {
  try {
    const roles = (await ctx.botRest.get(Routes.guildRoles(interaction.guildId!))) as APIRole[];
    return (await ctx.runner.budgets.forgetDeletedRoles(requester, roles.map((r) => r.id))) > 0;
  } catch (error) {
    ctx.logger.warn({ err: error }, 'the server’s roles could not be read; the budgets of roles deleted since are kept');
    return false;
  }
}
