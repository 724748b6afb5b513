import { discordErrorCode, discordErrorStatus } from './discord-facts.js';

/** Interaction tokens sit in Discord URLs (`/interactions/{id}/{token}`, `/webhooks/{app}/{token}`). */
const TOKEN_IN_URL = /((?:interactions|webhooks)\/\d+)\/[^/\s?"']+/g;

/**
 * An error as it may be logged: name, message, Discord's code and status, and
 * (for bugs of ours) the stack, with interaction tokens taken out. Never the
 * error object itself: discord.js's errors carry the request URL (with the
 * token) and the request body.
 */
export function loggableError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error };
  const clean = (text: string) => text.replace(TOKEN_IN_URL, '$1/[token]');
  const code = discordErrorCode(error);
  const out: Record<string, unknown> = { name: error.name, message: clean(error.message).slice(0, 500) };
  if (code !== undefined) out.code = code;
  const status = discordErrorStatus(error);
  if (status !== undefined) out.status = status;
  if (code === undefined && error.stack) out.stack = clean(error.stack).slice(0, 2000);
  return out;
}
