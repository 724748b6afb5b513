import { Client, ClientApplication, Events, RESTEvents, Routes, type APIApplication, type REST } from 'discord.js';
import { describeUnreachable, scrubSecrets, type LoggerLike } from '../../src/index.js';
import type { BotContext, DiscordJobRunner } from './bot-context.js';
import { loadCommands } from './commands/index.js';
import { DISCORD_API_BASE_URL, DISCORD_CDN_HOSTS } from './discord-facts.js';
import { defaultDownloadPolicy } from './download-images.js';
import { GatewayLease, gatewayLeaseKey, type GatewayLeaseOptions } from './gateway-lease.js';
import { HttpInitialResponses, startInteractionsEndpoint, type InteractionsEndpoint } from './interactions-endpoint.js';
import { JobRecordStore } from './JobRecordStore.js';
import { createWebhookRest, makeRequestWithEncodedForms } from './rest-request.js';
import { createInteractionRouter } from './route-interaction.js';
import { sweepInterrupted } from './sweep-interrupted.js';
import { withTimeout } from '../../src/index.js';

export interface StartDiscordBotOptions {
  /** The bot token (a secret: never logged or shown). */
  token: string;
  /** When given, checked against the application the token belongs to. */
  applicationId?: string | undefined;
  /** Discord's REST base without `/v10`. Default `https://discord.com/api`. */
  apiBaseUrl?: string | undefined;
  runner: DiscordJobRunner;
  /** Job records (for buttons) and their images go to `<dataDir>/discord/`. */
  dataDir: string;
  /** Members with one of these roles may cancel anyone's job (as may the server's Administrators). */
  adminRoleIds?: readonly string[] | undefined;
  /** Hosts input images may be downloaded from. Default Discord's CDN. */
  allowedAttachmentHosts?: readonly string[] | undefined;
  logger: LoggerLike;
  /** Each input image must be under this. Default the spec's limit (50 MB). */
  maxInputImageBytes?: number | undefined;
  /** Jobs whose buttons keep working. Default 500. */
  keepJobs?: number | undefined;
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
  const store = await JobRecordStore.open({ dataDir: options.dataDir, maxRecords: options.keepJobs, logger });
  // Taken before any interaction arrives: every job still pending or running was left by a process that is gone.
  const interrupted = store.unfinished();
  const api = (options.apiBaseUrl ?? DISCORD_API_BASE_URL).replace(/\/+$/, '');
  // Over HTTP, the first answer to an interaction is the answer to Discord's POST (see interactions-endpoint.ts).
  const httpResponses = options.interactions ? new HttpInitialResponses() : undefined;
  const makeRequest = httpResponses ? httpResponses.wrap(makeRequestWithEncodedForms) : makeRequestWithEncodedForms;
  const client = new Client({ intents: [], rest: { api, timeout: 60_000, makeRequest } });
  const inFlight = new Set<Promise<unknown>>();
  const downloadPolicy = defaultDownloadPolicy(options.allowedAttachmentHosts ?? DISCORD_CDN_HOSTS);
  if (options.maxInputImageBytes !== undefined) downloadPolicy.maxBytes = Math.min(options.maxInputImageBytes, downloadPolicy.maxBytes);
  const ctx: BotContext = {
    runner: options.runner,
    store,
    logger,
    webhookRest: createWebhookRest(api),
    adminRoleIds: options.adminRoleIds ?? [],
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
  const lease = options.gatewayLease && !options.interactions ? new GatewayLease({ ...options.gatewayLease, key: options.gatewayLease.key ?? gatewayLeaseKey(token), logger }) : undefined;
  let holding = false;
  let stopping = false;
  const connectGateway = async () => {
    const ready = new Promise<Client<true>>((resolve) => client.once(Events.ClientReady, resolve));
    await client.login(token);
    await withTimeout(ready, options.loginTimeoutMs ?? 60_000, 'Discord did not send READY in time');
  };
  // The lease is lost (another process has it, or Redis cannot confirm it in time): off the gateway at once, then wait.
  const onLeaseLost = (why: string) => {
    holding = false;
    logger.error({ why }, 'lost the Discord gateway lease; disconnecting from the gateway');
    void client.destroy().finally(() => {
      client.rest.setToken(token);
      standBy();
    });
  };
  const standBy = () => {
    if (!lease || stopping) return;
    logger.info({ takeoverWithinMs: lease.takeoverWithinMs }, 'another process holds the Discord gateway; standing by');
    void (async () => {
      while (await lease.acquire()) {
        if (stopping) return lease.release();
        try {
          await connectGateway();
          holding = true;
          lease.keep(onLeaseLost);
          logger.info({}, 'took over the Discord gateway');
          return;
        } catch (error) {
          logger.error({ err: scrub(error instanceof Error ? error : new Error(String(error)), token) }, 'could not connect to the Discord gateway after taking the lease');
          await client.destroy().catch(() => {});
          client.rest.setToken(token);
          await lease.release();
          await new Promise((resolve) => setTimeout(resolve, lease.takeoverWithinMs));
        }
      }
    })();
  };
  try {
    if (options.interactions && httpResponses) {
      // No gateway: the token is checked by asking Discord for its application, which the interactions are built with.
      client.rest.setToken(token);
      const application = (await withTimeout(client.rest.get(Routes.currentApplication()), options.loginTimeoutMs ?? 60_000, 'Discord did not answer in time')) as APIApplication;
      Object.assign(client, { application: Reflect.construct(ClientApplication, [client, application]) as ClientApplication });
    } else if (!lease || (await lease.tryAcquire().catch(() => false))) {
      await connectGateway();
      holding = true;
      lease?.keep(onLeaseLost);
    } else {
      // Job replies of the crash sweep and channel fallbacks still need the bot token on REST.
      client.rest.setToken(token);
      standBy();
    }
  } catch (error) {
    await client.destroy().catch(() => {});
    if (holding) await lease?.release();
    await store.close();
    const unreachable = describeUnreachable(error, new URL(options.apiBaseUrl ?? DISCORD_API_BASE_URL).host);
    const why = unreachable ? `${unreachable}; check the network` : scrubSecrets(error instanceof Error ? error.message : String(error), [token]);
    throw new Error(`could not log in to Discord: ${why}`, { cause: error });
  }
  if (options.interactions && httpResponses) {
    try {
      endpoint = await startInteractionsEndpoint({ ...options.interactions, client, responses: httpResponses, logger });
    } catch (error) {
      await client.destroy().catch(() => {});
      await store.close();
      throw new Error(`could not take Discord interactions on port ${options.interactions.port}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
  const applicationId = client.application?.id;
  if (options.applicationId && applicationId && options.applicationId !== applicationId) {
    logger.warn({ configured: options.applicationId, actual: applicationId }, 'DISCORD_APPLICATION_ID does not match the bot token’s application');
  }
  logger.info({ user: client.user?.tag, applicationId, interactionsUrl: endpoint?.url }, 'Discord bot ready');
  if (interrupted.length) ctx.track(sweepInterrupted(ctx, client.rest, interrupted));

  return {
    client: client as Client<true>,
    webhookRest: ctx.webhookRest,
    interactionsUrl: endpoint?.url,
    // A process standing by for the gateway lease is healthy: it takes over when the holder goes.
    online: () => (endpoint ? endpoint.listening() : lease && !holding ? !stopping : client.isReady()),
    async stop() {
      accepting = false;
      stopping = true;
      await endpoint?.close();
      if (lease) {
        // Off the gateway first, then the lease goes (never two processes connected), so a standby takes over while
        // the replies still being shown finish over REST.
        lease.stop();
        await client.destroy();
        client.rest.setToken(token);
        if (holding) await lease.release();
        holding = false;
      }
      await withTimeout(Promise.allSettled([...inFlight]), options.stopGraceMs ?? 10_000, '').catch(() => {
        logger.warn({ inFlight: inFlight.size }, 'stopped the Discord bot with job replies still being shown');
      });
      await store.close();
      await client.destroy();
      logger.info({}, 'Discord bot stopped');
    },
  };
}

function scrub(error: Error, token: string): { name: string; message: string } {
  return { name: error.name, message: scrubSecrets(error.message, [token]) };
}

