import { setMaxListeners } from 'node:events';
import { Client, Events, REST, RESTEvents, type WebSocketOptions } from 'discord.js';
import type { LoggerLike, ValidationError } from 'pictor';
import { operatorMustFix, scrubSecrets, timerMsOf } from 'pictor/internal';
import { describeDiscordUnreachable, discordRefusedToken, refusedByStatus, tokenRefused } from './unreachable.js';
import type { BotContext, DiscordJobRunner } from './bot-context.js';
import type { QuotaStore } from '../runner/index.js';
import { loadCommands } from './commands/index.js';
import { DISCORD_API_BASE_URL, DISCORD_CDN_HOSTS } from './discord-facts.js';
import { defaultDownloadPolicy } from './download-images.js';
import { gatewayConnection } from './gateway-connection.js';
import type { GatewayLeaseOptions } from './gateway-lease.js';
import { hookInteractionAction } from './interaction-action.js';
import { gatewayIntake, InteractionClaims } from './interaction-claims.js';
import { ackDeadlineMsOf, HttpInitialResponses, startInteractionsEndpoint, useTokenWithoutGateway, type InteractionsEndpoint, type InteractionsEndpointOptions } from './interactions-endpoint.js';
import { JobRecordStore } from './JobRecordStore.js';
import { askHolderToCancel, cancelWhenAsked } from '../cancel-notices.js';
import { startSweeper, type BotState } from '../state/index.js';
import { FirstAnswersInFlight } from './first-answers-first.js';
import { createWebhookRest, discordAgent, makeRequestWithEncodedForms, MAX_FIRST_ANSWER_CONNECTIONS, withFirstAnswerPool, withPostsSentOnce } from './rest-request.js';
import { createInteractionRouter } from './route-interaction.js';
import { chargesOf, sweepInterrupted } from './sweep-interrupted.js';
import { discordAuditPoster } from './audit-poster.js';
import { stopOnce } from '../runner/stop-once.js';
import { InFlight } from '../runner/in-flight.js';

export interface StartDiscordBotOptions {
  /** The bot token (a secret: never logged or shown). */
  token: string;
  /** When given, checked against the application the token belongs to. */
  applicationId?: string | undefined;
  /** Discord's REST base without `/v10`. Default `https://discord.com/api`. */
  apiBaseUrl?: string | undefined;
  runner: DiscordJobRunner;
  /** The ledger the runner charges (its usage records): the sweep's "stopped" says what the job was charged. */
  ledger?: Pick<QuotaStore, 'usage' | 'reconcile' | 'activeJobs'> | undefined;
  /**
   * The bots' state (the data folder, or Redis shared by replicas): job records, kept images, drafts, interactions
   * taken. Not closed by `stop()`: its opener closes it after.
   */
  state: BotState;
  /** Members with one of these roles may cancel anyone's job (as may the server's Administrators). */
  adminRoleIds?: readonly string[] | undefined;
  /** Take commands in DMs and user installs (`DISCORD_USER_INSTALLS`), on the user's own budget. Default false: refused there. */
  userInstalls?: boolean | undefined;
  /** Hosts input images may be downloaded from. Default Discord's CDN. */
  allowedAttachmentHosts?: readonly string[] | undefined;
  logger: LoggerLike;
  /** Each input image must be under this. Default the spec's limit (50 MB). */
  maxInputImageBytes?: number | undefined;
  /** How long `stop()` waits for replies still being shown, in ms (0 up to 2^31 − 1). Default 10 s. */
  stopGraceMs?: number | undefined;
  /**
   * The waits between a reply's tries of a final message Discord failed on or did not answer, in ms (each 0 up to
   * 2^31 − 1; the last one repeats). Default 1 s, then 3 s. A stop ends a wait still running once it waits no longer
   * for the replies being shown.
   */
  replyRetryDelaysMs?: readonly number[] | undefined;
  /** How long to wait for Discord's READY at login. Default 60 s. */
  loginTimeoutMs?: number | undefined;
  /** Called for every write of the bot Discord answered with an error status (429, 5xx, 4xx), retried or not (for metrics). */
  onWriteRefused?: (() => void) | undefined;
  /**
   * Take interactions over HTTP at `/interactions` on this port (checked with the public key) instead of the gateway.
   * `ackDeadlineMs` (default Discord's 3 s): how long Discord waits for an initial response, the one number of the
   * POST's hold and of every wait before the first answer. More than the answer's own trip (500 ms) and at most
   * 2^31 − 1: anything else is a RangeError naming it, before the bot connects.
   */
  interactions?: Pick<InteractionsEndpointOptions, 'publicKey' | 'port' | 'host' | 'ackDeadlineMs'> | undefined;
  /**
   * On the gateway, with several processes on one Redis: only the holder of this lease connects; the others stand by
   * and one takes over when the holder stops or dies (see gateway-lease.ts).
   */
  gatewayLease?: Omit<GatewayLeaseOptions, 'logger'> | undefined;
  /**
   * Called once when the bot can no longer run after it started: Discord refused the token — at a standby's takeover,
   * closing the live session with 4004, or answering 401 to a request made with it (an interaction's own token
   * refused, 50027, is not that) — with the ValidationError naming DISCORD_TOKEN that a refused token at start rejects
   * with; or closed the live session with another code discord.js never recovers from (4010 to 4014: the setting at
   * fault named, `closedForGood`). The first reason is the one. On the gateway it is off it, has given the lease back
   * and stands by no more; over HTTP it still answers; either way it is no longer `online()`, and the caller stops it
   * (`npm start` exits 2, as at start).
   */
  onFatal?: ((error: ValidationError) => void) | undefined;
}

export interface DiscordBot {
  /**
   * The discord.js client of the current gateway login (of the last one once it left; over HTTP, the one client).
   * Undefined while a process that started as a standby has not logged in yet. Each login has a client of its own.
   */
  readonly client: Client | undefined;
  /** The bot's REST client, with its token, for the whole life of the bot (across gateway logins). */
  rest: REST;
  /** The REST client that edits interaction replies (its `rateLimited` events show waits for Discord's per-token limits). */
  webhookRest: REST;
  /** Where interactions are taken over HTTP (`…/interactions`); undefined on the gateway. */
  interactionsUrl: string | undefined;
  /** Connected to the gateway (or standing by for it), or (over HTTP) taking interactions; false once `onFatal` was called. */
  online(): boolean;
  /**
   * With a gateway lease: off the gateway and the lease given up as soon as another process stands by, so that one
   * connects and takes the new interactions, while the replies of running jobs go on over REST (they never need the
   * gateway). Nothing otherwise (see GatewayConnection.handOver).
   */
  handOver(): Promise<void>;
  /**
   * Stops taking interactions, waits (up to `stopGraceMs`) for job replies in
   * flight, and disconnects. Call `runner.shutdown()` first so running jobs
   * report their end to their replies. `graceMs` (default `stopGraceMs`): how
   * long to wait for those replies; 0 leaves at once (a process that must go now). A grace that is not a number of
   * ms from 0 to 2^31 − 1 is a RangeError naming it, and nothing is stopped. `until` (a time as `Date.now()`): every
   * wait of the stop (for a sweep, for Redis while leaving the gateway, for the replies) ends by then at the latest,
   * whatever the grace (a process that must close its stores after). A second call gets the first one's stop (its
   * grace), ended by the earlier of their `until`s (`stopOnce`), as Slack's.
   */
  stop(options?: { graceMs?: number | undefined; until?: number | undefined }): Promise<void>;
}

/**
 * Logs in and answers /imagine, /edit, the "Edit image" menu and the job
 * buttons. Commands are registered separately (`deploy-commands.ts`).
 */
export async function startDiscordBot(options: StartDiscordBotOptions): Promise<DiscordBot> {
  const { token, logger } = options;
  const stopGraceMs = timerMsOf('stopGraceMs', options.stopGraceMs ?? 10_000);
  const replyRetryDelaysMs = options.replyRetryDelaysMs?.map((ms, i) => timerMsOf(`replyRetryDelaysMs[${i}]`, ms));
  if (replyRetryDelaysMs?.length === 0) throw new RangeError('replyRetryDelaysMs must hold at least one delay (leave it out for the default)');
  // Refused before anything is started, as a stopGraceMs is (the endpoint checks it again with the same call).
  if (options.interactions) ackDeadlineMsOf(options.interactions.ackDeadlineMs);
  // With Redis every replica sees every job; else the data folder has them.
  const { state } = options;
  const store = new JobRecordStore({ state, logger });
  const api = (options.apiBaseUrl ?? DISCORD_API_BASE_URL).replace(/\/+$/, '');
  // First answers go out over connections of their own, never behind the bot's other requests (rest-request.ts);
  // jobs' edits, uploads and starts go after the first answers asked before them (first-answers-first.ts).
  const firstAnswers = new FirstAnswersInFlight();
  const viaWire = withFirstAnswerPool(makeRequestWithEncodedForms, discordAgent(MAX_FIRST_ANSWER_CONNECTIONS), firstAnswers);
  // Over HTTP, the first answer to an interaction is the answer to Discord's POST (see interactions-endpoint.ts).
  const httpResponses = options.interactions ? new HttpInitialResponses() : undefined;
  // A post that makes a message is sent once, whatever Discord answers (rest-request.ts): a 5xx answer to one is a write refused.
  const failedPost = () => options.onWriteRefused?.();
  const makeRequest = withPostsSentOnce(httpResponses ? httpResponses.wrap(viaWire) : viaWire, failedPost);
  const restOptions = { api, timeout: 60_000, makeRequest, agent: discordAgent() as never };
  /**
   * Logs Discord's rate-limit waits of a REST client, counts the writes Discord refused, and stops the bot when Discord
   * refuses the token of a request made with the bot token (`refusedByStatus`, the rule of `discordRefusedToken`: a 401;
   * `request.data.auth`: the token was sent — an interaction's webhook, sent without it, says nothing of the bot token
   * when refused).
   */
  const watched = (rest: REST) => {
    rest.on(RESTEvents.RateLimited, (info) =>
      logger.debug({ route: info.route, method: info.method, timeToReset: info.timeToReset, global: info.global }, 'waiting for a Discord rate limit'),
    );
    const { onWriteRefused } = options;
    rest.on(RESTEvents.Response, (request, response) => {
      if (onWriteRefused && request.method !== 'GET' && response.status >= 400) onWriteRefused();
      const refused = request.data.auth ? refusedByStatus(response.status) : undefined;
      if (refused) refusedOverRest(refused);
    });
    return rest;
  };
  /** Set once `onFatal` was called: the bot can no longer run, and says so once. */
  let failed = false;
  const fail = (error: ValidationError) => {
    if (failed) return;
    failed = true;
    options.onFatal?.(error);
  };
  /** Set once the start succeeded: a token refused before is the start's to report (it rejects). */
  let started = false;
  /** Discord refused the bot token to a request made with it (`how`, as `refusedByStatus` says it): on the gateway, off it and the lease given back first. */
  const refusedOverRest = (how: string) => {
    if (!started || failed) return;
    if (gateway) void gateway.tokenRefusedOverRest(how);
    else fail(tokenRefused(how));
  };
  // Outlives every gateway login (each has a client of its own, whose REST discord.js's destroy takes the token from):
  // the crash sweep, audit posts, channel messages of the replies in flight and admin lookups use this one.
  const botRest = watched(new REST(restOptions).setToken(token));
  // Interactions' webhooks (their tokens, not the bot's): replies, follow-ups and their edits.
  const webhookRest = watched(createWebhookRest(api, firstAnswers, failedPost));
  /** Stops the sweeps of the rate-limit buckets of the REST clients that outlive the logins (the bot stopped, or never started). */
  const retireBotRest = () => {
    for (const rest of [botRest, webhookRest]) {
      rest.clearHashSweeper();
      rest.clearHandlerSweeper();
    }
  };
  // The replies being shown and the ends the sweep records: a stop's grace waits for them (`InFlight.settled`).
  const inFlight = new InFlight();
  // Aborted once the stop waits no longer for those replies: a reply's wait before another try ends (ReplyTarget).
  const repliesGivenUp = new AbortController();
  // Every reply waiting to try again listens to it (many in a Discord outage): no listener leak to warn of.
  setMaxListeners(0, repliesGivenUp.signal);
  const downloadPolicy = defaultDownloadPolicy(options.allowedAttachmentHosts ?? DISCORD_CDN_HOSTS);
  if (options.maxInputImageBytes !== undefined) downloadPolicy.maxBytes = Math.min(options.maxInputImageBytes, downloadPolicy.maxBytes);
  // With Redis, a Cancel pressed on another replica reaches the one running the job (see cancel-notices.ts). A start
  // that fails here (Redis refused the subscription) leaves no REST client sweeping behind it.
  try {
    await cancelWhenAsked(store.records, async (key, by) => {
      const runnerJobId = (await store.get(key))?.runnerJobId;
      if (runnerJobId) options.runner.cancel(runnerJobId, by);
    });
  } catch (error) {
    retireBotRest();
    const why = scrubSecrets(error instanceof Error ? error.message : String(error), [token]);
    throw new Error(`could not listen for Cancel presses passed on by other processes: ${why}`, { cause: error });
  }
  const ctx: BotContext = {
    runner: options.runner,
    store,
    ledger: options.ledger,
    askHolderToCancel: (key, by) => askHolderToCancel(store.records, key, by),
    logger,
    webhookRest,
    botRest,
    firstAnswers,
    adminRoleIds: options.adminRoleIds ?? [],
    userInstalls: options.userInstalls ?? false,
    downloadPolicy,
    track: (done) => inFlight.track(done),
    repliesGivenUp: repliesGivenUp.signal,
    replyRetryDelaysMs,
  };
  // The audit channels of this process's servers: the runner batches the entries, this posts them with the bot's REST client.
  options.runner.audit.setPoster('discord', discordAuditPoster(botRest));
  const route = createInteractionRouter(ctx, loadCommands());
  // An interaction id is taken once, by every replica and across restarts, before anything is answered: over HTTP by
  // the endpoint (a replayed POST is refused), on the gateway here (two replicas that both hold a session for a moment
  // — a lease Redis forgot — run it once). One intake, the same claims (interaction-claims.ts).
  const taken = state.store.space(state.spaces.discordInteractions);
  const fromGateway = options.interactions ? undefined : gatewayIntake(new InteractionClaims(taken, logger), route);
  let accepting = true;
  /** A discord.js client with the bot's handlers: one for each gateway login, or the one that takes interactions over HTTP. */
  const newClient = (ws: WebSocketOptions = {}) => {
    const client = new Client({ intents: [], ws, rest: restOptions });
    hookInteractionAction(client);
    watched(client.rest);
    client.on(Events.InteractionCreate, (interaction) => {
      if (accepting) ctx.track(fromGateway ? fromGateway(interaction) : route(interaction));
    });
    client.on(Events.Error, (error) => logger.error({ err: scrub(error, token) }, 'discord.js reported an error'));
    client.on(Events.Warn, (message) => logger.warn({ detail: scrubSecrets(message, [token]) }, 'discord.js warning'));
    client.on(Events.ShardDisconnect, (event, shardId) => logger.warn({ code: event.code, shardId }, 'disconnected from the Discord gateway'));
    client.on(Events.ShardResume, (shardId) => logger.info({ shardId }, 'resumed the Discord gateway session'));
    return client;
  };

  let endpoint: InteractionsEndpoint | undefined;
  const httpClient = options.interactions ? newClient() : undefined;
  const gateway = httpClient
    ? undefined
    : gatewayConnection({ newClient, token, loginTimeoutMs: options.loginTimeoutMs ?? 60_000, lease: options.gatewayLease, onFatal: fail, logger });
  const client = () => httpClient ?? gateway!.client();
  try {
    if (httpClient) await useTokenWithoutGateway(httpClient, token, options.loginTimeoutMs ?? 60_000);
    else await gateway!.start();
  } catch (error) {
    await httpClient?.destroy().catch(() => {});
    retireBotRest();
    // A token Discord refused is a setting to change (exit 2, as every other; the gateway's start rejects with it
    // already); Discord out of reach may answer next time.
    if (operatorMustFix(error)) throw error;
    const refused = httpClient ? discordRefusedToken(error) : undefined;
    if (refused) throw tokenRefused(refused);
    const why = describeDiscordUnreachable(error, options.apiBaseUrl) ?? scrubSecrets(error instanceof Error ? error.message : String(error), [token]);
    throw new Error(`could not log in to Discord: ${why}`, { cause: error });
  }
  if (options.interactions && httpResponses) {
    try {
      endpoint = await startInteractionsEndpoint({ ...options.interactions, client: httpClient!, responses: httpResponses, logger, taken });
    } catch (error) {
      await httpClient!.destroy().catch(() => {});
      retireBotRest();
      throw new Error(`could not take Discord interactions on port ${options.interactions.port}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
  const applicationId = client()?.application?.id;
  if (options.applicationId && applicationId && options.applicationId !== applicationId) {
    logger.warn({ configured: options.applicationId, actual: applicationId }, 'DISCORD_APPLICATION_ID does not match the bot token’s application');
  }
  logger.info({ user: client()?.user?.tag, applicationId, interactionsUrl: endpoint?.url }, 'Discord bot ready');
  started = true;
  // Every process sweeps: at start what the last one left, and (with Redis) the jobs of a replica whose lease lapsed.
  const sweeper = startSweeper({
    store: state.store,
    name: 'discord jobs',
    // What the ledger charged the jobs of each sweep's claim, read once for all of them (at the first ask).
    claim: async () => {
      const records = await store.claimInterrupted();
      const charges = chargesOf(ctx, records);
      return records.map((record) => ({ record, charges }));
    },
    sweep: async ({ record, charges }) => {
      await sweepInterrupted(ctx, botRest, [record], charges);
    },
    // The showing of each swept job, of every sweep: a stop's grace covers the reply being shown. A sweep still looking
    // for jobs (its storage gone) shows nothing: the sweeper's stop gives up on it, and the grace does not wait for it again.
    track: (showing) => ctx.track(showing),
    logger,
  });

  const stopBot = stopOnce();
  return {
    get client() {
      return client();
    },
    rest: botRest,
    webhookRest: ctx.webhookRest,
    interactionsUrl: endpoint?.url,
    online: () => !failed && (endpoint ? endpoint.listening() : gateway!.online()),
    async handOver() {
      if (gateway?.leased) await gateway.handOver();
    },
    async stop(stopOptions = {}) {
      const graceMs = stopOptions.graceMs === undefined ? stopGraceMs : timerMsOf('graceMs', stopOptions.graceMs);
      return stopBot(stopOptions.until, async (budget) => {
        accepting = false;
        await budget.within(sweeper.stop({ until: budget.until() }), Number.POSITIVE_INFINITY);
        await endpoint?.close();
        // With a lease, off the gateway first so a standby takes over while the replies in flight finish (over REST).
        if (gateway?.leased) await gateway.leave(budget);
        const graceEnds = Date.now() + graceMs;
        if (!(await budget.within(inFlight.settled(), graceMs))) logger.warn({ inFlight: inFlight.size }, 'stopped the Discord bot with job replies still being shown');
        // Ends the state refused (a full Redis, a full disk), written again within what is left of the same grace.
        await store.owed.payWithin(budget, graceEnds - Date.now());
        repliesGivenUp.abort();
        if (gateway) await gateway.leave(budget);
        else await httpClient!.destroy();
        retireBotRest();
        logger.info({}, 'Discord bot stopped');
      });
    },
  };
}

function scrub(error: Error, token: string): { name: string; message: string } {
  return { name: error.name, message: scrubSecrets(error.message, [token]) };
}

