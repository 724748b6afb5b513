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
