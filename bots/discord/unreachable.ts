import { DiscordAPIError, GatewayCloseCodes, HTTPError } from 'discord.js';
import { ValidationError } from 'pictor';
import { describeUnreachable } from 'pictor/internal';
import { DISCORD_API_BASE_URL } from './discord-facts.js';

/**
 * Why Discord could not be reached, with what to check: the network, and
 * `DISCORD_API_BASE_URL` when it was set to something else than Discord's own
 * (as Slack names `SLACK_API_URL`), since a wrong proxy address is then the
 * likelier cause. Undefined when the error is not one of reaching it.
 */
export function describeDiscordUnreachable(error: unknown, apiBaseUrl: string | undefined): string | undefined {
  const base = (apiBaseUrl ?? DISCORD_API_BASE_URL).replace(/\/+$/, '');
  const unreachable = describeUnreachable(error, new URL(base).host);
  if (!unreachable) return undefined;
  return base === DISCORD_API_BASE_URL ? `${unreachable}; check the network` : `${unreachable}; check the network and DISCORD_API_BASE_URL (${base})`;
}

/**
 * How Discord refused the bot token, when it did: a 401 from REST (`DiscordAPIError`, `HTTPError`), discord.js's
 * `TokenInvalid` (its 401 to `GET /gateway/bot` at login), or the gateway closing the login with 4004 Authentication
 * failed (`gatewayCloseCode`: discord.js then rejects with a bare "Authentication failed", so the caller passes the
 * close code its client reported). Undefined when the error is not the token's. The one rule of every entry point
 * that reports a refused DISCORD_TOKEN (`npm start`, `npm run discord:deploy`).
 */
export function discordRefusedToken(error: unknown, gatewayCloseCode?: number): string | undefined {
  if (gatewayCloseCode === GatewayCloseCodes.AuthenticationFailed) return 'gateway close 4004 Authentication failed';
  if (error instanceof DiscordAPIError || error instanceof HTTPError) return refusedByStatus(error.status);
  return (error as { code?: unknown } | undefined)?.code === 'TokenInvalid' ? refusedByStatus(401) : undefined;
}

/**
 * How Discord refused the token a REST request was sent with, by its answer's status (401 Unauthorized), as
 * `discordRefusedToken` says it: the rule of its REST errors, for a watcher of every answer (`startDiscordBot`'s, which
 * sees them before any error is made of them). Undefined for any other status.
 */
export function refusedByStatus(status: number): string | undefined {
  return status === 401 ? '401 Unauthorized' : undefined;
}

/**
 * A bot token Discord refused (`how`: as `discordRefusedToken` says it), as `npm start` reports it whenever Discord
 * refuses it (at start, at a standby's takeover, on the live session, in answer to a request made with it): a setting
 * to change (exit 2), named, the token never shown.
 */
export function tokenRefused(how: string): ValidationError {
  return new ValidationError('DISCORD_TOKEN', `Discord did not accept the bot token (${how}); check DISCORD_TOKEN (copy it again, or Bot → Reset Token in the Developer Portal)`);
}
