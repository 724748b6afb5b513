import { z } from 'zod';
import { ValidationError } from '../../src/index.js';
import { DISCORD_API_BASE_URL, DISCORD_CDN_HOSTS } from './discord-facts.js';

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
}

const snowflake = (name: string) =>
  z.string().regex(/^\d{17,20}$/, { error: () => `${name} must be a Discord id (17 to 20 digits)` });

const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const hostPattern = /^(?:[a-z0-9-]+\.)*[a-z0-9-]+(?::\d{1,5})?$|^\[[0-9a-f:]+\](?::\d{1,5})?$/i;

const ConfigSchema = z.object({
  DISCORD_TOKEN: z.string().min(20, { error: () => 'DISCORD_TOKEN does not look like a bot token (too short)' }),
  DISCORD_APPLICATION_ID: snowflake('DISCORD_APPLICATION_ID').optional(),
  DISCORD_API_BASE_URL: z
    .url({ protocol: /^https?$/, error: () => 'DISCORD_API_BASE_URL must be an http(s) URL, such as https://discord.com/api' })
    .optional(),
  DISCORD_GUILD_ID: snowflake('DISCORD_GUILD_ID').optional(),
  DISCORD_ADMIN_ROLE_IDS: z.array(snowflake('each of DISCORD_ADMIN_ROLE_IDS')),
  DISCORD_ALLOWED_ATTACHMENT_HOSTS: z
    .array(z.string().regex(hostPattern, { error: () => 'DISCORD_ALLOWED_ATTACHMENT_HOSTS must list host names (host or host:port), comma-separated' }))
    .min(1, { error: () => 'DISCORD_ALLOWED_ATTACHMENT_HOSTS must name at least one host' }),
});

const blankToUndefined = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value.trim());

/**
 * Reads the Discord surface's settings. Returns undefined when `DISCORD_TOKEN`
 * is not set (the bot is off); throws ValidationError naming the variable when
 * a setting is wrong. Error messages never contain the token.
 */
export function readDiscordConfig(env: NodeJS.ProcessEnv): DiscordConfig | undefined {
  const token = blankToUndefined(env.DISCORD_TOKEN);
  if (token === undefined) return undefined;
  const hosts = list(env.DISCORD_ALLOWED_ATTACHMENT_HOSTS);
  const parsed = ConfigSchema.safeParse({
    DISCORD_TOKEN: token,
    DISCORD_APPLICATION_ID: blankToUndefined(env.DISCORD_APPLICATION_ID),
    DISCORD_API_BASE_URL: blankToUndefined(env.DISCORD_API_BASE_URL),
    DISCORD_GUILD_ID: blankToUndefined(env.DISCORD_GUILD_ID),
    DISCORD_ADMIN_ROLE_IDS: list(env.DISCORD_ADMIN_ROLE_IDS),
    DISCORD_ALLOWED_ATTACHMENT_HOSTS: hosts.length ? hosts : [...DISCORD_CDN_HOSTS],
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'DISCORD_TOKEN');
    throw new ValidationError(variable, issue.message);
  }
  const c = parsed.data;
  return {
    token: c.DISCORD_TOKEN,
    applicationId: c.DISCORD_APPLICATION_ID,
    // discord.js adds the version itself: a base given as …/api/v10 would become …/api/v10/v10.
    apiBaseUrl: (c.DISCORD_API_BASE_URL ?? DISCORD_API_BASE_URL).replace(/\/+$/, '').replace(/\/v\d+$/, ''),
    guildId: c.DISCORD_GUILD_ID,
    adminRoleIds: c.DISCORD_ADMIN_ROLE_IDS,
    allowedAttachmentHosts: c.DISCORD_ALLOWED_ATTACHMENT_HOSTS.map((h) => h.toLowerCase()),
  };
}
