import { MessageFlags, type ChatInputCommandInteraction, type SlashCommandSubcommandsOnlyBuilder } from 'discord.js';
import { changeSetting, describeSettings, repairSettings, say as sayIn, SETTING_WORDS, type Requester } from '../../runner/index.js';
import { acknowledge } from '../acknowledge.js';
import { commandAs, described, typedChoice } from '../command-words.js';
import type { BotContext } from '../bot-context.js';
import { refuseOutsideServers } from '../refuse-outside-servers.js';
import { budgetRequesterOf } from '../requester.js';

/** Adds `settings` (show every effective setting), `set setting value` and `repair` (clear those that cannot be read) to `/imagine-admin`. */
export function addSettingsSubcommands<B extends SlashCommandSubcommandsOnlyBuilder>(builder: B): B {
  builder
    .addSubcommand((sub) =>
      described(sub.setName('settings'), 'discord.command.admin.settings'),
    )
    .addSubcommand((sub) =>
      described(sub.setName('set'), 'discord.command.admin.set')
        .addStringOption((o) =>
          described(o.setName('setting'), 'discord.option.setting')
            .setRequired(true)
            .addChoices(...Object.keys(SETTING_WORDS).map(typedChoice)),
        )
        .addStringOption((o) =>
          described(o.setName('value'), 'discord.option.value')
            .setRequired(true)
            .setMaxLength(1500),
        ),
    )
    .addSubcommand((sub) =>
      described(sub.setName('repair'), 'discord.command.admin.repair'),
    );
  return builder;
}

/**
 * A private answer to one of `/imagine-admin`'s subcommands for the admins (`budgetRequesterOf`): deferred
 * ephemerally, then outside servers (`refuseOutsideServers`) that it manages a server from that server, `notAdmin` for
 * anyone else who is no admin, or `answer` with the admin and a way to say what it decided.
 */
export async function answerAdmin(
  interaction: ChatInputCommandInteraction,
  ctx: BotContext,
  notAdmin: string,
  answer: (requester: Requester, say: (content: string) => Promise<unknown>) => Promise<void>,
): Promise<void> {
  const say = (content: string) => interaction.editReply({ content, allowedMentions: { parse: [] } });
  if ((await acknowledge(`admin ${interaction.options.getSubcommand()}: defer`, () => interaction.deferReply({ flags: MessageFlags.Ephemeral }), ctx.logger)) === 'expired') return;
  if (await refuseOutsideServers(ctx, interaction, { what: 'admin', command: `admin ${interaction.options.getSubcommand()}` }, say)) return;
  const requester = budgetRequesterOf(interaction, ctx.adminRoleIds);
  if (!requester.isAdmin) {
    await say(notAdmin);
    return;
  }
  await answer(requester, say);
}

/**
 * `/imagine-admin settings`, `/imagine-admin set` and `/imagine-admin repair`: private answers. Who may
 * see and change them: the same admins as `/imagine-admin budget`.
 */
export async function answerSettings(interaction: ChatInputCommandInteraction, ctx: BotContext): Promise<void> {
  await answerAdmin(interaction, ctx, sayIn(interaction.locale, 'discord.settings.not_admin'), async (requester, say) => {
    if (interaction.options.getSubcommand() === 'settings') {
      await say(describeSettings(await ctx.runner.policy.effective(requester), commandAs(interaction.locale, 'admin', 'set'), interaction.locale, ctx.runner.audit.trouble(requester)));
      return;
    }
    const answer =
      interaction.options.getSubcommand() === 'repair'
        ? await repairSettings(ctx.runner.policy, requester)
        : await changeSetting(ctx.runner.policy, requester, interaction.options.getString('setting', true), interaction.options.getString('value', true));
    await say(answer.ok ? `✅ ${answer.message}` : `✋ ${answer.message}`);
  });
}
