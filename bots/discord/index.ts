/** The Discord surface: start the bot, read its settings, register its commands. */
export { startDiscordBot, type DiscordBot, type StartDiscordBotOptions } from './start-discord-bot.js';
export { checkUserInstalls, readDiscordConfig, type DiscordConfig } from './config.js';
export { deployCommands, type DeployCommandsOptions, type DeployedCommands } from './deploy-commands.js';
export { commandDefinitions } from './commands/index.js';
export { inviteLink, INVITE_PERMISSIONS, INVITE_SCOPES } from './invite-link.js';
export type { DiscordJobRunner } from './bot-context.js';
export { DISCORD_API_BASE_URL, DISCORD_CDN_HOSTS } from './discord-facts.js';
export { discordSurface } from './surface.js';
