import { DefaultRestOptions, HTTPError, REST, type RESTOptions } from 'discord.js';
import { Agent, getGlobalDispatcher } from 'undici';
import type { FirstAnswersInFlight } from './first-answers-first.js';
import { nonceWindowOf, type WriteCheck } from './nonce-window.js';

type MakeRequest = RESTOptions['makeRequest'];

/**
 * discord.js's REST strategy, with multipart bodies encoded to bytes before
 * they reach undici. Two undici versions live in this process (ours and
 * @discordjs/rest's), and they share one global dispatcher: when ours was
 * loaded first, its dispatcher cannot read @discordjs/rest's FormData and
 * every upload fails ("action is not a function"). Bytes work with any
 * dispatcher, so uploads work whichever was loaded first.
 */
export const makeRequestWithEncodedForms: MakeRequest = async (url, init) => {
  if (init.body instanceof FormData) {
    const encoded = new Response(init.body);
    const contentType = encoded.headers.get('content-type');
    const body = new Uint8Array(await encoded.arrayBuffer());
    const headers = { ...(init.headers as Record<string, string> | undefined), ...(contentType ? { 'content-type': contentType } : {}) };
    return DefaultRestOptions.makeRequest(url, { ...init, body, headers });
  }
  return DefaultRestOptions.makeRequest(url, init);
};

/**
 * A REST client for interaction webhooks (editing replies, follow-ups; no bot
 * token). Discord does not count these against a bot's global rate limit, but
 * discord.js caps every request of one client at 50 per second; a busy bot's
 * previews would queue behind that cap. The per-token limits still apply: this
 * client follows Discord's rate-limit headers like any other. Each request
 * goes after the first answers asked before it (`firstAnswers.behind`): in a
 * burst, the edits and uploads of jobs already answered wait for the
 * interactions still waiting for theirs. A follow-up is sent once (`withPostsSentOnce`); `failedPost` is told of
 * each 5xx answer to one.
 */
export function createWebhookRest(api: string, firstAnswers: FirstAnswersInFlight, failedPost?: (status: number) => void): REST {
  const makeRequest: MakeRequest = async (url, init) => {
    await firstAnswers.behind();
    return makeRequestWithEncodedForms(url, init);
  };
  // A follow-up Discord failed on or did not answer is not sent again here (`withPostsSentOnce`): it may have been made.
  return new REST({ api, timeout: 60_000, makeRequest: withPostsSentOnce(makeRequest, failedPost), globalRequestsPerSecond: 100_000, agent: discordAgent() as never });
}

/** A first answer to an interaction (Discord's interaction callback endpoint). */
const FIRST_ANSWER_PATH = /\/interactions\/\d+\/[^/]+\/callback$/;

/**
 * The bot's REST strategy with a path of its own for first answers: an
 * interaction callback (defer, reply, modal, update) goes out over `agent`, a
 * pool of connections that carries nothing else, so it never waits for a
 * connection held by the bot's other requests (posts and DMs with their
 * uploads, follow-ups, history and settings replies). discord.js already sends
 * callbacks outside its queues and its global cap (Discord does not count
 * them against the bot's global rate limit); this keeps them apart on the wire
 * too, so the answer the 3 s deadline is about goes out as soon as it is asked.
 * Each is counted in `firstAnswers` until Discord answers it, so that work
 * which can wait goes after it.
 */
export function withFirstAnswerPool(makeRequest: MakeRequest, agent: Agent, firstAnswers: FirstAnswersInFlight): MakeRequest {
  return (url, init) => {
    if (!FIRST_ANSWER_PATH.test(new URL(url).pathname)) return makeRequest(url, init);
    // Typed against our undici; @discordjs/rest's own copy takes it as its dispatcher (same interface).
    return firstAnswers.track(makeRequest(url, { ...init, dispatcher: agent as never }));
  };
}

/** Connections to Discord's API a REST client keeps open at once; more requests at once wait for one (kept alive between requests). */
export const MAX_DISCORD_CONNECTIONS = 32;

/**
 * Connections of the first answers' own pool (`withFirstAnswerPool`): defer,
 * reply, modal, update; nothing else. Each first answer holds a connection for
 * a round trip to Discord, so a pool of n answers at most n per round trip:
 * with 32, a burst of 1,600 interactions waited 50 round trips in the pool's
 * queue (2–4 s on a busy machine), past Discord's 3 s. First answers are
 * small, so this pool is larger; still bounded, so a burst does not open one
 * connection per request.
 */
export const MAX_FIRST_ANSWER_CONNECTIONS = 128;

/**
 * The connection pool of a REST client: at most `connections` kept-alive
 * connections (default `MAX_DISCORD_CONNECTIONS`), instead of one new
 * connection for every request in flight, so a burst of interactions is
 * answered over connections already open rather than hundreds of handshakes at once.
 */
export function discordAgent(connections = MAX_DISCORD_CONNECTIONS): Agent {
  // Typed against our undici; @discordjs/rest's own copy takes it as its dispatcher (same interface), hence the casts where it is passed.
  return new Agent({ connections, keepAliveTimeout: 30_000 });
}

/** The POSTs Discord makes nothing twice of, by their path: an interaction's first answer (a second is refused, 40060) and opening a DM (the same DM each time). */
const POST_SENT_AGAIN_SAFELY = /\/interactions\/\d+\/[^/]+\/callback$|\/users\/@me\/channels$/;

/**
 * The nonce of a post whose body carries Discord's guard against duplicates (Create Message's `nonce` with
 * `enforce_nonce`: a message with the nonce of one made in the past few minutes is answered with that one, none is
 * made): from its JSON, or the `payload_json` of one with files, as @discordjs/rest sends them. Else undefined.
 */
function enforcedNonceOf(body: unknown): string | undefined {
  const json = typeof body === 'string' ? body : body instanceof FormData ? body.get('payload_json') : undefined;
  if (typeof json !== 'string') return undefined;
  try {
    const payload = JSON.parse(json) as { nonce?: unknown; enforce_nonce?: unknown } | null;
    return payload?.enforce_nonce === true && (typeof payload.nonce === 'string' || typeof payload.nonce === 'number') ? String(payload.nonce) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A post whose answer was lost — the request timed out or its connection was cut before Discord answered: Discord may
 * have made it. No `status` (nothing was answered); `cause` is what the request threw. `code` is `timeout` for a
 * request that timed out or was aborted, else the cause's own (such as `ECONNRESET`) is on `cause`.
 */
export class UnansweredPost extends Error {
  readonly code: 'timeout' | undefined;
  constructor(cause: Error) {
    super('Discord did not answer a post (it may have made it)', { cause });
    this.name = 'UnansweredPost';
    this.code = cause.name === 'AbortError' ? 'timeout' : undefined;
  }
}

/**
 * discord.js's REST client sends a request again, up to its `retries` (3), when Discord answers 5xx, when it times
 * out and when its connection is reset (@discordjs/rest's `handleErrors` and `shouldRetry`) — whatever the method. For
 * a post that makes a message (a follow-up, a channel message), Discord may have made it before its answer was lost: sent
 * again, it would show twice. So a post is sent once: a 5xx answer throws discord.js's own `HTTPError` with its
 * status, a timeout or a cut connection an `UnansweredPost`, neither of which discord.js tries again; the caller decides
 * (a job's reply: `ReplyTarget`, with a nonce where Discord has one). A 429 is still waited out and sent again (Discord
 * made nothing), as are the edits, reads and deletes (an edit shows once however often it is made) and the posts
 * Discord makes nothing twice of: an interaction's first answer and a DM's opening (`POST_SENT_AGAIN_SAFELY`), a
 * message with an enforced nonce (`enforcedNonceOf`): one sent by `postWithNonce` has each of its requests leave only
 * within the minutes Discord keeps the nonce, checked as it is written to a connection, after any wait for one in the pool
 * it shares with uploads (`NonceWindow`; refused after, unwritten, `NonceWindowOver`). `failed` is told of each 5xx answer of a post sent once (what the client's `response` event does not see).
 */
export function withPostsSentOnce(makeRequest: MakeRequest, failed?: (status: number) => void): MakeRequest {
  return async (url, init) => {
    if (init.method !== 'POST' || POST_SENT_AGAIN_SAFELY.test(new URL(url).pathname)) return makeRequest(url, init);
    const nonce = enforcedNonceOf(init.body);
    if (nonce !== undefined) {
      // Each request of a message sent by `postWithNonce` leaves only within its nonce's window (`NonceWindow`).
      const window = nonceWindowOf(nonce);
      return window ? window.send((check) => makeRequest(url, { ...init, dispatcher: checkedAsWritten(init.dispatcher, check) })) : makeRequest(url, init);
    }
    let response: Awaited<ReturnType<MakeRequest>>;
    try {
      response = await makeRequest(url, init);
    } catch (error) {
      throw error instanceof Error && sentAgainByDiscordJs(error) ? new UnansweredPost(error) : error;
    }
    if (response.status < 500 || response.status >= 600) return response;
    // Read to its end, so that its connection is free for the next request.
    await response.arrayBuffer().catch(() => undefined);
    failed?.(response.status);
    throw new HTTPError(response.status, response.statusText ?? '', init.method, url, {});
  };
}

type Dispatcher = NonNullable<Parameters<MakeRequest>[1]['dispatcher']>;
type DispatchHandler = { onConnect?: (abort: (reason?: Error) => void, context?: unknown) => void } & Record<PropertyKey, unknown>;

/**
 * `dispatcher` (the connection pool a request goes out over; undici's global one if none), with `check.leaving` called
 * right before the request is written to a connection — undici calls a request's `onConnect` then, after any wait for a
 * free connection — and the request aborted unwritten when it throws. The request's own `onConnect` is called first: a
 * request it aborts there (given up on while it waited, such as by its timeout) is not written, and is not counted as
 * leaving. Either undici of this process (ours, @discordjs/rest's)
 * calls a handler of this form.
 */
function checkedAsWritten(dispatcher: Dispatcher | undefined, check: WriteCheck): Dispatcher {
  const target = (dispatcher ?? getGlobalDispatcher()) as unknown as { dispatch: (options: unknown, handler: DispatchHandler) => boolean };
  const dispatch = (options: unknown, handler: DispatchHandler) => {
    const checked = new Proxy(handler, {
      get(h, key) {
        if (key === 'onConnect') {
          return (abort: (reason?: Error) => void, context?: unknown) => {
            // The request's own handler goes first: one given up on while it waited (its timeout fired in the pool's
            // queue) aborts here, unwritten, and so did not leave.
            let aborted = false;
            h.onConnect?.((reason?: Error) => {
              aborted = true;
              abort(reason);
            }, context);
            if (aborted) return;
            try {
              check.leaving();
            } catch (error) {
              abort(error as Error);
            }
          };
        }
        const value = Reflect.get(h, key) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(h) : value;
      },
    });
    check.watching();
    return target.dispatch(options, checked);
  };
  return new Proxy(target, { get: (t, key) => (key === 'dispatch' ? dispatch : Reflect.get(t, key)) }) as unknown as Dispatcher;
}

/**
 * What @discordjs/rest sends again when a request throws it (its `shouldRetry`, which it does not export, so copied):
 * an abort (its timeout) or a connection reset. A test runs the real client to check this copy still agrees with it.
 */
export function sentAgainByDiscordJs(error: Error): boolean {
  return error.name === 'AbortError' || (error as { code?: unknown }).code === 'ECONNRESET' || error.message.includes('ECONNRESET');
}
