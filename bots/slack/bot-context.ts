import type { Context, webApi } from '@slack/bolt';
import { editModal, type EditContext } from './edit-modal.js';
import { connectionNeverMade } from './connection-never-made.js';
import { slackErrorCode } from './slack-error-code.js';
import { loggableError, say } from '../runner/index.js';
import type { LoggerLike } from 'pictor';
import { readBounded, systemErrorCode } from 'pictor/internal';
import type { ChannelWriter } from './ChannelWriter.js';
import type { FileHost } from './file-hosts.js';
import type { RequestStore } from './RequestStore.js';
import type { SlackJobRunner, SlackJobs } from './SlackJobs.js';
import type { Notifier } from './SlackJobView.js';
import type { Workspace } from './workspace.js';
import type { HomeTabs } from './home-tab.js';
import type { UserLocales } from './user-locales.js';
import type { UserGroups } from './user-groups.js';

/** What every listener gets: the pieces of one running Slack bot. */
export interface BotContext {
  jobs: SlackJobs;
  runner: SlackJobRunner;
  store: RequestStore;
  writer: ChannelWriter;
  /**
   * The workspace a request came from (its bot token, client and bot user
   * id), from Bolt's `context`: every Web API call for a request, and for the
   * job it starts, uses the token of the request's workspace.
   */
  workspace(auth: Context): Workspace;
  allowedHosts: readonly FileHost[];
  /** Each member's Home tab (published on `app_home_opened`, again when what it shows changes). */
  homes: HomeTabs;
  /** Each member's language, asked of Slack once (`users.info`); the middleware puts it in Bolt's `context.locale`. */
  locales: UserLocales;
  /** Each workspace's user groups (`usergroups.list`): who holds a group's budget, and a group by its handle. */
  groups: UserGroups;
  logger: LoggerLike;
  commands: { imagine: string; edit: string };
}

/** Message shortcut and modal ids, as in the app manifest. */
export const SHORTCUT_EDIT_IMAGE = 'pictor_edit_image';

/** Statuses a `response_url` answers once it is used up (5 uses) or expired (30 minutes): its note reached nobody. */
const RESPONSE_URL_GONE = new Set([404, 410]);

/**
 * Statuses of Slack failing on its side (a 500, which its hooks keep for an error that is not the caller's, with the
 * text `rollup_error`; a gateway's 502, 503 or 504): Slack's hooks (`hooks.slack.com`, which serves `response_url`s as
 * it serves incoming webhooks) are to be read as taking a post on a 200 only, any other status being a failure. Such a
 * note was not shown, so it goes to the member's direct messages: were it shown after all (a gateway that gave up while
 * Slack went on), the member reads it twice — the lesser harm than a refusal or a note never told.
 */
function slackFailed(status: number): boolean {
  return status >= 500 && status <= 599;
}

/** The most of a `response_url`'s answer read (Slack's is a few bytes of JSON; a longer one is not Slack's JSON: read as none). */
const ANSWER_BYTES = 16 * 1024;

/**
 * What became of a note sent through a `response_url`: `delivered` (a 2xx, its JSON `ok` not false), `lost` (sent, but
 * the answer did not come or broke: it may have reached the member, so it is not sent again), or not delivered, why.
 */
type ResponseUrlOutcome = { delivered: true } | { delivered: false; lost: true; code: string | undefined } | { delivered: false; lost: false; why: string };

/**
 * A private note through a `response_url` (from a command, shortcut or button; valid 30 minutes, 5 uses). Slack
 * answers JSON (`{"ok":true}`, `{"ok":false,"error":"expired_url"}`): a body whose `ok` is false, a 404 or 410 (used up
 * or expired), a 5xx (Slack failing, `slackFailed`) or a connection never made (`connectionNeverMade`: a TLS handshake
 * that failed included) is a note that reached nobody; a 2xx whose body is not JSON or says `ok: true` is delivered;
 * another status (a 400, a 403) is logged and counted delivered, as a note that may be shown. Only through
 * `privateAnswerVia`, which takes a note that reached nobody to the member's direct messages.
 */
async function respondVia(responseUrl: string, text: string, logger: LoggerLike): Promise<ResponseUrlOutcome> {
  let response: Response;
  try {
    response = await fetch(responseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ response_type: 'ephemeral', replace_original: false, text }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    const code = fetchErrorCode(error);
    return connectionNeverMade(error) ? { delivered: false, lost: false, why: code ?? 'unreachable' } : { delivered: false, lost: true, code };
  }
  // Used up, expired, or Slack failing: the status alone says the note reached nobody, whatever its body.
  const tookNone = RESPONSE_URL_GONE.has(response.status) || slackFailed(response.status);
  let body: string;
  try {
    // A body that breaks rejects with fetch's own error (its code is logged).
    const read = await readBounded(response, ANSWER_BYTES, (error) => error);
    body = read === 'too_large' ? '' : read.toString('utf8');
  } catch (error) {
    // The status was told: a used-up URL, or Slack failing, took nothing, whatever became of its body.
    return tookNone ? { delivered: false, lost: false, why: String(response.status) } : { delivered: false, lost: true, code: fetchErrorCode(error) };
  }
  const answer = okOf(body);
  if (answer?.ok === false) return { delivered: false, lost: false, why: answer.error ?? String(response.status) };
  if (tookNone) return { delivered: false, lost: false, why: String(response.status) };
  if (!response.ok) logger.warn({ status: response.status }, 'a response_url refused a private note');
  return { delivered: true };
}

/** The `ok` and `error` of a `response_url`'s JSON answer, or undefined when it is not JSON. */
function okOf(body: string): { ok: unknown; error: string | undefined } | undefined {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { ok, error } = parsed as { ok?: unknown; error?: unknown };
    return { ok, error: typeof error === 'string' ? error.slice(0, 100) : undefined };
  } catch {
    return undefined;
  }
}

/**
 * Fetch's error: its system code (`systemErrorCode`: kept in its cause), else its cause's own code (a TLS failure's,
 * `CERT_HAS_EXPIRED`, `DEPTH_ZERO_SELF_SIGNED_CERT`: a proxy that intercepts TLS is named so), else its name
 * (`TimeoutError`). Never its message: the URL is a credential of the press.
 */
function fetchErrorCode(error: unknown): string | undefined {
  const causeCode = (error as { cause?: { code?: unknown } | null } | undefined)?.cause?.code;
  return systemErrorCode(error) ?? (typeof causeCode === 'string' ? causeCode : undefined) ?? (error instanceof Error ? error.name : undefined);
}

/** A private note in a channel (or thread) through chat.postEphemeral, paced with the channel's other writes. */
export function ephemeralVia(context: Pick<Workspace, 'client'> & Pick<BotContext, 'writer'>, where: { channelId: string; userId: string; threadTs?: string | undefined }): Notifier {
  return async (text) => {
    await context.writer.write(where.channelId, {
      urgent: true,
      run: () =>
        context.client.chat.postEphemeral({
          channel: where.channelId,
          user: where.userId,
          text,
          ...(where.threadTs ? { thread_ts: where.threadTs } : {}),
        }),
    });
  };
}

/**
 * A note in the member's direct messages with the app (its Messages tab), paced with the conversation's other writes:
 * for what comes from the Home tab, which has no `response_url` and no channel.
 */
export function directVia(context: Pick<BotContext, 'writer'>, client: webApi.WebClient, userId: string): Notifier {
  return async (text) => {
    await context.writer.write(userId, { urgent: true, run: () => client.chat.postMessage({ channel: userId, text }) });
  };
}

/**
 * A private answer to a member's press, command or form: through its response URL, else in their direct messages with
 * the app — where there is none (the Home tab gives none), or the note surely reached nobody (a connection never made,
 * a TLS handshake that failed, a 404 or 410 or an `ok: false` answer: used up or expired, a 5xx: Slack failing) — so a
 * refusal, a private result's note or a job given up as it starts is never left untold. A note whose connection broke
 * or whose answer timed out after it was sent may have reached the member: it is logged, not sent again.
 */
export function privateAnswerVia(context: Pick<BotContext, 'writer' | 'logger' | 'workspace'>, auth: Context, where: { userId: string; responseUrl?: string | undefined }): Notifier {
  const direct: Notifier = (text) => directVia(context, context.workspace(auth).client, where.userId)(text);
  const { responseUrl } = where;
  if (!responseUrl) return direct;
  return async (text) => {
    const outcome = await respondVia(responseUrl, text, context.logger);
    if (outcome.delivered) return;
    if (outcome.lost) {
      context.logger.warn({ code: outcome.code }, 'a response_url did not answer a private note it may have taken: it is not sent again');
      return;
    }
    context.logger.warn({ code: outcome.why }, 'a response_url took no private note (used up, expired, failing on Slack’s side or unreachable): it goes to the member’s direct messages');
    await direct(text);
  };
}

/** Opens the edit modal for a trigger (valid 3 s); a failure is logged and the person told privately. */
export async function openEditModal(context: Pick<BotContext, 'logger'>, client: webApi.WebClient, triggerId: string, notify: Notifier, edit: EditContext, locale?: string): Promise<void> {
  try {
    await client.views.open({ trigger_id: triggerId, view: editModal(edit, locale) });
  } catch (error) {
    // The error made loggable too: an HTTP error's code (`slack_webapi_http_error`) does not say which status came.
    context.logger.warn({ code: slackErrorCode(error), err: loggableError(error) }, 'could not open the edit modal');
    await notify(say(locale, 'slack.edit.could_not_open'));
  }
}
