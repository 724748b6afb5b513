import { Client, Events, RESTEvents, type REST } from 'discord.js';
import { type LoggerLike } from 'pictor';
import { scrubSecrets, withTimeout } from 'pictor/internal';
import { describeDiscordUnreachable } from './unreachable.js';
import type { BotContext, DiscordJobRunner } from './bot-context.js';
import { loadCommands } from './commands/index.js';
import { DISCORD_API_BASE_URL, DISCORD_CDN_HOSTS } from './discord-facts.js';
import { defaultDownloadPolicy } from './download-images.js';
import { gatewayConnection } from './gateway-connection.js';
import type { GatewayLeaseOptions } from './gateway-lease.js';
import { HttpInitialResponses, startInteractionsEndpoint, useTokenWithoutGateway, type InteractionsEndpoint } from './interactions-endpoint.js';
import { JobRecordStore } from './JobRecordStore.js';
import { askHolderToCancel, cancelWhenAsked, startSweeper, type BotState } from '../state/index.js';
import { FirstAnswersInFlight } from './first-answers-first.js';
import { createWebhookRest, discordAgent, makeRequestWithEncodedForms, MAX_FIRST_ANSWER_CONNECTIONS, withFirstAnswerPool } from './rest-request.js';
import { createInteractionRouter } from './route-interaction.js';
import { sweepInterrupted } from './sweep-interrupted.js';
import { discordAuditPoster } from './audit-poster.js';

export interface StartDiscordBotOptions {
  /** The bot token (a secret: never logged or shown). */
  token: string;
  /** When given, checked against the application the token belongs to. */
  applicationId?: string | undefined;
  /** Discord's REST base without `/v10`. Default `https://discord.com/api`. */
  apiBaseUrl?: string | undefined;
  runner: DiscordJobRunner;
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
  /** How long `stop()` waits for replies still being shown. Default 10 s. */
  stopGraceMs?: number | undefined;
  /** How long to wait for Discord's READY at login. Default 60 s. */
  loginTimeoutMs?: number | undefined;
  /** Called for every write of the bot Discord answered with an error status (429, 5xx, 4xx), retried or not (for metrics). */
  onWriteRefused?: (() => void) | undefined;
  /** Take interactions over HTTP at `/interactions` on this port (checked with the public key) instead of the gateway. */
  interactions?: { publicKey: string; port: number; host?: string | undefined } | undefined;
  /**
   * On the gateway, with several processes on one Redis: only the holder of this lease connects; the others stand by
   * and one takes over when the holder stops or dies (see gateway-lease.ts).
   */
  gatewayLease?: Omit<GatewayLeaseOptions, 'logger'> | undefined;
}

export interface DiscordBot {
  client: Client<true>;
  /** The REST client that edits interaction replies (its `rateLimited` events show waits for Discord's per-token limits). */
  webhookRest: REST;
  /** Where interactions are taken over HTTP (`…/interactions`); undefined on the gateway. */
  interactionsUrl: string | undefined;
  /** Connected to the gateway, or (over HTTP) taking interactions. */
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
   * report their end to their replies.
   */
  stop(): Promise<void>;
}

/**
 * Logs in and answers /imagine, /edit, the "Edit image" menu and the job
 * buttons. Commands are registered separately (`deploy-commands.ts`).
 */
export async function startDiscordBot(options: StartDiscordBotOptions): Promise<DiscordBot> {
  const { token, logger } = options;
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
  const makeRequest = httpResponses ? httpResponses.wrap(viaWire) : viaWire;
  const client = new Client({ intents: [], rest: { api, timeout: 60_000, makeRequest, agent: discordAgent() as never } });
  const inFlight = new Set<Promise<unknown>>();
  const downloadPolicy = defaultDownloadPolicy(options.allowedAttachmentHosts ?? DISCORD_CDN_HOSTS);
  if (options.maxInputImageBytes !== undefined) downloadPolicy.maxBytes = Math.min(options.maxInputImageBytes, downloadPolicy.maxBytes);
  // With Redis, a Cancel pressed on another replica reaches the one running the job (see cancel-notices.ts).
  await cancelWhenAsked(store.records, async (key, by) => {
    const runnerJobId = (await store.get(key))?.runnerJobId;
    if (runnerJobId) options.runner.cancel(runnerJobId, by);
  });
  const ctx: BotContext = {
    runner: options.runner,
    store,
    askHolderToCancel: (key, by) => askHolderToCancel(store.records, key, by),
    logger,
    webhookRest: createWebhookRest(api, firstAnswers),
    firstAnswers,
    adminRoleIds: options.adminRoleIds ?? [],
    userInstalls: options.userInstalls ?? false,
    downloadPolicy,
    track(done) {
      const settled = done.then(
        () => {},
        () => {},
      );
      inFlight.add(settled);
      void settled.finally(() => inFlight.delete(settled));
    },
  };
  // The audit channels of this process's servers: the runner batches the entries, this posts them with the bot's REST client.
  options.runner.audit.setPoster('discord', discordAuditPoster(client.rest));
  const route = createInteractionRouter(ctx, loadCommands());
  let accepting = true;
  client.on(Events.InteractionCreate, (interaction) => {
    if (accepting) ctx.track(route(interaction));
  });
  client.on(Events.Error, (error) => logger.error({ err: scrub(error, token) }, 'discord.js reported an error'));
  client.on(Events.Warn, (message) => logger.warn({ detail: scrubSecrets(message, [token]) }, 'discord.js warning'));
  client.on(Events.ShardDisconnect, (event, shardId) => logger.warn({ code: event.code, shardId }, 'disconnected from the Discord gateway'));
  client.on(Events.ShardResume, (shardId) => logger.info({ shardId }, 'resumed the Discord gateway session'));
  for (const rest of [client.rest, ctx.webhookRest]) {
    rest.on(RESTEvents.RateLimited, (info) =>
      logger.debug({ route: info.route, method: info.method, timeToReset: info.timeToReset, global: info.global }, 'waiting for a Discord rate limit'),
    );
    const { onWriteRefused } = options;
    if (onWriteRefused) {
      rest.on(RESTEvents.Response, (request, response) => {
        if (request.method !== 'GET' && response.status >= 400) onWriteRefused();
      });
    }
  }

  let endpoint: InteractionsEndpoint | undefined;
  const gateway = options.interactions
    ? undefined
    : gatewayConnection({ client, token, loginTimeoutMs: options.loginTimeoutMs ?? 60_000, lease: options.gatewayLease, logger });
  try {
    if (options.interactions) await useTokenWithoutGateway(client, token, options.loginTimeoutMs ?? 60_000);
    else await gateway!.start();
  } catch (error) {
    await client.destroy().catch(() => {});
    const why = describeDiscordUnreachable(error, options.apiBaseUrl) ?? scrubSecrets(error instanceof Error ? error.message : String(error), [token]);
    throw new Error(`could not log in to Discord: ${why}`, { cause: error });
  }
  if (options.interactions && httpResponses) {
    try {
      // An interaction id is taken once, by every replica and across restarts (a replayed POST is refused).
      const taken = state.store.space(state.spaces.discordInteractions);
      endpoint = await startInteractionsEndpoint({ ...options.interactions, client, responses: httpResponses, logger, taken });
    } catch (error) {
      await client.destroy().catch(() => {});
      throw new Error(`could not take Discord interactions on port ${options.interactions.port}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
  const applicationId = client.application?.id;
  if (options.applicationId && applicationId && options.applicationId !== applicationId) {
    logger.warn({ configured: options.applicationId, actual: applicationId }, 'DISCORD_APPLICATION_ID does not match the bot token’s application');
  }
  logger.info({ user: client.user?.tag, applicationId, interactionsUrl: endpoint?.url }, 'Discord bot ready');
  // Every process sweeps: at start what the last one left, and (with Redis) the jobs of a replica whose lease lapsed.
  const sweeper = startSweeper({
    store: state.store,
    name: 'discord jobs',
    claim: () => store.claimInterrupted(),
    sweep: async (record) => {
      await sweepInterrupted(ctx, client.rest, [record]);
    },
    logger,
  });
  ctx.track(sweeper.first);

  return {
    client: client as Client<true>,
    webhookRest: ctx.webhookRest,
    interactionsUrl: endpoint?.url,
    online: () => (endpoint ? endpoint.listening() : gateway!.online()),
    async handOver() {
      if (gateway?.leased) await gateway.handOver();
    },
    async stop() {
      accepting = false;
      await sweeper.stop();
      await endpoint?.close();
      // With a lease, off the gateway first so a standby takes over while the replies in flight finish (over REST).
      if (gateway?.leased) await gateway.leave();
      await withTimeout(Promise.allSettled([...inFlight]), options.stopGraceMs ?? 10_000, '').catch(() => {
        logger.warn({ inFlight: inFlight.size }, 'stopped the Discord bot with job replies still being shown');
      });
      if (gateway) await gateway.leave();
      else await client.destroy();
      logger.info({}, 'Discord bot stopped');
    },
  };
}

function scrub(error: Error, token: string): { name: string; message: string } {
  return { name: error.name, message: scrubSecrets(error.message, [token]) };
}

