/**
 * Whether Slack took a call it answered with an HTTP status: one rule for every call the Slack surface makes — a Web
 * API call (`lostAnswerCode`, for the posts tried once) and a private note through a `response_url`
 * (`privateAnswerVia`).
 */

/**
 * Slack's own answer: `ok: true`, or `ok: false` with the `error` Slack names each refusal with — undefined when it
 * names none (a bare `{"ok":false}`), which is Slack saying no all the same on a 2xx (`slackAnswerAt`). Named none is
 * told by the field, never by a name: an error Slack names `unnamed` is named.
 */
export type SlackAnswer = { ok: true } | { ok: false; error: string | undefined };

/**
 * Slack's answer in a body — its text, or the object Slack's Web API client parsed it to — else undefined: a gateway's
 * page, a plain-text error (`rollup_error`), JSON of another shape. An `ok: false` is read named or not; whether an
 * unnamed one is Slack's depends on the status it came with (`slackAnswerAt`).
 */
export function slackAnswerIn(body: unknown): SlackAnswer | undefined {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body) as unknown;
    } catch {
      return undefined;
    }
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { ok, error } = parsed as { ok?: unknown; error?: unknown };
  if (ok === true) return { ok: true };
  if (ok === false) return { ok: false, error: typeof error === 'string' && error !== '' ? error.slice(0, 100) : undefined };
  return undefined;
}

/**
 * `answer` if it is Slack's answer at `status`, else undefined (`unread` kept): a bare `{"ok":false}` is Slack's only
 * on a 2xx. On another status it names nothing Slack says, so it is read as a gateway's body (a 5xx from a proxy in
 * front of Slack, which may have gone on and taken the call), not as Slack saying it took nothing.
 */
function slackAnswerAt<A extends SlackAnswer | undefined | 'unread'>(status: number, answer: A): A | undefined {
  const unnamed = typeof answer === 'object' && !answer.ok && answer.error === undefined;
  return unnamed && !(status >= 200 && status <= 299) ? undefined : answer;
}

/** Whether Slack took a call: `unknown` when it may have (its answer lost, or a failure that does not say). */
type SlackTook = 'taken' | 'not_taken' | 'unknown';

/** What `slackTookIt` decided: whether Slack took the call, and Slack's answer it went by, if it went by one. */
export interface SlackVerdict {
  took: SlackTook;
  /** Slack's own answer at the status (`slackAnswerAt`), else undefined: the status decided. */
  answer: SlackAnswer | undefined;
}

/**
 * What a 5xx without Slack's answer counts as — Slack failing on its side (a 500, `rollup_error` from its hooks), or a
 * gateway in front of it giving up (a 502, 503, 504) while Slack may have gone on — chosen by the harm of each mistake:
 * - `not_taken` for a private note (a `response_url`): it goes to the member's direct messages; were it taken after
 *   all, the member reads it twice, the lesser harm than a refusal or a note never told.
 * - `unknown` for a public post tried once (a job's first message, its end posted anew, the message of Reroll, Edit and
 *   Delete, an audit entry): a second public copy does more harm (a job shown twice, two sets of buttons, an entry a
 *   forget could not edit), so it is looked for, or waits, rather than being sent blindly again.
 */
type UnansweredFailure = 'not_taken' | 'unknown';

/** The `error` of an `ok: false` answer as the log shows it: `unnamed` when Slack named none. */
export function slackRefusalCode(answer: { ok: false; error: string | undefined }): string {
  return answer.error ?? 'unnamed';
}

/**
 * Whether Slack took a call it answered with `status`, `answer` being Slack's answer in the body (`slackAnswerIn`),
 * undefined when the body is not one, or `unread` when the body broke before it was read:
 * - Slack's answer (`slackAnswerAt`) decides, whatever the status: `ok: true` taken (a gateway's status over it),
 *   `ok: false` naming its error not; a bare `{"ok":false}` took nothing on a 2xx, and on any other status is not
 *   Slack's answer (a gateway's body), so the status decides as below.
 * - Without it, a 2xx is taken (Slack's hooks take a post on a 200), or may have been when its body broke (it might
 *   have said `ok: false`).
 * - A 429 is Slack's rate limit, which takes nothing: made again after its `Retry-After`, the call makes no second copy.
 * - A 5xx is what the caller says (`UnansweredFailure`).
 * - Any other status took nothing: Slack's hooks read a status other than 200 as a failure — a `response_url` used up or
 *   expired (404, 410), a note refused (400 `invalid_payload`, 403 `action_prohibited`) — as the Web API does.
 */
export function slackTookIt(status: number, read: SlackAnswer | undefined | 'unread', unansweredFailure: UnansweredFailure): SlackVerdict {
  const answer = slackAnswerAt(status, read);
  if (typeof answer === 'object') return { took: answer.ok ? 'taken' : 'not_taken', answer };
  return { took: tookByStatus(status, answer === 'unread', unansweredFailure), answer: undefined };
}

/** Whether Slack took a call answered with `status` without its own answer (`unread`: the body broke first). */
function tookByStatus(status: number, unread: boolean, unansweredFailure: UnansweredFailure): SlackTook {
  if (status >= 200 && status <= 299) return unread ? 'unknown' : 'taken';
  if (status === 429) return 'not_taken';
  if (status >= 500 && status <= 599) return unansweredFailure;
  return 'not_taken';
}
