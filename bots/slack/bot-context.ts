import type { Context, webApi } from '@slack/bolt';
import { editModal, type EditContext } from './edit-modal.js';
import { connectionNeverMade } from './connection-never-made.js';
import { slackAnswerIn, slackRefusalCode, slackTookIt, type SlackAnswer } from './slack-took-it.js';
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

/** The most of a `response_url`'s answer read (Slack's is a few bytes of JSON; a longer one is not Slack's JSON: read as none). */
const ANSWER_BYTES = 16 * 1024;

/**
 * What became of a note sent through a `response_url`: `delivered`, `lost` (sent, but the answer did not come or broke:
 * it may have reached the member, so it is not sent again), or neither (it reached nobody), with the code and, when
 * one came, the HTTP status to log.
 */
type ResponseUrlOutcome = { delivered: true } | { delivered: false; lost: boolean; code: string | undefined; status: number | undefined };

/**
 * A private note through a `response_url` (from a command, shortcut or button; valid 30 minutes, 5 uses). Whether
 * Slack took it is decided by the one rule `slackTookIt`, a 5xx without Slack's answer read as not taken: Slack's
 * answer (`{"ok":true}`, `{"ok":false,"error":"expired_url"}`; a bare `{"ok":false}` on a 2xx only) decides whatever
 * the status; without it a 2xx is delivered, and a 429, a 5xx or another status (a 404 or 410: used up or expired; a
 * 400 or 403: refused) reached nobody. So did a connection never made (`connectionNeverMade`: a TLS handshake that failed included). Only through
 * `privateAnswerVia`, which takes a note that reached nobody to the member's direct messages.
 */
async function respondVia(responseUrl: string, text: string): Promise<ResponseUrlOutcome> {
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
    const neverMade = connectionNeverMade(error);
    return { delivered: false, lost: !neverMade, code: neverMade ? (code ?? 'unreachable') : code, status: undefined };
  }
  const { status } = response;
  let answer: SlackAnswer | undefined | 'unread';
  let readError: unknown;
  try {
    // A body that breaks rejects with fetch's own error (its code is logged when Slack may have taken the note).
    const read = await readBounded(response, ANSWER_BYTES, (error) => error);
    answer = read === 'too_large' ? undefined : slackAnswerIn(read.toString('utf8'));
  } catch (error) {
    answer = 'unread';
    readError = error;
  }
  const verdict = slackTookIt(status, answer, 'not_taken');
  if (verdict.took === 'taken') return { delivered: true };
  if (verdict.took === 'unknown') return { delivered: false, lost: true, code: fetchErrorCode(readError), status };
  const slacks = verdict.answer;
  return { delivered: false, lost: false, code: slacks !== undefined && !slacks.ok ? slackRefusalCode(slacks) : 'http_error', status };
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
 * the app — where there is none (the Home tab gives none), or the note reached nobody (a connection never made, a TLS
 * handshake that failed, or Slack took nothing by `slackTookIt`: an `ok: false` answer, a 404 or 410 used up or
 * expired, a 400 or 403 refused, a 429 rate-limited, a 5xx without Slack's `ok: true`) — so a refusal, a private
 * result's note or a job given up as it starts is never left untold. A note whose connection broke or whose answer
 * timed out or broke after it was sent may have reached the member: it is logged, not sent again. Each line logs a code
 * and, when Slack answered, the HTTP status as a number.
 */
export function privateAnswerVia(context: Pick<BotContext, 'writer' | 'logger' | 'workspace'>, auth: Context, where: { userId: string; responseUrl?: string | undefined }): Notifier {
  const direct: Notifier = (text) => directVia(context, context.workspace(auth).client, where.userId)(text);
  const { responseUrl } = where;
  if (!responseUrl) return direct;
  return async (text) => {
    const outcome = await respondVia(responseUrl, text);
    if (outcome.delivered) return;
    const fields = { code: outcome.code, ...(outcome.status === undefined ? {} : { status: outcome.status }) };
    if (outcome.lost) {
      context.logger.warn(fields, 'a response_url did not answer a private note it may have taken: it is not sent again');
      return;
    }
    context.logger.warn(fields, 'a response_url took no private note (used up, expired, refused, rate-limited, failing on Slack’s side or unreachable): it goes to the member’s direct messages');
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
