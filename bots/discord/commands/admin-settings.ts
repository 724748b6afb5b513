import { MessageFlags, type ChatInputCommandInteraction, type SlashCommandSubcommandsOnlyBuilder } from 'discord.js';
import { changeSetting, describeSettings, SETTING_WORDS } from '../../runner/index.js';
import { acknowledge } from '../acknowledge.js';
import type { BotContext } from '../bot-context.js';
import { budgetRequesterOf } from '../requester.js';

/** Adds `settings` (show every effective setting) and `set setting value` to `/imagine-admin`. */
export function addSettingsSubcommands<B extends SlashCommandSubcommandsOnlyBuilder>(builder: B): B {
  builder
    .addSubcommand((sub) => sub.setName('settings').setDescription('Show every setting of this server and where it comes from (operator or admin)'))
    .addSubcommand((sub) =>
      sub
        .setName('set')
        .setDescription('Change a setting of this server, within what the operator allows')
        .addStringOption((o) =>
          o
            .setName('setting')
            .setDescription('Which setting')
            .setRequired(true)
            .addChoices(...Object.keys(SETTING_WORDS).map((name) => ({ name, value: name }))),
        )
        .addStringOption((o) =>
          o.setName('value').setDescription('#channels, @roles/@members, words, a number…; clear for the default; add …/remove … for lists').setRequired(true).setMaxLength(1500),
        ),
    );
  return builder;
}

/**
 * `/imagine-admin settings` and `/imagine-admin set`: private answers. Who may
 * see and change them: the same admins as `/imagine-admin budget`.
 */
export async function answerSettings(interaction: ChatInputCommandInteraction, ctx: BotContext): Promise<void> {
  const say = (content: string) => interaction.editReply({ content, allowedMentions: { parse: [] } });
  if ((await acknowledge('admin settings: defer', () => interaction.deferReply({ flags: MessageFlags.Ephemeral }), ctx.logger)) === 'expired') return;
  const requester = budgetRequesterOf(interaction, ctx.adminRoleIds);
  if (!requester.isAdmin) {
    await say('✋ Only an admin of this server can see and change its settings.');
    return;
  }
  if (interaction.options.getSubcommand() === 'settings') {
    await say(describeSettings(await ctx.runner.policy.effective(requester), '`/imagine-admin set`'));
    return;
  }
  const answer = await changeSetting(ctx.runner.policy, requester, interaction.options.getString('setting', true), interaction.options.getString('value', true));
  await say(answer.ok ? `✅ ${answer.message}` : `✋ ${answer.message}`);
}
