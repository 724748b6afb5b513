import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, HTTPReceiver, SocketModeReceiver, webApi } from '@slack/bolt';
import { describeUnreachable, scrubSecrets, ValidationError, type LoggerLike, type SeenRequests } from '../../src/index.js';
import type { BotContext } from './bot-context.js';
import { boltLoggerFor } from './bolt-logger.js';
import { ChannelWriter } from './ChannelWriter.js';
import { DEFAULT_SLACK_API_URL, type SlackMode } from './config.js';
import { DEFAULT_FILE_HOSTS, parseFileHost } from './file-hosts.js';
import { registerEditEntryPoints } from './listeners/edit-entry-points.js';
import { registerEditView } from './listeners/edit-view.js';
import { registerImagineCommand } from './listeners/imagine-command.js';
import { registerJobButtons } from './listeners/job-buttons.js';
import { registerMentions } from './listeners/mentions.js';
import { createReplayGuard } from './replay-guard.js';
import { RequestStore } from './RequestStore.js';
import { SlackJobs, type SlackJobRunner } from './SlackJobs.js';
import { sweepInterrupted } from './sweep-interrupted.js';
import { startSweeper, type StateStore } from '../state/index.js';
import { slackErrorCode } from './slack-error-code.js';
import type { ShownEvent } from './SlackJobView.js';

export interface SlackBotOptions {
  botToken: string;
  /** Socket Mode's app-level token (`xapp-…`, scope connections:write). */
  appToken?: string | undefined;
  /** HTTP mode's signing secret: Bolt's receiver refuses forged and stale (over 5 minutes) requests with it. */
  signingSecret?: string | undefined;
  /** `socket` (default: no public URL needed) or `http`. */
  mode?: SlackMode | undefined;
  /** HTTP mode: where to listen. Default 3000; 0 picks a free port. */
  port?: number | undefined;
  host?: string | undefined;
  /** Slack's Web API (and Socket Mode's apps.connections.open). Default https://slack.com/api/; GovSlack has its own. */
  apiUrl?: string | undefined;
  /** The shared job runner (one per process, shared with the Discord bot). */
  runner: SlackJobRunner;
  /** Where the Slack bot keeps what its buttons need (`<dataDir>/slack/`) when no `state` is given. */
  dataDir: string;
  /**
   * The bots' state store (the data folder, or Redis shared by replicas): where
   * requests live and who holds them. Default a store of the bot's own in
   * `dataDir`. Not closed by `stop()`: its opener closes it after.
   */
  state?: StateStore | undefined;
  /** HTTP mode: the ledger's record of request signatures seen lately (the runner's QuotaStore), so a replay is dropped after a restart and by every process sharing it. */
  seenRequests: SeenRequests;
  /** Hosts the bot token may be sent to for downloads. Default Slack's file hosts. */
  allowedFileHosts?: readonly string[] | undefined;
  /** Slack user ids that may cancel anyone's job in their workspace. */
  adminUserIds?: readonly string[] | undefined;
  logger: LoggerLike;
  /** Least time between two writes to one channel. Default 1000 ms (Slack's ~1 message per second per channel). */
  channelWriteIntervalMs?: number | undefined;
  /**
   * Workspace-wide budget of message updates (chat.update, Slack's Tier 3:
   * about 50 a minute) per minute, 10 of which can be saved up. Every update
   * waits for it; a job's final update goes first, and progress updates
   * (queue position, status) coalesce meanwhile and are what is shed.
   * Default 40 (never more than 50 in any 60 s).
   */
  progressWritesPerMinute?: number | undefined;
  /** Command names, as in the app manifest. */
  commands?: { imagine?: string | undefined; edit?: string | undefined } | undefined;
  /** Called when a job update has become visible in Slack (for measurements). */
  onUpdateShown?: ((event: ShownEvent) => void) | undefined;
  /** Called for every write of the bot Slack refused: a 429 (retried by the Web API client) or a failed message write (for metrics). */
  onWriteRefused?: (() => void) | undefined;
}

export interface SlackBot {
  app: App;
  /** HTTP mode: the events URL to give Slack (Request URL of commands, interactivity and events). */
  url?: string | undefined;
  botUserId: string;
  teamId: string;
  /** Socket Mode: the WebSocket to Slack is open now (it reconnects by itself). HTTP mode: the receiver listens. */
  connected(): boolean;
  /** Stops receiving, then waits (up to 10 s) for pending Slack writes. The runner is the caller's to shut down. */
  stop(): Promise<void>;
}

const DEFAULT_CHANNEL_WRITE_INTERVAL_MS = 1000;
const DEFAULT_PROGRESS_WRITES_PER_MINUTE = 40;
const WEB_API_TIMEOUT_MS = 60_000;
const STOP_DRAIN_MS = 10_000;

/**
 * Starts the Slack surface: a Bolt app over Socket Mode or HTTP whose
 * listeners turn `/imagine`, `/imagine-edit`, the "Edit image" shortcut,
 * mentions and the job buttons into runner jobs, and render each job's
 * updates in Slack.
 */
export async function startSlackBot(options: SlackBotOptions): Promise<SlackBot> {
  const mode = options.mode ?? 'socket';
  const secrets = [options.botToken, options.appToken, options.signingSecret];
  if (mode === 'socket' && !options.appToken) throw new ValidationError('appToken', 'Socket Mode needs an app-level token (SLACK_APP_TOKEN)');
  if (mode === 'http' && !options.signingSecret) throw new ValidationError('signingSecret', 'HTTP mode needs the signing secret (SLACK_SIGNING_SECRET)');
  const allowedHosts = (options.allowedFileHosts ?? DEFAULT_FILE_HOSTS).map((entry) => {
    try {
      return parseFileHost(entry);
    } catch (error) {
      throw new ValidationError('allowedFileHosts', (error as Error).message);
    }
  });
  const logger = options.logger;
  const boltLogger = boltLoggerFor(logger, secrets);
  const clientOptions: webApi.WebClientOptions = {
    slackApiUrl: options.apiUrl ?? DEFAULT_SLACK_API_URL,
    retryConfig: webApi.retryPolicies.fiveRetriesInFiveMinutes,
    timeout: WEB_API_TIMEOUT_MS,
  };

  const auth = await checkToken(options.botToken, clientOptions, boltLogger, secrets);
  const store = new RequestStore(options.state ? { state: options.state } : { dataDir: options.dataDir });
  await store.open();

  const replayGuard = mode === 'http' ? createReplayGuard({ logger, seen: options.seenRequests }) : undefined;
  // Made here rather than by Bolt so its connection state can be watched (`connected`, for /healthz).
  const socketReceiver =
    mode === 'socket' ? new SocketModeReceiver({ appToken: options.appToken!, logger: boltLogger, installerOptions: { clientOptions } }) : undefined;
  let socketOpen = false;
  socketReceiver?.client.on('connected', () => (socketOpen = true));
  for (const state of ['reconnecting', 'disconnecting', 'disconnected']) socketReceiver?.client.on(state, () => (socketOpen = false));
  const app =
    socketReceiver
      ? new App({ token: options.botToken, receiver: socketReceiver, clientOptions, logger: boltLogger })
      : new App({
          token: options.botToken,
          clientOptions,
          logger: boltLogger,
          receiver: new HTTPReceiver({
            signingSecret: options.signingSecret!,
            logger: boltLogger,
            processBeforeResponse: false,
            customPropertiesExtractor: (req) => replayGuard!.extract(req),
          }),
        });
  if (replayGuard) app.use(replayGuard.middleware);

  const writer = new ChannelWriter({
    intervalMs: options.channelWriteIntervalMs ?? DEFAULT_CHANNEL_WRITE_INTERVAL_MS,
    backgroundPerMinute: options.progressWritesPerMinute ?? DEFAULT_PROGRESS_WRITES_PER_MINUTE,
    onFailure: options.onWriteRefused,
  });
  const { onWriteRefused } = options;
  if (onWriteRefused) app.client.on(webApi.WebClientEvent.RATE_LIMITED, () => onWriteRefused());
  const jobs = new SlackJobs({
    runner: options.runner,
    client: app.client,
    writer,
    store,
    adminUserIds: options.adminUserIds ?? [],
    logger,
    onShown: options.onUpdateShown,
  });
  // With Redis, a Cancel pressed on another replica for a job running here.
  await jobs.listenForCancels();
  const context: BotContext = {
    jobs,
    runner: options.runner,
    store,
    writer,
    client: app.client,
    botUserId: auth.botUserId,
    botToken: options.botToken,
    allowedHosts,
    logger,
    commands: { imagine: options.commands?.imagine ?? '/imagine', edit: options.commands?.edit ?? '/imagine-edit' },
  };
  // Every process sweeps: at start what the last one left, and (with Redis) the jobs of a replica whose lease lapsed.
  const sweeper = startSweeper({
    store: store.state,
    name: 'slack requests',
    claim: () => store.claimInterrupted(),
    sweep: (request) => sweepInterrupted({ client: app.client, writer, store, logger, request }).then(() => undefined),
    logger,
  });
  registerImagineCommand(app, context);
  registerEditEntryPoints(app, context);
  registerEditView(app, context);
  registerJobButtons(app, context);
  registerMentions(app, context);
  app.error(async (error) => {
    logger.error({ code: error.code, slackError: slackErrorCode((error as { original?: unknown }).original ?? error), message: scrubSecrets(error.message, secrets) }, 'a Slack listener failed');
  });

  let url: string | undefined;
  if (mode === 'socket') {
    await app.start();
    logger.info({ team: auth.teamId, botUserId: auth.botUserId }, 'Slack bot connected over Socket Mode');
  } else {
    const server = (await app.start({ port: options.port ?? 3000, ...(options.host ? { host: options.host } : {}) })) as Server;
    const address = server.address() as AddressInfo;
    const host = !options.host || options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host;
    url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}/slack/events`;
    logger.info({ team: auth.teamId, botUserId: auth.botUserId, port: address.port }, 'Slack bot listening over HTTP');
  }

  let stopping: Promise<void> | undefined;
  return {
    app,
    url,
    botUserId: auth.botUserId,
    teamId: auth.teamId,
    connected: () => (socketReceiver ? socketOpen : !stopping),
    stop: () =>
      (stopping ??= (async () => {
        try {
          await app.stop();
        } catch (error) {
          logger.warn({ err: scrubSecrets(String(error), secrets) }, 'the Slack receiver did not stop cleanly');
        }
        await sweeper.stop();
        await writer.idle(STOP_DRAIN_MS);
        // The jobs this bot showed, to their end: their history entries are kept before the stores close.
        await jobs.settle(STOP_DRAIN_MS);
        store.close();
      })()),
  };
}

/** auth.test with few retries, so a wrong token or API address fails at start with a clear message. */
async function checkToken(
  token: string,
  clientOptions: webApi.WebClientOptions,
  logger: ReturnType<typeof boltLoggerFor>,
  secrets: readonly (string | undefined)[],
): Promise<{ botUserId: string; teamId: string }> {
  const client = new webApi.WebClient(token, { ...clientOptions, retryConfig: { retries: 1, minTimeout: 500, maxTimeout: 1000 }, logger });
  try {
    const result = await client.auth.test();
    if (!result.user_id || !result.team_id) throw new Error('auth.test gave no user or team');
    return { botUserId: result.user_id, teamId: result.team_id };
  } catch (error) {
    const code = slackErrorCode(error);
    const apiUrl = clientOptions.slackApiUrl ?? DEFAULT_SLACK_API_URL;
    const host = new URL(apiUrl).host;
    // SLACK_API_URL is named only when it was set: most people never set it, and a network problem is likelier.
    const fix = apiUrl === DEFAULT_SLACK_API_URL ? 'check the network (and a proxy, if one is needed)' : `check the network and SLACK_API_URL (${apiUrl})`;
    const unreachable = describeUnreachable(error, host);
    throw new Error(
      code === 'invalid_auth' || code === 'not_authed' || code === 'account_inactive' || code === 'token_revoked'
        ? `Slack did not accept the bot token (${code}); check SLACK_BOT_TOKEN`
        : unreachable
          ? `${unreachable}; ${fix}`
          : `Slack's Web API at ${apiUrl} did not answer as expected (${scrubSecrets(code ?? String(error), secrets)}); ${fix}`,
      { cause: error },
    );
  }
}
