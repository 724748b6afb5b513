import { MessageFlags, type Interaction, type RepliableInteraction } from 'discord.js';
import { describeFailure, PressRefusedError, refusalFromPolicy, say, sayWords, words } from '../runner/index.js';
import { acknowledge } from './acknowledge.js';
import { answerBudgetOf } from './answer-budget.js';
import type { BotContext } from './bot-context.js';
import type { Command } from './commands/index.js';
import { decodeCustomId, type CustomIdData } from './custom-ids.js';
import type { JobRecord } from './JobRecordStore.js';
import { handleButton, isOwnPrivateJobInDm, tellUnread } from './handle-buttons.js';
import { handleModal } from './handle-modals.js';
import { loggableError } from './loggable-error.js';
import { isPersonalContext } from './requester.js';
import { refuseInputPrivately } from './refuse-privately.js';


/** One handler for every interaction: commands, buttons, modals. Never throws; a bug is logged and the user told briefly. An interaction too old to answer never reaches it (each intake drops it before claiming it). */
export function createInteractionRouter(ctx: BotContext, commands: ReadonlyMap<string, Command>): (interaction: Interaction) => Promise<void> {
  return async (interaction) => {
    try {
      // DMs and user installs are the operator's choice (`DISCORD_USER_INSTALLS`): otherwise refused here, privately, before anything runs.
      // A private server job's own message in its member's DM (its result or "stopped" past its token) is that server's, not a DM job: taken.
      // A press (a button, or the form opened from one) acts on a job: its record is read here, once, for every check below.
      const press = await readPressedJob(ctx, interaction);
      if (!ctx.userInstalls && interaction.isRepliable() && isPersonalContext(interaction) && !(press?.read && press.record && isOwnPrivateJobInDm(press.record, interaction))) {
        if (press && !press.read) ctx.logger.warn({ err: loggableError(press.error), jobKey: press.id.key }, 'could not read the job of a press in a DM while DMs are off; refused it as any press there');
        return await refuseOutsideServers(ctx, interaction);
      }
      if (press && !press.read && (interaction.isButton() || interaction.isModalSubmit())) return await tellUnread(ctx, interaction, press.error, { jobKey: press.id.key, action: press.id.action });
      if (interaction.isChatInputCommand()) {
        const command = commands.get(interaction.commandName);
        if (command?.kind === 'slash') return await command.execute(interaction, ctx);
      } else if (interaction.isMessageContextMenuCommand()) {
        const command = commands.get(interaction.commandName);
        if (command?.kind === 'message-menu') return await command.execute(interaction, ctx);
      } else if (interaction.isButton()) {
        if (press?.read) return await handleButton(ctx, interaction, press.id, press.record);
        // A button whose id this version does not read (an older version's): the presser's, logged once with its code.
        if (!press) {
          const refusal = new PressRefusedError('unknown_button', words('discord.unknown_interaction'));
          return await refuseInputPrivately(ctx, interaction, refusal, () => sayQuietly(interaction, `✋ ${sayWords(interaction.locale, refusal.words)}`));
        }
      } else if (interaction.isModalSubmit()) {
        if (press?.read && (press.id.action === 'edit-message' || press.id.action === 'edit-result')) return await handleModal(ctx, interaction, press.id, press.record);
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

/** The job a press acts on, as read from the bots' state: its record (undefined once gone), or why it could not be read. */
type PressedJob = { id: CustomIdData } & ({ read: true; record: JobRecord | undefined } | { read: false; error: unknown });

/**
 * The job record of a button or form (undefined for anything else), read once for the whole press — whether it is a
 * private server job's own press in its member's DM (`isOwnPrivateJobInDm`), and what its handler acts on — within
 * what is left of the press's answer budget (answer-budget.ts), after its claim and before the checks after it
 * (`memberNow`). A state that does not answer in time (or fails) leaves a press in a DM a DM's, refused at once as any
 * other while DMs are off; anywhere else it is told privately that something went wrong on our side, to press again.
 */
async function readPressedJob(ctx: BotContext, interaction: Interaction): Promise<PressedJob | undefined> {
  if (!interaction.isButton() && !interaction.isModalSubmit()) return undefined;
  const id = decodeCustomId(interaction.customId);
  if (!id) return undefined;
  try {
    return { id, read: true, record: await answerBudgetOf(interaction).within(() => ctx.store.get(id.key), 'the state store') };
  } catch (error) {
    return { id, read: false, error };
  }
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
