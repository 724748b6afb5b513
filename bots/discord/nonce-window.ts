import { randomBytes } from 'node:crypto';
import { RateLimitError, Routes, type RawFile, type REST } from 'discord.js';
import { PictorError } from 'pictor';
import { DISCORD_LIMITS } from './discord-facts.js';

/** A message's nonce: 24 hexadecimal characters (Discord takes a string of up to 25), a new one for each message. */
export function newNonce(): string {
  return randomBytes(12).toString('hex');
}

/**
 * A send of a message with an enforced nonce that was refused before it left: Discord no longer keeps the nonce
 * (`NonceWindow`). `mayHaveMade`: an earlier request of the same nonce left and was not refused, or an earlier send of it
 * (such as an audit post's first) may have made it — the message may be there; else nothing of it was ever made, and it
 * can be sent again with a new nonce.
 */
export class NonceWindowOver extends Error {
  override readonly name = 'NonceWindowOver';
  readonly code = 'nonce_window_over';
  constructor(readonly mayHaveMade: boolean) {
    // Whether an earlier send may have made it is `mayHaveMade`, not the message: the log shows both.
    super('a send of a message was not made: Discord no longer keeps its nonce');
  }
}

/**
 * The one rule of how long a message with an enforced nonce (Create Message's `nonce` with `enforce_nonce`: Discord
 * answers one with the nonce of a message the bot made "in the past few minutes" with that message, and makes none) is
 * sent: a request of it is written to a connection only within `DISCORD_LIMITS.nonceKeptMs` of the first that was (or of
 * an earlier send, `sentMsAgo`, such as an audit post's first); after that, none is — not discord.js's own tries either
 * (its 5xx and timeout retries, the try after a rate limit it waited out), nor one that waited for a connection of the
 * pool it shares with uploads: each is refused as it is about to be written (`send`'s `leaving`, which the REST client's
 * request hook has its connection pool call; `withPostsSentOnce`) with `NonceWindowOver`, which says whether an earlier
 * request of it may have made the message. So a message none of whose requests left (a long rate limit waited out, a
 * queue) is known as not sent.
 * A request that left within the window and is still on its way when it ends is not cut off: it reached Discord while
 * Discord kept the nonce (the window is the least "a few minutes" may mean), so Discord made the message once or not at
 * all, and its answer says which; only the REST client's own timeout ends it. If that answer is lost, the message may
 * be there, and no request of the nonce follows it.
 */
export class NonceWindow {
  readonly nonce: string;
  readonly #now: () => number;
  #since: number | undefined;
  #mayHaveMade: boolean;

  /**
   * `sentMsAgo`: the message was sent before with this nonce, this long ago (measured by its sender's own clock, so one
   * clock decides): the window counts from then, and that send may have made it.
   */
  constructor(options: { nonce?: string | undefined; sentMsAgo?: number | undefined; now?: (() => number) | undefined } = {}) {
    this.nonce = options.nonce ?? newNonce();
    this.#now = options.now ?? Date.now;
    this.#since = options.sentMsAgo === undefined ? undefined : this.#now() - options.sentMsAgo;
    this.#mayHaveMade = options.sentMsAgo !== undefined;
  }

  /** Whether a request of the nonce may leave now: none has yet, or the first did less than `nonceKeptMs` ago. */
  get open(): boolean {
    return this.#since === undefined || this.#now() - this.#since < DISCORD_LIMITS.nonceKeptMs;
  }

  /** Whether a request of the nonce left and was not refused (a 4xx, a 429 among them, makes nothing), or an earlier send may have made it: the message may be there. */
  get mayHaveMade(): boolean {
    return this.#mayHaveMade;
  }

  /** A request of the nonce was handed on by a REST client that checks no window (`NonceWindowUnchecked`): it may have made it. */
  handedOnUnchecked(): void {
    this.#since ??= this.#now();
    this.#mayHaveMade = true;
  }

  /**
   * One request of the nonce, handed on if it may leave now (`open`), else refused with `NonceWindowOver`. The pool of
   * connections `request` goes out over calls `check.watching()` as it takes the request, and `check.leaving()` right
   * before writing it to a connection (it may have waited for one since): `leaving` throws `NonceWindowOver` when the
   * window ended meanwhile (the request must then not be written), and the window counts from the first request
   * written. A request its pool watched that failed before it was written (refused there, or given up on while it
   * waited) made nothing. One no pool watched is taken as written as it was handed on (what is known of it).
   */
  async send<T extends { status: number }>(request: (check: WriteCheck) => Promise<T>): Promise<T> {
    if (!this.open) throw new NonceWindowOver(this.#mayHaveMade);
    const handedOnAt = this.#now();
    let watched = false;
    let left = false;
    const check: WriteCheck = {
      watching: () => void (watched = true),
      leaving: () => {
        if (!this.open) throw new NonceWindowOver(this.#mayHaveMade);
        this.#since ??= this.#now();
        left = true;
      },
    };
    try {
      const response = await request(check);
      // Answered, so it was written: when, if its pool did not say, at the latest as it was handed on.
      if (!left) this.#since ??= handedOnAt;
      if (!madeNothing(response)) this.#mayHaveMade = true;
      return response;
    } catch (error) {
      // No answer (a timeout, a connection cut) to a request that may have been written: Discord may have made it.
      if ((left || !watched) && !madeNothing(error)) {
        this.#since ??= handedOnAt;
        this.#mayHaveMade = true;
      }
      throw error;
    }
  }
}

/** How a request of a `NonceWindow` is checked by the pool of connections it goes out over (`NonceWindow.send`). */
export interface WriteCheck {
  /** The pool took the request, and calls `leaving` before writing it. */
  watching(): void;
  /** The request is about to be written to a connection: throws `NonceWindowOver` if it may no longer be. */
  leaving(): void;
}

/** The windows of the messages being sent (`postWithNonce`), by nonce: what the REST client's request hook checks. */
const sending = new Map<string, NonceWindow>();
/** The windows a REST client's request hook found (`nonceWindowOf`): their requests were checked. */
const checkedWindows = new WeakSet<NonceWindow>();
/** The REST clients a post of `postWithNonce` went out on with its window checked, and those it went out on unchecked. */
const checkedClients = new WeakSet<REST>();
const uncheckedClients = new WeakSet<REST>();
/** The window of each failure `postWithNonce` threw: what `madeNothing` asks of one without a status. */
const windowOfFailure = new WeakMap<object, NonceWindow>();

/** The window of a message being sent with this nonce, if it is one `postWithNonce` sends; its requests count as checked. */
export function nonceWindowOf(nonce: string): NonceWindow | undefined {
  const window = sending.get(nonce);
  if (window) checkedWindows.add(window);
  return window;
}

/**
 * A post of `postWithNonce` on a REST client whose requests no window checks (built without `withPostsSentOnce`): a bug
 * of ours, said at once rather than sent unchecked. The first such post on a client went out, unchecked, so it may have
 * made its message (`mayHaveMade`); a later one on that client is not sent: it made nothing, but its message may be
 * there all the same when an earlier send of its window may have made it (its `mayHaveMade`, such as the first post's).
 */
export class NonceWindowUnchecked extends PictorError<'internal_error'> {
  constructor(readonly mayHaveMade: boolean, options?: { cause?: unknown }) {
    super('internal_error', 'a message with an enforced nonce was posted on a REST client that checks no nonce window (build it with withPostsSentOnce)', options);
  }
}

/**
 * Whether a send of a message failed in a way that says Discord made nothing of it — the one rule of it, which
 * `NonceWindow.send`, the reply target and the audit poster each ask. Made nothing: Discord answered 4xx (its refusal,
 * a 4xx without a body, a 429 among them: a rate limit discord.js waited out or gave up on, `RateLimitError`); no request
 * of it was written, or none that was is unrefused (`NonceWindowOver` or `NonceWindowUnchecked` without `mayHaveMade`;
 * a failure without a status that `postWithNonce` threw, such as an abort of a request while it waited for a
 * connection: its window says, `NonceWindow.mayHaveMade`). Not made nothing: a 5xx, or no answer (a timeout, an abort,
 * a connection cut) to a request that may have been written — Discord may have made it. `failure` may be a response
 * (what `NonceWindow.send` reads): a status below 400 made the message.
 */
export function madeNothing(failure: unknown): boolean {
  if (failure instanceof NonceWindowOver || failure instanceof NonceWindowUnchecked) return !failure.mayHaveMade;
  if (failure instanceof RateLimitError) return true;
  const status = typeof failure === 'object' && failure !== null ? (failure as { status?: unknown }).status : undefined;
  if (typeof status === 'number') return status >= 400 && status < 500;
  const window = typeof failure === 'object' && failure !== null ? windowOfFailure.get(failure) : undefined;
  return window !== undefined && !window.mayHaveMade;
}

/**
 * Posts a message in a channel with its window's nonce, enforced: every request of it, discord.js's own tries
 * included, within the window (`NonceWindow`) — through a REST client whose requests go through `withPostsSentOnce`
 * (rest-request.ts), where each request is checked as it is written to a connection. Answers Discord's message. A
 * failure it throws is known by its window (`madeNothing`). On a client that checks no window, the first post throws
 * `NonceWindowUnchecked` once it went out, and every later one before it is sent (saying what its window knows).
 */
export async function postWithNonce(rest: REST, channelId: string, message: { body: Record<string, unknown>; files?: RawFile[] | undefined }, window: NonceWindow): Promise<unknown> {
  if (!window.open) throw new NonceWindowOver(window.mayHaveMade);
  // Not sent; a post of its window before may have made it (as the first on this client did, or an earlier send).
  if (uncheckedClients.has(rest)) throw new NonceWindowUnchecked(window.mayHaveMade);
  sending.set(window.nonce, window);
  let answer: unknown;
  try {
    answer = await rest.post(Routes.channelMessages(channelId), { body: { ...message.body, nonce: window.nonce, enforce_nonce: true }, ...(message.files && { files: message.files }) });
  } catch (error) {
    if (typeof error === 'object' && error !== null) windowOfFailure.set(error, window);
    throw uncheckedPost(rest, window, error) ?? error;
  } finally {
    if (sending.get(window.nonce) === window) sending.delete(window.nonce);
  }
  const unchecked = uncheckedPost(rest, window);
  if (unchecked) throw unchecked;
  return answer;
}

/** The failure of a post that went out on `rest` with no request of it checked by `window` (once per client), else undefined. */
function uncheckedPost(rest: REST, window: NonceWindow, cause?: unknown): NonceWindowUnchecked | undefined {
  if (checkedClients.has(rest)) return undefined;
  if (checkedWindows.has(window)) {
    checkedClients.add(rest);
    return undefined;
  }
  uncheckedClients.add(rest);
  window.handedOnUnchecked();
  return new NonceWindowUnchecked(true, { cause });
}
