import { ValidationError } from 'pictor';
import { envBoolean, envError, envList, envNumber, envText, envUrl, type Env } from 'pictor/internal';
import { DISCORD_API_BASE_URL, DISCORD_CDN_HOSTS } from './discord-facts.js';
import { isPublicKeyHex } from './verify-signature.js';

/** What the Discord surface reads from the environment (`readDiscordConfig`). */
export interface DiscordConfig {
  /** `DISCORD_TOKEN`: the bot token. A secret: never logged. */
  token: string;
  /** `DISCORD_APPLICATION_ID`: needed by the deploy script; the bot learns it at login otherwise. */
  applicationId: string | undefined;
  /** `DISCORD_API_BASE_URL`: Discord's REST base (without `/v10`); a proxy or a test double. Default Discord's own. */
  apiBaseUrl: string;
  /** `DISCORD_GUILD_ID`: the deploy script registers commands in this one server (instant, for testing) instead of globally. */
  guildId: string | undefined;
  /** `DISCORD_ADMIN_ROLE_IDS`: comma-separated role ids whose members may cancel anyone's job. */
  adminRoleIds: string[];
  /** `DISCORD_ALLOWED_ATTACHMENT_HOSTS`: comma-separated hosts input images may be downloaded from. Default Discord's CDN. */
  allowedAttachmentHosts: string[];
  /**
   * `DISCORD_INTERACTIONS_PORT` (with `DISCORD_PUBLIC_KEY`, optionally `DISCORD_INTERACTIONS_HOST`): interactions
   * arrive over HTTP at `/interactions` on this port instead of through the gateway. Undefined: gateway.
   */
  interactions: { publicKey: string; port: number; host: string | undefined } | undefined;
  /**
   * `DISCORD_USER_INSTALLS=1`: the commands are registered for user installs and DMs too, and jobs there are taken
   * (on the user's own budget, `PICTOR_DM_*_USD`). Default off: such interactions are refused (`dms_not_enabled`).
   */
  userInstalls: boolean;
}

const SNOWFLAKE = /^\d{17,20}$/;

const hostPattern = /^(?:[a-z0-9-]+\.)*[a-z0-9-]+(?::\d{1,5})?$|^\[[0-9a-f:]+\](?::\d{1,5})?$/i;

function snowflake(env: Env, name: string): string | undefined {
  const id = envText(env, name);
  if (id !== undefined && !SNOWFLAKE.test(id)) throw envError(env, name, 'a Discord id (17 to 20 digits)');
  return id;
}

/**
 * Reads the Discord surface's settings. Returns undefined when `DISCORD_TOKEN`
 * is not set (the bot is off); throws ValidationError naming the variable when
 * a setting is wrong. Error messages never contain the token.
 */
export function readDiscordConfig(env: Env): DiscordConfig | undefined {
  const token = envText(env, 'DISCORD_TOKEN');
  if (token === undefined) return undefined;
  if (token.length < 20) throw new ValidationError('DISCORD_TOKEN', 'DISCORD_TOKEN does not look like a bot token (too short)');
  const adminRoleIds = envList(env, 'DISCORD_ADMIN_ROLE_IDS', /,/) ?? [];
  if (!adminRoleIds.every((id) => SNOWFLAKE.test(id))) throw envError(env, 'DISCORD_ADMIN_ROLE_IDS', 'Discord role ids (17 to 20 digits each), comma-separated');
  const hosts = envList(env, 'DISCORD_ALLOWED_ATTACHMENT_HOSTS', /,/) ?? [...DISCORD_CDN_HOSTS];
  if (!hosts.every((host) => hostPattern.test(host))) throw envError(env, 'DISCORD_ALLOWED_ATTACHMENT_HOSTS', 'a list of host names (host or host:port), comma-separated');
  const apiBaseUrl = envUrl(env, 'DISCORD_API_BASE_URL', { example: 'https://discord.com/api' }) ?? DISCORD_API_BASE_URL;
  const publicKey = envText(env, 'DISCORD_PUBLIC_KEY');
  if (publicKey !== undefined && !isPublicKeyHex(publicKey)) throw envError(env, 'DISCORD_PUBLIC_KEY', 'the application’s Public Key from the Developer Portal (64 hex digits)');
  const port = envNumber(env, 'DISCORD_INTERACTIONS_PORT', { int: true, min: 0, max: 65535, takes: 'a port number from 0 to 65535' });
  const host = envText(env, 'DISCORD_INTERACTIONS_HOST');
  if (port === undefined && (publicKey !== undefined || host !== undefined)) {
    throw new ValidationError('DISCORD_INTERACTIONS_PORT', `DISCORD_INTERACTIONS_PORT must be set with ${publicKey !== undefined ? 'DISCORD_PUBLIC_KEY' : 'DISCORD_INTERACTIONS_HOST'} (interactions over HTTP); unset it for the gateway`);
  }
  if (port !== undefined && publicKey === undefined) {
    throw new ValidationError('DISCORD_PUBLIC_KEY', 'DISCORD_PUBLIC_KEY must be set with DISCORD_INTERACTIONS_PORT: it checks that interactions come from Discord');
  }
  const userInstalls = envBoolean(env, 'DISCORD_USER_INSTALLS', '1 (commands in DMs and user installs too) or 0') ?? false;
  return {
    token,
    applicationId: snowflake(env, 'DISCORD_APPLICATION_ID'),
    // discord.js adds the version itself: a base given as …/api/v10 would become …/api/v10/v10.
    apiBaseUrl: apiBaseUrl.replace(/\/+$/, '').replace(/\/v\d+$/, ''),
    guildId: snowflake(env, 'DISCORD_GUILD_ID'),
    adminRoleIds,
    allowedAttachmentHosts: hosts.map((h) => h.toLowerCase()),
    interactions: port !== undefined && publicKey !== undefined ? { publicKey: publicKey.toLowerCase(), port, host } : undefined,
    userInstalls,
  };
}

/**
 * User installs need a DM budget (`PICTOR_DM_DAILY_USD` or `PICTOR_DM_MONTHLY_USD`): anyone may install the app for
 * themselves, and without one strangers would spend the account up to its own caps. Checked with the caps the runner
 * read (`npm start`) or the deploy script read; throws a ValidationError naming the variable to set.
 */
export function checkUserInstalls(userInstalls: boolean, dmCaps: { dailyUsd?: number | undefined; monthlyUsd?: number | undefined }): void {
  if (userInstalls && dmCaps.dailyUsd === undefined && dmCaps.monthlyUsd === undefined) {
    throw new ValidationError(
      'PICTOR_DM_DAILY_USD',
      'DISCORD_USER_INSTALLS=1 lets anyone who installs the app spend on your account: set PICTOR_DM_DAILY_USD or PICTOR_DM_MONTHLY_USD (each person’s budget outside servers) first',
    );
  }
}
