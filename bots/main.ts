#!/usr/bin/env node
/**
 * `npm start`: the Pictor service. Starts the chat surfaces that are configured
 * (Discord, Slack) on one shared limiter and job runner, and, when no upstream
 * image service is configured, an embedded emulator for them to use.
 * The only place besides the CLI that reads the environment.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ValidationError, DEV_API_KEY } from 'pictor';
import {
  ACCOUNT_KEY,
  createLogger,
  describeRedisConfig,
  pingRedis,
  sharedLimiterWorks,
  RedisLink,
  type Logger,
  connect,
  loadDotEnvOrExit,
  readCoreConfig,
  humanLogDestination,
  runsInContainer,
  processOutput,
  ledgerDir,
  ledgerRedis,
  hasFileLedger,
  hasRedisLedger,
  type LedgerKind,
  openQuotaStore,
  SERVICE_LIKE_LATENCY_MS,
  emulatorBanner,
  createMetrics,
  NO_METRICS,
  startMetricsServer,
  withRefusalListener,
  type HealthCheck,
  type Metrics,
  readAlertConfig,
  readConsoleConfig,
  startConsole,
  type RunningConsole,
  RefusalTally,
  writableFolder,
  unknownSettingWarnings,
  operatorMustFix,
  describeDuration,
} from 'pictor/internal';
import { botsConsoleView } from './console-view.js';
import { readDiscordConfig } from './discord/config.js';
import { JobRecordStore } from './discord/JobRecordStore.js';
import { readSlackConfig, DEFAULT_SLACK_API_URL } from './slack/config.js';
import { slackInstallationStore } from './slack/installation-store.js';
import { discordSurface } from './discord/index.js';
import { JobRunner, readRunnerConfig, settingsInState, memberDefaultsInState, STOP_ALLOWANCE_MS } from './runner/index.js';
import { slackSurface } from './slack/index.js';
import { listed, type ConfiguredSurface, type ListedSurface, type RunningSurface, type StopOptions } from './surface.js';
import { checkUntil } from 'pictor/internal';
import { openBotState, readStateConfig, type BotState } from './state/index.js';

/** `npm start`'s data folder without `PICTOR_DATA_DIR`: the working directory's `.data` (the CLI's is the user's state folder). */
export const SERVICE_DATA_DIR = './.data';

/** The chat surfaces `npm start` can run, in start order; each starts when its settings are there. */
const SURFACES: readonly ListedSurface[] = [listed(discordSurface), listed(slackSurface)];

export interface Service {
  emulatorUrl: string | undefined;
  /** PICTOR_SHUTDOWN_GRACE_SECONDS in ms: how long `drain` lets running jobs go on. */
  shutdownGraceMs: number;
  /**
   * Stops taking jobs (new ones are told the bot is restarting) and waits up to
   * PICTOR_SHUTDOWN_GRACE_SECONDS for the jobs already taken to end and be
   * shown. Resolves with how many are still running; `stop` then stops those.
   */
  drain(): Promise<number>;
  /**
   * Stops the runner, then the chat surfaces side by side, then closes what they used (the state, the ledger, the
   * Redis link). `until` (a time as `Date.now()`): by when the runner and the surfaces are done, however many last
   * messages they still owe or whatever no longer answers (Redis gone); the closes that wait on a store (the state's
   * lease given back, the last refusal counts) wait no later than half the reserve (`STOP_RESERVE_MS`) after it, the
   * rest of the reserve is for closing the ledger and the link. Default: the budget `npm start`
   * gives a stop after a drain (`STOP_ALLOWANCE_MS` less the reserve, from now).
   */
  stop(options?: StopOptions): Promise<void>;
  /** The key owner's console and its alerts, when `PICTOR_CONSOLE_PORT` or an alert destination is set. */
  readonly console: RunningConsole | undefined;
}

export interface ServiceOutput {
  /** Whether stderr is a terminal: log lines are then human lines unless PICTOR_LOG_FORMAT=json. Default false. */
  logToTerminal?: boolean | undefined;
  /** Where log lines go. Default stderr. */
  writeLog?: ((line: string) => void) | undefined;
  /** A surface that can no longer run once started (see `SurfaceContext.fail`). Default: logged. */
  onSurfaceFailed?: ((surface: string, error: Error) => void) | undefined;
}

export async function startService(env: NodeJS.ProcessEnv, print: (line: string) => void, output: ServiceOutput = {}): Promise<Service> {
  const core = readCoreConfig(env, { defaultDataDir: SERVICE_DATA_DIR });
  const runnerConfig = readRunnerConfig(env, core.spend.caps);
  const configured = SURFACES.map((surface) => surface.configure(env)).filter((s): s is ConfiguredSurface => s !== undefined);
  const stateConfig = readStateConfig(env);
  // The key owner's console (PICTOR_CONSOLE_PORT) and its alerts (PICTOR_ALERT_*): read now, so a bad setting stops the start.
  const consoleConfig = readConsoleConfig(env);
  const alertConfig = readAlertConfig(env);
  // In Pictor's image the hints give the image's commands (node dist/…), not a clone's npm scripts.
  const container = runsInContainer(env);
  // Human lines on a terminal, JSON for machines (a log shipper, a file) or when PICTOR_LOG_FORMAT=json says so.
  const format = core.logFormat ?? (output.logToTerminal ? 'human' : 'json');
  const { writeLog } = output;
  const logger: Logger = createLogger({
    level: core.logLevel,
    secrets: [core.apiKey, ...configured.flatMap((surface) => surface.secrets)],
    destination:
      format === 'human'
        ? humanLogDestination(writeLog ?? ((line) => process.stderr.write(line)))
        : writeLog && { write: (chunk: string) => writeLog(chunk) },
  });
  if (core.baseURL && configured.length === 0) throw nothingToRun();
  // The bots keep their state and (without Redis) the ledger in the data folder: one that cannot be used stops the start here.
  if (configured.length > 0 && !core.redis) writableFolder('PICTOR_DATA_DIR', core.spend.dataDir);

  /** Each stop step gets the stop's `until`: its waits on what may no longer answer end by then (see `Service.stop`). */
  const stops: ((budget: { until: number; closesBy: number }) => Promise<void>)[] = [];
  const checks: Record<string, HealthCheck> = {};
  const stopAll = async (options: StopOptions = {}) => {
    const until = checkUntil(options.until) ?? stopDeadlines(Date.now(), 0).surfacesUntil;
    // The closes that wait on a store (the state's lease given back, the refusal counts written) take half the reserve.
    const budget = { until, closesBy: until + STOP_RESERVE_MS / 2 };
    for (const stop of stops.reverse()) {
      try {
        await stop(budget);
      } catch (error) {
        logger.warn({ err: error }, 'error while stopping');
      }
    }
  };

  try {
    if (core.redis) print(`Sharing limits and budgets through ${describeRedisConfig(core.redis)}.`);
    // With REDIS_URL, one link for everything this process keeps there — the limiter, the ledger, the bots' state,
    // leases, /healthz: one command connection and one subscriber. Redis must answer now. Closed last.
    const link = core.redis ? await RedisLink.open(core.redis, { logger }) : undefined;
    if (link) stops.push(() => link.close());
    if (link) checks.redis = () => pingRedis(link.commands);
    // With REDIS_URL, one limiter (and below, one ledger) for every process on the account.
    // The embedded emulator takes service-like time per image unless PICTOR_EMULATOR_LATENCY_MS says otherwise, so partial images show.
    // The job runner guards every job itself (account caps on top of user/scope caps), so the client is not guarded twice.
    const connection = await connect(core, logger, { emulatorPort: core.emulatorPort, emulatorLatencyMs: SERVICE_LIKE_LATENCY_MS, spendGuard: false, redis: link });
    stops.push(() => connection.close()); // last: running jobs still reach the emulator while the runner shuts down
    const { client, emulatorUrl } = connection;
    // Redis may answer PING while the limiter cannot work in it (full, read-only, its state lost beyond rebuilding).
    if (link) checks.limiter = () => sharedLimiterWorks(client.limiter);

    // Off unless PICTOR_METRICS_PORT is set; counted from the first job on.
    const metrics: Metrics | undefined = core.metrics ? createMetrics({ logger }) : undefined;
    /** Set once the console runs: a job refused by a cap or the breaker, or settled, looks at the alerts. */
    let consoleOfService: RunningConsole | undefined;
    let runnerOfService: JobRunner | undefined;
    /** Set once the console runs: each step of the ledger that ended gone processes' reservations has its usage index read the records it wrote. */
    let consoleReconciled: (() => void) | undefined;
    /** What the running surfaces let go of when a drain begins with replicas (see `RunningSurface.handOver`). */
    const handOvers: { id: string; handOver: () => Promise<void> }[] = [];
    if (configured.length > 0) {
      // Checked before any surface goes online (a damaged ledger file is restored from its backup or stops the start,
      // naming the file); what a reconcile of a dead process's jobs charges is counted as spent, and the console (when
      // it runs) reads the records it wrote. Emulator jobs have a ledger of their own.
      const store = await openQuotaStore({
        redis: core.redis,
        link,
        dataDir: core.spend.dataDir,
        ledger: connection.ledger,
        usageRetentionDays: core.spend.usageRetentionDays,
        logger,
        onRestored: print,
        onReconciled: (report) => {
          metrics?.spent(report.chargedUsd);
          consoleReconciled?.();
        },
        onReservationLost: () => metrics?.reservationLost(),
      });
      stops.push(({ closesBy }) => store.close({ until: closesBy }));
      // What a job or a button needs later, and the chat settings and history: the data folder, or with REDIS_URL the
      // Redis every replica shares (each holds its running jobs by a lease; a replica that dies has them swept by
      // another). What an older version kept elsewhere is moved in once. Closed after the surfaces.
      const state = await openBotState({
        dataDir: core.spend.dataDir,
        redis: link,
        leaseMs: stateConfig.leaseMs,
        keptImagesBytes: stateConfig.keptImagesBytes,
        historyRetentionDays: runnerConfig.historyRetentionDays,
        ledger: store,
        // Version 0.1 kept the chat settings in the account's ledger whenever PICTOR_BASE_URL was set; a Pictor
        // emulator there now has a ledger of its own, so the upgrade looks in the account's too.
        legacyLedgers:
          core.baseURL && connection.ledger === 'emulator'
            ? [() => openQuotaStore({ redis: core.redis, link, dataDir: core.spend.dataDir, ledger: 'account', usageRetentionDays: core.spend.usageRetentionDays, logger, onRestored: print, reconcile: false })]
            : undefined,
        // `forget` erases the prompts everywhere in the data folder (or Redis): in the other ledger too, kept before a
        // switch between the embedded emulator and the real service, when it exists. Opened for that only.
        otherLedger: async () => {
          const other = connection.ledger === 'emulator' ? 'account' : 'emulator';
          if (!(await ledgerKept(core, link, other))) return undefined;
          return openQuotaStore({ redis: core.redis, link, dataDir: core.spend.dataDir, ledger: other, usageRetentionDays: core.spend.usageRetentionDays, logger, onRestored: print, reconcile: false });
        },
        logger,
      });
      stops.push(({ closesBy }) => state.close({ until: closesBy }));
      // Every refused job is counted in the ledger for the console (a few seconds late, in batches).
      const refusals = new RefusalTally({ store, logger });
      // A Redis gone away would hold the last counts' write for ever: they are dropped at the deadline (the console misses them).
      stops.push(({ closesBy }) => refusals.close({ until: closesBy }));
      // A refusal by a cap or the breaker, and a job settled here, look at the alerts: the first at once, then at most one
      // check every few seconds: the owner hears of a cap as it nears, not a check period later.
      const counted = metrics ?? NO_METRICS;
      const runnerMetrics = withRefusalListener(
        {
          ...counted,
          spent(usd) {
            counted.spent(usd);
            // The console decides whether its watch of a file ledger's folder saw this settle's write already.
            consoleOfService?.settled();
          },
        },
        (code) => {
          refusals.add(code);
          consoleOfService?.refused(code);
        },
      );
      const runner = new JobRunner({
        client,
        store,
        limits: runnerConfig.limits,
        dmCaps: runnerConfig.dmCaps,
        partialImages: runnerConfig.partialImages,
        minUpdateIntervalMs: runnerConfig.minUpdateIntervalMs,
        maxQueuedJobs: runnerConfig.maxQueuedJobs,
        maxQueuedInputBytes: runnerConfig.maxQueuedInputBytes,
        lightPreviews: runnerConfig.lightPreviews,
        recordPrompts: core.spend.recordPrompts,
        operatorControls: runnerConfig.controls,
        history: state,
        settings: settingsInState(state.store.space(state.spaces.scopeSettings), logger),
        styles: state.store.space(state.spaces.houseStyles),
        memberDefaults: memberDefaultsInState(state.store.space(state.spaces.memberDefaults)),
        auditPosts: state.store.space(state.spaces.auditPosts),
        auditEnded: state.store.space(state.spaces.auditEnded),
        metrics: runnerMetrics,
        logger,
      });
      runnerOfService = runner;
      metrics?.watch(runner.liveReadings());
      metrics?.watchLedger({
        spentUsd: (period) => (period === 'day' ? store.spentToday(ACCOUNT_KEY, Date.now()) : store.spentThisMonth(ACCOUNT_KEY, Date.now())),
        capUsd: { day: core.spend.caps.accountDailyUsd, month: core.spend.caps.accountMonthlyUsd },
      });
      // The surfaces stop side by side, each by the same `until`: none waits for another's last messages, and their
      // waits together end by then (they share nothing but the runner and the state, which close after them).
      const surfaces: { id: string; running: RunningSurface }[] = [];
      stops.push(async ({ until }) => {
        await Promise.all(
          surfaces.map(({ id, running }) => running.stop({ until }).catch((error: unknown) => logger.warn({ surface: id, err: error }, 'error while stopping'))),
        );
      });
      for (const surface of configured) {
        const running = await surface.start({
          runner,
          ledger: store,
          state,
          logger: logger.child({ surface: surface.id }),
          onWriteRefused: metrics && (() => metrics.chatWriteRefused(surface.id)),
          print,
          fail: (error) => (output.onSurfaceFailed ? output.onSurfaceFailed(surface.id, error) : logger.error({ surface: surface.id, err: error.message }, 'a surface can no longer run')),
        });
        surfaces.push({ id: surface.id, running });
        checks[surface.id] = () => running.health();
        if (running.handOver) handOvers.push({ id: surface.id, handOver: running.handOver.bind(running) });
      }
      // With replicas, a draining process is no longer ready: load balancers send new requests to the others.
      if (core.redis) checks.accepting = () => !runner.draining;
      consoleOfService = await startConsole({
        source: {
          store,
          operator: { caps: core.spend.caps, dmCaps: runnerConfig.dmCaps, breaker: runnerConfig.limits.breaker, imagesPerMinute: core.imagesPerMinute, ledger: connection.ledger },
          bots: consoleViewOf(env, { runner, runnerConfig, state, logger }),
        },
        config: consoleConfig,
        alerts: alertConfig,
        ledgerWhere: core.redis ? `the Redis ledger shared by every replica (prefix ${ledgerRedis(core.redis, connection.ledger).prefix})` : `the file ledger in ${ledgerDir(core.spend.dataDir, connection.ledger)}`,
        logger: logger.child({ surface: 'console' }),
        tellReconciles: (tell) => void (consoleReconciled = tell),
      });
      if (consoleOfService) {
        const running = consoleOfService;
        stops.push(() => running.close());
        if (running.url) print(running.loginLink ? `Console at ${running.url}; log in: ${running.loginLink} (set PICTOR_CONSOLE_TOKEN to choose the token)` : `Console at ${running.url} (log in with PICTOR_CONSOLE_TOKEN).`);
        if (running.watcher) print('Alerts on: the caps and the breaker are watched (see the console’s Alerts page, or docs/console.md).');
      }
      // Stopped first (stops run last-in first-out): running jobs end and their
      // messages say so while the bots can still write them.
      // After a drain, what still runs is stopped at once (the drain was the grace).
      // Its waits for the jobs' last messages end by the surfaces' deadline too (the surfaces then spend what is left).
      stops.push(({ until }) => runner.shutdown(runner.draining ? { graceMs: 0, until } : { until }));
    }

    if (metrics && core.metrics) {
      // Every configured dependency is checked, whatever runs: without a bot, Redis still carries the shared limiter.
      const server = await startMetricsServer({ registry: metrics.registry, checks, host: core.metrics.host, port: core.metrics.port });
      stops.push(() => server.close());
      print(`Metrics for Prometheus at ${server.url}/metrics; readiness at ${server.url}/healthz.`);
    }

    if (emulatorUrl) {
      const banner = emulatorBanner({
        url: emulatorUrl,
        printableKey: core.apiKey ? undefined : DEV_API_KEY,
        latencyMs: connection.emulatorLatencyMs ?? 0,
        latencyScales: true,
        latencySetting: 'PICTOR_EMULATOR_LATENCY_MS',
        container,
      });
      for (const line of banner) print(line);
    }
    if (configured.length === 0 && consoleConfig) print('The console runs beside a chat surface; for the ledger of the CLI and n8n alone, run pictor console.');
    if (configured.length === 0) {
      print('No chat surface is configured. Set these (see .env.example) and start again:');
      for (const surface of SURFACES) print(`  ${surface.hint({ container })}`);
      print('  Real image service: PICTOR_BASE_URL and PICTOR_API_KEY (until then the emulator above is used)');
    }
    const drain = async () => {
      if (!runnerOfService) return 0;
      const drained = runnerOfService.drain(runnerConfig.shutdownGraceMs);
      // With Redis other replicas may be running: new work goes to them while this process's jobs finish. Alone,
      // the process stays connected and tells new requests it is restarting.
      if (core.redis) {
        await Promise.all(
          handOvers.map(({ id, handOver }) =>
            handOver().then(
              () => logger.info({ surface: id }, 'handed new work over to the other replicas'),
              (error: unknown) => logger.warn({ surface: id, err: error instanceof Error ? error.message : String(error) }, 'could not hand new work over'),
            ),
          ),
        );
      }
      return drained;
    };
    return { emulatorUrl, shutdownGraceMs: runnerConfig.shutdownGraceMs, drain, stop: stopAll, console: consoleOfService };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** What the console learns from the bots: names (Discord and Slack, with their tokens), kept images, settings, Slack installations' tokens. */
function consoleViewOf(env: NodeJS.ProcessEnv, ctx: { runner: JobRunner; runnerConfig: ReturnType<typeof readRunnerConfig>; state: BotState; logger: Logger }) {
  const discord = readDiscordConfig(env);
  const slack = readSlackConfig(env);
  const { state } = ctx;
  const installations = slack?.oauth ? slackInstallationStore(state.store.space(state.spaces.slackInstallations), ctx.logger) : undefined;
  return botsConsoleView({
    runner: ctx.runner,
    runnerConfig: ctx.runnerConfig,
    state,
    keptImages: new JobRecordStore({ state, logger: ctx.logger }),
    env,
    logger: ctx.logger,
    discord: discord && { apiBaseUrl: discord.apiBaseUrl, token: discord.token },
    slack: slack?.botToken ? { apiUrl: slack.apiUrl ?? DEFAULT_SLACK_API_URL, token: slack.botToken } : undefined,
    slackTokenOf: installations && (async (teamId) => (await installations.forTeam(teamId))?.bot?.token),
  });
}

/**
 * With a real service and no chat surface there is nothing for `npm start` to
 * run (the emulator is only started without `PICTOR_BASE_URL`): it says so and
 * exits 2 rather than sit idle or end as if it had run.
 */
function nothingToRun(): ValidationError {
  return new ValidationError(
    'DISCORD_TOKEN',
    'nothing is configured to run: PICTOR_BASE_URL is set (so no emulator is started) and no chat surface is. ' +
      'Set DISCORD_TOKEN, or SLACK_BOT_TOKEN with SLACK_APP_TOKEN (or SLACK_SIGNING_SECRET and SLACK_MODE=http) — see .env.example — ' +
      'or unset PICTOR_BASE_URL to try the emulator. For one-off images use the pictor command.',
  );
}

/** What the allowance keeps for closing the state, the ledger and the Redis link after the runner and the surfaces. */
export const STOP_RESERVE_MS = 2_000;

/**
 * One budget for a stop begun at `startedAt` with a grace of `graceMs`: the process ends regardless at `exitAt`, and
 * the runner and the surfaces are done by `surfacesUntil`, `STOP_RESERVE_MS` before, whatever the drain took.
 */
export function stopDeadlines(startedAt: number, graceMs: number): { exitAt: number; surfacesUntil: number } {
  const exitAt = startedAt + graceMs + STOP_ALLOWANCE_MS;
  return { exitAt, surfacesUntil: exitAt - STOP_RESERVE_MS };
}

async function run(): Promise<void> {
  // A .env to fix (a folder, a line that is not NAME=value, a file that cannot be read): one line naming it, exit 2.
  loadDotEnvOrExit('pictor: ');
  for (const line of unknownSettingWarnings(process.env)) process.stderr.write(`pictor: warning: ${line}\n`);
  // Set once the service runs; a stream closed before that is remembered and stops it as soon as it is up.
  const stopper: { request?: (reason: string, cause: StopCause) => void; stopping?: boolean; closedBeforeStart?: boolean; failedBeforeStart?: string } = {};
  /**
   * Set by the first error that ends the process (a surface that can no longer run, a failed start): its line is the
   * one printed, and the process ends with its code, whatever fails after it.
   */
  let failedExitCode: number | undefined;
  const output = processOutput((stream) => {
    // Nobody reads us any more: stop as on SIGTERM (running jobs still end within the grace), quietly.
    if (stopper.request) stopper.request(`${stream} closed`, 'output closed');
    else stopper.closedBeforeStart = true;
  });
  /** The first error that ends the process is printed and decides its exit code; false for any later one (not printed). */
  const firstFailure = (line: string, exitCode: number): boolean => {
    if (failedExitCode !== undefined) return false;
    output.err(line);
    failedExitCode = exitCode;
    return true;
  };
  // While starting (a login may take a minute), a signal ends the process at once, as the default action would. In a
  // container Node is PID 1, which gets no signal it has no handler for: without these, `docker stop` waited its timeout.
  const stopWhileStarting = (signal: NodeJS.Signals) => {
    output.out(`${signal} while starting: stopping at once.`);
    process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
  };
  // One handler from the first line to the last: removing one and adding the next would, for that moment, leave the
  // signal with no handler, and Node would let it end the process at once (its default action).
  const onSignal = (signal: NodeJS.Signals) => (stopper.request ? stopper.request(signal, 'signal') : stopWhileStarting(signal));
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let service: Service;
  try {
    service = await startService(process.env, output.out, {
      logToTerminal: process.stderr.isTTY === true && process.env.TERM !== 'dumb',
      writeLog: (line) => output.err(line.replace(/\n$/, '')),
      // As a failed start: the message names the setting, and a setting to change exits 2 — after running jobs end.
      onSurfaceFailed: (surface, error) => {
        if (!firstFailure(`pictor: ${error.message}`, operatorMustFix(error) ? 2 : 1)) return;
        const reason = `the ${surface} surface can no longer run`;
        // A stop under way (a signal came first) ends with this code; not a second signal's stop at once.
        if (stopper.stopping) return;
        if (stopper.request) stopper.request(reason, 'surface failed');
        else stopper.failedBeforeStart = reason;
      },
    });
  } catch (error) {
    // A setting to change, or a kept file to restore, make readable or move aside: the message names it and what to
    // do. Decided by the error's code, in one place (OPERATOR_FIX_CODES), whichever part raised it. A surface that
    // failed while the start went on (and began it failing) said so first: its line and code stand.
    if (operatorMustFix(error)) firstFailure(`pictor: ${(error as Error).message}`, 2);
    else firstFailure(`pictor: could not start: ${error instanceof Error ? error.message : String(error)}`, 1);
    process.exitCode = failedExitCode;
    return;
  }
  const stop = (reason: string, cause: StopCause) => {
    if (stopper.stopping) {
      // Only a second signal stops at once: a stream closed or a surface failed meanwhile leaves the stop to go on.
      if (cause !== 'signal') return;
      // A second signal: stop now. Jobs still running are shown as interrupted at the next start.
      output.out(`${reason} again: stopping at once.`);
      process.exit(1);
    }
    stopper.stopping = true;
    output.out(`${reason}: taking no new jobs; letting running ones finish (a second SIGTERM or SIGINT stops at once)…`);
    // The grace bounds the whole stop, whatever state a job ended in and whatever no longer answers
    // (a chat platform that went away while the last messages were being written): then the process ends regardless.
    const startedAt = Date.now();
    const { exitAt, surfacesUntil } = stopDeadlines(startedAt, service.shutdownGraceMs);
    const deadline = setTimeout(() => {
      output.err(`pictor: could not stop cleanly within ${describeDuration(exitAt - startedAt)}; exiting.`);
      process.exit(1);
    }, exitAt - Date.now());
    deadline.unref();
    void service
      .drain()
      .then(() => service.stop({ until: surfacesUntil }))
      .then(
        () => process.exit(failedExitCode ?? 0),
        (error: unknown) => {
          output.err(`pictor: error while stopping: ${error instanceof Error ? error.message : String(error)}`);
          process.exit(1);
        },
      );
  };
  stopper.request = stop;
  if (stopper.failedBeforeStart) stop(stopper.failedBeforeStart, 'surface failed');
  else if (stopper.closedBeforeStart) stop('stdout closed', 'output closed');
}

/** What began a stop of `npm start`: a second one stops at once only when it is a signal too. */
type StopCause = 'signal' | 'output closed' | 'surface failed';

if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  await run();
}

/** Whether a ledger holds anything a forget erases: a file ledger in its folder, or in Redis its usage records or a reservation not yet ended. */
async function ledgerKept(core: ReturnType<typeof readCoreConfig>, link: RedisLink | undefined, ledger: LedgerKind): Promise<boolean> {
  if (core.redis && link) return hasRedisLedger(link.commands, ledgerRedis(core.redis, ledger).prefix);
  return hasFileLedger(ledgerDir(core.spend.dataDir, ledger));
}
