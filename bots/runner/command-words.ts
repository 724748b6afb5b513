import { nested, type MessageValues } from './words.js';

/**
 * The Discord commands a sentence tells a member or an admin to use (`/{imagine}`, `/{edit}`, `/{admin}`,
 * `/{imagineSettings}`, `/{imagineUsage}`, `/{imagineHistory}`), named as their Discord shows them in the language the
 * sentence is said in: the catalog's command names, the ones the commands are registered with (the Discord bot's
 * `slashCommand`). A sentence never writes a Discord command's name out (the catalogs' test holds them to it). Slack's
 * sentences name its own command instead, as the app configured it (`{command}`).
 */
export const COMMAND_NAMES: MessageValues = {
  imagine: nested('discord.command.imagine.name'),
  edit: nested('discord.command.edit.name'),
  admin: nested('discord.command.admin.name'),
  imagineSettings: nested('discord.command.settings.name'),
  imagineUsage: nested('discord.command.usage.name'),
  imagineHistory: nested('discord.command.history.name'),
};
