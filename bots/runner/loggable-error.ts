import { PictorError } from 'pictor';
import { redactSecrets } from 'pictor/internal';

/**
 * Tokens that sit in a chat platform's callback URLs: Discord's interaction tokens (`/interactions/{id}/{token}`,
 * `/webhooks/{app}/{token}`) and the path of a Slack `response_url` or webhook (`hooks.slack.com/actions/…`, and
 * GovSlack's `hooks.slack-gov.com/…`).
 */
const TOKEN_IN_URL = /((?:interactions|webhooks)\/\d+|hooks\.slack(?:-gov)?\.com\/[a-z]+)\/[^/\s?"']+(?:\/[^\s?"']*)?/g;

/**
 * An error as it may be logged, on every surface and the runner: its name, its message (cut to 500 characters), its
 * `code` and HTTP `status` when it has them (Slack's Web API client names the status `statusCode`), and its stack (cut
 * to 2000) unless the error is an expected one (`expected`) — every text with the secrets and credential shapes the
 * core's one redaction knows (`redactSecrets`: a Bearer token, an `sk-` key, a registered key) and the tokens of
 * callback URLs taken out. Never the error object itself: a platform's error carries the request's URL (with its
 * token), its headers and its body, which may be huge.
 */
export function loggableError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error };
  const clean = (text: string) => redactSecrets(text.replace(TOKEN_IN_URL, '$1/[token]'));
  const out: Record<string, unknown> = { name: error.name, message: clean(error.message).slice(0, 500) };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number' || typeof code === 'string') out.code = typeof code === 'string' ? clean(code).slice(0, 100) : code;
  // The HTTP status of a platform's answer: `status` (Discord's), or `statusCode` (Slack's Web API client's HTTP error,
  // whose code alone does not say which status came). Never its `headers` or `body`.
  const { status, statusCode } = error as { status?: unknown; statusCode?: unknown };
  if (typeof status === 'number') out.status = status;
  else if (typeof statusCode === 'number') out.status = statusCode;
  if (!expected(error) && error.stack) out.stack = clean(error.stack).slice(0, 2000);
  return out;
}

/**
 * Slack's Web API answers as its client throws them (`@slack/web-api`'s `ErrorCode`): an `ok: false` answer, an HTTP
 * status that is no success, a 429. Not its request error (the network's, with the failure it wraps) nor its file-upload
 * argument errors (a call of ours).
 */
const SLACK_API_ANSWERS = new Set(['slack_webapi_platform_error', 'slack_webapi_http_error', 'slack_webapi_rate_limited_error']);

/**
 * An error whose code says it all, so its stack is left out: a project error (the one error tree's, with its stable
 * code), or a chat platform's API answer (Discord's: a numeric code and an HTTP status; Slack's: its Web API client's
 * code for an answer, `SLACK_API_ANSWERS`). Anything else — a `TypeError`, or Node's errors, whose string code
 * (`ERR_INVALID_ARG_TYPE`, `ABORT_ERR`, `EACCES`) may come from a bug of ours — keeps its stack.
 */
function expected(error: Error): boolean {
  if (error instanceof PictorError) return true;
  const { code, status } = error as { code?: unknown; status?: unknown };
  if (typeof code === 'string') return SLACK_API_ANSWERS.has(code);
  return typeof code === 'number' && typeof status === 'number';
}
