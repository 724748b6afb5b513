import { redactSecrets } from 'pictor/internal';

/**
 * Tokens that sit in a chat platform's callback URLs: Discord's interaction tokens (`/interactions/{id}/{token}`,
 * `/webhooks/{app}/{token}`) and the path of a Slack `response_url` or webhook (`hooks.slack.com/actions/…`).
 */
const TOKEN_IN_URL = /((?:interactions|webhooks)\/\d+|hooks\.slack\.com\/[a-z]+)\/[^/\s?"']+(?:\/[^\s?"']*)?/g;

/**
 * An error as it may be logged, on every surface and the runner: its name, its message (cut to 500 characters), its
 * `code` and HTTP `status` when it has them, and, for one with no code (a bug of ours), its stack (cut to 2000) — every
 * text with the secrets and credential shapes the core's one redaction knows (`redactSecrets`: a Bearer token, an
 * `sk-` key, a registered key) and the tokens of callback URLs taken out. Never the error object itself: a platform's
 * error carries the request's URL (with its token), its headers and its body, which may be huge.
 */
export function loggableError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error };
  const clean = (text: string) => redactSecrets(text.replace(TOKEN_IN_URL, '$1/[token]'));
  const out: Record<string, unknown> = { name: error.name, message: clean(error.message).slice(0, 500) };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number' || typeof code === 'string') out.code = typeof code === 'string' ? clean(code).slice(0, 100) : code;
  const status = (error as { status?: unknown }).status;
  if (typeof status === 'number') out.status = status;
  if (out.code === undefined && error.stack) out.stack = clean(error.stack).slice(0, 2000);
  return out;
}
