import { InteractionContextType, MessageFlags } from 'discord.js';
import type { OutputFormat, Quality, Size } from 'pictor';
import { describeMemberDefaults, MEMBER_DEFAULT_NAMES, say, type MemberDefaultName, type MemberDefaultsChange } from '../../runner/index.js';
import { acknowledge } from '../acknowledge.js';
import { COUNT_RANGE, FORMAT_CHOICES, QUALITY_CHOICES, SIZE_CHOICES } from '../command-choices.js';
import { commandAs, described, namedChoice, slashCommand } from '../command-words.js';
import { requesterOf } from '../requester.js';
import type { SlashCommand } from './command.js';

const CLEAR_CHOICES = [...MEMBER_DEFAULT_NAMES, 'all'] as const;

const data = slashCommand('settings')
  .setContexts(InteractionContextType.Guild)
  .addStringOption((o) => described(o.setName('size'), 'discord.option.size').addChoices(...SIZE_CHOICES))
  .addStringOption((o) => described(o.setName('quality'), 'discord.option.quality').addChoices(...QUALITY_CHOICES))
  .addStringOption((o) => described(o.setName('format'), 'discord.option.format').addChoices(...FORMAT_CHOICES))
  .addIntegerOption((o) =>
    described(o.setName('count'), 'discord.option.count').setMinValue(COUNT_RANGE.min).setMaxValue(COUNT_RANGE.max),
  )
  .addBooleanOption((o) => described(o.setName('private'), 'discord.option.default_private'))
  .addBooleanOption((o) => described(o.setName('previews'), 'discord.option.default_previews'))
  .addStringOption((o) =>
    described(o.setName('clear'), 'discord.option.clear')
      .addChoices(...CLEAR_CHOICES.map((name) => namedChoice('discord.choice.clear', { name }, name))),
  );

/**
 * `/imagine-settings [size] [quality] [format] [count] [private] [previews] [clear]`: a member's own defaults, a
 * private answer. With no option it shows them beside this server's; with options it sets those (`clear` first),
 * then shows the result. A command of its own rather than a subcommand: `/imagine` takes a prompt (a command with
 * options cannot have subcommands), and `/imagine-admin` is for the server's admins.
 */
export default {
  kind: 'slash',
  personal: true,
  data: data.toJSON(),
  async execute(interaction, ctx) {
    if ((await acknowledge('settings: defer', () => interaction.deferReply({ flags: MessageFlags.Ephemeral }), ctx.logger)) === 'expired') return;
    const { locale } = interaction;
    const requester = requesterOf(interaction, ctx.adminRoleIds);
    const change = changeOf(interaction.options);
    const changed = Object.keys(change).length > 0;
    if (changed) await ctx.runner.members.change(requester, change);
    const view = describeMemberDefaults(
      await ctx.runner.members.view(requester),
      await ctx.runner.policy.effective(requester),
      requester,
      { change: commandAs(locale, 'settings'), clear: commandAs(locale, 'settings', 'clear:') },
      locale,
      { bold: (text) => `**${text}**` },
    );
    await interaction.editReply({ content: changed ? `✅ ${say(locale, 'member.saved')}\n${view}` : view, allowedMentions: { parse: [] } });
  },
} satisfies SlashCommand;

type Options = Parameters<SlashCommand['execute']>[0]['options'];

/** What the member chose: `clear` (one, or all) first, then each option they set. */
function changeOf(options: Options): MemberDefaultsChange {
  const change: Record<string, unknown> = {};
  const clear = options.getString('clear');
  for (const name of MEMBER_DEFAULT_NAMES) if (clear === name || clear === 'all') change[name] = null;
  const set: Partial<Record<MemberDefaultName, unknown>> = {
    size: (options.getString('size') as Size | null) ?? undefined,
    quality: (options.getString('quality') as Quality | null) ?? undefined,
    format: (options.getString('format') as OutputFormat | null) ?? undefined,
    count: options.getInteger('count') ?? undefined,
    private: options.getBoolean('private') ?? undefined,
    previews: options.getBoolean('previews') ?? undefined,
  };
  for (const [name, value] of Object.entries(set)) if (value !== undefined) change[name] = value;
  return change as MemberDefaultsChange;
}
