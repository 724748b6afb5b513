import { InteractionContextType, MessageFlags, SlashCommandBuilder } from 'discord.js';
import { acknowledge } from '../acknowledge.js';
import { renderHistory } from '../job-history.js';
import { budgetRequesterOf } from '../requester.js';
import type { SlashCommand } from './command.js';

const data = new SlashCommandBuilder()
  .setName('imagine-history')
  .setDescription('Your last 10 images, privately; admins can see the server’s; forget erases yours')
  .setContexts(InteractionContextType.Guild)
  .addStringOption((o) =>
    o
      .setName('show')
      .setDescription('Whose history (default: yours)')
      .addChoices({ name: 'mine', value: 'mine' }, { name: 'server (admins)', value: 'server' }, { name: 'forget mine (erase it)', value: 'forget' }),
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
      await say('✋ This bot keeps no history.');
      return;
    }
    const requester = budgetRequesterOf(interaction, ctx.adminRoleIds);
    const show = interaction.options.getString('show') ?? 'mine';
    if (show === 'forget') {
      const count = await history.forget(requester);
      await say(`🧹 Erased your history (${count} ${count === 1 ? 'job' : 'jobs'}). Images already posted stay in their channels.`);
      return;
    }
    if (show === 'server') {
      const entries = await history.ofScope(requester);
      if (!entries) {
        await say('✋ Only an admin of this server can see its history.');
        return;
      }
      const view = renderHistory(entries, '**This server’s recent images**', true);
      await say(view.content, view.components);
      return;
    }
    const view = renderHistory(await history.mine(requester), '**Your last images** (only you see this)', false);
    await say(view.content, view.components);
  },
} satisfies SlashCommand;
