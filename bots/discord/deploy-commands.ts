import { pathToFileURL } from 'node:url';
import { DiscordAPIError, HTTPError, REST, Routes, type RESTPostAPIApplicationCommandsJSONBody } from 'discord.js';
import { loadDotEnvOrExit, readDmCaps, scrubSecrets, unknownSettingWarnings } from 'pictor/internal';
import { describeDiscordUnreachable, discordRefusedToken } from './unreachable.js';
import { commandDefinitions } from './commands/index.js';
import { checkUserInstalls, readDiscordConfig } from './config.js';
import { DISCORD_API_BASE_URL } from './discord-facts.js';
import { inviteLink } from './invite-link.js';

export interface DeployCommandsOptions {
  token: string;
  /** Default: asked from Discord (`GET /applications/@me`). */
  applicationId?: string | undefined;
  /** Register in this one server (instant; for testing) instead of globally (may take up to an hour to show). */
  guildId?: string | undefined;
  apiBaseUrl?: string | undefined;
  /** `DISCORD_USER_INSTALLS`: also register the commands for user installs and DMs (`integration_types`, `contexts`). */
  userInstalls?: boolean | undefined;
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
  const body: RESTPostAPIApplicationCommandsJSONBody[] = commandDefinitions(undefined, { userInstalls: options.userInstalls });
  const route = options.guildId ? Routes.applicationGuildCommands(applicationId, options.guildId) : Routes.applicationCommands(applicationId);
  const registered = (await rest.put(route, { body })) as { name: string }[];
  return { scope: options.guildId ? 'guild' : 'global', applicationId, names: registered.map((c) => c.name) };
}

/**
 * `npm run discord:deploy` (the built file; `node --import tsx bots/discord/deploy-commands.ts` from source): reads
 * DISCORD_* from the environment and `.env`, as `npm start` does.
 * Every failure is one line on stderr without the token: exit 2 for a setting that is wrong, 1 when Discord refuses or cannot be reached.
 */
export async function main(env: NodeJS.ProcessEnv = process.env, print: { out(line: string): void; err(line: string): void } = { out: console.log, err: console.error }): Promise<number> {
  const token = env.DISCORD_TOKEN?.trim();
  let config;
  try {
    config = readDiscordConfig(env);
    if (config) checkUserInstalls(config.userInstalls, readDmCaps(env));
  } catch (error) {
    print.err(`Could not register the commands: ${oneLine(error, token)}`);
    return 2;
  }
  if (!config) {
    // A setting that is missing, as every other settings error: exit 2.
    print.err('Set DISCORD_TOKEN (and DISCORD_GUILD_ID to register in one server for testing) to deploy the commands.');
    return 2;
  }
  try {
    const result = await deployCommands(config);
    const where = result.scope === 'guild' ? `in server ${config.guildId}` : 'globally (they can take up to an hour to appear)';
    print.out(`Registered ${result.names.map((n) => (n.includes(' ') ? `"${n}"` : `/${n}`)).join(', ')} ${where} for application ${result.applicationId}.`);
    if (config.userInstalls) print.out('DISCORD_USER_INSTALLS is on: all but /imagine-admin are offered in DMs and user installs too (tick Installation → User Install in the Developer Portal).');
    print.out(`Invite the bot to a server: ${inviteLink(result.applicationId)}`);
    return 0;
  } catch (error) {
    print.err(`Could not register the commands: ${describeDeployFailure(error, config)}`);
    return 1;
  }
}

/** Why Discord refused, naming the setting to fix: the token (401), the server id (no access to it), or the network. */
function describeDeployFailure(error: unknown, config: { token: string; apiBaseUrl: string; guildId: string | undefined }): string {
  const refused = discordRefusedToken(error);
  if (refused) return `Discord did not accept DISCORD_TOKEN (${refused}): copy it again, or Bot → Reset Token in the Developer Portal.`;
  const status = error instanceof DiscordAPIError || error instanceof HTTPError ? error.status : undefined;
  if (config.guildId && (status === 403 || status === 404)) {
    return `Discord refused to register commands in server ${config.guildId} (${status}): check DISCORD_GUILD_ID, and that the bot was invited there with the applications.commands scope.`;
  }
  const unreachable = describeDiscordUnreachable(error, config.apiBaseUrl);
  if (unreachable) return `${unreachable}.`;
  return oneLine(error, config.token);
}

/** An error as one line: its message only (no stack, no object dump), without the token or control characters. */
function oneLine(error: unknown, token: string | undefined): string {
  const message = error instanceof Error ? error.message : String(error);
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  return scrubSecrets(message, [token]).replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim().slice(0, 500);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // A .env to fix (a folder, a line that is not NAME=value, a file that cannot be read): one line naming it, exit 2.
  loadDotEnvOrExit('Could not register the commands: ');
  for (const line of unknownSettingWarnings(process.env)) process.stderr.write(`pictor: warning: ${line}\n`);
  process.exitCode = await main();
}
