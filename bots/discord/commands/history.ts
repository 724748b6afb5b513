import { ButtonStyle, ComponentType, InteractionContextType, MessageFlags, type APIActionRowComponent, type APIButtonComponentWithCustomId } from 'discord.js';
import { acknowledge } from '../acknowledge.js';
import { described, namedChoice, slashCommand } from '../command-words.js';
import { encodeCustomId } from '../custom-ids.js';
import { DISCORD_LIMITS } from '../discord-facts.js';
import { describeForgotten, historyLineValues, say as sayIn, type HistoryEntry } from '../../runner/index.js';
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

/** One line per job, newest first, with a Reroll button each (mentions ping nobody: the reply sets `allowedMentions`). */
function renderHistory(entries: readonly HistoryEntry[], whose: 'mine' | 'scope', locale: string): { content: string; components: APIActionRowComponent<APIButtonComponentWithCustomId>[] } {
  const bold = { bold: (text: string) => `**${text}**` };
  const title = sayIn(locale, 'history.title', { whose, scope: 'server' }, bold);
  if (entries.length === 0) return { content: `${title}\n${sayIn(locale, 'history.empty')}`, components: [] };
  const lines = entries.map((e, i) => {
    const prompt = e.prompt.length > 80 ? `${e.prompt.slice(0, 79)}…` : e.prompt;
    return sayIn(locale, 'discord.history.line', {
      rank: i + 1,
      when: `<t:${Math.floor(e.at / 1000)}:R>`,
      author: whose === 'scope' ? ` <@${e.userId}>` : '',
      prompt: prompt.replace(/[\n`]/g, ' '),
      ...historyLineValues(e),
      hasLink: e.link ? 'yes' : 'no',
      link: e.link ?? '',
    });
  });
  const buttons: APIButtonComponentWithCustomId[] = entries.slice(0, DISCORD_LIMITS.buttonsPerRow * 2).map((e, i) => ({
    type: ComponentType.Button,
    style: ButtonStyle.Secondary,
    label: sayIn(locale, 'history.reroll_numbered', { index: i + 1 }),
    custom_id: encodeCustomId({ action: 'reroll', key: e.key }),
  }));
  const components: APIActionRowComponent<APIButtonComponentWithCustomId>[] = [];
  for (let i = 0; i < buttons.length; i += DISCORD_LIMITS.buttonsPerRow) components.push({ type: ComponentType.ActionRow, components: buttons.slice(i, i + DISCORD_LIMITS.buttonsPerRow) });
  return { content: [title, ...lines].join('\n'), components };
}

