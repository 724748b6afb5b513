import { ChannelType, type ChatInputCommandInteraction, type SlashCommandSubcommandsOnlyBuilder } from 'discord.js';
import { changeAuditChannel, say as sayIn } from '../../runner/index.js';
import type { BotContext } from '../bot-context.js';
import { described } from '../command-words.js';
import { answerAdmin } from './admin-settings.js';

/** Adds `audit [channel] [off]` to `/imagine-admin`: choose the audit channel, turn it off, or (alone) see it. */
export function addAuditSubcommand<B extends SlashCommandSubcommandsOnlyBuilder>(builder: B): B {
  builder.addSubcommand((sub) =>
    described(sub.setName('audit'), 'discord.command.admin.audit')
      .addChannelOption((o) =>
        described(o.setName('channel'), 'discord.option.audit_channel')
          .addChannelTypes(ChannelType.GuildText, ChannelType.GuildAnnouncement),
      )
      .addBooleanOption((o) => described(o.setName('off'), 'discord.option.audit_off')),
  );
  return builder;
}

/**
 * `/imagine-admin audit channel:#audit` (the bot posts its greeting there first: a channel it cannot post in is
 * refused, naming the permissions), `/imagine-admin audit off:True`, and `/imagine-admin audit` alone (where the
 * entries go): private answers, for the same admins as the settings.
 */
export async function answerAudit(interaction: ChatInputCommandInteraction, ctx: BotContext): Promise<void> {
  await answerAdmin(interaction, ctx, `✋ ${sayIn(interaction.locale, 'audit.not_admin', { scope: 'server' })}`, async (requester, say) => {
    const channel = interaction.options.getChannel('channel');
    if (interaction.options.getBoolean('off') !== true && !channel) {
      const current = (await ctx.runner.policy.effective(requester)).auditChannel.value;
      await say(current ? `🧾 ${sayIn(interaction.locale, 'audit.current', { scope: 'server', channel: `<#${current.channelId}>` })}` : `🧾 ${sayIn(interaction.locale, 'audit.already_off')}`);
      return;
    }
    const answer = await changeAuditChannel(ctx.runner, requester, interaction.options.getBoolean('off') === true ? undefined : channel!.id);
    await say(answer.ok ? `✅ ${answer.message}` : `✋ ${answer.message}`);
  });
}
