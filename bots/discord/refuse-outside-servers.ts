import type { ChatInputCommandInteraction } from 'discord.js';
import { COMMAND_NAMES, say as sayIn, type RefusalCode } from '../runner/index.js';
import type { BotContext } from './bot-context.js';
import { isPersonalContext } from './requester.js';

/** What needs a server the bot is in: `/imagine-admin`'s subcommands, and `/imagine-history`'s server history. */
export type ServerOnly = 'admin' | 'history';

const CODE = 'outside_servers' satisfies RefusalCode;

/** Each in the member's language: what is not there outside servers (not that they are no admin of one). */
const SAID: Readonly<Record<ServerOnly, (locale: string) => string>> = {
  admin: (locale) => `✋ ${sayIn(locale, 'discord.admin.outside_servers', COMMAND_NAMES)}`,
  history: (locale) => sayIn(locale, 'history.outside_servers', { icon: '✋', ...COMMAND_NAMES }),
};

/**
 * Outside the servers the bot is in (a DM, a group DM, a server where only the member added the app:
 * `isPersonalContext`) there is no server to manage or show: refuses what was asked there, in the member's language
 * through `say` (the answer was deferred privately), logged `info` with the code `outside_servers` and the command
 * (`command`, e.g. `admin set`). True when it refused; false where the command goes on.
 */
export async function refuseOutsideServers(
  ctx: BotContext,
  interaction: ChatInputCommandInteraction,
  asked: { what: ServerOnly; command: string },
  say: (content: string) => Promise<unknown>,
): Promise<boolean> {
  if (!isPersonalContext(interaction)) return false;
  ctx.logger.info({ code: CODE, command: asked.command }, 'refused a command outside the servers the bot is in');
  await say(SAID[asked.what](interaction.locale));
  return true;
}
