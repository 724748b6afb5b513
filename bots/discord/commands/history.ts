import { InteractionContextType, MessageFlags } from 'discord.js';
import { acknowledge } from '../acknowledge.js';
import { described, namedChoice, slashCommand } from '../command-words.js';
import { renderHistory } from '../job-history.js';
import { describeForgotten, say as sayIn } from '../../runner/index.js';
import { refuseOutsideServers } from '../refuse-outside-servers.js';
import { budgetRequesterOf } from '../requester.js';
import type { SlashCommand } from './command.js';

const data = slashCommand('history')
  .setContexts(InteractionContextType.Guild)
  .addStringOption((o) =>
    described(o.setName('show'), 'discord.option.show').addChoices(...(['mine', 'server', 'forget'] as const).map((value) => namedChoice('discord.choice.show', { show: value }, value))),
  );

/** `/imagine-history [show]`: a private answer; Reroll buttons run a job again in this channel. */
export default {
  kind: 'slash',
  personal: true,
  data: data.toJSON(),
  async execute(interaction, ctx) {
    if ((await acknowledge('history: defer', () => interaction.deferReply({ flags: MessageFlags.Ephemeral }), ctx.logger)) === 'expired') return;
    const say = (content: string, components: ReturnType<typeof renderHistory>['components'] = []) =>
      interaction.editReply({ content, components, allowedMentions: { parse: [] } });
    const history = ctx.runner.history;
    if (!history) {
      await say(sayIn(interaction.locale, 'history.none_kept', { icon: '✋' }));
      return;
    }
    const requester = budgetRequesterOf(interaction, ctx.adminRoleIds);
    const show = interaction.options.getString('show') ?? 'mine';
    if (show === 'forget') {
      await say(describeForgotten(await history.forgetEverywhere(requester), interaction.locale, '🧹'));
      return;
    }
    if (show === 'server') {
      if (await refuseOutsideServers(ctx, interaction, { what: 'history', command: `history ${show}` }, say)) return;
      const entries = await history.ofScope(requester);
      if (!entries) {
        await say(sayIn(interaction.locale, 'history.not_admin', { icon: '✋', scope: 'server' }));
        return;
      }
      const view = renderHistory(entries, 'scope', interaction.locale);
      await say(view.content, view.components);
      return;
    }
    const view = renderHistory(await history.mine(requester), 'mine', interaction.locale);
    await say(view.content, view.components);
  },
} satisfies SlashCommand;
