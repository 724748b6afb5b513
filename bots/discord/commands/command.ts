import type {
  AutocompleteInteraction,
  ChatInputCommandInteraction,
  MessageContextMenuCommandInteraction,
  RESTPostAPIChatInputApplicationCommandsJSONBody,
  RESTPostAPIContextMenuApplicationCommandsJSONBody,
} from 'discord.js';
import type { BotContext } from '../bot-context.js';

/** A slash command: its registration data and what it does. */
export interface SlashCommand {
  kind: 'slash';
  data: RESTPostAPIChatInputApplicationCommandsJSONBody;
  /** Offered in DMs and user installs too when the operator turns them on (`DISCORD_USER_INSTALLS`). */
  personal?: boolean | undefined;
  execute(interaction: ChatInputCommandInteraction, ctx: BotContext): Promise<void>;
  /** Answers a member typing in one of its options with autocomplete (the choices, within Discord's 3 s). */
  autocomplete?(interaction: AutocompleteInteraction, ctx: BotContext): Promise<void>;
}

/** A command of a message's "Apps" menu. */
export interface MessageMenuCommand {
  kind: 'message-menu';
  data: RESTPostAPIContextMenuApplicationCommandsJSONBody;
  /** Offered in DMs and user installs too when the operator turns them on (`DISCORD_USER_INSTALLS`). */
  personal?: boolean | undefined;
  execute(interaction: MessageContextMenuCommandInteraction, ctx: BotContext): Promise<void>;
}

export type Command = SlashCommand | MessageMenuCommand;
