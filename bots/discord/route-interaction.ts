import { MessageFlags, type Interaction, type RepliableInteraction } from 'discord.js';
import { CLAIM_WAIT_MS, withTimeout } from 'pictor/internal';
import { describeFailure, refusalFromPolicy, say } from '../runner/index.js';
import { acknowledge } from './acknowledge.js';
import type { BotContext } from './bot-context.js';
import type { Command } from './commands/index.js';
import { decodeCustomId } from './custom-ids.js';
import { handleButton, isOwnPrivateJobInDm } from './handle-buttons.js';
import { handleModal } from './handle-modals.js';
import { interactionAge } from './interaction-age.js';
import { loggableError } from './loggable-error.js';
import { isPersonalContext } from './requester.js';


/** One handler for every interaction: commands, buttons, modals. Never throws; a bug is logged and the user told briefly. An interaction too old to answer is dropped first. */
export function createInteractionRouter(ctx: BotContext, commands: ReadonlyMap<string, Command>): (interaction: Interaction) => Promise<void> {
  return async (interaction) => {
    try {
      // Made longer ago than its token lives (a gateway event delivered late, a replay): nothing can be shown to the
      // member any more, so nothing is run, reserved or answered (the HTTP endpoint refuses these before claiming them).
      const age = interactionAge(interaction.createdTimestamp);
      if (age !== 'fresh') {
        ctx.logger.warn({ id: interaction.id, type: interaction.type, age, createdAt: new Date(interaction.createdTimestamp).toISOString() }, 'dropped an interaction made longer ago than its token lives (or stamped ahead)');
        return;
      }
      // DMs and user installs are the operator's choice (`DISCORD_USER_INSTALLS`): otherwise refused here, privately, before anything runs.
      // A private server job's own message in its member's DM (its result or "stopped" past its token) is that server's, not a DM job: taken.
      if (!ctx.userInstalls && interaction.isRepliable() && isPersonalContext(interaction) && !(await isOwnPrivateJobPress(ctx, interaction))) return await refuseOutsideServers(ctx, interaction);
      if (interaction.isChatInputCommand()) {
        const command = commands.get(interaction.commandName);
        if (command?.kind === 'slash') return await command.execute(interaction, ctx);
      } else if (interaction.isMessageContextMenuCommand()) {
        const command = commands.get(interaction.commandName);
        if (command?.kind === 'message-menu') return await command.execute(interaction, ctx);
      } else if (interaction.isButton()) {
        const id = decodeCustomId(interaction.customId);
        if (id) return await handleButton(ctx, interaction, id);
      } else if (interaction.isModalSubmit()) {
        const id = decodeCustomId(interaction.customId);
        if (id && (id.action === 'edit-message' || id.action === 'edit-result')) return await handleModal(ctx, interaction, id);
      } else if (interaction.isAutocomplete()) {
        const command = commands.get(interaction.commandName);
        if (command?.kind === 'slash' && command.autocomplete) return await command.autocomplete(interaction, ctx);
        ctx.logger.warn({ type: interaction.type, id: interaction.commandName }, 'an autocomplete of a command without one');
        return;
      } else {
        return;
      }
      ctx.logger.warn({ type: interaction.type, id: interaction.isCommand() ? interaction.commandName : 'customId' in interaction ? interaction.customId : undefined }, 'an interaction this bot does not know');
      if (interaction.isRepliable()) await sayQuietly(interaction, `✋ ${say(interaction.locale, 'discord.unknown_interaction')}`);
    } catch (error) {
      ctx.logger.error({ err: loggableError(error), type: interaction.type }, 'an interaction handler failed');
      if (interaction.isRepliable()) await sayQuietly(interaction, `⚠️ ${say(interaction.locale, 'error.on_my_side')}`);
    }
  };
}

/**
 * A button or form of a private server job pressed by its member in their DM (`isOwnPrivateJobInDm`). Its record is
 * read within the time an intake waits for the bots' state: a state that does not answer in time (or fails) leaves
 * the press a DM's, refused at once as any other while DMs are off, rather than unanswered.
 */
async function isOwnPrivateJobPress(ctx: BotContext, interaction: Interaction): Promise<boolean> {
  if (!interaction.isButton() && !interaction.isModalSubmit()) return false;
  const id = decodeCustomId(interaction.customId);
  if (!id) return false;
  const record = await withTimeout(ctx.store.get(id.key), CLAIM_WAIT_MS, 'the state store did not answer in time').catch((error: unknown) => {
    ctx.logger.warn({ err: loggableError(error), jobKey: id.key }, 'could not read the job of a press in a DM while DMs are off; refused it as any press there');
    return undefined;
  });
  return !!record && isOwnPrivateJobInDm(record, interaction);
}

async function refuseOutsideServers(ctx: BotContext, interaction: RepliableInteraction): Promise<void> {
  const { code, message } = describeFailure(refusalFromPolicy('dms_not_enabled', { platform: 'discord' }), interaction.locale);
  ctx.logger.info({ code, context: interaction.context }, 'refused an interaction outside the servers the bot is in');
  await acknowledge('refuse outside servers', () => interaction.reply({ content: `✋ ${message}`, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } }), ctx.logger);
}

/** Best effort: a short private answer, or an edit of the reply if one was started. */
async function sayQuietly(interaction: RepliableInteraction, content: string): Promise<void> {
  try {
    if (interaction.deferred || interaction.replied) await interaction.webhook.editMessage('@original', { content, components: [], files: [] });
    else await interaction.reply({ content, flags: MessageFlags.Ephemeral });
  } catch {
    // The interaction is gone or answered; nothing more to say.
  }
}
