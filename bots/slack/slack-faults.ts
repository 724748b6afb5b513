import type { webApi } from '@slack/bolt';
import { slackErrorCode } from './slack-error-code.js';
import { webApiConnectionNeverMade } from './connection-never-made.js';
import type { SentOnceClient } from './sent-once-client.js';
import { slackAnswerIn, slackTookIt } from './slack-took-it.js';

/**
 * How the Slack surface reads a failed Web API call. The jobs' WebClient already
 * waits out 429s and retries broken connections; what reaches us is Slack
 * saying no in an `ok: false` answer, or the client giving up. The clients of
 * the audit channel and of a job's own messages (its first one, the message of
 * Reroll, Edit and Delete beside its images, and its end posted anew) try each
 * call once, and answer a 429 at once (`retryAfterMsOf`).
 */

/** Slack's own trouble, not the request's: worth another try after a pause. */
const TRANSIENT = new Set([
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'ratelimited',
  'rate_limited',
  'slack_webapi_request_error',
  'slack_webapi_http_error',
  'slack_webapi_rate_limited_error',
]);

/** The conversation no longer takes the bot's messages (archived, deleted, bot removed): another route is needed. */
const CONVERSATION_GONE = new Set([
  'channel_not_found',
  'is_archived',
  'not_in_channel',
  'restricted_action',
  'restricted_action_read_only_channel',
  'restricted_action_thread_only_channel',
  'restricted_action_non_threadable_channel',
  'team_access_not_granted',
]);

/** The job's message is gone (deleted) or no longer the bot's to edit: post a new one. */
const MESSAGE_GONE = new Set(['message_not_found', 'cant_update_message', 'edit_window_closed']);

/**
 * The code of an error where Slack's answer was lost, else undefined: the Web API client's request error (the request
 * failed on the way) once a connection was made — one never made (`webApiConnectionNeverMade`: a name not found, a
 * connection refused, a connection still not made when the client's timeout gave up, a TLS handshake that failed: the
 * request is written only once it passed) posted nothing, as for a note through a `response_url` —, or an HTTP error that Slack took, or
 * may have, by the one rule `slackTookIt` — a 5xx without Slack's answer (`ok: false` naming its `error`; a bare
 * `{"ok":false}` there is a gateway's body) read as maybe taken, a 5xx whose body is Slack's `ok: true` as taken.
 * Transient too, but the call may have done its work: the posts where a second copy would do harm — an audit entry (a
 * forget could not edit the copy), a job's first message (a job shown twice), the message of Reroll, Edit and Delete
 * beside a finished job's images (two sets of buttons), a job's end posted anew (shown twice) — go through clients that
 * try each call once (`_sentBy`, a `SentOnceClient`, asked for by its type: a client that tries again could hide an
 * earlier try Slack took behind its last one's failure), and one whose answer was lost is not sent blindly again (the
 * entry waits for its next try; the job
 * is not started and its message, looked for, deleted; the buttons' message is looked for before it is posted again,
 * and not posted again when the look fails — the job's message shows the buttons instead; the end is looked for before
 * it is posted again, and not posted again when the look fails).
 */
export function lostAnswerCode(error: unknown, _sentBy: SentOnceClient): 'request_error' | number | undefined {
  const e = error as { code?: unknown } | undefined;
  if (e?.code === 'slack_webapi_request_error') return webApiConnectionNeverMade(error) ? undefined : 'request_error';
  if (e?.code !== 'slack_webapi_http_error') return undefined;
  // The client gives each HTTP error the status Slack answered with.
  const { statusCode, body } = error as webApi.WebAPIHTTPError;
  return slackTookIt(statusCode, slackAnswerIn(body), 'unknown').took === 'not_taken' ? undefined : statusCode;
}

/**
 * How long Slack asked to wait before the call is made again (its `Retry-After`, in ms) when it refused the call with a
 * 429, else undefined: what the clients that try each call once answer at once (`slack_webapi_rate_limited_error`, its
 * `retryAfter` in seconds; 0 when it asked for none, which its callers wait as a second at least). A 429 is Slack not
 * taking the call: made again once that wait is over, it makes no second message.
 */
export function retryAfterMsOf(error: unknown): number | undefined {
  const e = error as { code?: unknown; retryAfter?: unknown } | undefined;
  if (e?.code !== 'slack_webapi_rate_limited_error' || typeof e.retryAfter !== 'number' || !(e.retryAfter >= 0)) return undefined;
  return e.retryAfter * 1000;
}

export function isTransientSlackError(error: unknown): boolean {
  const code = slackErrorCode(error);
  return code === undefined || TRANSIENT.has(code);
}

export function isConversationGone(error: unknown): boolean {
  const code = slackErrorCode(error);
  return code !== undefined && CONVERSATION_GONE.has(code);
}

export function isMessageGone(error: unknown): boolean {
  const code = slackErrorCode(error);
  return code !== undefined && MESSAGE_GONE.has(code);
}

/** Runs `attempt` until it passes, a non-transient error comes, or the pauses run out (one try more than pauses). */
export async function retryTransient<T>(attempt: () => Promise<T>, pausesMs: readonly number[]): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (error) {
      if (i >= pausesMs.length || !isTransientSlackError(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, pausesMs[i]));
    }
  }
}
