import { ApplicationIntegrationType, InteractionContextType, type RESTPostAPIApplicationCommandsJSONBody } from 'discord.js';
import { DISCORD_LIMITS } from '../discord-facts.js';
import type { Command } from './command.js';
import edit from './edit.js';
import editImage from './edit-image.js';
import imagine from './imagine.js';
import admin from './admin.js';
import usage from './usage.js';
import history from './history.js';
import settings from './settings.js';

export type { Command, MessageMenuCommand, SlashCommand } from './command.js';

const ALL: readonly Command[] = [imagine, edit, editImage, usage, admin, history, settings];

/**
 * The commands, checked: unique names, at most Discord's 25 options each,
 * required options before optional ones, choices within Discord's limit.
 * Throws at startup (and in the deploy script) when one is wrong.
 */
export function loadCommands(commands: readonly Command[] = ALL): Map<string, Command> {
  const byName = new Map<string, Command>();
  for (const command of commands) {
    const { name } = command.data;
    if (byName.has(name)) throw new Error(`two commands are named ${name}`);
    const options = 'options' in command.data ? (command.data.options ?? []) : [];
    if (options.length > DISCORD_LIMITS.optionsPerCommand) {
      throw new Error(`/${name} has ${options.length} options; Discord allows ${DISCORD_LIMITS.optionsPerCommand}`);
    }
    let optionalSeen = false;
    for (const option of options) {
      const required = 'required' in option && option.required === true;
      if (required && optionalSeen) throw new Error(`/${name}: required option ${option.name} comes after an optional one`);
      if (!required) optionalSeen = true;
      const choices = 'choices' in option ? (option.choices ?? []) : [];
      if (choices.length > DISCORD_LIMITS.choicesPerOption) throw new Error(`/${name} ${option.name} has more than ${DISCORD_LIMITS.choicesPerOption} choices`);
    }
    byName.set(name, command);
  }
  return byName;
}

/**
 * What the deploy script registers with Discord: every command for servers the bot is installed in; with
 * `userInstalls` (`DISCORD_USER_INSTALLS`) the personal ones also for user installs (`integration_types` 1) and for
 * DMs with the bot, group DMs and other DMs (`contexts` 1 and 2). `/imagine-admin` stays server-only.
 */
export function commandDefinitions(commands: readonly Command[] = ALL, options: { userInstalls?: boolean | undefined } = {}): RESTPostAPIApplicationCommandsJSONBody[] {
  return [...loadCommands(commands).values()].map((c) =>
    options.userInstalls && c.personal
      ? {
          ...c.data,
          integration_types: [ApplicationIntegrationType.GuildInstall, ApplicationIntegrationType.UserInstall],
          contexts: [InteractionContextType.Guild, InteractionContextType.BotDM, InteractionContextType.PrivateChannel],
        }
      : c.data,
  );
}
