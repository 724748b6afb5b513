import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { ClientApplication, Routes, type APIApplication, type Client, type RESTOptions } from 'discord.js';
import { type LoggerLike } from 'pictor';
import { readBounded, timerMsOf, withTimeout } from 'pictor/internal';
import type { Space } from '../state/index.js';
import { DISCORD_ERRORS, DISCORD_LIMITS } from './discord-facts.js';
import { createdAtOf, interactionAge } from './interaction-age.js';
import { ANSWER_TRIP_MS, AnswerBudget } from '../runner/answer-budget.js';
import { interactionDispatcher } from './interaction-action.js';
import { InteractionClaims } from './interaction-claims.js';
import { createSignatureCheck } from './verify-signature.js';

type MakeRequest = RESTOptions['makeRequest'];

/** The path Discord posts interactions to (the portal's Interactions Endpoint URL ends with it). */
export const INTERACTIONS_PATH = '/interactions';

/**
 * Largest interaction body taken. An interaction carries at most one message
 * (a message command's target, a button's message: 2,000 characters, 10
 * embeds of 6,000) and the options and resolved objects of one command, far
 * below this.
 */
export const MAX_INTERACTION_BODY_BYTES = 1024 * 1024;


const INTERACTION_PING = 1;
const CALLBACK_PONG = 1;
const CALLBACK_PATH = /\/interactions\/(\d+)\/([^/]+)\/callback$/;

interface PendingAnswer {
  token: string;
  res: ServerResponse;
  settled: boolean;
}

/**
 * The initial responses of interactions received over HTTP. Discord takes the
 * answer to its POST as the interaction's initial response, so discord.js's
 * callback request (`deferReply`, `reply`, `update`, `showModal`) for such an
 * interaction is written into that HTTP response instead of being sent to
 * Discord; everything after it (edits, follow-ups) goes to Discord's webhook
 * endpoints as usual.
 */
export class HttpInitialResponses {
  readonly #pending = new Map<string, PendingAnswer>();

  /** discord.js's request function with callbacks of pending interactions answered over HTTP. */
  wrap(inner: MakeRequest): MakeRequest {
    return async (url, init) => {
      const match = CALLBACK_PATH.exec(new URL(url).pathname);
      const pending = match ? this.#pending.get(match[1]!) : undefined;
      if (!match || !pending || pending.token !== decodeURIComponent(match[2]!)) return inner(url, init);
      this.#pending.delete(match[1]!);
      pending.settled = true;
      // The same bytes discord.js would send to the callback endpoint (JSON, or multipart when files are attached).
      const encoded = new Response(init.body as ConstructorParameters<typeof Response>[0]);
      const body = Buffer.from(await encoded.arrayBuffer());
      const contentType = (init.body instanceof FormData ? encoded.headers.get('content-type') : new Headers(init.headers as ConstructorParameters<typeof Headers>[0]).get('content-type')) ?? 'application/json';
      const { res } = pending;
      const delivered =
        !res.destroyed &&
        (await new Promise<boolean>((resolve) => {
          res.once('close', () => resolve(res.writableFinished));
          res.writeHead(200, { 'content-type': contentType, 'content-length': String(body.length) }).end(body);
        }));
      // Discord hung up first (its 3 s passed): to the handler this is what the callback endpoint would say then.
      if (!delivered) return Response.json({ message: 'Unknown interaction', code: DISCORD_ERRORS.unknownInteraction }, { status: 404 });
      return new Response(null, { status: 204 });
    };
  }

  /** Waits up to `timeoutMs` for the interaction's initial response; false when none came (the response is then ended with 500). */
  expect(id: string, token: string, res: ServerResponse, timeoutMs: number): Promise<boolean> {
    const pending: PendingAnswer = { token, res, settled: false };
    this.#pending.set(id, pending);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        if (this.#pending.get(id) === pending) this.#pending.delete(id);
        if (!pending.settled) {
          pending.settled = true;
          answer(res, 500, { message: 'no response in time' });
        }
        resolve(false);
      }, timeoutMs);
      res.once('close', () => {
        if (this.#pending.get(id) === pending) this.#pending.delete(id);
        clearTimeout(timer);
        resolve(pending.settled && res.writableFinished);
      });
    });
  }
}

/**
 * The endpoint's `ackDeadlineMs` as given (default Discord's 3 s), or a RangeError naming it: a number of ms a timer
 * can wait (`timerMsOf`, as `stopGraceMs`) and more than the first answer's own trip (`ANSWER_TRIP_MS`). At or under
 * that trip no time is left for any wait before the first answer, and every interaction would be refused (503); NaN,
 * Infinity or more than 2^31 − 1 would reach setTimeout as 1 ms, and every claim would run out at once.
 */
export function ackDeadlineMsOf(ms: number | undefined): number {
  if (ms === undefined) return DISCORD_LIMITS.acknowledgeMs;
  const checked = timerMsOf('ackDeadlineMs', ms);
  if (checked <= ANSWER_TRIP_MS) {
    throw new RangeError(`ackDeadlineMs must be more than ${ANSWER_TRIP_MS} ms (the first answer's own trip to Discord), not ${checked}`);
  }
  return checked;
}

export interface InteractionsEndpointOptions {
  /** The application's public key (hex), for the signature check. */
  publicKey: string;
  host?: string | undefined;
  /** 0 for any free port. */
  port: number;
  client: Client;
  responses: HttpInitialResponses;
  logger: LoggerLike;
  /**
   * How long an interaction's initial response may take, counted from the POST's arrival. Default Discord's 3 s. The
   * one number of both the POST's hold and every wait before the first answer (its answer budget: answer-budget.ts).
   * More than the answer's own trip (500 ms) and at most 2^31 − 1; anything else is a RangeError naming it (`ackDeadlineMsOf`).
   */
  ackDeadlineMs?: number | undefined;
  /**
   * The ids taken (the state's `discord-interactions` space): by every replica, and across restarts, so a POST
   * replayed to another replica or after a restart is refused there too.
   */
  taken: Pick<Space<unknown>, 'claimOnce' | 'releaseClaim' | 'definition'>;
}

export interface InteractionsEndpoint {
  /** `http://host:port/interactions`. */
  url: string;
  listening(): boolean;
  /** Stops taking interactions (new ones get 503) and closes the port. */
  close(): Promise<void>;
}

/**
 * Discord's outgoing interactions over HTTP (`POST /interactions`): checks the
 * Ed25519 signature and that it was made now (401 otherwise: a replayed capture
 * is stale), answers PING with PONG, refuses (401) an interaction older than its
 * token's 15 minutes before anything is claimed or run, and hands every
 * other interaction to discord.js as the gateway would, so commands, buttons
 * and modals run the same code. Holds nothing between requests but the ids it
 * took (a second POST of one is refused with 409, not run again): any number of
 * processes can take them behind a load balancer, and `taken` (the bots' state)
 * takes an id once for all of them and across restarts.
 */
export async function startInteractionsEndpoint(options: InteractionsEndpointOptions): Promise<InteractionsEndpoint> {
  const { client, responses, logger } = options;
  const signedByDiscord = createSignatureCheck(options.publicKey);
  const deadlineMs = ackDeadlineMsOf(options.ackDeadlineMs);
  const dispatch = interactionDispatcher(client);
  // The same intake as the gateway's: an id taken once, by every replica and across restarts.
  const claims = new InteractionClaims(options.taken, logger);
  let accepting = true;

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      logger.error({ err: error instanceof Error ? { name: error.name, message: error.message } : String(error) }, 'the interactions endpoint failed on a request');
      if (!res.headersSent) answer(res, 500, { message: 'internal error' });
    });
  });
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivedAt = Date.now();
    const path = new URL(req.url ?? '/', 'http://endpoint').pathname;
    if (path !== INTERACTIONS_PATH) return answer(res, 404, { message: 'not found' });
    if (req.method !== 'POST') return answer(res, 405, { message: 'POST only' }, { allow: 'POST' });
    const raw = await bodyOf(req, MAX_INTERACTION_BODY_BYTES);
    if (raw === undefined) return answer(res, 413, { message: 'body too large' }, { connection: 'close' });
    const timestamp = header(req, 'x-signature-timestamp');
    const signature = signedByDiscord(timestamp, raw, header(req, 'x-signature-ed25519'));
    if (signature === 'invalid') {
      logger.warn({ remote: req.socket.remoteAddress }, 'refused an interaction with a bad or missing signature');
      return answer(res, 401, { message: 'invalid request signature' });
    }
    if (signature === 'stale') {
      // Signed by Discord, but not now: a captured request played again (or one signed for later).
      logger.warn({ remote: req.socket.remoteAddress, timestamp }, 'refused an interaction whose signature is too old or too far ahead (a replay?)');
      return answer(res, 401, { message: 'invalid request signature: stale timestamp' });
    }
    let payload: { id?: unknown; token?: unknown; type?: unknown } | null;
    try {
      payload = JSON.parse(raw.toString('utf8')) as typeof payload;
    } catch {
      return answer(res, 400, { message: 'body is not JSON' });
    }
    if (typeof payload !== 'object' || payload === null) return answer(res, 400, { message: 'not an interaction' });
    if (payload.type === INTERACTION_PING) return answer(res, 200, { type: CALLBACK_PONG });
    if (!accepting) return answer(res, 503, { message: 'stopping' });
    if (typeof payload.id !== 'string' || typeof payload.token !== 'string') return answer(res, 400, { message: 'not an interaction' });
    const createdAt = createdAtOf(payload.id);
    if (createdAt === undefined) return answer(res, 400, { message: 'not an interaction' });
    // Its token is dead (or it was stamped ahead): nothing is claimed, reserved or sent for it.
    const age = interactionAge(createdAt);
    if (age !== 'fresh') {
      logger.warn({ id: payload.id, age, createdAt: new Date(createdAt).toISOString() }, 'refused an interaction made longer ago than its token lives (or stamped ahead)');
      return answer(res, 401, { message: age === 'expired' ? 'interaction expired' : 'interaction from the future' });
    }
    // One deadline for every wait before the first answer, from when it arrived (answer-budget.ts).
    const budget = new AnswerBudget(arrivedAt, deadlineMs);
    const taken = await claims.take(payload.id, budget);
    if (taken === 'unavailable') return answer(res, 503, { message: 'state store unavailable' });
    if (taken === 'taken-before') return answer(res, 409, { message: 'interaction already received' });
    // Held only for what is left of Discord's wait for this POST, counted from its arrival (its claim took some of it).
    const answered = responses.expect(payload.id, payload.token, res, Math.max(0, budget.answerBy - Date.now()));
    dispatch(payload, budget);
    if (!(await answered)) logger.warn({ id: payload.id, type: payload.type }, 'an interaction received over HTTP got no initial response in time');
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}${INTERACTIONS_PATH}`;
  logger.info({ url }, 'taking Discord interactions over HTTP');
  return {
    url,
    listening: () => server.listening && accepting,
    async close() {
      accepting = false;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
    },
  };
}

/**
 * Without the gateway there is no login: the token goes on REST and is checked by asking Discord for its
 * application, which discord.js's interaction objects are then built with (as READY would have set it).
 */
export async function useTokenWithoutGateway(client: Client, token: string, timeoutMs: number): Promise<void> {
  client.rest.setToken(token);
  const application = (await withTimeout(client.rest.get(Routes.currentApplication()), timeoutMs, 'Discord did not answer in time')) as APIApplication;
  Object.assign(client, { application: Reflect.construct(ClientApplication, [client, application]) as ClientApplication });
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The body, or undefined once it passes `limit` bytes: a declared length past it is not read at all, and reading stops
 * as soon as more has come (the core's one bounded reader). A body that breaks rejects with its error.
 */
async function bodyOf(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return undefined;
  const read = await readBounded({ body: Readable.toWeb(req) as ReadableStream<Uint8Array> }, limit, (error) => error);
  return read === 'too_large' ? undefined : read;
}

function answer(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers }).end(text);
}
