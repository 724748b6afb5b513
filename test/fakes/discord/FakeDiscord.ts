import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEmitter } from 'node:events';
import type { APIAttachment, APIMessage, APIUser } from 'discord.js';
import { waitOnRealClock } from '../../helpers/real-clock-wait.js';
import {
  apiMessage,
  apiUser,
  MESSAGE_FLAG_LOADING,
  snapshotOf,
  type FakeAttachment,
  type FakeMessage,
  type MessageSnapshot,
} from './api-objects.js';
import { FakeGateway, type GatewayStats } from './FakeGateway.js';
import { FixedWindowLimiter, type WindowDecision } from './fixed-window-limiter.js';
import {
  autocompletePayload,
  buttonPayload,
  chatInputPayload,
  messageCommandPayload,
  modalAnswers,
  modalSubmitPayload,
  type InteractionContext,
  type OptionValue,
} from './interaction-payloads.js';
import { parseBody, readRequest, type ReadBody, type ReceivedFile } from './read-request.js';
import { snowflake } from './snowflake.js';
import { commandProblems } from './command-rules.js';
import { carriedOut, cutConnection, type ConnectionCut } from '../connection-cut.js';

export type { FakeAttachment, FakeMessage, MessageSnapshot, OptionValue };

export interface FakeDiscordOptions {
  botToken?: string;
  applicationId?: string;
  /** Edits and follow-ups per webhook (interaction) token, and messages per channel, per window. Default 5 per 5 s. */
  messageRateLimit?: { limit: number; windowMs: number };
  /** Keep the bytes of files the bot uploads (default true). False keeps only their names and sizes, so a bench of many large uploads measures the bot's memory, not the fake's; such files cannot be downloaded. */
  keepUploadedBytes?: boolean;
  /** The `attachment_size_limit` interactions carry; a bigger file is refused with 40005 (as is a request of more than 25 MiB). Default 10 MiB. */
  attachmentSizeLimit?: number;
  /** An interaction answered later than this gets 10062. Default 3000 ms. */
  ackDeadlineMs?: number;
  /** An interaction token used later than this gets 50027. Default 15 minutes. */
  tokenLifetimeMs?: number;
  /** HELLO's `heartbeat_interval`. Default 41250 ms, as Discord. */
  heartbeatIntervalMs?: number;
  /** Called with each REST request once it is recorded and its answer decided: a waiter told of each change, not asking again and again. */
  onRequest?: (request: RecordedRequest) => void;
}

/** Which route a request hit. */
export type RouteName =
  | 'gateway-bot'
  | 'current-user'
  | 'current-application'
  | 'commands'
  | 'interaction-callback'
  | 'webhook-message'
  | 'webhook-followup'
  | 'channel'
  | 'channel-message'
  | 'dm-channel'
  | 'guild-roles'
  | 'guild-member'
  | 'cdn'
  | 'unknown';

export interface RecordedRequest {
  at: number;
  method: string;
  /** Path as sent (percent-encoding kept, e.g. `%40original`). */
  rawPath: string;
  route: RouteName;
  status: number;
  /** Discord's error code when the answer was an error. */
  code: number | undefined;
  /** The interaction token of a callback or webhook route. */
  token: string | undefined;
  /** The message a webhook/channel message route touched or created. */
  messageId: string | undefined;
  body: Record<string, unknown> | undefined;
  files: { field: string; filename: string; contentType: string; size: number }[];
  multipart: boolean;
  /** Answered 429 because the per-token/per-channel limit was exceeded (not an injected fault). */
  rejectedByLimit: boolean;
  /** Answered by an injected fault. */
  injected: boolean;
}

export interface FakeInteraction {
  id: string;
  token: string;
  kind: 'command' | 'message-command' | 'button' | 'modal-submit' | 'autocomplete';
  /** Command name or custom id. */
  name: string;
  user: APIUser;
  channelId: string;
  createdAt: number;
  /** The interaction callback Discord accepted, if any (its type: 4 reply, 5 defer, 6 defer update, 7 update, 9 modal). */
  ack: { type: number; at: number } | undefined;
  /** Callback attempts, accepted or not. */
  callbackAttempts: number;
  /** The message `@original` points at, once there is one. */
  originalMessageId: string | undefined;
  /** For a button, or a modal opened from one: the message it was on. */
  sourceMessageId: string | undefined;
  /** The choices offered in answer to an autocomplete interaction (callback type 8). */
  choices: { name: string; value: string | number; name_localizations?: Record<string, string> | null }[] | undefined;
  /** The modal shown in answer to it (callback type 9). */
  modal: { custom_id: string; title: string; components: unknown[] } | undefined;
  expired: boolean;
  /** How it reached the bot: the gateway, or a signed POST to the bot's interactions endpoint. */
  via: 'gateway' | 'http';
  /** Over HTTP: the endpoint's answer status (undefined while waiting, or when it did not answer within 3 s). */
  httpStatus: number | undefined;
  /** The interaction as delivered (the gateway event's data, the POST's body), e.g. to play it again. */
  payload?: Record<string, unknown> | undefined;
}

export interface FaultMatch {
  route: RouteName;
  method?: string | undefined;
  /** Only requests for this interaction token. */
  token?: string | undefined;
}

export interface FaultAnswer {
  status: number;
  code: number;
  message: string;
  /** For 429: the advertised wait. */
  retryAfterMs?: number | undefined;
  /** Carry out the request, then answer with the error anyway (e.g. a callback that was applied but whose answer got lost: 40060 next). */
  applyFirst?: boolean | undefined;
  /** How many matching requests get it. Default 1. */
  count?: number | undefined;
  /** No answer at all: the connection is cut (see `cutNext`); `status`, `code`, `message` and `applyFirst` are not used. */
  cut?: ConnectionCut | undefined;
}

interface PendingFault {
  match: FaultMatch;
  answer: FaultAnswer;
  remaining: number;
}

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  code?: number | undefined;
  messageId?: string | undefined;
  /** Not answered: the connection is cut (an injected fault). */
  cut?: boolean | undefined;
}

class DiscordHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const CALLBACK_REPLY = 4;
const CALLBACK_DEFER = 5;
const CALLBACK_DEFER_UPDATE = 6;
const CALLBACK_UPDATE = 7;
const CALLBACK_AUTOCOMPLETE_RESULT = 8;
const CALLBACK_MODAL = 9;
/** Discord's most choices in an autocomplete answer, and the most characters of a choice's name and of a string value. */
const MAX_AUTOCOMPLETE_CHOICES = 25;
const MAX_CHOICE_LENGTH = 100;
const ADMINISTRATOR = 1n << 3n;
/** An interaction's `type` as Discord numbers them (in a message's `interaction_metadata`). */
const INTERACTION_TYPES: Record<FakeInteraction['kind'], number> = { command: 2, 'message-command': 2, autocomplete: 4, button: 3, 'modal-submit': 5 };
const MAX_FILES_PER_MESSAGE = 10;
/**
 * A request that sends or edits a message is refused above this many bytes, whatever each file's own limit (Create
 * Message, "Limitations": "The maximum request size when sending a message is 25 MiB"); 413, 40005, as a file over the
 * upload limit is.
 */
const MAX_REQUEST_BYTES = 25 * 1024 * 1024;
/**
 * Create Message's `nonce` (an integer, or a string of up to 25 characters) and `enforce_nonce`: "If true and nonce is
 * present, it will be checked for uniqueness in the past few minutes. If another message was created by the same author
 * with the same nonce, that message will be returned and no new message will be created." Discord says "a few minutes";
 * the fake keeps a nonce this long.
 */
const MAX_NONCE_CHARS = 25;
const NONCE_KEPT_MS = 5 * 60_000;
/**
 * Follow-ups Discord takes per interaction of an app only the user installed (`authorizing_integration_owners` has
 * only USER_INSTALL, `1`: not installed in that server or channel); the next is refused with 40094.
 */
const MAX_USER_INSTALL_FOLLOW_UPS = 5;

/** The interaction is authorized by the user's install alone (no server install where it happened). */
function userInstallOnly(ix: FakeInteraction): boolean {
  const owners = (ix.payload?.authorizing_integration_owners ?? {}) as Record<string, string>;
  return owners['1'] !== undefined && owners['0'] === undefined;
}
const MAX_RECORDED_REQUESTS = 20_000;

/**
 * A local Discord: REST under `/api/v10`, the gateway at `/gateway`, and a CDN
 * at `/attachments`, all on one 127.0.0.1 port. Point discord.js at
 * `apiBaseUrl`; the gateway URL comes from `GET /gateway/bot` as with Discord.
 */
export class FakeDiscord {
  readonly botToken: string;
  readonly applicationId: string;
  readonly guildId = snowflake();
  /** The server's roles as `GET /guilds/{guild}/roles` lists them, after its @everyone (whose id is the server's); a test adds and deletes them. */
  readonly guildRoles: { id: string; name: string }[] = [];
  /**
   * The server's members as `GET /guilds/{guild}/members/{user}` answers (their role ids), by user id: whoever makes an
   * interaction in the server is one, with the roles it was made with; a test removes one (kicked, banned, left) or
   * changes their roles.
   */
  readonly guildMembers = new Map<string, { user: APIUser; roles: string[] }>();
  /**
   * A group DM the user shares with friends, where they use the app they installed (`place: 'group-dm'`): the bot is no
   * recipient, so it can neither see nor post there. Made before `channelId`, so ids counted up from that one are not it.
   */
  readonly groupDmChannelId = snowflake();
  readonly channelId = snowflake();
  /** A server the bot is not in, where the user installed the app for themselves, and a channel of it (the bot cannot post there). */
  readonly foreignGuildId = snowflake();
  readonly foreignChannelId = snowflake();
  /**
   * Channels where the bot may post but lacks Embed Links: Discord keeps such a message's text and drops its embeds
   * (a message left with nothing is refused, 50006 "Cannot send an empty message"). A test adds channel ids.
   */
  readonly withoutEmbedLinks = new Set<string>();
  /** DM channels between the bot and each user (`POST /users/@me/channels`, and where `place: 'dm'` interactions happen), by user id. */
  readonly dmChannels = new Map<string, string>();
  /**
   * Users who installed the app for themselves: whoever made an interaction that their own install authorized
   * (`authorizing_integration_owners` `1` naming them). The bot may DM them, or a member of its server; Discord refuses
   * a message to anyone else's DM (50007), such as a friend who pressed a button in a group DM and never installed it.
   */
  readonly userInstalls = new Set<string>();
  readonly botUser: APIUser;
  /** The user interactions come from unless a test says otherwise. */
  readonly user: APIUser;
  readonly requests: RecordedRequest[] = [];
  readonly interactions = new Map<string, FakeInteraction>();
  readonly messages = new Map<string, FakeMessage>();
  /** Commands registered with `PUT /applications/{app}/commands` (key `global`) or `/guilds/{guild}/commands` (key = guild id). */
  readonly commands = new Map<string, Record<string, unknown>[]>();
  attachmentSizeLimit: number;
  ackDeadlineMs: number;
  /**
   * The application's Interactions Endpoint URL. When set, interactions are
   * POSTed there, signed, instead of sent through the gateway, and the answer
   * to the POST is the interaction's initial response.
   */
  interactionsEndpoint: string | undefined;
  tokenLifetimeMs: number;
  /**
   * How stale the next interactions arrive, as an attacker or a late delivery would bring them: `madeAgoMs`, how
   * long before their delivery they were made (their snowflake id and their token's life count from then; Discord
   * takes no first answer for them), and `signedOffsetMs`, how far from now the `X-Signature-Timestamp` of an HTTP
   * delivery is (a captured request played again is signed in the past). Both 0 unless a test sets them.
   */
  staleness = { madeAgoMs: 0, signedOffsetMs: 0 };

  readonly #server: Server;
  /** TCP connections accepted so far (REST, gateway and CDN alike). */
  connectionsAccepted = 0;
  /** First answers (interaction callbacks) that arrived and are held unanswered (see `holdFirstAnswers`). */
  firstAnswersHeld = 0;
  /** Set while first answers are held: resolves when they are let through. */
  #firstAnswersGate: { promise: Promise<void>; open: () => void } | undefined;
  /** Requests held until their gate opens (see `holdRequests`). */
  readonly #heldRoutes = new Set<{ match: (method: string, path: string) => boolean; promise: Promise<void>; held: number }>();
  /** Webhook calls (an interaction's reply edits and follow-ups) that arrived and are held unanswered (see `holdWebhookCalls`). */
  webhookCallsHeld = 0;
  /** Interaction tokens whose webhook calls are held, each with what lets them through. */
  readonly #webhookGates = new Map<string, { promise: Promise<void>; open: () => void }>();
  readonly #gateway: FakeGateway;
  readonly #limiter: FixedWindowLimiter;
  readonly #byToken = new Map<string, FakeInteraction>();
  readonly #files = new Map<string, FakeAttachment>();
  readonly #keepUploadedBytes: boolean;
  readonly #faults: PendingFault[] = [];
  readonly #commandIds = new Map<string, string>();
  /** Follow-ups each interaction (by id) sent, deleted or not: what Discord counts against its limit. */
  readonly #followUpsSent = new Map<string, number>();
  /** The channel messages created with an enforced nonce, by author and nonce: the message and when it was made. */
  readonly #nonces = new Map<string, { messageId: string; at: number }>();
  /** The application's key pair: Discord signs what it POSTs to an interactions endpoint with the private key. */
  readonly #keys = generateKeyPairSync('ed25519');
  /** Interactions POSTed to the endpoint whose answer is still awaited, by token (webhook calls with the token wait for it). */
  readonly #deliveries = new Map<string, Promise<void>>();
  /** Emits `change` once each request's answer is sent, and at each interaction delivered or acknowledged: what `waitFor` looks again on. */
  readonly #changes = new EventEmitter();
  #origin = '';
  readonly #onRequest: ((request: RecordedRequest) => void) | undefined;

  private constructor(options: FakeDiscordOptions) {
    // Any number of waits may look at once (a burst test waits on each of its interactions), as on the Slack fake.
    this.#changes.setMaxListeners(0);
    this.#onRequest = options.onRequest;
    this.applicationId = options.applicationId ?? snowflake();
    this.botToken = options.botToken ?? `${Buffer.from(this.applicationId).toString('base64url')}.${randomBytes(4).toString('base64url')}.${randomBytes(27).toString('base64url')}`;
    this.botUser = apiUser({ id: this.applicationId, username: 'Pictor', bot: true });
    this.user = apiUser({ id: snowflake(), username: 'ada' });
    this.attachmentSizeLimit = options.attachmentSizeLimit ?? 10 * 1024 * 1024;
    this.ackDeadlineMs = options.ackDeadlineMs ?? 3000;
    this.#keepUploadedBytes = options.keepUploadedBytes ?? true;
    this.tokenLifetimeMs = options.tokenLifetimeMs ?? 15 * 60_000;
    const rate = options.messageRateLimit ?? { limit: 5, windowMs: 5000 };
    this.#limiter = new FixedWindowLimiter(rate.limit, rate.windowMs);
    this.#gateway = new FakeGateway({
      botToken: this.botToken,
      heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
      readyData: () => ({
        v: 10,
        user: { ...this.botUser, verified: true, mfa_enabled: false, flags: 0 },
        guilds: [],
        shard: [0, 1],
        application: { id: this.applicationId, flags: 0 },
      }),
      resumeUrl: () => this.gatewayUrl,
    });
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.#server.on('connection', () => (this.connectionsAccepted += 1));
    this.#server.on('upgrade', (req, socket, head) => {
      if ((req.url ?? '').startsWith('/gateway')) this.#gateway.handleUpgrade(req, socket, head);
      else socket.destroy();
    });
  }

  #silent = false;
  /** Set by `refuseBotToken`: REST answers every request made with the bot token 401. */
  #refusingBotToken = false;

  static async start(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
    const fake = new FakeDiscord(options);
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    const { port } = fake.#server.address() as AddressInfo;
    fake.#origin = `http://127.0.0.1:${port}`;
    return fake;
  }

  /** What discord.js takes as `rest.api` (it appends `/v10`). */
  get apiBaseUrl(): string {
    return `${this.#origin}/api`;
  }

  get gatewayUrl(): string {
    return `${this.#origin.replace(/^http/, 'ws')}/gateway`;
  }

  /** `host:port` of the fake CDN, for the bot's allowed attachment hosts. */
  get cdnHost(): string {
    return new URL(this.#origin).host;
  }

  /** The application's public key as the Developer Portal shows it: 32 bytes in hex. */
  get publicKeyHex(): string {
    return this.#keys.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex');
  }

  /**
   * POSTs `body` to the interactions endpoint as Discord does: `X-Signature-Ed25519` over the timestamp and the body,
   * `X-Signature-Timestamp`. `signature: null` leaves the signature out; a string replaces it.
   */
  async postToInteractionsEndpoint(body: string, options: { signature?: string | null; timestamp?: string; timeoutMs?: number } = {}): Promise<Response> {
    if (!this.interactionsEndpoint) throw new Error('no interactions endpoint is set');
    const timestamp = options.timestamp ?? String(Math.floor(Date.now() / 1000));
    const signature = options.signature === undefined ? this.signInteraction(timestamp, body) : options.signature;
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Discord-Interactions/1.0 (+https://discord.com)', 'x-signature-timestamp': timestamp };
    if (signature !== null) headers['x-signature-ed25519'] = signature;
    return fetch(this.interactionsEndpoint, { method: 'POST', headers, body, signal: AbortSignal.timeout(options.timeoutMs ?? this.ackDeadlineMs) });
  }

  /** The signature Discord sends with a POST of `body` at `timestamp`: Ed25519 over the two, in hex. */
  signInteraction(timestamp: string, body: string): string {
    return sign(null, Buffer.from(timestamp + body), this.#keys.privateKey).toString('hex');
  }

  /** Discord's check of an endpoint (type 1, PING): the answer it got. */
  async pingInteractionsEndpoint(): Promise<{ status: number; body: unknown }> {
    const res = await this.postToInteractionsEndpoint(JSON.stringify({ id: snowflake(), application_id: this.applicationId, type: 1, token: randomBytes(20).toString('base64url'), version: 1 }));
    return { status: res.status, body: await res.json().catch(() => undefined) };
  }

  get gatewayStats(): GatewayStats {
    return { ...this.#gateway.stats };
  }

  /** When each IDENTIFY with the bot's token came (`Date.now()`), in order. */
  get identifyTimes(): number[] {
    return [...this.#gateway.identifiedAt];
  }

  /** Bot sessions connected to the gateway now (a bot running twice has two, and gets every interaction twice). */
  get openGatewaySessions(): number {
    return this.#gateway.openSessions;
  }

  /** WebSocket connections to the gateway open now, identified or not. */
  get openGatewayConnections(): number {
    return this.#gateway.openConnections;
  }

  /** Holds the gateway's READY back until the answer returned is called (see FakeGateway.holdReady). */
  holdReady(): () => void {
    return this.#gateway.holdReady();
  }

  /** Closes the bot's live gateway sessions with 4004 Authentication failed, and every IDENTIFY and RESUME from then on: its token was reset (see FakeGateway.resetToken). */
  resetGatewayToken(): void {
    this.#gateway.resetToken();
  }

  /** Closes every live gateway session with `code` (see FakeGateway.closeSessions). */
  closeGatewaySessions(code: number, reason: string): void {
    this.#gateway.closeSessions(code, reason);
  }

  /** Closes every IDENTIFY from now on with 4004 Authentication failed, while REST still takes the token (see FakeGateway.refuseIdentifies). */
  refuseGatewayIdentifies(): void {
    this.#gateway.refuseIdentifies();
  }

  /**
   * The token is reset in the Developer Portal and Discord has not closed the live gateway session (yet): from now on
   * every REST request made with it is answered 401 Unauthorized (`{ "message": "401: Unauthorized", "code": 0 }`), and
   * every IDENTIFY and RESUME is closed with 4004, while the live session goes on. An interaction's own token (its
   * callback, its webhook) still works: it is not the bot's.
   */
  refuseBotToken(): void {
    this.#refusingBotToken = true;
    this.#gateway.refuseIdentifies();
  }

  waitForReady(timeoutMs?: number): Promise<void> {
    return this.#gateway.waitForReady(timeoutMs);
  }

  /** The DM channel between the bot and a user (the same one every time, as on Discord). */
  dmChannelOf(userId: string): string {
    let id = this.dmChannels.get(userId);
    if (!id) this.dmChannels.set(userId, (id = snowflake()));
    return id;
  }

  /** A new member of the guild. */
  newUser(username: string): APIUser {
    return apiUser({ id: snowflake(), username });
  }

  /** Puts a file on the fake CDN, as if a user had uploaded it, and returns its attachment object. */
  hostFile(file: { filename: string; bytes: Uint8Array; contentType?: string; channelId?: string }): APIAttachment {
    const attachment = this.#storeFile(file.channelId ?? this.channelId, {
      field: 'upload',
      filename: file.filename,
      contentType: file.contentType ?? guessContentType(file.filename),
      bytes: Buffer.from(file.bytes),
    });
    return { id: attachment.id, filename: attachment.filename, size: attachment.size, url: attachment.url, proxy_url: attachment.url, content_type: attachment.contentType };
  }

  /** A user posts a message (with files) in a channel, as a target for message commands. */
  postUserMessage(post: { content?: string; files?: { filename: string; bytes: Uint8Array; contentType?: string }[]; user?: APIUser; channelId?: string }): FakeMessage {
    const channelId = post.channelId ?? this.channelId;
    const message = this.#newMessage(channelId, undefined);
    message.authorId = (post.user ?? this.user).id;
    message.content = post.content ?? '';
    message.attachments = (post.files ?? []).map((f) =>
      this.#storeFile(channelId, { field: 'upload', filename: f.filename, contentType: f.contentType ?? guessContentType(f.filename), bytes: Buffer.from(f.bytes) }),
    );
    message.history.push(snapshotOf(message, 'channel', Date.now()));
    return message;
  }

  /** A user runs a slash command; `name` may name a subcommand after a space (`imagine-admin budget`). */
  slashCommand(name: string, options: Record<string, OptionValue>, as: Partial<InteractionContext> = {}): FakeInteraction {
    const ix = this.#newInteraction('command', name, as);
    this.#deliver(ix, chatInputPayload({ ...ix, commandId: this.#commandId(name.split(' ')[0]!) }, name, options, this.#context(as)));
    return ix;
  }

  /**
   * A user types in an option with autocomplete (`focused`, the text so far) while filling in a slash command: the
   * bot answers with choices (callback type 8, in `choices`), within the same 3 s as any interaction.
   */
  autocomplete(name: string, options: Record<string, OptionValue>, focused: { name: string; value: string }, as: Partial<InteractionContext> = {}): FakeInteraction {
    const ix = this.#newInteraction('autocomplete', name, as);
    this.#deliver(ix, autocompletePayload({ ...ix, commandId: this.#commandId(name.split(' ')[0]!) }, name, options, focused, this.#context(as)));
    return ix;
  }

  /** A user runs a message context-menu command on a message. */
  messageCommand(name: string, target: FakeMessage | APIMessage, as: Partial<InteractionContext> = {}): FakeInteraction {
    const ix = this.#newInteraction('message-command', name, as);
    const message = 'history' in target ? this.#api(target) : target;
    this.#deliver(ix, messageCommandPayload({ ...ix, commandId: this.#commandId(name) }, name, message, this.#context(as)));
    return ix;
  }

  /** A user presses a button of a message. */
  clickButton(message: FakeMessage, customId: string, as: Partial<InteractionContext> = {}): FakeInteraction {
    if (!buttonsOf(message).some((b) => b.custom_id === customId)) {
      throw new Error(`message ${message.id} has no button ${customId} (it has ${buttonsOf(message).map((b) => b.custom_id).join(', ') || 'none'})`);
    }
    const ix = this.#newInteraction('button', customId, as);
    ix.sourceMessageId = message.id;
    this.#deliver(ix, buttonPayload(ix, customId, this.#api(message), this.#context({ authorizingOwners: as.guildId === undefined ? this.#ownersOf(message) : undefined, ...as })));
    return ix;
  }

  /** A user fills in and submits the modal that was shown in answer to `shownBy`. */
  submitModal(shownBy: FakeInteraction, values: Record<string, string>, as: Partial<InteractionContext> = {}): FakeInteraction {
    const modal = shownBy.modal;
    if (!modal) throw new Error(`interaction ${shownBy.id} showed no modal`);
    const components = modalAnswers(modal.components, values);
    const ix = this.#newInteraction('modal-submit', modal.custom_id, { user: shownBy.user, ...as });
    ix.sourceMessageId = shownBy.kind === 'button' ? shownBy.sourceMessageId : undefined;
    const source = ix.sourceMessageId ? this.messages.get(ix.sourceMessageId) : undefined;
    const message = source ? this.#api(source) : undefined;
    this.#deliver(ix, modalSubmitPayload(ix, modal.custom_id, components, message, this.#context({ user: shownBy.user, authorizingOwners: source && as.guildId === undefined ? this.#ownersOf(source) : undefined, ...as })));
    return ix;
  }

  /** The message an interaction's `@original` points at. */
  original(ix: FakeInteraction): FakeMessage | undefined {
    return ix.originalMessageId ? this.messages.get(ix.originalMessageId) : undefined;
  }

  /** Messages of a channel, oldest first. */
  channelMessages(channelId: string = this.channelId): FakeMessage[] {
    return [...this.messages.values()].filter((m) => m.channelId === channelId).sort((a, b) => a.createdAt - b.createdAt);
  }

  /** A user deletes a message (e.g. the bot's reply) in the client. */
  deleteMessage(id: string): void {
    if (!this.messages.delete(id)) throw new Error(`no message ${id}`);
  }

  fileBytes(attachment: { id: string }): Buffer {
    const file = this.#files.get(attachment.id);
    if (!file) throw new Error(`no file ${attachment.id} on the fake CDN`);
    return file.bytes;
  }

  /**
   * Holds every first answer (interaction callback) that arrives, unanswered,
   * until `releaseFirstAnswers()`: how many a bot has in flight at once shows
   * in `firstAnswersHeld`.
   */
  holdFirstAnswers(): void {
    if (this.#firstAnswersGate) return;
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    this.#firstAnswersGate = { promise, open };
  }

  releaseFirstAnswers(): void {
    this.#firstAnswersGate?.open();
    this.#firstAnswersGate = undefined;
  }

  /**
   * Holds every request whose method and path (`/api/v10/…`) match, unanswered, until `release()`: a slow Discord
   * for some routes (e.g. uploads to a channel), with `held` counting those waiting.
   */
  holdRequests(match: (method: string, path: string) => boolean): { readonly held: number; release(): void } {
    let open!: () => void;
    const gate = { match, promise: new Promise<void>((resolve) => (open = resolve)), held: 0 };
    this.#heldRoutes.add(gate);
    return {
      get held() {
        return gate.held;
      },
      release: () => {
        this.#heldRoutes.delete(gate);
        open();
      },
    };
  }

  /**
   * Holds every webhook call made with the interaction's token (its reply's edits, its follow-ups), unanswered,
   * until the returned function is called: a job's update stays on its way for as long as a test needs.
   * How many are held shows in `webhookCallsHeld`.
   */
  holdWebhookCalls(ix: FakeInteraction): () => void {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    this.#webhookGates.set(ix.token, { promise, open });
    return () => {
      this.#webhookGates.delete(ix.token);
      open();
    };
  }

  /** Makes the next matching request(s) fail with a Discord error. */
  failNext(match: FaultMatch, answer: FaultAnswer): void {
    this.#faults.push({ match, answer, remaining: answer.count ?? 1 });
  }

  /**
   * Makes the next `count` matching request(s) get no answer: the connection is cut (TCP RST) as one on the way to
   * Discord can be, `'before'` Discord acted on it or `'after'` it carried it out (the message made, its answer lost).
   */
  cutNext(match: FaultMatch, cut: ConnectionCut, count = 1): void {
    this.failNext(match, { status: 0, code: 0, message: '', cut, count });
  }

  /** Makes the next matching request(s) get a 429 with `retry_after`, as a shared or sub-limit would. */
  rateLimitNext(match: FaultMatch, retryAfterMs: number, count = 1): void {
    this.failNext(match, { status: 429, code: 0, message: 'You are being rate limited.', retryAfterMs, count });
  }

  /** Makes an interaction token invalid from now on (as 15 minutes after the interaction): webhook calls get 50027. */
  expireToken(token: string): void {
    const ix = this.#byToken.get(token);
    if (!ix) throw new Error('unknown interaction token');
    ix.expired = true;
  }

  /** Drops the bot's gateway connection as a network failure would; discord.js reconnects and resumes. */
  dropGatewayConnections(): void {
    this.#gateway.dropConnections();
  }

  /** Bytes of the files the fake holds (the bot's uploads, unless `keepUploadedBytes` is false, and files it hosts): what it adds to its process's memory. */
  get heldFileBytes(): number {
    let bytes = 0;
    for (const file of this.#files.values()) bytes += file.bytes.length;
    return bytes;
  }

  /** Requests answered 429 because a per-token or per-channel limit was exceeded. */
  get rejectedByLimit(): number {
    return this.requests.filter((r) => r.rejectedByLimit).length;
  }

  /**
   * Resolves with `check`'s first truthy answer: asked at each request answered and interaction delivered, and every
   * 10 ms for what those do not say; fails with `what` after `timeoutMs` of the real clock (`waitOnRealClock`), so it
   * waits as well, and gives up on time, in a test whose fake time (and `Date`) passes only when told.
   */
  waitFor<T>(check: () => T | undefined | null | false, what: string, timeoutMs = 15_000): Promise<T> {
    return waitOnRealClock(check, what, { timeoutMs, changes: this.#changes });
  }

  /**
   * Discord becomes unreachable the way a network that went away looks: from now on every REST request is
   * accepted and never answered (nothing is refused, nothing times out on this side).
   */
  stopAnswering(): void {
    this.#silent = true;
  }

  async close(): Promise<void> {
    await this.#gateway.close();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  // ---- interactions ----------------------------------------------------------------------------

  #newInteraction(kind: FakeInteraction['kind'], name: string, as: Partial<InteractionContext>): FakeInteraction {
    const createdAt = Date.now() - this.staleness.madeAgoMs;
    const ix: FakeInteraction = {
      id: snowflake(createdAt),
      token: `aW50ZXJhY3Rpb246${randomBytes(80).toString('base64url')}`,
      kind,
      name,
      user: as.user ?? this.user,
      channelId: this.#context(as).channelId,
      createdAt,
      ack: undefined,
      callbackAttempts: 0,
      originalMessageId: undefined,
      sourceMessageId: undefined,
      modal: undefined,
      choices: undefined,
      expired: false,
      via: this.interactionsEndpoint ? 'http' : 'gateway',
      httpStatus: undefined,
    };
    this.interactions.set(ix.id, ix);
    this.#byToken.set(ix.token, ix);
    const made = this.#context(as);
    if (made.place === 'guild' && made.guildId === this.guildId) this.guildMembers.set(made.user.id, { user: made.user, roles: [...made.roles] });
    return ix;
  }

  /** Through the gateway, or as a signed POST whose answer (a 200 with an interaction response, within 3 s) is the initial response. */
  #deliver(ix: FakeInteraction, payload: Record<string, unknown>): void {
    ix.payload = payload;
    this.#changes.emit('change');
    if ((payload.authorizing_integration_owners as Record<string, string> | undefined)?.['1'] === ix.user.id) this.userInstalls.add(ix.user.id);
    if (ix.via === 'gateway') {
      this.#gateway.dispatch('INTERACTION_CREATE', payload);
      return;
    }
    const postedAt = Date.now();
    const delivery = (async () => {
      try {
        const timestamp = String(Math.floor((Date.now() + this.staleness.signedOffsetMs) / 1000));
        const res = await this.postToInteractionsEndpoint(JSON.stringify(payload), { timestamp, timeoutMs: Math.max(0, this.ackDeadlineMs - (Date.now() - postedAt)) });
        const body = await readInteractionResponse(res);
        ix.httpStatus = res.status;
        // A response after 3 s, or anything but a 200 with an interaction response, counts as failed.
        if (res.status !== 200 || !body || Date.now() - ix.createdAt > this.ackDeadlineMs) return;
        ix.callbackAttempts += 1;
        this.#acknowledge(ix, body);
      } catch {
        // No answer in time (or an answer Discord would not take): the interaction failed; its token is never valid.
      } finally {
        this.#changes.emit('change');
      }
    })();
    this.#deliveries.set(ix.token, delivery);
    void delivery.finally(() => this.#deliveries.delete(ix.token));
  }

  #context(as: Partial<InteractionContext>): InteractionContext {
    const place = as.place ?? 'guild';
    const user = as.user ?? this.user;
    return {
      place,
      applicationId: this.applicationId,
      guildId: as.guildId ?? (place === 'user-install' ? this.foreignGuildId : this.guildId),
      channelId: as.channelId ?? (place === 'dm' ? this.dmChannelOf(user.id) : place === 'group-dm' ? this.groupDmChannelId : place === 'user-install' ? this.foreignChannelId : this.channelId),
      user: as.user ?? this.user,
      roles: as.roles ?? [],
      permissions: as.permissions ?? '0',
      attachmentSizeLimit: as.attachmentSizeLimit ?? this.attachmentSizeLimit,
      locale: as.locale ?? 'en-US',
      guildLocale: as.guildLocale ?? 'en-US',
      threadParentId: as.threadParentId,
      authorizingOwners: as.authorizingOwners,
    };
  }

  /**
   * Who authorized the app where a message was made (its interaction's `authorizing_integration_owners`): what
   * Discord sends with a press of its buttons, whoever presses them. Undefined for a message no interaction made. (A
   * press a test places in another server, `guildId`, stands for a message there: it takes that place's owners.)
   */
  #ownersOf(message: FakeMessage): Record<string, string> | undefined {
    const made = message.interactionId ? this.interactions.get(message.interactionId) : undefined;
    return made?.payload?.authorizing_integration_owners as Record<string, string> | undefined;
  }

  #commandId(name: string): string {
    let id = this.#commandIds.get(name);
    if (!id) this.#commandIds.set(name, (id = snowflake()));
    return id;
  }

  #authorOf(message: FakeMessage): APIUser {
    return message.authorId === this.botUser.id ? this.botUser : { ...this.user, id: message.authorId };
  }

  /** A message as the API shows it; one made in answer to an interaction carries its `interaction_metadata`. */
  #api(message: FakeMessage, author: APIUser = this.#authorOf(message)): APIMessage {
    const ix = message.interactionId ? this.interactions.get(message.interactionId) : undefined;
    return apiMessage(message, author, ix && { id: ix.id, type: INTERACTION_TYPES[ix.kind], user: ix.user });
  }

  // ---- HTTP ------------------------------------------------------------------------------------

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.#silent) return; // held open until close() drops every connection
    const url = new URL(req.url ?? '/', this.#origin);
    // Discord applies an endpoint's answer before it takes webhook calls with that interaction's token.
    const webhookToken = /^\/api\/v\d+\/webhooks\/\d+\/([^/]+)/.exec(url.pathname)?.[1];
    const delivery = webhookToken ? this.#deliveries.get(decodeURIComponent(webhookToken)) : undefined;
    if (delivery) await delivery;
    const webhookGate = webhookToken ? this.#webhookGates.get(decodeURIComponent(webhookToken)) : undefined;
    if (webhookGate) {
      this.webhookCallsHeld += 1;
      await webhookGate.promise;
      this.webhookCallsHeld -= 1;
    }
    const held = this.#firstAnswersGate;
    if (held && /^\/api\/v\d+\/interactions\/\d+\/[^/]+\/callback$/.test(url.pathname)) {
      this.firstAnswersHeld += 1;
      await held.promise;
      this.firstAnswersHeld -= 1;
    }
    const method = (req.method ?? 'GET').toUpperCase();
    for (const gate of this.#heldRoutes) {
      if (!gate.match(method, url.pathname)) continue;
      gate.held += 1;
      await gate.promise;
      gate.held -= 1;
    }
    const record: RecordedRequest = {
      at: Date.now(),
      method,
      rawPath: url.pathname,
      route: 'unknown',
      status: 0,
      code: undefined,
      token: undefined,
      messageId: undefined,
      body: undefined,
      files: [],
      multipart: false,
      rejectedByLimit: false,
      injected: false,
    };
    let answer: Answer;
    try {
      const body = method === 'GET' || method === 'HEAD' ? { json: undefined, files: [], multipart: false, bytes: 0 } : await readRequest(req);
      record.body = body.json;
      record.files = body.files.map((f) => ({ field: f.field, filename: f.filename, contentType: f.contentType, size: f.bytes.length }));
      record.multipart = body.multipart;
      answer = this.#route(method, url, req, body, record);
    } catch (error) {
      if (error instanceof DiscordHttpError) answer = { status: error.status, body: { message: error.message, code: error.code }, code: error.code };
      else answer = { status: 400, body: { message: `400: Bad Request (${(error as Error).message})`, code: 50109 }, code: 50109 };
    }
    record.status = answer.status;
    record.code = answer.code;
    record.messageId ??= answer.messageId;
    if (this.requests.length >= MAX_RECORDED_REQUESTS) this.requests.shift();
    this.requests.push(record);
    this.#onRequest?.(record);
    if (answer.cut) {
      cutConnection(req);
      this.#changes.emit('change');
      return;
    }
    res.once('finish', () => this.#changes.emit('change'));
    const headers: Record<string, string> = { ...answer.headers };
    if (answer.body instanceof Buffer) {
      res.writeHead(answer.status, headers);
      res.end(answer.body);
      return;
    }
    if (answer.body === undefined) {
      res.writeHead(answer.status, headers);
      res.end();
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(answer.body));
  }

  #route(method: string, url: URL, req: IncomingMessage, body: ReadBody, record: RecordedRequest): Answer {
    const path = url.pathname;
    const cdn = /^\/attachments\/(\d+)\/(\d+)\/[^/]+$/.exec(path);
    if (cdn && method === 'GET') {
      record.route = 'cdn';
      const file = this.#files.get(cdn[2]!);
      if (!file) return { status: 404, body: Buffer.from('Not Found'), headers: { 'content-type': 'text/plain' } };
      return { status: 200, body: file.bytes, headers: { 'content-type': file.contentType, 'content-length': String(file.size) } };
    }
    const api = /^\/api\/v\d+(\/.*)$/.exec(path);
    if (!api) throw new DiscordHttpError(404, 0, '404: Not Found');
    const route = decodeURIComponent(api[1]!);
    const segments = route.split('/').filter(Boolean);
    const [a, b, c, d, e] = segments;

    if (a === 'interactions' && segments.length === 4 && d === 'callback' && method === 'POST') {
      record.route = 'interaction-callback';
      record.token = c;
      return this.#withFaults(record, method, () => this.#callback(b!, c!, body, url.searchParams.get('with_response') === 'true', record));
    }
    if (a === 'webhooks' && b === this.applicationId && c) {
      record.token = c;
      if (segments.length === 3 && method === 'POST') {
        record.route = 'webhook-followup';
        return this.#withFaults(record, method, () => this.#limited(`token:${c}`, record, () => this.#followUp(c, body, url.searchParams.get('wait') === 'true')));
      }
      if (segments.length === 5 && d === 'messages') {
        record.route = 'webhook-message';
        const work = () => this.#webhookMessage(method, c, e!, body);
        return this.#withFaults(record, method, () => (method === 'GET' ? work() : this.#limited(`token:${c}`, record, work)));
      }
    }
    if (a === 'webhooks') {
      record.route = 'webhook-message';
      throw new DiscordHttpError(404, 10015, 'Unknown Webhook');
    }

    this.#authenticate(req);
    if (a === 'gateway' && b === 'bot' && method === 'GET') {
      record.route = 'gateway-bot';
      return {
        status: 200,
        body: {
          url: this.gatewayUrl,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 86_400_000, max_concurrency: 1 },
        },
      };
    }
    if (a === 'users' && b === '@me' && segments.length === 2 && method === 'GET') {
      record.route = 'current-user';
      return { status: 200, body: this.botUser };
    }
    if (a === 'users' && b === '@me' && c === 'channels' && segments.length === 3 && method === 'POST') {
      record.route = 'dm-channel';
      const recipient = (body.json as { recipient_id?: unknown } | undefined)?.recipient_id;
      if (typeof recipient !== 'string') throw new DiscordHttpError(400, 50035, 'Invalid Form Body');
      return this.#withFaults(record, method, () => ({
        status: 200,
        body: { id: this.dmChannelOf(recipient), type: 1, last_message_id: null, flags: 0, recipients: [{ ...this.user, id: recipient }] },
      }));
    }
    if ((a === 'applications' && b === '@me') || (a === 'oauth2' && b === 'applications' && c === '@me')) {
      record.route = 'current-application';
      return { status: 200, body: { id: this.applicationId, name: 'Pictor', bot: this.botUser, flags: 0, description: '', verify_key: 'fake' } };
    }
    if (a === 'applications' && b === this.applicationId) {
      record.route = 'commands';
      const scope = c === 'commands' && segments.length === 3 ? 'global' : c === 'guilds' && e === 'commands' ? d! : undefined;
      if (scope === undefined) throw new DiscordHttpError(404, 0, '404: Not Found');
      if (method === 'PUT') return { status: 200, body: this.#registerCommands(scope, body.json) };
      if (method === 'GET') return { status: 200, body: this.commands.get(scope) ?? [] };
    }
    if (a === 'guilds' && b === this.guildId && c === 'roles' && segments.length === 3 && method === 'GET') {
      record.route = 'guild-roles';
      const roles = [{ id: this.guildId, name: '@everyone' }, ...this.guildRoles].map((role, position) => ({
        ...role,
        color: 0,
        hoist: false,
        icon: null,
        unicode_emoji: null,
        position,
        permissions: '0',
        managed: false,
        mentionable: false,
        flags: 0,
      }));
      return { status: 200, body: roles };
    }
    if (a === 'guilds' && c === 'members' && d && segments.length === 4 && method === 'GET') {
      record.route = 'guild-member';
      return this.#withFaults(record, method, () => {
        if (b !== this.guildId) throw new DiscordHttpError(404, 10004, 'Unknown Guild');
        const member = this.guildMembers.get(d);
        if (!member) throw new DiscordHttpError(404, 10007, 'Unknown Member');
        return {
          status: 200,
          body: { user: member.user, nick: null, avatar: null, roles: [...member.roles], joined_at: new Date(0).toISOString(), premium_since: null, deaf: false, mute: false, flags: 0, pending: false },
        };
      });
    }
    if (a === 'channels' && b) {
      if (segments.length === 2 && method === 'GET') {
        record.route = 'channel';
        return { status: 200, body: { id: b, type: 0, guild_id: this.guildId, name: 'general' } };
      }
      if (c === 'messages') {
        record.route = 'channel-message';
        // A server the bot is not in: it can neither see nor post in its channels.
        if (b === this.foreignChannelId || b === this.groupDmChannelId) throw new DiscordHttpError(403, 50001, 'Missing Access');
        if (segments.length === 3 && method === 'POST') {
          this.#refuseUnreachableDm(b);
          return this.#withFaults(record, method, () => this.#limited(`channel:${b}`, record, () => this.#createChannelMessage(b, body)));
        }
        if (segments.length === 4) {
          const message = this.messages.get(d!);
          if (!message || message.channelId !== b) throw new DiscordHttpError(404, 10008, 'Unknown Message');
          if (method === 'GET') return { status: 200, body: this.#api(message), messageId: message.id };
          if (method === 'PATCH') {
            return this.#withFaults(record, method, () =>
              this.#limited(`channel:${b}`, record, () => {
                if (message.authorId !== this.botUser.id) throw new DiscordHttpError(403, 50005, 'Cannot edit a message authored by another user');
                this.#applyMessageBody(message, body, 'channel');
                return { status: 200, body: this.#api(message, this.botUser), messageId: message.id };
              }),
            );
          }
        }
      }
    }
    throw new DiscordHttpError(404, 0, '404: Not Found');
  }

  #authenticate(req: IncomingMessage): void {
    if (this.#refusingBotToken || req.headers.authorization !== `Bot ${this.botToken}`) throw new DiscordHttpError(401, 0, '401: Unauthorized');
  }

  #withFaults(record: RecordedRequest, method: string, work: () => Answer): Answer {
    const index = this.#faults.findIndex(
      (f) => f.match.route === record.route && (!f.match.method || f.match.method === method) && (!f.match.token || f.match.token === record.token),
    );
    if (index < 0) return work();
    const fault = this.#faults[index]!;
    if (--fault.remaining <= 0) this.#faults.splice(index, 1);
    record.injected = true;
    if (fault.answer.cut ? carriedOut(fault.answer.cut) : fault.answer.applyFirst) {
      try {
        work();
      } catch {
        // The fault's answer is what the caller sees either way.
      }
    }
    const { status, code, message, retryAfterMs } = fault.answer;
    if (fault.answer.cut) return { status: 0, cut: true };
    if (status === 429) return rateLimitedAnswer((retryAfterMs ?? 1000) / 1000, { limit: 5, remaining: 0, resetAfterMs: retryAfterMs ?? 1000, allowed: false });
    return { status, body: { message, code }, code };
  }

  #limited(key: string, record: RecordedRequest, work: () => Answer): Answer {
    const decision = this.#limiter.take(key);
    if (!decision.allowed) {
      record.rejectedByLimit = true;
      return rateLimitedAnswer(decision.resetAfterMs / 1000, decision);
    }
    const answer = work();
    return { ...answer, headers: { ...answer.headers, ...rateLimitHeaders(decision) } };
  }

  #callback(id: string, token: string, body: ReadBody, withResponse: boolean, record: RecordedRequest): Answer {
    const ix = this.interactions.get(id);
    if (!ix || ix.token !== token) throw new DiscordHttpError(404, 10062, 'Unknown interaction');
    ix.callbackAttempts += 1;
    if (ix.ack) throw new DiscordHttpError(400, 40060, 'Interaction has already been acknowledged.');
    if (Date.now() - ix.createdAt > this.ackDeadlineMs) throw new DiscordHttpError(404, 10062, 'Unknown interaction');
    const message = this.#acknowledge(ix, body);
    const type = ix.ack!.type;
    record.messageId = message?.id;
    if (!withResponse) return { status: 204 };
    return {
      status: 200,
      body: {
        interaction: { id: ix.id, type: 2, response_message_id: message?.id, response_message_loading: type === CALLBACK_DEFER, response_message_ephemeral: ((message?.flags ?? 0) & 64) !== 0 },
        resource: { type, ...(message ? { message: this.#api(message, this.botUser) } : {}) },
      },
    };
  }

  /** Applies an interaction's initial response (from the callback endpoint, or the answer to an endpoint POST). */
  #acknowledge(ix: FakeInteraction, body: ReadBody): FakeMessage | undefined {
    const type = Number(body.json?.type);
    const data = (body.json?.data ?? {}) as Record<string, unknown>;
    let message: FakeMessage | undefined;
    if (ix.kind === 'autocomplete' && type !== CALLBACK_AUTOCOMPLETE_RESULT) throw new DiscordHttpError(400, 50035, `Invalid Form Body (an autocomplete interaction is answered with choices, not callback type ${type})`);
    switch (type) {
      case CALLBACK_REPLY:
        message = this.#created(this.#newMessage(ix.channelId, ix.id), (made) => this.#applyMessageBody(made, { ...body, json: data }, 'callback'));
        ix.originalMessageId = message.id;
        break;
      case CALLBACK_DEFER:
        message = this.#newMessage(ix.channelId, ix.id);
        message.flags = Number(data.flags ?? 0) | MESSAGE_FLAG_LOADING;
        message.history.push(snapshotOf(message, 'callback', Date.now()));
        ix.originalMessageId = message.id;
        break;
      case CALLBACK_DEFER_UPDATE:
      case CALLBACK_UPDATE:
        if (!ix.sourceMessageId) throw new DiscordHttpError(400, 50035, 'Invalid Form Body (this interaction has no message to update)');
        message = this.messages.get(ix.sourceMessageId);
        if (!message) throw new DiscordHttpError(404, 10008, 'Unknown Message');
        if (type === CALLBACK_UPDATE) this.#applyMessageBody(message, { ...body, json: data }, 'callback');
        ix.originalMessageId = message.id;
        break;
      case CALLBACK_AUTOCOMPLETE_RESULT: {
        if (ix.kind !== 'autocomplete') throw new DiscordHttpError(400, 50035, 'Invalid Form Body (only an autocomplete interaction takes choices)');
        const choices = (data.choices ?? []) as NonNullable<FakeInteraction['choices']>;
        if (!Array.isArray(choices) || choices.length > MAX_AUTOCOMPLETE_CHOICES) throw new DiscordHttpError(400, 50035, `Invalid Form Body (data.choices: at most ${MAX_AUTOCOMPLETE_CHOICES})`);
        for (const choice of choices) {
          const bad = typeof choice.name !== 'string' || choice.name.length < 1 || choice.name.length > MAX_CHOICE_LENGTH || (typeof choice.value === 'string' && choice.value.length > MAX_CHOICE_LENGTH);
          if (bad) throw new DiscordHttpError(400, 50035, 'Invalid Form Body (data.choices: a name of 1 to 100 characters, a value of at most 100)');
        }
        ix.choices = choices;
        break;
      }
      case CALLBACK_MODAL:
        if (ix.kind === 'modal-submit' || ix.kind === 'autocomplete') throw new DiscordHttpError(400, 50035, 'Invalid Form Body (a modal cannot open another modal)');
        ix.modal = { custom_id: String(data.custom_id), title: String(data.title), components: (data.components ?? []) as unknown[] };
        break;
      default:
        throw new DiscordHttpError(400, 50035, `Invalid Form Body (callback type ${type})`);
    }
    ix.ack = { type, at: Date.now() };
    return message;
  }

  #interactionFor(token: string): FakeInteraction {
    const ix = this.#byToken.get(token);
    if (!ix) throw new DiscordHttpError(404, 10015, 'Unknown Webhook');
    if (ix.expired || Date.now() - ix.createdAt > this.tokenLifetimeMs) throw new DiscordHttpError(401, 50027, 'Invalid Webhook Token');
    if (!ix.ack) throw new DiscordHttpError(404, 10015, 'Unknown Webhook');
    return ix;
  }

  #webhookMessage(method: string, token: string, which: string, body: ReadBody): Answer {
    const ix = this.#interactionFor(token);
    const id = which === '@original' ? ix.originalMessageId : which;
    const message = id ? this.messages.get(id) : undefined;
    if (!message || (which !== '@original' && message.interactionId !== ix.id)) throw new DiscordHttpError(404, 10008, 'Unknown Message');
    switch (method) {
      case 'GET':
        return { status: 200, body: this.#api(message, this.botUser), messageId: message.id };
      case 'PATCH':
        this.#applyMessageBody(message, body, 'webhook');
        return { status: 200, body: this.#api(message, this.botUser), messageId: message.id };
      case 'DELETE':
        this.messages.delete(message.id);
        return { status: 204, messageId: message.id };
      default:
        throw new DiscordHttpError(405, 0, '405: Method Not Allowed');
    }
  }

  #followUp(token: string, body: ReadBody, wait: boolean): Answer {
    const ix = this.#interactionFor(token);
    const sent = this.#followUpsSent.get(ix.id) ?? 0;
    if (userInstallOnly(ix) && sent >= MAX_USER_INSTALL_FOLLOW_UPS) {
      throw new DiscordHttpError(400, 40094, 'This interaction has hit the maximum number of follow up messages');
    }
    const message = this.#created(this.#newMessage(ix.channelId, ix.id), (made) => this.#applyMessageBody(made, body, 'followup'));
    this.#followUpsSent.set(ix.id, sent + 1);
    return wait ? { status: 200, body: this.#api(message, this.botUser), messageId: message.id } : { status: 204, messageId: message.id };
  }

  /** A DM with a user who shares no server with the bot and did not install the app: Discord refuses the bot's messages there. */
  #refuseUnreachableDm(channelId: string): void {
    const recipient = [...this.dmChannels].find(([, id]) => id === channelId)?.[0];
    if (recipient !== undefined && !this.guildMembers.has(recipient) && !this.userInstalls.has(recipient)) {
      throw new DiscordHttpError(403, 50007, 'Cannot send messages to this user');
    }
  }

  #createChannelMessage(channelId: string, body: ReadBody): Answer {
    const { nonce, enforce_nonce: enforce } = body.json ?? {};
    if (nonce !== undefined && nonce !== null && !((typeof nonce === 'string' && nonce.length <= MAX_NONCE_CHARS) || Number.isInteger(nonce))) {
      throw new DiscordHttpError(400, 50035, `Invalid Form Body (nonce: an integer, or a string of at most ${MAX_NONCE_CHARS} characters)`);
    }
    const key = enforce === true && nonce !== undefined && nonce !== null ? `${this.botUser.id}:${String(nonce)}` : undefined;
    const earlier = key ? this.#nonces.get(key) : undefined;
    const existing = earlier && Date.now() - earlier.at < NONCE_KEPT_MS ? this.messages.get(earlier.messageId) : undefined;
    if (existing) return { status: 200, body: this.#api(existing, this.botUser), messageId: existing.id };
    const message = this.#created(this.#newMessage(channelId, undefined), (made) => this.#applyMessageBody(made, body, 'channel'));
    if (key) this.#nonces.set(key, { messageId: message.id, at: Date.now() });
    return { status: 200, body: this.#api(message, this.botUser), messageId: message.id };
  }

  /** A new message once its body is applied: one Discord refuses (too large, too long …) is never made. */
  #created(message: FakeMessage, apply: (message: FakeMessage) => void): FakeMessage {
    try {
      apply(message);
    } catch (error) {
      this.messages.delete(message.id);
      throw error;
    }
    return message;
  }

  #newMessage(channelId: string, interactionId: string | undefined): FakeMessage {
    const message: FakeMessage = {
      id: snowflake(),
      channelId,
      guildId: this.guildId,
      authorId: this.botUser.id,
      content: '',
      components: [],
      flags: 0,
      attachments: [],
      embeds: [],
      allowedMentions: undefined,
      interactionId,
      createdAt: Date.now(),
      editedAt: undefined,
      history: [],
    };
    this.messages.set(message.id, message);
    return message;
  }

  /**
   * Applies a create/edit body as Discord does: `attachments` lists what the
   * message keeps (existing ids) and which new `files[n]` it gets (id n);
   * without `attachments`, new files are appended to what is there.
   */
  #applyMessageBody(message: FakeMessage, body: ReadBody, via: MessageSnapshot['via']): void {
    const json = body.json ?? {};
    if (body.bytes > MAX_REQUEST_BYTES) throw new DiscordHttpError(413, 40005, 'Request entity too large');
    for (const file of body.files) {
      if (file.bytes.length > this.attachmentSizeLimit) throw new DiscordHttpError(413, 40005, 'Request entity too large');
    }
    if (typeof json.content === 'string') {
      if (json.content.length > 2000) throw new DiscordHttpError(400, 50035, 'Invalid Form Body (content: Must be 2000 or fewer in length.)');
      message.content = json.content;
    }
    if (Array.isArray(json.embeds)) message.embeds = checkedEmbeds(json.embeds as Record<string, unknown>[]);
    if (via === 'channel' && this.withoutEmbedLinks.has(message.channelId)) {
      message.embeds = [];
      if (message.content === '' && body.files.length === 0 && message.attachments.length === 0) throw new DiscordHttpError(400, 50006, 'Cannot send an empty message');
    }
    if (Array.isArray(json.components)) {
      if (json.components.length > 5) throw new DiscordHttpError(400, 50035, 'Invalid Form Body (components: Must be 5 or fewer in length.)');
      message.components = json.components;
    }
    if (json.allowed_mentions !== undefined) message.allowedMentions = json.allowed_mentions;
    if (typeof json.flags === 'number' && via !== 'webhook') message.flags = json.flags;
    const filesById = new Map(body.files.map((f) => [f.field.replace(/^files\[(\d+)\]$/, '$1'), f] as const));
    let attachments: FakeAttachment[];
    if (Array.isArray(json.attachments)) {
      attachments = [];
      for (const entry of json.attachments as { id?: unknown; filename?: unknown }[]) {
        const key = String(entry.id);
        const upload = filesById.get(key);
        if (upload) {
          attachments.push(this.#storeFile(message.channelId, { ...upload, filename: typeof entry.filename === 'string' ? entry.filename : upload.filename }));
          continue;
        }
        const kept = message.attachments.find((a) => a.id === key);
        if (kept) attachments.push(kept);
        else throw new DiscordHttpError(400, 50035, `Invalid Form Body (attachments: unknown attachment ${key})`);
      }
    } else {
      attachments = [...message.attachments, ...body.files.map((f) => this.#storeFile(message.channelId, f))];
    }
    if (attachments.length > MAX_FILES_PER_MESSAGE) throw new DiscordHttpError(400, 50035, 'Invalid Form Body (attachments: Must be 10 or fewer in length.)');
    message.attachments = attachments;
    message.flags &= ~MESSAGE_FLAG_LOADING;
    const now = Date.now();
    if (message.history.length > 0) message.editedAt = now;
    message.history.push(snapshotOf(message, via, now));
  }

  #storeFile(channelId: string, file: ReceivedFile): FakeAttachment {
    const id = snowflake();
    const attachment: FakeAttachment = {
      id,
      filename: file.filename,
      contentType: file.contentType || guessContentType(file.filename),
      size: file.bytes.length,
      url: `${this.#origin}/attachments/${channelId}/${id}/${encodeURIComponent(file.filename)}?ex=${randomBytes(4).toString('hex')}&hm=${randomBytes(8).toString('hex')}`,
      bytes: this.#keepUploadedBytes || file.field === 'upload' ? file.bytes : Buffer.alloc(0),
    };
    this.#files.set(id, attachment);
    return attachment;
  }

  #registerCommands(scope: string, json: unknown): Record<string, unknown>[] {
    if (!Array.isArray(json)) throw new DiscordHttpError(400, 50035, 'Invalid Form Body (expected a list of commands)');
    const problems = commandProblems(json as Record<string, unknown>[]);
    if (problems.length) throw new DiscordHttpError(400, 50035, `Invalid Form Body (${problems.join('; ')})`);
    const registered = (json as Record<string, unknown>[]).map((command) => ({
      ...command,
      id: this.#commandId(String(command.name)),
      application_id: this.applicationId,
      version: snowflake(),
      ...(scope === 'global' ? {} : { guild_id: scope }),
    }));
    this.commands.set(scope, registered);
    return registered;
  }
}

/** Buttons of a message, in order. */
export function buttonsOf(message: Pick<FakeMessage, 'components'>): { custom_id: string; label: string; style: number; disabled: boolean }[] {
  const out: { custom_id: string; label: string; style: number; disabled: boolean }[] = [];
  for (const row of message.components as { components?: { type: number; custom_id?: string; label?: string; style?: number; disabled?: boolean }[] }[]) {
    for (const c of row.components ?? []) {
      if (c.type === 2 && c.custom_id) out.push({ custom_id: c.custom_id, label: c.label ?? '', style: c.style ?? 1, disabled: c.disabled === true });
    }
  }
  return out;
}

/** Whether a member with these permission bits is an administrator. */
export function isAdministrator(permissions: string): boolean {
  return (BigInt(permissions) & ADMINISTRATOR) === ADMINISTRATOR;
}

function rateLimitHeaders(decision: WindowDecision): Record<string, string> {
  const resetAfter = Math.max(0, decision.resetAfterMs) / 1000;
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': ((Date.now() + decision.resetAfterMs) / 1000).toFixed(3),
    'x-ratelimit-reset-after': resetAfter.toFixed(3),
    'x-ratelimit-bucket': 'fake-message-bucket',
  };
}

function rateLimitedAnswer(retryAfterSeconds: number, decision: WindowDecision): Answer {
  const retryAfter = Math.max(0.001, retryAfterSeconds);
  return {
    status: 429,
    code: 0,
    body: { message: 'You are being rate limited.', retry_after: retryAfter, global: false, code: 0 },
    headers: { ...rateLimitHeaders(decision), 'retry-after': retryAfter.toFixed(3), 'x-ratelimit-scope': 'user' },
  };
}

/**
 * An interaction response in an endpoint's answer, read as a request to the callback endpoint is: JSON, or multipart
 * with `payload_json` and `files[n]`, its size counted. Undefined for any other content type, or no JSON body.
 */
async function readInteractionResponse(res: Response): Promise<ReadBody | undefined> {
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('application/json') && !type.startsWith('multipart/form-data')) return undefined;
  const body = await parseBody(type, Buffer.from(await res.arrayBuffer()));
  return body.multipart || body.json ? body : undefined;
}

function guessContentType(filename: string): string {
  const ext = filename.split('.').pop()?.toLowerCase();
  if (ext === 'png') return 'image/png';
  if (ext === 'jpg' || ext === 'jpeg') return 'image/jpeg';
  if (ext === 'webp') return 'image/webp';
  if (ext === 'gif') return 'image/gif';
  if (ext === 'txt') return 'text/plain';
  return 'application/octet-stream';
}

/**
 * Embeds as Discord takes them (its documented limits): at most 10 per message, a title of 256 characters, a
 * description of 4,096, and 6,000 characters of text in all the embeds together; otherwise 400 (50035).
 */
function checkedEmbeds(embeds: Record<string, unknown>[]): Record<string, unknown>[] {
  if (embeds.length > 10) throw new DiscordHttpError(400, 50035, 'Invalid Form Body (embeds: Must be 10 or fewer in length.)');
  let total = 0;
  for (const [i, embed] of embeds.entries()) {
    const title = typeof embed.title === 'string' ? embed.title : '';
    const description = typeof embed.description === 'string' ? embed.description : '';
    const footer = typeof (embed.footer as { text?: unknown } | undefined)?.text === 'string' ? ((embed.footer as { text: string }).text) : '';
    const fields = Array.isArray(embed.fields) ? (embed.fields as { name?: string; value?: string }[]) : [];
    if (title.length > 256) throw new DiscordHttpError(400, 50035, `Invalid Form Body (embeds.${i}.title: Must be 256 or fewer in length.)`);
    if (description.length > 4096) throw new DiscordHttpError(400, 50035, `Invalid Form Body (embeds.${i}.description: Must be 4096 or fewer in length.)`);
    total += title.length + description.length + footer.length + fields.reduce((n, f) => n + (f.name?.length ?? 0) + (f.value?.length ?? 0), 0);
  }
  if (total > 6000) throw new DiscordHttpError(400, 50035, 'Invalid Form Body (embeds: Embed size exceeds maximum size of 6000)');
  return structuredClone(embeds);
}
