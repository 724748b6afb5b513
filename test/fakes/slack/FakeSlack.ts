import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { realTimers, waitOnRealClock } from '../../helpers/real-clock-wait.js';
import { carriedOut, cutConnection, type ConnectionCut } from '../connection-cut.js';
import { checkBlocks, checkView } from './check-blocks.js';
import { bearerOf, parseApiArgs, readBody } from './read-body.js';
import { signedHeaders } from './sign-request.js';
import {
  buttonsOf,
  fileObject,
  messageObject,
  type ApiCall,
  type DownloadRecord,
  type FakeEphemeral,
  type FakeFile,
  type FakeMessage,
  type FakeResponse,
  type FakeView,
  type WriteRecord,
} from './slack-objects.js';
import { fillViewState, type ViewInputs } from './view-state.js';

export interface FakeSlackOptions {
  botToken?: string;
  appToken?: string;
  signingSecret?: string;
  teamId?: string;
  botUserId?: string;
  botId?: string;
  /**
   * Least time between two writes (post, update, ephemeral, file share) to one
   * channel, measured between their arrivals; a write sooner gets 429 with
   * `Retry-After`. Default 1000 (Slack's "about one message per second per channel"); 0 = no limit.
   */
  channelWriteIntervalMs?: number;
  /** How long a trigger_id can open a view. Default 3000 ms (Slack's limit). */
  triggerLifetimeMs?: number;
  /**
   * Calls of each Tier 3 method (`chat.update`, `chat.delete`,
   * `conversations.history`, `conversations.replies`) accepted per workspace
   * in any 60 s; one more gets 429 with `Retry-After` (seconds until the
   * oldest leaves the window). Slack documents Tier 3 as "50+ per minute",
   * counted per method per app per workspace. Default 50; 0 = no limit.
   */
  tier3PerMinute?: number;
  /** The app's OAuth client id and secret (for `oauth.v2.access`). */
  clientId?: string;
  clientSecret?: string;
}

/** A workspace the app is installed in: its bot token and bot user. */
export interface FakeWorkspace {
  /** The workspace, or for an org-wide install (Enterprise Grid) the organization (`E…`): its token acts in every workspace of it. */
  teamId: string;
  orgWide?: boolean;
  botToken: string;
  botUserId: string;
  botId: string;
}

/** Slack's authorization codes expire after 10 minutes and are good once. */
const CODE_LIFETIME_MS = 10 * 60_000;

const TIER3_METHODS = new Set(['chat.update', 'chat.delete', 'conversations.history', 'conversations.replies']);
const MINUTE_MS = 60_000;

export type Delivery = { status: number; body: unknown };
type Kind = 'command' | 'interactive' | 'event';
type Rec = Record<string, unknown>;

interface Fault {
  status: number;
  retryAfterSec: number;
  error: string;
  count: number;
  /** Only calls whose arguments match fail (default: every call of the method). */
  match: ((args: Rec) => boolean) | undefined;
  /** No answer: the connection is cut (see `cutNext`). */
  cut?: ConnectionCut | undefined;
  /** More of Slack's answer (`missing_scope` names the scope `needed` and those `provided`). */
  extra?: Rec | undefined;
}

const WRITE_METHODS = new Set(['chat.postMessage', 'chat.update', 'chat.postEphemeral', 'chat.delete', 'files.completeUploadExternal']);

/**
 * A local Slack for tests. One HTTP server on 127.0.0.1 serves the Web API
 * (`/api/<method>`), file downloads (`/files-pri/…`, bot token required, an HTML
 * login page otherwise, as Slack does), upload URLs, `response_url`s and the
 * Socket Mode WebSocket; and it delivers commands, interactions and events to
 * an app, signed over HTTP or as Socket Mode envelopes.
 */
/** A step of a workflow this app ran: its inputs, its token, and how the app completed it. */
export interface FakeFunctionRun {
  executionId: string;
  callbackId: string;
  inputs: Record<string, unknown>;
  token: string;
  team: string;
  startedAt: number;
  delivery?: Delivery | undefined;
  outcome?: { ok: true; outputs: Record<string, unknown>; at: number } | { ok: false; error: string; at: number } | undefined;
}

export class FakeSlack {
  readonly botToken: string;
  readonly appToken: string;
  readonly signingSecret: string;
  readonly teamId: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  channelWriteIntervalMs: number;
  readonly triggerLifetimeMs: number;
  tier3PerMinute: number;
  /** Calls refused because their method's Tier 3 limit was reached. */
  readonly tier3Refusals: { method: string; at: number }[] = [];

  readonly calls: ApiCall[] = [];
  readonly writes: WriteRecord[] = [];
  readonly messages: FakeMessage[] = [];
  readonly ephemerals: FakeEphemeral[] = [];
  readonly responses: FakeResponse[] = [];
  readonly views: FakeView[] = [];
  /** Home tabs published (`views.publish`), by `team:user`: the latest view of each, and how many times it was published. */
  readonly homes = new Map<string, { view: Record<string, unknown>; publishedAt: number; count: number }>();
  /** Steps of workflows run (`runFunction`) and how the app completed each (`functions.completeSuccess`/`completeError`). */
  readonly functionRuns: FakeFunctionRun[] = [];
  readonly files = new Map<string, FakeFile>();
  readonly downloads: DownloadRecord[] = [];
  /** Bytes POSTed to upload URLs, and whether a token came with them (it should not: the URL is pre-signed). */
  readonly uploads: { fileId: string; bytes: number; authorization: string | undefined; at: number }[] = [];
  /** Tokens the Web API refused, for a test that a wrong token never works. */
  readonly unauthorized: { method: string; at: number }[] = [];
  connectionsOpened = 0;

  readonly #events = new EventEmitter();
  readonly #faults = new Map<string, Fault>();
  /** Methods whose calls are held open (no answer yet), and how many arrived. */
  readonly #held = new Map<string, { arrived: number; released: Promise<void> }>();
  /** Live bot tokens, each acting in its own workspace. */
  readonly #workspaces = new Map<string, FakeWorkspace>();
  /** Tokens revoked or of an uninstalled app: Slack answers `token_revoked`. */
  readonly #revoked = new Set<string>();
  readonly #codes = new Map<string, { teamId: string; orgWide: boolean; redirectUri: string; issuedAt: number; used: boolean }>();
  readonly #lastWriteAt = new Map<string, number>();
  /** Accepted calls of each Tier 3 method in the last minute, per workspace (`<team>/<method>`), oldest first. */
  readonly #tier3Calls = new Map<string, number[]>();
  readonly #notMember = new Set<string>();
  readonly #archived = new Set<string>();
  readonly #triggers = new Map<string, { issuedAt: number; used: boolean; user: string }>();
  readonly #tickets = new Set<string>();
  /** Tokens of workflow executions (`runFunction`): valid in their workspace until the step is completed. */
  readonly #functionTokens = new Map<string, FakeWorkspace>();
  /** Each person's language, as `users.info` tells it with `include_locale` (default `en-US`). */
  readonly #locales = new Map<string, string>();
  /** The user groups of each workspace (`usergroups.list`), by team. */
  readonly #userGroups = new Map<string, { id: string; handle: string; name: string; users: string[]; disabled: boolean }[]>();
  /** Channels' and members' names of each workspace (`setName`), by team: `#name` or `@name` → id. */
  readonly #names = new Map<string, Map<string, string>>();
  readonly #sockets = new Set<WebSocket>();
  #nextSocket = 0;
  readonly #pendingAcks = new Map<string, (payload: unknown) => void>();
  #server: Server | undefined;
  #wss: WebSocketServer | undefined;
  #url = '';
  #httpTarget: string | undefined;
  #lastDelivery: { headers: Record<string, string>; body: string } | undefined;
  #seq = 0;
  #tsSeq = 0;

  constructor(options: FakeSlackOptions = {}) {
    this.botToken = options.botToken ?? 'xoxb-fake-bot-token-0001';
    this.appToken = options.appToken ?? 'xapp-fake-app-token-0001';
    this.signingSecret = options.signingSecret ?? 'fake-signing-secret-0001';
    this.teamId = options.teamId ?? 'T0PICTOR';
    this.botUserId = options.botUserId ?? 'U0PICTORBOT';
    this.botId = options.botId ?? 'B0PICTOR';
    this.clientId = options.clientId ?? '1111.2222';
    this.clientSecret = options.clientSecret ?? 'fake-client-secret-0001';
    this.#workspaces.set(this.botToken, { teamId: this.teamId, botToken: this.botToken, botUserId: this.botUserId, botId: this.botId });
    this.channelWriteIntervalMs = options.channelWriteIntervalMs ?? 1000;
    this.triggerLifetimeMs = options.triggerLifetimeMs ?? 3000;
    this.tier3PerMinute = options.tier3PerMinute ?? 50;
    this.#events.setMaxListeners(0);
  }

  /** `http://127.0.0.1:PORT` */
  get url(): string {
    return this.#url;
  }

  /** What the app takes as `slackApiUrl`. */
  get apiUrl(): string {
    return `${this.#url}/api/`;
  }

  /** The origin of this fake's file host, for the app's allowed file hosts. */
  get fileHost(): string {
    return this.#url;
  }

  get socketCount(): number {
    return this.#sockets.size;
  }

  async start(): Promise<this> {
    this.#wss = new WebSocketServer({ noServer: true });
    this.#server = createServer((req, res) => {
      this.#route(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
    });
    this.#server.on('upgrade', (req, socket, head) => this.#upgrade(req, socket, head));
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  /** Cuts every Socket Mode connection, as a network failure would (the app reconnects through apps.connections.open). */
  dropSocketConnections(): void {
    for (const ws of this.#sockets) ws.terminate();
  }

  async close(): Promise<void> {
    for (const ws of this.#sockets) ws.terminate();
    this.#sockets.clear();
    this.#wss?.close();
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ---------------------------------------------------------------- set-up

  /** Deliver to an app over HTTP (its events URL), signed with the signing secret. */
  deliverOverHttp(url: string): void {
    this.#httpTarget = url;
  }

  /** Makes the bot a non-member of a channel: its writes there fail with `not_in_channel`. */
  removeBotFrom(channel: string): void {
    this.#notMember.add(channel);
  }

  /** Archives a channel: writes there fail with `is_archived`, as Slack answers for an archived conversation. */
  archive(channel: string): void {
    this.#archived.add(channel);
  }

  /** The id of the direct-message conversation between the bot and a user (what `conversations.open` returns). */
  dmOf(user: string): string {
    return `D${user.replace(/^U/, '')}`;
  }

  /**
   * The next `count` calls of `method` fail: 429 with `Retry-After` by default, or `{ok:false, error}` with status 200.
   */
  failNext(method: string, fault: Partial<Omit<Fault, 'cut'>> = {}): void {
    this.#faults.set(method, { status: 429, retryAfterSec: 1, error: 'ratelimited', count: 1, match: undefined, ...fault });
  }

  /**
   * The next `count` calls of `method` (those `match` takes) get no answer: the connection is cut (TCP RST) as one on
   * the way to Slack can be, `'before'` Slack acted on the call or `'after'` it carried it out (a message shown, its
   * answer lost).
   */
  cutNext(method: string, cut: ConnectionCut, options: { count?: number; match?: (args: Rec) => boolean } = {}): void {
    this.#faults.set(method, { status: 0, retryAfterSec: 0, error: '', count: options.count ?? 1, match: options.match, cut });
  }

  /**
   * From now on every response URL is used up or expired (as Slack's are after 5 uses or 30 minutes) and takes nothing:
   * no note reaches `responses`. It answers `status` with the text `expired_url` (404 or 410), or 200 with Slack's JSON
   * `{"ok":false,"error":"expired_url"}` (200): the README says why both. `refusedResponses` counts them.
   */
  expireResponseUrls(status: 404 | 410 | 200 = 404): void {
    this.#responseUrlStatus = status;
  }

  /** Posts to a response URL refused since `expireResponseUrls` or `failResponseUrls`. */
  refusedResponses = 0;
  #responseUrlStatus: 404 | 410 | 200 | undefined;

  /**
   * From now on every response URL fails on Slack's side and takes nothing: no note reaches `responses`. It answers
   * `status`: 500 with the text `rollup_error` (what Slack's hooks answer when "something strange and unusual
   * happened"), a gateway's 502 or 503 with an HTML page, or 429 with `Retry-After` and the text `rate_limited` (Slack's
   * rate limit). `refusedResponses` counts them.
   */
  failResponseUrls(status: 500 | 502 | 503 | 429 = 500): void {
    this.#responseUrlFailure = status;
  }

  #responseUrlFailure: 500 | 502 | 503 | 429 | undefined;

  /**
   * From now on every response URL takes its note (it reaches `responses`) and then closes the connection without
   * answering: the answer of a note Slack took is lost on its way back.
   */
  loseResponseUrlAnswers(): void {
    this.#responseUrlAnswersLost = true;
  }

  #responseUrlAnswersLost = false;

  /**
   * The response URLs given from now on (in commands, presses, shortcuts) point where nothing listens: a post to one is
   * refused before anything is sent (`ECONNREFUSED`), as when Slack cannot be reached at all.
   */
  async unreachableResponseUrls(): Promise<void> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    this.#responseUrlBase = `http://127.0.0.1:${port}`;
  }

  #responseUrlBase: string | undefined;

  /**
   * Holds every call of `method` open from now on, as a Slack that does not answer: a call waits (its connection
   * open, nothing sent back) until `release()`, then is answered as usual and counted in `callsOf`. `arrived()` counts
   * the calls that came while held.
   */
  holdOpen(method: string): { arrived: () => number; release: () => void } {
    let release!: () => void;
    const held = { arrived: 0, released: new Promise<void>((resolve) => (release = resolve)) };
    this.#held.set(method, held);
    return {
      arrived: () => held.arrived,
      release: () => {
        if (this.#held.get(method) === held) this.#held.delete(method);
        release();
      },
    };
  }

  /** A file a person uploaded to Slack (the bot downloads it from `url_private`). */
  addFile(input: { name: string; bytes: Buffer; mimetype?: string; user?: string; urlPrivate?: string; size?: number; team?: string }): FakeFile {
    const id = this.#id('F');
    const filetype = input.name.split('.').pop()?.toLowerCase() ?? 'binary';
    const url = input.urlPrivate ?? `${this.#url}/files-pri/${input.team ?? this.teamId}-${id}/${encodeURIComponent(input.name)}`;
    const file: FakeFile = {
      id,
      name: input.name,
      title: input.name,
      mimetype: input.mimetype ?? guessMime(filetype),
      filetype,
      size: input.size ?? input.bytes.length,
      bytes: input.bytes,
      user: input.user ?? 'U0SOMEONE',
      url_private: url,
      url_private_download: url.includes('/files-pri/') ? `${url}?download=1` : url,
      channels: [],
      state: 'shared',
      created: Math.floor(Date.now() / 1000),
    };
    this.files.set(id, file);
    return file;
  }

  /** A person's language in Slack (their Preferences → Language), as `users.info` with `include_locale` tells it. */
  setLocale(user: string, locale: string): void {
    this.#locales.set(user, locale);
  }

  /**
   * A user group of a workspace (Slack's `S…` id, its `handle` for @-mentions, its members), as `usergroups.list`
   * tells it; again with the same id changes it (its members, or `disabled`).
   */
  setUserGroup(group: { id: string; handle: string; name?: string; users: string[]; disabled?: boolean }, team = this.teamId): void {
    const groups = (this.#userGroups.get(team) ?? []).filter((g) => g.id !== group.id);
    groups.push({ name: group.handle, disabled: false, ...group });
    this.#userGroups.set(team, groups);
  }

  /** A channel's or a member's name in a workspace, as people type it after `#` or `@` (what `commandText` escapes). */
  setName(id: string, name: string, team = this.teamId): void {
    const names = this.#names.get(team) ?? new Map<string, string>();
    names.set(`${/^[CG]/.test(id) ? '#' : '@'}${name.toLowerCase()}`, id);
    this.#names.set(team, names);
  }

  /**
   * The `text` Slack sends for a slash command as a person typed it. `&`, `<` and `>` always come as `&amp;`, `&lt;`,
   * `&gt;` (all text in Slack is escaped so). With the command's "Escape channels, users, and links sent to your app"
   * (`should_escape` in the manifest), Slack also sends what it recognises in its special form: a channel
   * `<#C…|name>`, a member `<@U…|name>`, a user group `<!subteam^S…|@handle>`, `@here`/`@channel`/`@everyone` as
   * `<!here>`…, a link `<https://…>`; a name it does not know stays as typed. Without it, all of them stay as typed.
   */
  commandText(typed: string, options: { escape: boolean; team?: string }): string {
    const team = options.team ?? this.teamId;
    const entities = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    if (!options.escape) return entities(typed);
    const names = this.#names.get(team) ?? new Map<string, string>();
    const groups = (this.#userGroups.get(team) ?? []).filter((g) => !g.disabled);
    return typed
      .split(/(\s+)/)
      .map((word) => {
        const mention = /^([#@])([\w.-]+?)([.,;:!?)]*)$/.exec(word);
        if (mention) {
          const [, sigil, name, after] = mention as unknown as [string, string, string, string];
          const id = names.get(`${sigil}${name.toLowerCase()}`);
          if (sigil === '#' && id) return `<#${id}|${name}>${entities(after)}`;
          if (sigil === '@' && ['here', 'channel', 'everyone'].includes(name.toLowerCase())) return `<!${name.toLowerCase()}>${entities(after)}`;
          if (sigil === '@' && id) return `<@${id}|${name}>${entities(after)}`;
          const group = sigil === '@' ? groups.find((g) => g.handle.toLowerCase() === name.toLowerCase()) : undefined;
          if (group) return `<!subteam^${group.id}|@${group.handle}>${entities(after)}`;
        }
        const link = /^(https?:\/\/[^\s<>]+?)([.,;:!?)]*)$/.exec(word);
        if (link) return `<${entities(link[1]!)}>${entities(link[2]!)}`;
        return entities(word);
      })
      .join('');
  }

  /** A person opens the app's Home tab: Slack sends `app_home_opened` (tab `home`). */
  async openHome(user: string, team = this.teamId): Promise<Delivery> {
    const workspace = this.workspaceOf(team);
    if (!workspace) throw new Error(`the app is not installed in ${team}`);
    const published = this.homes.get(`${team}:${user}`);
    return this.deliver('event', this.#eventEnvelope({ type: 'app_home_opened', user, channel: this.dmOf(user), tab: 'home', event_ts: this.#ts(), ...(published ? { view: published.view } : {}) }, workspace));
  }

  /**
   * A workflow reaches a step of this app (a custom function, `callback_id`): Slack sends `function_executed` with the
   * step's inputs and a token for this execution (`bot_access_token`), which the app uses to complete it.
   */
  async runFunction(input: { callbackId: string; inputs: Record<string, unknown>; team?: string }): Promise<FakeFunctionRun> {
    const workspace = this.workspaceOf(input.team ?? this.teamId);
    if (!workspace) throw new Error(`the app is not installed in ${input.team}`);
    const token = `xwfp-${workspace.teamId}-${randomBytes(10).toString('hex')}`;
    // Valid for this execution, in its workspace, as Slack's workflow tokens are.
    this.#functionTokens.set(token, { ...workspace, botToken: token });
    const run: FakeFunctionRun = { executionId: this.#id('Fx'), callbackId: input.callbackId, inputs: input.inputs, token, team: workspace.teamId, startedAt: Date.now() };
    this.functionRuns.push(run);
    const event = {
      type: 'function_executed',
      function: { id: this.#id('Fn'), callback_id: input.callbackId, title: input.callbackId, type: 'app', input_parameters: [], output_parameters: [], app_id: 'A0PICTOR', date_created: 0, date_updated: 0, date_deleted: 0 },
      inputs: input.inputs,
      function_execution_id: run.executionId,
      workflow_execution_id: this.#id('Wx'),
      event_ts: this.#ts(),
      bot_access_token: token,
    };
    run.delivery = await this.deliver('event', this.#eventEnvelope(event, workspace));
    return run;
  }

  // ---------------------------------------------------------------- queries

  messagesIn(channel: string): FakeMessage[] {
    return this.messages.filter((m) => m.channel === channel);
  }

  /** Top-level messages of a channel (not thread replies). */
  topLevel(channel: string): FakeMessage[] {
    return this.messagesIn(channel).filter((m) => !m.thread_ts || m.thread_ts === m.ts);
  }

  /** The replies in a thread (not its parent). */
  replies(channel: string, threadTs: string): FakeMessage[] {
    return this.messagesIn(channel).filter((m) => m.thread_ts === threadTs && m.ts !== threadTs);
  }

  botMessages(channel: string): FakeMessage[] {
    return this.messagesIn(channel).filter((m) => m.user === this.botUserId);
  }

  callsOf(method: string): ApiCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  get rejectedWrites(): WriteRecord[] {
    return this.writes.filter((w) => w.rejected);
  }

  /**
   * Resolves with the probe's first truthy value: asked at each change of this fake's (a call, a write, a delivery) and
   * every 25 ms of the real clock for what those do not say; throws after `timeoutMs` of the real clock
   * (`waitOnRealClock`), even while a test holds its own.
   */
  waitFor<T>(probe: () => T | undefined | null | false, what: string, timeoutMs = 15_000): Promise<T> {
    return waitOnRealClock(probe, what, { timeoutMs, changes: this.#events, pollMs: 25 });
  }

  // ---------------------------------------------------------------- installs (OAuth)

  /** Slack's authorize page (what the app's install path redirects to). */
  get authorizeUrl(): string {
    return `${this.#url}/oauth/v2/authorize`;
  }

  /**
   * A workspace admin approves the app on Slack's authorize page: checks the
   * page's query (client id, bot scopes, state) as Slack does, and returns
   * where Slack sends the browser: `redirectUri?code=…&state=…`.
   */
  approveInstall(location: string, input: { team: string; redirectUri: string; orgWide?: boolean }): string {
    const url = new URL(location);
    if (`${url.origin}${url.pathname}` !== this.authorizeUrl) throw new Error(`not Slack's authorize page: ${url.origin}${url.pathname}`);
    if (url.searchParams.get('client_id') !== this.clientId) throw new Error('the authorize page was opened with another client_id');
    if (!(url.searchParams.get('scope') ?? '').split(',').includes('commands')) throw new Error('the authorize page was opened without bot scopes');
    const state = url.searchParams.get('state');
    if (!state) throw new Error('the authorize page was opened without a state');
    const code = `${input.team}.${randomBytes(8).toString('hex')}`;
    this.#codes.set(code, { teamId: input.team, orgWide: input.orgWide === true, redirectUri: url.searchParams.get('redirect_uri') ?? input.redirectUri, issuedAt: Date.now(), used: false });
    const redirect = new URL(input.redirectUri);
    redirect.searchParams.set('code', code);
    redirect.searchParams.set('state', state);
    return redirect.toString();
  }

  /** The workspace a team's live bot token acts in, if the app is installed there. */
  workspaceOf(team: string): FakeWorkspace | undefined {
    return [...this.#workspaces.values()].find((w) => w.teamId === team && !this.#revoked.has(w.botToken));
  }

  /**
   * The team uninstalls the app: its tokens stop working (`token_revoked`)
   * and Slack sends `tokens_revoked` (naming the bot user) and `app_uninstalled`.
   */
  async uninstall(team: string): Promise<Delivery[]> {
    const workspace = this.workspaceOf(team);
    if (!workspace) throw new Error(`the app is not installed in ${team}`);
    this.#revoked.add(workspace.botToken);
    this.#changed();
    return [
      await this.deliver('event', this.#eventEnvelope({ type: 'tokens_revoked', tokens: { oauth: [], bot: [workspace.botUserId] }, event_ts: this.#ts() }, workspace)),
      await this.deliver('event', this.#eventEnvelope({ type: 'app_uninstalled', event_ts: this.#ts() }, workspace)),
    ];
  }

  // ---------------------------------------------------------------- what people do

  /** A person runs a slash command. Resolves with what the app acknowledged. */
  async command(
    input: { command: string; text: string; user?: string; userName?: string; channel?: string; team?: string; /** A workspace of this Enterprise Grid organization, where the app is installed org-wide. */ enterprise?: string },
    sign?: SignOverride,
  ): Promise<Delivery & { responseUrl: string; triggerId: string }> {
    const responseUrl = this.#responseUrl();
    const user = input.user ?? 'U0ALICE';
    const triggerId = this.#trigger(user);
    const payload = {
      token: 'legacy-verification-token',
      team_id: input.team ?? this.teamId,
      team_domain: 'pictor-test',
      channel_id: input.channel ?? 'C0GENERAL',
      channel_name: 'general',
      user_id: user,
      user_name: input.userName ?? user.toLowerCase(),
      command: input.command,
      text: input.text,
      api_app_id: 'A0PICTOR',
      ...(input.enterprise ? { enterprise_id: input.enterprise } : {}),
      is_enterprise_install: input.enterprise ? 'true' : 'false',
      response_url: responseUrl,
      trigger_id: triggerId,
    };
    const delivery = await this.deliver('command', payload, sign);
    return { ...delivery, responseUrl, triggerId };
  }

  /**
   * A person clicks a button of the app's Home tab as published for them: a `block_actions` from a view (container
   * `view`), with no channel and no `response_url`, as Slack sends it.
   */
  async clickHomeButton(user: string, actionId: string, value: string, team = this.teamId): Promise<Delivery> {
    const home = this.homes.get(`${team}:${user}`);
    if (!home) throw new Error(`${user} has no Home tab published`);
    const buttons = ((home.view.blocks ?? []) as { elements?: { type: string; action_id?: string; value?: string }[]; block_id?: string }[]).flatMap((b) => (b.elements ?? []).map((e) => ({ ...e, blockId: b.block_id })));
    const button = buttons.find((b) => b.type === 'button' && b.action_id === actionId && b.value === value);
    if (!button) throw new Error(`the Home tab of ${user} has no button ${actionId} with value ${value}`);
    const viewId = this.#id('V');
    return this.deliver('interactive', {
      type: 'block_actions',
      user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: team },
      api_app_id: 'A0PICTOR',
      token: 'legacy-verification-token',
      container: { type: 'view', view_id: viewId },
      trigger_id: this.#trigger(user),
      team: { id: team, domain: 'pictor-test' },
      enterprise: null,
      is_enterprise_install: false,
      view: { ...home.view, id: viewId, team_id: team, app_id: 'A0PICTOR', bot_id: this.botId, state: { values: {} } },
      actions: [{ type: 'button', action_id: actionId, block_id: button.blockId ?? '', text: { type: 'plain_text', text: 'button' }, value, action_ts: this.#ts() }],
    });
  }

  /** A person clicks a button of a message (from another workspace with `team`, as in a channel shared between workspaces). */
  async clickButton(message: FakeMessage, actionId: string, user = 'U0ALICE', team = this.teamId): Promise<Delivery & { responseUrl: string }> {
    const button = buttonsOf(message).find((b) => b.actionId === actionId);
    if (!button) throw new Error(`the message has no button ${actionId} (it has ${buttonsOf(message).map((b) => b.actionId).join(', ') || 'none'})`);
    const responseUrl = this.#responseUrl();
    const payload = {
      type: 'block_actions',
      user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: team },
      api_app_id: 'A0PICTOR',
      token: 'legacy-verification-token',
      container: { type: 'message', message_ts: message.ts, channel_id: message.channel, is_ephemeral: false, ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}) },
      trigger_id: this.#trigger(user),
      team: { id: team, domain: 'pictor-test' },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: message.channel, name: 'general' },
      message: messageObject(message, this.teamId),
      state: { values: {} },
      response_url: responseUrl,
      actions: [
        {
          action_id: button.actionId,
          block_id: button.blockId ?? 'actions',
          text: { type: 'plain_text', text: button.text, emoji: true },
          value: button.value,
          type: 'button',
          action_ts: `${Date.now() / 1000}`,
        },
      ],
    };
    return { ...(await this.deliver('interactive', payload)), responseUrl };
  }

  /** A person picks a message shortcut on a message. */
  async messageShortcut(message: FakeMessage, callbackId: string, user = 'U0ALICE'): Promise<Delivery & { responseUrl: string }> {
    const responseUrl = this.#responseUrl();
    const payload = {
      type: 'message_action',
      token: 'legacy-verification-token',
      action_ts: `${Date.now() / 1000}`,
      team: { id: this.teamId, domain: 'pictor-test' },
      user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: this.teamId },
      channel: { id: message.channel, name: 'general' },
      is_enterprise_install: false,
      enterprise: null,
      callback_id: callbackId,
      trigger_id: this.#trigger(user),
      response_url: responseUrl,
      message_ts: message.ts,
      message: messageObject(message, this.teamId),
    };
    return { ...(await this.deliver('interactive', payload)), responseUrl };
  }

  /** A person fills in and submits an open modal. Resolves with the app's acknowledgement (`response_action`…). */
  async submitView(view: FakeView, inputs: ViewInputs, user = view.user ?? 'U0ALICE'): Promise<Delivery> {
    const state = { values: fillViewState(view.view, inputs, this.teamId) };
    const payload = {
      type: 'view_submission',
      team: { id: this.teamId, domain: 'pictor-test' },
      user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: this.teamId },
      api_app_id: 'A0PICTOR',
      token: 'legacy-verification-token',
      trigger_id: this.#trigger(user),
      view: { ...view.view, id: view.id, team_id: this.teamId, state, hash: `${view.openedAt}.hash` },
      response_urls: [],
      is_enterprise_install: false,
      enterprise: null,
    };
    return this.deliver('interactive', payload);
  }

  /**
   * A person posts a message (with files, in a thread…). Slack sends the app a
   * `message` event (subtype `file_share` when there are files) and, when the
   * text mentions the bot, an `app_mention` event first, which carries no files
   * unless `mentionCarriesFiles`.
   */
  async userMessage(input: {
    channel?: string;
    user?: string;
    text: string;
    files?: FakeFile[];
    threadTs?: string;
    channelType?: 'channel' | 'group' | 'im' | 'mpim';
    mentionCarriesFiles?: boolean;
    /** The workspace it is posted in (default this fake's own); the app must be installed there. */
    team?: string;
  }): Promise<FakeMessage> {
    const workspace = input.team ? this.workspaceOf(input.team) : this;
    if (!workspace) throw new Error(`the app is not installed in ${input.team}`);
    const message: FakeMessage = {
      channel: input.channel ?? 'C0GENERAL',
      ts: this.#ts(),
      thread_ts: input.threadTs,
      user: input.user ?? 'U0ALICE',
      text: input.text,
      files: input.files,
      postedAt: Date.now(),
      edits: [],
    };
    for (const file of input.files ?? []) file.channels.push(message.channel);
    this.messages.push(message);
    this.#changed();
    const base = {
      user: message.user,
      text: message.text,
      ts: message.ts,
      channel: message.channel,
      event_ts: message.ts,
      team: workspace.teamId,
      ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}),
    };
    const files = input.files?.length ? { files: input.files.map((f) => fileObject(f, workspace.teamId)), upload: true } : {};
    if (message.text.includes(`<@${workspace.botUserId}>`)) {
      await this.deliver('event', this.#eventEnvelope({ type: 'app_mention', ...base, ...(input.mentionCarriesFiles ? files : {}) }, workspace));
    }
    await this.deliver(
      'event',
      this.#eventEnvelope({
        type: 'message',
        ...(input.files?.length ? { subtype: 'file_share' } : {}),
        ...base,
        ...files,
        channel_type: input.channelType ?? 'channel',
      }, workspace),
    );
    return message;
  }

  /** Delivers a payload to the app: signed over HTTP, or as a Socket Mode envelope when a socket is open. */
  async deliver(kind: Kind, payload: Rec, sign: SignOverride = {}): Promise<Delivery> {
    if (this.#sockets.size > 0) return this.#deliverOverSocket(kind, payload);
    if (!this.#httpTarget) throw new Error('the fake has no app to deliver to: call deliverOverHttp(url) or connect over Socket Mode');
    const body =
      kind === 'command'
        ? new URLSearchParams(payload as Record<string, string>).toString()
        : kind === 'interactive'
          ? new URLSearchParams({ payload: JSON.stringify(payload) }).toString()
          : JSON.stringify(payload);
    const headers = signedHeaders(sign.secret ?? this.signingSecret, body, sign.timestampSec);
    if (sign.signature !== undefined) headers['x-slack-signature'] = sign.signature;
    this.#lastDelivery = { headers: { ...headers, 'content-type': kind === 'event' ? 'application/json' : 'application/x-www-form-urlencoded' }, body };
    return this.#post(this.#lastDelivery);
  }

  /** Sends the last HTTP delivery again, byte for byte (same body, timestamp and signature), as an eavesdropper would. */
  replayLastDelivery(): Promise<Delivery> {
    if (!this.#lastDelivery) throw new Error('nothing was delivered over HTTP yet');
    return this.#post(this.#lastDelivery);
  }

  async #post(delivery: { headers: Record<string, string>; body: string }): Promise<Delivery> {
    const response = await fetch(this.#httpTarget!, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed };
  }

  // ---------------------------------------------------------------- internals

  #eventEnvelope(event: Rec, workspace: Pick<FakeWorkspace, 'teamId' | 'botUserId'> = this): Rec {
    return {
      token: 'legacy-verification-token',
      team_id: workspace.teamId,
      api_app_id: 'A0PICTOR',
      event,
      type: 'event_callback',
      event_id: this.#id('Ev'),
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ enterprise_id: null, team_id: workspace.teamId, user_id: workspace.botUserId, is_bot: true, is_enterprise_install: false }],
      is_ext_shared_channel: false,
    };
  }

  async #deliverOverSocket(kind: Kind, payload: Rec): Promise<Delivery> {
    const envelopeId = this.#id('env');
    const type = kind === 'command' ? 'slash_commands' : kind === 'interactive' ? 'interactive' : 'events_api';
    const ack = new Promise<unknown>((resolve, reject) => {
      const timer = realTimers.setTimeout(() => {
        this.#pendingAcks.delete(envelopeId);
        reject(new Error(`the app did not acknowledge envelope ${envelopeId} (${type}) within 5 s`));
      }, 5000);
      this.#pendingAcks.set(envelopeId, (value) => {
        realTimers.clearTimeout(timer);
        resolve(value);
      });
    });
    const envelope = { envelope_id: envelopeId, type, payload, accepts_response_payload: kind !== 'event', retry_attempt: 0, retry_reason: '' };
    // Slack spreads envelopes over an app's open connections (one per replica): here in turn.
    const sockets = [...this.#sockets];
    sockets[this.#nextSocket++ % sockets.length]!.send(JSON.stringify(envelope));
    return { status: 200, body: await ack };
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const ticket = (req.url ?? '').replace(/^\/socket\//, '');
    if (!this.#tickets.has(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
      return;
    }
    this.#tickets.delete(ticket);
    this.#wss!.handleUpgrade(req, socket, head, (ws) => {
      this.#sockets.add(ws);
      ws.on('message', (data) => {
        let message: { envelope_id?: string; payload?: unknown };
        try {
          message = JSON.parse(String(data)) as typeof message;
        } catch {
          return;
        }
        if (message.envelope_id) this.#pendingAcks.get(message.envelope_id)?.(message.payload ?? {});
        this.#pendingAcks.delete(message.envelope_id ?? '');
      });
      ws.on('close', () => {
        this.#sockets.delete(ws);
        this.#changed();
      });
      ws.send(JSON.stringify({ type: 'hello', num_connections: this.#sockets.size, connection_info: { app_id: 'A0PICTOR' }, debug_info: { host: 'fake' } }));
      this.#changed();
    });
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', this.#url).pathname;
    if (req.method === 'POST' && path.startsWith('/api/')) return this.#api(path.slice('/api/'.length), req, res);
    if (req.method === 'GET' && path.startsWith('/files-pri/')) return this.#download(path, req, res);
    if (req.method === 'POST' && path.startsWith('/upload/v1/')) return this.#upload(path.slice('/upload/v1/'.length), req, res);
    if (req.method === 'POST' && path.startsWith('/response/')) {
      const body = await readBody(req);
      if (this.#responseUrlFailure) {
        this.refusedResponses++;
        this.#changed();
        if (this.#responseUrlFailure === 429) {
          res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '1' });
          res.end('rate_limited');
          return;
        }
        const html = this.#responseUrlFailure !== 500;
        res.writeHead(this.#responseUrlFailure, { 'content-type': html ? 'text/html' : 'text/plain' });
        res.end(html ? `<html><body><h1>${this.#responseUrlFailure}</h1></body></html>` : 'rollup_error');
        return;
      }
      if (this.#responseUrlStatus) {
        this.refusedResponses++;
        this.#changed();
        if (this.#responseUrlStatus === 200) return json(res, 200, { ok: false, error: 'expired_url' });
        res.writeHead(this.#responseUrlStatus, { 'content-type': 'text/plain' });
        res.end('expired_url');
        return;
      }
      this.responses.push({ id: path.slice('/response/'.length), body: JSON.parse(body.toString('utf8') || '{}') as Rec, at: Date.now() });
      this.#changed();
      if (this.#responseUrlAnswersLost) {
        res.socket?.destroy();
        return;
      }
      return json(res, 200, { ok: true });
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  }

  #download(path: string, req: IncomingMessage, res: ServerResponse): void {
    const id = /^\/files-pri\/[^-/]+-([^/]+)\//.exec(path)?.[1];
    // A token acts in its own workspace only: team A's token gets the login page for team B's files.
    const owner = this.#live(bearerOf(req));
    const authorized = owner !== undefined && path.startsWith(`/files-pri/${owner.teamId}-`);
    this.downloads.push({ fileId: id, path, authorized, at: Date.now() });
    this.#changed();
    const file = id ? this.files.get(id) : undefined;
    if (!authorized) {
      // What Slack does without a valid token: a login page, status 200.
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to Slack</body></html>');
      return;
    }
    if (!file?.bytes) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('file not found');
      return;
    }
    res.writeHead(200, { 'content-type': file.mimetype, 'content-length': String(file.bytes.length) });
    res.end(file.bytes);
  }

  async #upload(id: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const file = this.files.get(id);
    const body = await readBody(req);
    if (!file || file.state !== 'awaiting_upload') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('upload url not found');
      return;
    }
    let bytes = body;
    const contentType = req.headers['content-type'] ?? '';
    if (contentType.startsWith('multipart/form-data')) {
      const form = await new Request('http://fake/upload', { method: 'POST', headers: { 'content-type': contentType }, body }).formData();
      const part = [...form.values()].find((v): v is File => typeof v !== 'string');
      bytes = part ? Buffer.from(await part.arrayBuffer()) : Buffer.alloc(0);
    }
    file.bytes = bytes;
    file.size = bytes.length;
    file.state = 'uploaded';
    this.uploads.push({ fileId: id, bytes: bytes.length, authorization: req.headers.authorization, at: Date.now() });
    this.#changed();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`OK - ${bytes.length}`);
  }

  async #api(method: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const args = parseApiArgs(body, req.headers['content-type']);
    const held = this.#held.get(method);
    if (held) {
      held.arrived++;
      this.#changed();
      await held.released;
    }
    const at = Date.now();
    const token = bearerOf(req) ?? (typeof args.token === 'string' ? args.token : undefined);
    const workspace = method === 'apps.connections.open' || method === 'oauth.v2.access' ? undefined : this.#live(token);
    const record = (status: number, payload: Rec) => {
      const team = workspace?.teamId;
      this.calls.push({ method, args, at, status, ok: payload.ok === true, error: typeof payload.error === 'string' ? payload.error : undefined, team });
      this.#changed();
    };
    if (method === 'oauth.v2.access') {
      // No token: the app's client id and secret (in the body, or HTTP Basic) and the code.
      const payload = this.#exchangeCode(args, req.headers.authorization);
      record(200, payload);
      return json(res, 200, payload);
    }
    if (method === 'apps.connections.open' ? token !== this.appToken : !workspace) {
      this.unauthorized.push({ method, at });
      const payload = { ok: false, error: !token ? 'not_authed' : this.#revoked.has(token) ? 'token_revoked' : 'invalid_auth' };
      record(200, payload);
      return json(res, 200, payload);
    }
    const fault = this.#faults.get(method);
    if (fault && fault.count > 0 && (!fault.match || fault.match(args)) && fault.cut) {
      fault.count--;
      // The call is seen either way; carried out, it is answered 200 on Slack's side, else with nothing (status 0).
      record(carriedOut(fault.cut) ? 200 : 0, carriedOut(fault.cut) ? this.#call(method, args, workspace, token) : {});
      cutConnection(req);
      return;
    }
    if (fault && fault.count > 0 && (!fault.match || fault.match(args))) {
      fault.count--;
      const payload = { ok: false, error: fault.error, ...fault.extra };
      record(fault.status, payload);
      return json(res, fault.status, payload, fault.status === 429 ? { 'retry-after': String(fault.retryAfterSec) } : {});
    }
    if (TIER3_METHODS.has(method) && this.tier3PerMinute > 0) {
      const counted = `${workspace?.teamId ?? ''}/${method}`;
      const calls = this.#tier3Calls.get(counted) ?? [];
      while (calls.length > 0 && at - calls[0]! >= MINUTE_MS) calls.shift();
      if (calls.length >= this.tier3PerMinute) {
        this.tier3Refusals.push({ method, at });
        if (WRITE_METHODS.has(method)) this.writes.push({ method, channel: String(args.channel ?? ''), at, rejected: true });
        const payload = { ok: false, error: 'ratelimited' };
        record(429, payload);
        return json(res, 429, payload, { 'retry-after': String(Math.max(1, Math.ceil((calls[0]! + MINUTE_MS - at) / 1000))) });
      }
      calls.push(at);
      this.#tier3Calls.set(counted, calls);
    }
    if (WRITE_METHODS.has(method)) {
      const channel = String(args.channel ?? args.channel_id ?? '');
      if (channel) {
        const last = this.#lastWriteAt.get(channel);
        const rejected = this.channelWriteIntervalMs > 0 && last !== undefined && at - last < this.channelWriteIntervalMs;
        this.writes.push({ method, channel, at, rejected });
        if (rejected) {
          const payload = { ok: false, error: 'ratelimited' };
          record(429, payload);
          return json(res, 429, payload, { 'retry-after': String(Math.max(1, Math.ceil(this.channelWriteIntervalMs / 1000))) });
        }
        this.#lastWriteAt.set(channel, at);
      }
    }
    const payload = this.#call(method, args, workspace, token);
    record(200, payload);
    return json(res, 200, payload);
  }

  #live(token: string | undefined): FakeWorkspace | undefined {
    return token && !this.#revoked.has(token) ? (this.#workspaces.get(token) ?? this.#functionTokens.get(token)) : undefined;
  }

  /** `oauth.v2.access`: an authorization code for a bot token of the code's workspace (a new install, or the same token again). */
  #exchangeCode(args: Rec, authorization: string | undefined): Rec {
    const basic = authorization?.startsWith('Basic ') ? Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':') : [];
    const clientId = typeof args.client_id === 'string' ? args.client_id : basic[0];
    const clientSecret = typeof args.client_secret === 'string' ? args.client_secret : basic[1];
    if (clientId !== this.clientId) return { ok: false, error: 'invalid_client_id' };
    if (clientSecret !== this.clientSecret) return { ok: false, error: 'bad_client_secret' };
    const code = typeof args.code === 'string' ? this.#codes.get(args.code) : undefined;
    if (!code || code.used || Date.now() - code.issuedAt > CODE_LIFETIME_MS) return { ok: false, error: 'invalid_code' };
    if (typeof args.redirect_uri === 'string' && args.redirect_uri !== code.redirectUri) return { ok: false, error: 'bad_redirect_uri' };
    code.used = true;
    let workspace = this.workspaceOf(code.teamId);
    if (!workspace) {
      const suffix = code.teamId.replace(/^[TE]0?/, '');
      workspace = { teamId: code.teamId, orgWide: code.orgWide, botToken: `xoxb-${suffix}-${randomBytes(12).toString('hex')}`, botUserId: `U0BOT${suffix}`, botId: `B0BOT${suffix}` };
      this.#workspaces.set(workspace.botToken, workspace);
    }
    this.#changed();
    return {
      ok: true,
      access_token: workspace.botToken,
      token_type: 'bot',
      scope: 'commands,chat:write,chat:write.public,files:read,files:write,im:write,app_mentions:read,channels:history,groups:history,im:history,mpim:history',
      bot_user_id: workspace.botUserId,
      app_id: 'A0PICTOR',
      team: code.orgWide ? null : { name: `Team ${code.teamId}`, id: code.teamId },
      enterprise: code.orgWide ? { name: `Org ${code.teamId}`, id: code.teamId } : null,
      authed_user: { id: 'U0INSTALLER' },
      is_enterprise_install: code.orgWide,
    };
  }

  #call(method: string, args: Rec, workspace: FakeWorkspace | undefined, token?: string): Rec {
    const fail = (error: string, extra: Rec = {}) => ({ ok: false, error, ...extra });
    const str = (key: string) => (typeof args[key] === 'string' ? (args[key] as string) : undefined);
    const channel = str('channel') ?? str('channel_id');
    switch (method) {
      case 'auth.test':
        return { ok: true, url: 'https://pictor-test.slack.com/', team: 'Pictor Test', user: 'pictor', team_id: workspace!.teamId, user_id: workspace!.botUserId, bot_id: workspace!.botId, is_enterprise_install: workspace!.orgWide === true };
      case 'apps.connections.open': {
        const ticket = randomBytes(8).toString('hex');
        this.#tickets.add(ticket);
        this.connectionsOpened++;
        return { ok: true, url: `${this.#url.replace(/^http/, 'ws')}/socket/${ticket}` };
      }
      case 'conversations.open': {
        const users = str('users')?.split(',') ?? [];
        if (users.length !== 1 || !/^[UW][A-Z0-9]+$/.test(users[0]!)) return fail('user_not_found');
        return { ok: true, channel: { id: this.dmOf(users[0]!) } };
      }
      case 'chat.postMessage': {
        if (!channel) return fail('channel_not_found');
        if (this.#archived.has(channel)) return fail('is_archived');
        if (this.#notMember.has(channel)) return fail('not_in_channel');
        const text = str('text') ?? '';
        if (!text && !args.blocks) return fail('no_text');
        const reason = checkBlocks(args.blocks, 'message');
        if (reason) return fail('invalid_blocks', { errors: [reason] });
        const message: FakeMessage = {
          channel,
          ts: this.#ts(),
          thread_ts: str('thread_ts'),
          user: this.botUserId,
          bot_id: this.botId,
          text,
          blocks: args.blocks as unknown[] | undefined,
          postedAt: Date.now(),
          edits: [],
        };
        this.messages.push(message);
        return { ok: true, channel, ts: message.ts, message: messageObject(message, this.teamId) };
      }
      case 'chat.update': {
        if (!channel) return fail('channel_not_found');
        if (this.#archived.has(channel)) return fail('is_archived');
        if (this.#notMember.has(channel)) return fail('not_in_channel');
        const message = this.messages.find((m) => m.channel === channel && m.ts === str('ts'));
        if (!message) return fail('message_not_found');
        if (message.user !== this.botUserId) return fail('cant_update_message');
        const reason = checkBlocks(args.blocks, 'message');
        if (reason) return fail('invalid_blocks', { errors: [reason] });
        message.text = str('text') ?? message.text;
        if (args.blocks !== undefined) message.blocks = args.blocks as unknown[];
        message.edits.push({ at: Date.now(), text: message.text, blocks: message.blocks });
        return { ok: true, channel, ts: message.ts, text: message.text };
      }
      case 'chat.getPermalink': {
        // Slack: "hundreds of requests per minute"; not a write.
        const message = this.messages.find((m) => m.channel === channel && m.ts === str('message_ts'));
        if (!channel) return fail('channel_not_found');
        if (!message) return fail('message_not_found');
        const link = `https://pictor-test.slack.com/archives/${channel}/p${message.ts.replace('.', '')}`;
        const inThread = message.thread_ts && message.thread_ts !== message.ts;
        return { ok: true, channel, permalink: inThread ? `${link}?thread_ts=${message.thread_ts}&cid=${channel}` : link };
      }
      case 'chat.delete': {
        if (!channel) return fail('channel_not_found');
        const index = this.messages.findIndex((m) => m.channel === channel && m.ts === str('ts'));
        if (index < 0) return fail('message_not_found');
        if (this.messages[index]!.user !== this.botUserId) return fail('cant_delete_message');
        this.messages.splice(index, 1);
        return { ok: true, channel, ts: str('ts') };
      }
      case 'files.delete': {
        const file = this.files.get(str('file') ?? '');
        if (!file) return fail('file_not_found');
        if (file.user !== this.botUserId) return fail('cant_delete_file');
        this.files.delete(file.id);
        for (const message of this.messages) if (message.files) message.files = message.files.filter((f) => f.id !== file.id);
        return { ok: true };
      }
      case 'chat.postEphemeral': {
        if (!channel) return fail('channel_not_found');
        if (this.#notMember.has(channel)) return fail('not_in_channel');
        const user = str('user');
        if (!user) return fail('user_not_in_channel');
        const reason = checkBlocks(args.blocks, 'message');
        if (reason) return fail('invalid_blocks', { errors: [reason] });
        this.ephemerals.push({ channel, user, text: str('text') ?? '', blocks: args.blocks as unknown[] | undefined, thread_ts: str('thread_ts'), at: Date.now() });
        return { ok: true, message_ts: this.#ts() };
      }
      case 'users.info': {
        const user = str('user');
        if (!user || !/^[UW][A-Z0-9]+$/.test(user)) return fail('user_not_found');
        const withLocale = args.include_locale === true || args.include_locale === 'true';
        return {
          ok: true,
          user: { id: user, team_id: workspace!.teamId, name: user.toLowerCase(), real_name: user, deleted: false, is_bot: false, tz: 'Europe/Berlin', ...(withLocale ? { locale: this.#locales.get(user) ?? 'en-US' } : {}) },
        };
      }
      case 'usergroups.list': {
        // Slack's usergroup objects, in no particular order; members only with include_users; disabled groups only with include_disabled.
        const flag = (key: string) => args[key] === true || args[key] === 'true' || args[key] === '1' || args[key] === 1;
        const groups = (this.#userGroups.get(workspace!.teamId) ?? []).filter((g) => !g.disabled || flag('include_disabled'));
        return {
          ok: true,
          usergroups: groups.map((g) => ({
            id: g.id,
            team_id: workspace!.teamId,
            is_usergroup: true,
            name: g.name,
            description: '',
            handle: g.handle,
            is_external: false,
            date_create: 1446598059,
            date_update: 1446670362,
            date_delete: g.disabled ? 1446748865 : 0,
            auto_type: null,
            created_by: 'U0CREATOR',
            updated_by: 'U0CREATOR',
            deleted_by: null,
            prefs: { channels: [], groups: [] },
            ...(flag('include_count') && { user_count: String(g.users.length) }),
            ...(flag('include_users') && { users: [...g.users] }),
          })),
        };
      }
      case 'views.publish': {
        const user = str('user_id');
        if (!user) return fail('invalid_arguments');
        const view = args.view as Rec;
        const reason = checkView(view);
        if (reason) return fail('invalid_arguments', { response_metadata: { messages: [reason] } });
        if (view.type !== 'home') return fail('invalid_arguments', { response_metadata: { messages: ['views.publish takes a home view'] } });
        const key = `${workspace!.teamId}:${user}`;
        this.homes.set(key, { view, publishedAt: Date.now(), count: (this.homes.get(key)?.count ?? 0) + 1 });
        return { ok: true, view: { ...view, id: this.#id('V'), team_id: workspace!.teamId } };
      }
      case 'functions.completeSuccess':
      case 'functions.completeError': {
        const run = this.functionRuns.find((r) => r.executionId === str('function_execution_id'));
        if (!run) return fail('function_execution_not_found');
        // Only the execution's own token completes it (Bolt's `complete` and `fail` use it).
        if (token !== run.token) return fail('not_allowed_token_type');
        if (run.outcome) return fail('function_execution_already_completed');
        if (method === 'functions.completeError') {
          if (!str('error')) return fail('invalid_arguments');
          run.outcome = { ok: false, error: str('error')!, at: Date.now() };
        } else {
          run.outcome = { ok: true, outputs: (args.outputs ?? {}) as Rec, at: Date.now() };
        }
        // The execution has ended: its token no longer acts.
        this.#revoked.add(run.token);
        return { ok: true };
      }
      case 'views.open': {
        const trigger = this.#triggers.get(str('trigger_id') ?? '');
        if (!trigger) return fail('invalid_trigger_id');
        if (trigger.used || Date.now() - trigger.issuedAt > this.triggerLifetimeMs) return fail('expired_trigger_id');
        trigger.used = true;
        const view = args.view as Rec;
        const reason = checkView(view);
        if (reason) return fail('invalid_arguments', { response_metadata: { messages: [reason] } });
        const opened: FakeView = { id: this.#id('V'), user: trigger.user, view, openedAt: Date.now() };
        this.views.push(opened);
        return { ok: true, view: { ...view, id: opened.id, team_id: this.teamId, state: { values: {} } } };
      }
      case 'files.getUploadURLExternal': {
        const filename = str('filename');
        const length = Number(args.length);
        if (!filename || !Number.isInteger(length) || length <= 0) return fail('invalid_arguments');
        const id = this.#id('F');
        const url = `${this.#url}/files-pri/${this.teamId}-${id}/${encodeURIComponent(filename)}`;
        this.files.set(id, {
          id,
          name: filename,
          title: filename,
          mimetype: guessMime(filename.split('.').pop()?.toLowerCase() ?? ''),
          filetype: filename.split('.').pop()?.toLowerCase() ?? 'binary',
          size: length,
          bytes: undefined,
          user: this.botUserId,
          url_private: url,
          url_private_download: `${url}?download=1`,
          channels: [],
          state: 'awaiting_upload',
          declaredLength: length,
          created: Math.floor(Date.now() / 1000),
        });
        return { ok: true, upload_url: `${this.#url}/upload/v1/${id}`, file_id: id };
      }
      case 'files.completeUploadExternal': {
        const list = args.files;
        if (!Array.isArray(list) || list.length === 0) return fail('invalid_arguments');
        const files: FakeFile[] = [];
        for (const entry of list as { id?: string; title?: string }[]) {
          const file = this.files.get(entry.id ?? '');
          if (!file || file.state !== 'uploaded') return fail('file_not_found');
          if (file.declaredLength !== undefined && file.declaredLength !== file.bytes?.length) return fail('file_upload_size_mismatch');
          if (entry.title) file.title = entry.title;
          files.push(file);
        }
        if (channel && this.#notMember.has(channel)) return fail('not_in_channel');
        if (channel && this.#archived.has(channel)) return fail('is_archived');
        for (const file of files) file.state = 'shared';
        if (channel) {
          const message: FakeMessage = {
            channel,
            ts: this.#ts(),
            thread_ts: str('thread_ts'),
            user: this.botUserId,
            bot_id: this.botId,
            text: str('initial_comment') ?? '',
            files,
            postedAt: Date.now(),
            edits: [],
          };
          for (const file of files) file.channels.push(channel);
          this.messages.push(message);
        }
        return { ok: true, files: files.map((f) => ({ id: f.id, title: f.title })) };
      }
      case 'files.info': {
        const file = this.files.get(str('file') ?? '');
        if (!file || file.state === 'awaiting_upload') return fail('file_not_found');
        return { ok: true, file: fileObject(file, this.teamId) };
      }
      case 'conversations.history': {
        if (!channel) return fail('channel_not_found');
        const latest = str('latest');
        const inclusive = args.inclusive === 'true' || args.inclusive === true;
        const limit = Number(args.limit ?? 100);
        const list = this.topLevel(channel)
          .filter((m) => !latest || Number(m.ts) < Number(latest) || (inclusive && m.ts === latest))
          .reverse()
          .slice(0, limit);
        return { ok: true, messages: list.map((m) => messageObject(m, this.teamId)), has_more: false };
      }
      case 'conversations.replies': {
        if (!channel) return fail('channel_not_found');
        const ts = str('ts');
        const parent = this.messages.find((m) => m.channel === channel && m.ts === ts);
        if (!parent) return fail('thread_not_found');
        const latest = str('latest');
        const inclusive = args.inclusive === 'true' || args.inclusive === true;
        const thread = [parent, ...this.replies(channel, parent.ts)].filter(
          (m) => !latest || Number(m.ts) < Number(latest) || (inclusive && m.ts === latest),
        );
        return { ok: true, messages: thread.slice(0, Number(args.limit ?? 1000)).map((m) => messageObject(m, this.teamId)), has_more: false };
      }
      default:
        return fail('unknown_method');
    }
  }

  #responseUrl(): string {
    return `${this.#responseUrlBase ?? this.#url}/response/${this.#id('R')}`;
  }

  #trigger(user: string): string {
    const id = `${++this.#seq}.${randomBytes(6).toString('hex')}`;
    this.#triggers.set(id, { issuedAt: Date.now(), used: false, user });
    return id;
  }

  #ts(): string {
    return `${Math.floor(Date.now() / 1000)}.${String(++this.#tsSeq).padStart(6, '0')}`;
  }

  #id(prefix: string): string {
    return `${prefix}${String(++this.#seq).padStart(6, '0')}${randomBytes(2).toString('hex').toUpperCase()}`;
  }

  #changed(): void {
    this.#events.emit('change');
  }
}

/** Overrides of the signature, for tests of forged and stale requests. */
export interface SignOverride {
  secret?: string;
  timestampSec?: number;
  signature?: string;
}

function json(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(payload));
}

function guessMime(filetype: string): string {
  switch (filetype) {
    case 'png':
      return 'image/png';
    case 'jpg':
    case 'jpeg':
      return 'image/jpeg';
    case 'webp':
      return 'image/webp';
    case 'gif':
      return 'image/gif';
    default:
      return 'application/octet-stream';
  }
}
