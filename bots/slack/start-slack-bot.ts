import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { App, ErrorCode, HTTPReceiver, SocketModeReceiver, webApi, type HTTPReceiverOptions } from '@slack/bolt';
import { type LoggerLike, ValidationError } from 'pictor';
import { AS_VALIDATION_ERROR, describeUnreachable, scrubSecrets, timerMsOf, withTimeout } from 'pictor/internal';
import { stopOnce } from '../runner/stop-once.js';
import type { BotContext } from './bot-context.js';
import { boltLoggerFor } from './bolt-logger.js';
import { ChannelWriter } from './ChannelWriter.js';
import { DEFAULT_SLACK_API_URL, type SlackConnection } from './config.js';
import { DEFAULT_FILE_HOSTS, parseFileHost, type FileHost } from './file-hosts.js';
import { slackInstallationStore } from './installation-store.js';
import { registerEditEntryPoints } from './listeners/edit-entry-points.js';
import { registerEditView } from './listeners/edit-view.js';
import { registerImagineCommand } from './listeners/imagine-command.js';
import { registerJobButtons } from './listeners/job-buttons.js';
import { registerMentions } from './listeners/mentions.js';
import { registerUninstalls } from './listeners/uninstalls.js';
import { createReplayGuard } from './replay-guard.js';
import { RequestStore } from './RequestStore.js';
import { SlackJobs, type SlackJobRunner } from './SlackJobs.js';
import { SharedWriteBuckets } from './shared-write-buckets.js';
import { sweepInterrupted } from './sweep-interrupted.js';
import { startSweeper, type BotState } from '../state/index.js';
import { slackErrorCode } from './slack-error-code.js';
import { DEFAULT_FIRST_POST_DEADLINE_MS, type ShownEvent } from './SlackJobView.js';
import { UserLocales } from './user-locales.js';
import { HomeTabs } from './home-tab.js';
import { registerAppHome } from './listeners/app-home.js';
import { registerWorkflowStep } from './listeners/workflow-step.js';
import { UserGroups } from './user-groups.js';
import { WorkspaceClients, type Workspace } from './workspace.js';
import { sentOnceClient } from './sent-once-client.js';
import { slackAuditPoster } from './audit-poster.js';
import { arrivalOf } from './answer-by.js';
import { userKeyOf } from '../runner/member-keys.js';
import { sweptCharges, type SweptLedger } from '../runner/swept-charges.js';

/** The bot scopes Pictor asks for when a workspace installs it through OAuth, as in the app manifest. */
export const SLACK_BOT_SCOPES = [
  'commands',
  'chat:write',
  'chat:write.public',
  'files:read',
  'files:write',
  'im:write',
  'app_mentions:read',
  'channels:history',
  'groups:history',
  'im:history',
  'mpim:history',
  'users:read',
  'usergroups:read',
] as const;

export type { SlackOAuthOptions } from './config.js';

/** How the bot reaches Slack (a bot token or OAuth; Socket Mode or HTTP: see `SlackConnection`), and what it runs on. */
export type SlackBotOptions = SlackConnection & SlackBotSettings;

export interface SlackBotSettings {
  /** Slack's Web API (and Socket Mode's apps.connections.open). Default https://slack.com/api/; GovSlack has its own. */
  apiUrl?: string | undefined;
  /** The shared job runner (one per process, shared with the Discord bot). */
  runner: SlackJobRunner;
  /** The ledger the runner charges: the sweep's "stopped" says what the job was charged (`sweptCharges`). */
  ledger?: SweptLedger | undefined;
  /**
   * The bot's clock, milliseconds since the epoch: the time the sweep reconciles the ledger at (`sweptCharges`) and the
   * writer paces the channels' writes by, so it must advance with real time. Default `Date.now`.
   */
  now?: (() => number) | undefined;
  /**
   * The bots' state (the data folder, or Redis shared by replicas): requests and who holds them, installations
   * (OAuth), the request signatures seen (HTTP mode). Not closed by `stop()`: its opener closes it after.
   */
  state: BotState;
  /** Hosts the bot token may be sent to for downloads (`parseFileHost`). Default Slack's file hosts. */
  allowedFileHosts?: readonly FileHost[] | undefined;
  /** Slack user ids that may cancel anyone's job in their workspace. */
  adminUserIds?: readonly string[] | undefined;
  logger: LoggerLike;
  /** Least time between two writes to one channel. Default 1000 ms (Slack's ~1 message per second per channel). */
  channelWriteIntervalMs?: number | undefined;
  /**
   * Each workspace's budget of message updates (chat.update, Slack's Tier 3:
   * about 50 a minute per app per workspace) per minute, some of which can be
   * saved up (`progressWritesBurst`). Every update waits for its workspace's budget; a job's final
   * update goes first, and progress updates (queue position, status) coalesce
   * meanwhile and are what is shed. Default 40 (the writer's, `ChannelWriterOptions`).
   */
  progressWritesPerMinute?: number | undefined;
  /** Updates of that budget that can be saved up. Default 10 (the writer's). */
  progressWritesBurst?: number | undefined;
  /**
   * With replicas (`REDIS_URL`): the Redis connection and key prefix through
   * which they share each workspace's budget of updates and each channel's
   * pace (keys `<prefix>:slack:updates:<team id>:tat` and
   * `<prefix>:slack:channel:<channel id>:tat`). Undefined: this process counts
   * alone. Not closed by `stop()`.
   */
  sharedWrites?: { redis: Redis; prefix: string } | undefined;
  /** Command names, as in the app manifest. */
  commands?: { imagine?: string | undefined; edit?: string | undefined } | undefined;
  /**
   * Where a finished job's images go: `channel` (default), beside the job's message with the prompt and cost as
   * their comment, visible at once; `thread`, in the message's thread (the old way, for comparison in benches).
   */
  finalImagesIn?: 'channel' | 'thread' | undefined;
  /** Called when a job update has become visible in Slack (for measurements). */
  onUpdateShown?: ((event: ShownEvent) => void) | undefined;
  /** Called for every write of the bot Slack refused: a 429 (retried by the Web API client) or a failed message write (for metrics). */
  onWriteRefused?: (() => void) | undefined;
  /**
   * How long a job's first message may take — its turn in the channel, then Slack's answer, tried once — before the job
   * is not started (nothing charged; the member told privately). Above 0, a delay a timer can wait; default 30 s
   * (`DEFAULT_FIRST_POST_DEADLINE_MS`).
   */
  firstPostDeadlineMs?: number | undefined;
}

export interface SlackBot {
  app: App;
  /** HTTP mode: the events URL to give Slack (Request URL of commands, interactivity and events). */
  url?: string | undefined;
  /** Single-token mode: the bot's user id and workspace (from auth.test at start). Undefined with OAuth. */
  botUserId?: string | undefined;
  teamId?: string | undefined;
  /** OAuth: the address that starts an install (Slack's authorize page follows). */
  installUrl?: string | undefined;
  /** Socket Mode: the WebSocket to Slack is open now (it reconnects by itself). HTTP mode: the receiver listens. */
  connected(): boolean;
  /**
   * Socket Mode: closes the socket connection, so Slack hands new events to the app's other connections (other
   * replicas), while the jobs this bot runs keep writing through the Web API. Nothing in HTTP mode.
   */
  handOver(): Promise<void>;
  /**
   * Stops receiving, then waits for pending Slack writes and the end of the jobs it shows: up to 10 s each, or
   * together up to `until` (a time as `Date.now()`) when given. The runner is the caller's to shut down. A second
   * call gets the first one's stop, ended by the earlier of their `until`s (`stopOnce`).
   */
  stop(options?: { until?: number | undefined }): Promise<void>;
}

const DEFAULT_CHANNEL_WRITE_INTERVAL_MS = 1000;
const WEB_API_TIMEOUT_MS = 60_000;
const STOP_DRAIN_MS = 10_000;
const INSTALL_PATH = '/slack/install';
const REDIRECT_PATH = '/slack/oauth_redirect';
const HAND_OVER_MS = 5_000;

/**
 * Starts the Slack surface: a Bolt app over Socket Mode or HTTP whose
 * listeners turn `/imagine`, `/imagine-edit`, the "Edit image" shortcut,
 * mentions and the job buttons into runner jobs, and render each job's
 * updates in Slack.
 */
export async function startSlackBot(options: SlackBotOptions): Promise<SlackBot> {
  // Which connection is the options' type (a bot token or OAuth; OAuth over HTTP only: Pictor serves the install pages with the events).
  const { mode, oauth, state } = options;
  const secrets = [options.botToken, options.appToken, options.signingSecret, oauth?.clientSecret, oauth?.stateSecret];
  const allowedHosts = options.allowedFileHosts ?? DEFAULT_FILE_HOSTS.map(parseFileHost);
  const logger = options.logger;
  // Made before anything connects: it checks its pace and budget (and the first post's deadline is checked), so a bad
  // value is refused naming its option before any request reaches Slack.
  const writer = new ChannelWriter({
    channelWriteIntervalMs: options.channelWriteIntervalMs ?? DEFAULT_CHANNEL_WRITE_INTERVAL_MS,
    progressWritesPerMinute: options.progressWritesPerMinute,
    progressWritesBurst: options.progressWritesBurst,
    shared: options.sharedWrites && new SharedWriteBuckets({ ...options.sharedWrites, logger }),
    onFailure: options.onWriteRefused,
    now: options.now,
  });
  const firstPostDeadlineMs = timerMsOf('firstPostDeadlineMs', options.firstPostDeadlineMs ?? DEFAULT_FIRST_POST_DEADLINE_MS, { ...AS_VALIDATION_ERROR, aboveZero: true });
  const boltLogger = boltLoggerFor(logger, secrets);
  const apiUrl = options.apiUrl ?? DEFAULT_SLACK_API_URL;
  const clientOptions: webApi.WebClientOptions = {
    slackApiUrl: apiUrl,
    retryConfig: webApi.retryPolicies.fiveRetriesInFiveMinutes,
    timeout: WEB_API_TIMEOUT_MS,
  };

  const auth = options.botToken ? await checkToken(options.botToken, clientOptions, boltLogger, secrets) : undefined;
  const installations = oauth ? slackInstallationStore(state.store.space(state.spaces.slackInstallations), logger) : undefined;
  const store = new RequestStore(state, logger);

  const { onWriteRefused } = options;
  const clients = new WorkspaceClients((token) => {
    const client = new webApi.WebClient(token, { ...clientOptions, logger: boltLogger });
    if (onWriteRefused) client.on(webApi.WebClientEvent.RATE_LIMITED, () => onWriteRefused());
    return client;
  });
  // The first post's own timeout is the usual one: past its deadline the job is given up, and a post that lands later is deleted.
  /**
   * The client of a job's own messages, which sends each call once (Slack makes a new message of each `chat.postMessage`
   * it gets): the job's first message (one whose answer was lost is not sent again, the job not started; a 429 is answered
   * at once, and the job's view posts again after its `Retry-After` when that fits `firstPostDeadlineMs`, which bounds
   * the whole), the message of Reroll, Edit and Delete beside a finished job's images, and
   * its end posted anew when its message is gone; and the looks (`conversations.history`, `conversations.replies`) for
   * one of those whose answer was lost, before anything is posted again. A 429 is answered at once for those too
   * (`slack_webapi_rate_limited_error` with its `retryAfter`): the job's view waits that out and posts again (`#waitOutRetryAfter`,
   * at most `RATE_LIMITED_WAIT_MAX_MS` of such waits), which the client could not do without also sending again a call
   * whose answer was lost.
   */
  const firstPostClients = new WorkspaceClients((token) => sentOnceClient(token, { ...clientOptions, logger: boltLogger }));
  /** The first-post client of a client without a token (see firstPostClientOf below), made once. */
  let tokenlessFirstPostClient: ReturnType<typeof sentOnceClient> | undefined;
  const replayGuard = mode === 'http' ? createReplayGuard({ logger, seen: state.store.space(state.spaces.slackSeen) }) : undefined;
  // Made here rather than by Bolt so its connection state can be watched (`connected`, for /healthz).
  const socketReceiver =
    options.mode === 'socket'
      ? new SocketModeReceiver({
          appToken: options.appToken,
          logger: boltLogger,
          installerOptions: { clientOptions },
          // When the request arrived, as it is taken in: a form's deadline (its trigger's 3 s) is counted from it.
          customPropertiesExtractor: () => arrivalOf(),
        })
      : undefined;
  let socketOpen = false;
  socketReceiver?.client.on('connected', () => (socketOpen = true));
  for (const state of ['reconnecting', 'disconnecting', 'disconnected']) socketReceiver?.client.on(state, () => (socketOpen = false));
  const installerSettings: Partial<HTTPReceiverOptions> = oauth
    ? {
        clientId: oauth.clientId,
        clientSecret: oauth.clientSecret,
        stateSecret: oauth.stateSecret,
        scopes: [...SLACK_BOT_SCOPES],
        installationStore: installations,
        installerOptions: {
          installPath: INSTALL_PATH,
          redirectUriPath: REDIRECT_PATH,
          // /slack/install goes straight to Slack's authorize page (no page of ours in between).
          directInstall: true,
          stateVerification: true,
          clientOptions,
          // Slack's authorize page beside its Web API (GovSlack has its own host).
          authorizationUrl: new URL('../oauth/v2/authorize', apiUrl).toString(),
        },
      }
    : {};
  const app =
    options.mode === 'socket'
      ? new App({ token: options.botToken, receiver: socketReceiver!, clientOptions, logger: boltLogger })
      : new App({
          ...(options.botToken ? { token: options.botToken } : {}),
          clientOptions,
          logger: boltLogger,
          receiver: new HTTPReceiver({
            signingSecret: options.signingSecret,
            logger: boltLogger,
            processBeforeResponse: false,
            // When the request arrived, as it is taken in (before Bolt's authorize, which with OAuth reads the
            // installation in the bots' state): a form's deadline (its trigger's 3 s) is counted from it.
            customPropertiesExtractor: (req) => ({ ...arrivalOf(), ...replayGuard!.extract(req) }),
            ...installerSettings,
          }),
        });
  if (replayGuard) app.use(replayGuard.middleware);
  // Every member is answered in their language: `context.locale`, asked of Slack once and kept (`UserLocales`).
  const locales = new UserLocales({ logger });
  app.use(locales.middleware((context) => (context.botToken ? clients.client(context.botToken) : undefined)));

  const single: Workspace | undefined = options.botToken && auth ? { client: clients.client(options.botToken), botToken: options.botToken, botUserId: auth.botUserId } : undefined;
  const commands = { imagine: options.commands?.imagine ?? '/imagine', edit: options.commands?.edit ?? '/imagine-edit' };
  const homes = new HomeTabs({
    runner: options.runner,
    store,
    logger,
    command: commands.imagine,
    viewers: state.store.space(state.spaces.slackHomeViewers),
    // Both made below, asked only once a change comes.
    clientFor: (teamId) => clientFor(teamId),
    requesterOf: (actor) => jobs.requester(actor),
  });
  const jobs = new SlackJobs({
    runner: options.runner,
    writer,
    store,
    adminUserIds: options.adminUserIds ?? [],
    logger,
    onShown: options.onUpdateShown,
    finalImagesIn: options.finalImagesIn,
    onJobShown: (actor) => homes.changed(actor.teamId, actor.userId),
    command: commands.imagine,
    // A client without a token (none of Bolt's authorized ones) gets one of its own, that sends each call once all the same: made once, when first asked for.
    firstPostClientOf: (client) => (client.token ? firstPostClients.client(client.token) : (tokenlessFirstPostClient ??= sentOnceClient(undefined, { ...clientOptions, logger: boltLogger }))),
    firstPostDeadlineMs,
  });
  // With Redis, a Cancel pressed on another replica for a job running here.
  await jobs.listenForCancels();
  const tokenFor = async (teamId: string): Promise<string | undefined> => options.botToken ?? (await installations!.forTeam(teamId))?.bot?.token;
  const clientFor = async (teamId: string): Promise<webApi.WebClient | undefined> => {
    if (single) return single.client;
    const token = await tokenFor(teamId);
    return token ? clients.client(token) : undefined;
  };
  // A user group's budget (`/imagine admin budget @group …`) applies to its members: Slack tells who they are.
  const groups = new UserGroups({ clientFor, logger });
  options.runner.budgets.readMemberRolesWith('slack', (requester, groupIds) => groups.membership(requester.scopeId, requester.userId, groupIds));
  const context: BotContext = {
    jobs,
    runner: options.runner,
    store,
    writer,
    workspace: (boltContext) => single ?? clients.of(boltContext),
    allowedHosts,
    homes,
    locales,
    groups,
    logger,
    commands,
  };
  /**
   * The audit client sends each call once: Slack makes a new message of each `chat.postMessage` it gets, so a post whose
   * answer was lost is never sent again (a forget could not edit a second copy); a 429 is answered at once as Slack's
   * refusal (`slack_webapi_rate_limited_error`, never waited out while the channel's writes wait), which the audit log
   * tries again at the channel's next try.
   */
  const auditClients = new WorkspaceClients((token) => sentOnceClient(token, { ...clientOptions, logger: boltLogger }));
  // The audit channels of this process's workspaces: the runner batches the entries, this posts them through the writer
  // with clients that try each call once (the audit log decides what is tried again; a channel's writes never wait on it).
  const auditClientFor = async (teamId: string) => {
    const token = await tokenFor(teamId);
    return token ? auditClients.client(token) : undefined;
  };
  options.runner.audit.setPoster('slack', slackAuditPoster({ clientFor: auditClientFor, greetClientFor: clientFor, writer }));
  // Every process sweeps: at start what the last one left, and (with Redis) the jobs of a replica whose lease lapsed.
  const sweeper = startSweeper({
    store: state.store,
    name: 'slack requests',
    // What the ledger charged the jobs of each sweep's claim, read once for all of them (at the first ask).
    claim: async () => {
      const requests = await store.claimInterrupted();
      const swept = requests.flatMap((r) => (r.runnerJobId ? [{ jobId: r.runnerJobId, userKey: userKeyOf(jobs.requester({ userId: r.userId, teamId: r.teamId, channelId: r.askedIn ?? r.channelId, locale: r.locale })), createdAt: r.createdAt }] : []));
      const charges = sweptCharges(options.ledger, swept, logger, options.now);
      return requests.map((request) => ({ request, charges }));
    },
    sweep: ({ request, charges }) =>
      sweepInterrupted({ clientFor, writer, store, logger, request, runner: options.runner, requester: (actor) => jobs.requester(actor), track: (recording) => jobs.track(recording), charges }).then(() => undefined),
    logger,
  });
  if (installations) {
    registerUninstalls(app, {
      installations,
      forget: (token) => {
        clients.forget(token);
        auditClients.forget(token);
        firstPostClients.forget(token);
      },
      logger,
    });
  }
  registerImagineCommand(app, context);
  registerEditEntryPoints(app, context);
  registerEditView(app, context);
  registerJobButtons(app, context);
  const slackMessages = state.store.space(state.spaces.slackMessages);
  registerMentions(app, context, slackMessages);
  registerAppHome(app, context);
  const workflowStep = registerWorkflowStep(app, context, slackMessages);
  app.error(async (error) => {
    if (error.code === ErrorCode.AuthorizationError) {
      // OAuth: a workspace without an installation (uninstalled, or never installed); Bolt acknowledged and ignores it.
      logger.warn({ code: error.code }, 'a Slack request from a workspace without an installation was ignored');
      return;
    }
    logger.error({ code: error.code, slackError: slackErrorCode((error as { original?: unknown }).original ?? error), message: scrubSecrets(error.message, secrets) }, 'a Slack listener failed');
  });

  let url: string | undefined;
  let installUrl: string | undefined;
  if (mode === 'socket') {
    await app.start();
    logger.info({ team: auth?.teamId, botUserId: auth?.botUserId }, 'Slack bot connected over Socket Mode');
  } else {
    const server = (await app.start({ port: options.port ?? 3000, ...(options.host ? { host: options.host } : {}) })) as Server;
    const address = server.address() as AddressInfo;
    const host = !options.host || options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host;
    const origin = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
    url = `${origin}/slack/events`;
    if (oauth) installUrl = `${origin}${INSTALL_PATH}`;
    logger.info({ team: auth?.teamId, botUserId: auth?.botUserId, port: address.port, oauth: !!oauth }, 'Slack bot listening over HTTP');
  }

  /** The stop began (set by the one stop `stopOnce` runs, never by a call it refused). */
  let stopping = false;
  const stopBot = stopOnce();
  return {
    app,
    url,
    installUrl,
    botUserId: auth?.botUserId,
    teamId: auth?.teamId,
    connected: () => (socketReceiver ? socketOpen : !stopping),
    async handOver() {
      if (!socketReceiver || stopping) return;
      await withTimeout(socketReceiver.client.disconnect(), HAND_OVER_MS, 'the Socket Mode connection did not close in time').catch((error: unknown) =>
        logger.warn({ err: scrubSecrets(String(error), secrets) }, 'could not close the Socket Mode connection cleanly'),
      );
      logger.info({}, 'closed the Socket Mode connection: Slack sends new events to the other connections');
    },
    stop: (stopOptions = {}) =>
      stopBot(stopOptions.until, async (budget) => {
        stopping = true;
        // Each wait below: its own STOP_DRAIN_MS, never past the stop's deadline (the earliest until it was given), bounded
        // there alone (`budget.within`), so a deadline brought forward cuts it.
        // A Socket Mode connection that does not close (Slack gone) holds no stop past its budget.
        const receiverStopped = await budget.within(app.stop(), STOP_DRAIN_MS).catch((error: unknown) => {
          logger.warn({ err: scrubSecrets(String(error), secrets) }, 'the Slack receiver did not stop cleanly');
          return true;
        });
        if (!receiverStopped) logger.warn({}, 'the Slack receiver did not stop in time');
        // No more look-ups of user groups, nor their retries, on a stopped bot.
        groups.stop();
        // Nor are workflow steps failed on our side asked for again in a state about to close.
        workflowStep.stop();
        await budget.within(sweeper.stop({ until: budget.until() }), Number.POSITIVE_INFINITY);
        await locales.stop();
        await budget.within(homes.stop(), STOP_DRAIN_MS).catch(() => undefined);
        // The jobs have ended: their final updates are waited for, progress nobody will see is not — and their ends no
        // later than the stop's deadline (the writer's `stopDeadline`: the budget's `until`, the earliest any call gave,
        // brought forward by a later call, and STOP_DRAIN_MS from now, as the writer's idle, then the jobs, are waited
        // for): a job's end that Slack asks to wait longer does not wait in vain.
        writer.shedProgress({ budget, drainUntil: Date.now() + STOP_DRAIN_MS });
        const stopWaiting = new AbortController();
        await budget.within(writer.idle(stopWaiting.signal), STOP_DRAIN_MS).finally(() => stopWaiting.abort());
        // The jobs this bot showed, to their end: their history entries are kept before the stores close.
        await budget.within(jobs.settle(), STOP_DRAIN_MS);
        // Ends the state refused (a full Redis, a full disk), written again within STOP_DRAIN_MS.
        await store.owed.payWithin(budget, STOP_DRAIN_MS);
      }),
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
    // A token Slack refused is a setting to change (exit 2, as every other); Slack out of reach may answer next time.
    if (code === 'invalid_auth' || code === 'not_authed' || code === 'account_inactive' || code === 'token_revoked') {
      throw new ValidationError('SLACK_BOT_TOKEN', `Slack did not accept the bot token (${code}); check SLACK_BOT_TOKEN`);
    }
    const unreachable = describeUnreachable(error, host);
    throw new Error(unreachable ? `${unreachable}; ${fix}` : `Slack's Web API at ${apiUrl} did not answer as expected (${scrubSecrets(code ?? String(error), secrets)}); ${fix}`, { cause: error });
  }
}

