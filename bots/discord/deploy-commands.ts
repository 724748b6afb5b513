import { pathToFileURL } from 'node:url';
import { REST, Routes, type RESTPostAPIApplicationCommandsJSONBody } from 'discord.js';
import { scrubSecrets } from '../../src/index.js';
import { commandDefinitions } from './commands/index.js';
import { readDiscordConfig } from './config.js';
import { DISCORD_API_BASE_URL } from './discord-facts.js';

export interface DeployCommandsOptions {
  token: string;
  /** Default: asked from Discord (`GET /applications/@me`). */
  applicationId?: string | undefined;
  /** Register in this one server (instant; for testing) instead of globally (may take up to an hour to show). */
  guildId?: string | undefined;
  apiBaseUrl?: string | undefined;
}

export interface DeployedCommands {
  scope: 'global' | 'guild';
  applicationId: string;
  names: string[];
}

/** Registers (replaces) the bot's commands with Discord, globally or in one server. */
export async function deployCommands(options: DeployCommandsOptions): Promise<DeployedCommands> {
  const rest = new REST({ api: (options.apiBaseUrl ?? DISCORD_API_BASE_URL).replace(/\/+$/, '') }).setToken(options.token);
  const applicationId = options.applicationId ?? ((await rest.get(Routes.currentApplication())) as { id: string }).id;
  const body: RESTPostAPIApplicationCommandsJSONBody[] = commandDefinitions();
  const route = options.guildId ? Routes.applicationGuildCommands(applicationId, options.guildId) : Routes.applicationCommands(applicationId);
  const registered = (await rest.put(route, { body })) as { name: string }[];
  return { scope: options.guildId ? 'guild' : 'global', applicationId, names: registered.map((c) => c.name) };
}

/** `node --import tsx bots/discord/deploy-commands.ts` (or the built file): reads DISCORD_* from the environment. */
async function main(): Promise<void> {
  const config = readDiscordConfig(process.env);
  if (!config) {
    console.error('Set DISCORD_TOKEN (and DISCORD_GUILD_ID to register in one server for testing) to deploy the commands.');
    process.exitCode = 1;
    return;
  }
  try {
    const result = await deployCommands(config);
    const where = result.scope === 'guild' ? `in server ${config.guildId}` : 'globally (they can take up to an hour to appear)';
    console.log(`Registered ${result.names.map((n) => (n.includes(' ') ? `"${n}"` : `/${n}`)).join(', ')} ${where} for application ${result.applicationId}.`);
  } catch (error) {
    console.error(`Could not register the commands: ${scrubSecrets(error instanceof Error ? error.message : String(error), [config.token])}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
