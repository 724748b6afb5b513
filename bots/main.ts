#!/usr/bin/env node
/**
 * `npm start`: the Pictor service. Starts the chat surfaces that are configured
 * (Discord, Slack) on one shared limiter and job runner, and, when no upstream
 * image service is configured, an embedded emulator for them to use.
 * The only place besides the CLI that reads the environment.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLogger, describeRedisConfig, ValidationError, type Logger } from '../src/index.js';
import { connect } from '../src/connect.js';
import { loadDotEnv, readCoreConfig } from '../src/config.js';
import { LedgerUnreadableError } from '../src/spend/errors.js';
import { ledgerKindOf } from '../src/spend/ledger-kind.js';
import { openQuotaStore } from '../src/spend/open-store.js';
import { DEV_API_KEY, SERVICE_LIKE_LATENCY_MS, emulatorBanner } from '../src/emulator/index.js';
import { createMetrics, startMetricsServer, type HealthCheck, type Metrics } from '../src/metrics/index.js';
import { readDiscordConfig, startDiscordBot, type DiscordBot } from './discord/index.js';
import { JobRunner, readRunnerConfig, RedisQuotaStore } from './runner/index.js';
import { readSlackConfig, startSlackBot, type SlackBot } from './slack/index.js';

export interface Service {
  emulatorUrl: string | undefined;
  /**
   * Stops taking jobs (new ones are told the bot is restarting) and waits up to
   * PICTOR_SHUTDOWN_GRACE_SECONDS for the jobs already taken to end and be
   * shown. Resolves with how many are still running; `stop` then stops those.
   */
  drain(): Promise<number>;
  stop(): Promise<void>;
}

export async function startService(env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<Service> {
  const core = readCoreConfig(env);
  const runnerConfig = readRunnerConfig(env);
  const discord = readDiscordConfig(env);
  const slack = readSlackConfig(env);
  const logger: Logger = createLogger({
    level: core.logLevel,
    secrets: [core.apiKey, discord?.token, slack?.botToken, slack?.appToken, slack?.signingSecret],
  });

  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) {
      try {
        await stop();
      } catch (error) {
        logger.warn({ err: error }, 'error while stopping');
      }
    }
  };

  try {
    if (core.redis) print(`Sharing limits and budgets through ${describeRedisConfig(core.redis)}.`);
    // With REDIS_URL, one limiter (and below, one ledger) for every process on the account; Redis must answer now.
    // The embedded emulator takes service-like time per image unless PICTOR_EMULATOR_LATENCY_MS says otherwise, so partial images show.
    // The job runner guards every job itself (account caps on top of user/scope caps), so the client is not guarded twice.
    const connection = await connect(core, logger, { emulatorPort: core.emulatorPort, emulatorLatencyMs: SERVICE_LIKE_LATENCY_MS, spendGuard: false });
    stops.push(() => connection.close()); // last: running jobs still reach the emulator while the runner shuts down
    const { client, emulatorUrl } = connection;

    // Off unless PICTOR_METRICS_PORT is set; counted from the first job on.
    const metrics: Metrics | undefined = core.metrics ? createMetrics() : undefined;
    const checks: Record<string, HealthCheck> = {};
    let runnerOfService: JobRunner | undefined;
    let discordBot: DiscordBot | undefined;
    let slackBot: SlackBot | undefined;
    if (discord || slack) {
      // Checked before any surface goes online (a damaged ledger file is restored from its backup or stops the start,
      // naming the file); what a reconcile of a dead process's jobs charges is counted as spent. Emulator jobs have a
      // ledger of their own.
      const store = await openQuotaStore({
        redis: core.redis,
        dataDir: runnerConfig.dataDir,
        ledger: ledgerKindOf(core),
        usageRetentionDays: core.spend.usageRetentionDays,
        logger,
        onRestored: print,
        onReconciled: (report) => metrics?.spent(report.chargedUsd),
      });
      stops.push(() => store.close());
      const runner = new JobRunner({
        client,
        store,
        limits: runnerConfig.limits,
        partialImages: runnerConfig.partialImages,
        minUpdateIntervalMs: runnerConfig.minUpdateIntervalMs,
        recordPrompts: core.spend.recordPrompts,
        metrics,
        logger,
      });
      runnerOfService = runner;
      metrics?.watch(runner.liveReadings());
      if (store instanceof RedisQuotaStore) checks.redis = () => store.ping();
      if (discord) {
        discordBot = await startDiscordBot({
          token: discord.token,
          applicationId: discord.applicationId,
          apiBaseUrl: discord.apiBaseUrl,
          adminRoleIds: discord.adminRoleIds,
          allowedAttachmentHosts: discord.allowedAttachmentHosts,
          runner,
          dataDir: runnerConfig.dataDir,
          logger: logger.child({ surface: 'discord' }),
          onWriteRefused: metrics && (() => metrics.chatWriteRefused('discord')),
        });
        stops.push(() => discordBot!.stop());
        const { client: discordClient } = discordBot;
        checks.discord = () => discordClient.isReady();
        print('Discord bot is online.');
      }
      if (slack) {
        slackBot = await startSlackBot({
          ...slack,
          runner,
          dataDir: runnerConfig.dataDir,
          seenRequests: store,
          logger: logger.child({ surface: 'slack' }),
          onWriteRefused: metrics && (() => metrics.chatWriteRefused('slack')),
        });
        stops.push(() => slackBot!.stop());
        const bot = slackBot;
        checks.slack = () => bot.connected();
        print(`Slack bot is online (${slack.mode === 'http' ? `HTTP, events at ${slackBot.url}` : 'Socket Mode'}).`);
      }
      // Stopped first (stops run last-in first-out): running jobs end and their
      // messages say so while the bots can still write them.
      // After a drain, what still runs is stopped at once (the drain was the grace).
      stops.push(() => runner.shutdown(runner.draining ? { graceMs: 0 } : {}));
    }

    if (metrics && core.metrics) {
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
      });
      for (const line of banner) print(line);
    }
    if (!discordBot && !slackBot) {
      print('No chat surface is configured. Set these (see .env.example) and start again:');
      print('  Discord: DISCORD_TOKEN (then register the commands once: npm run discord:deploy)');
      print('  Slack:   SLACK_BOT_TOKEN with SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET and SLACK_MODE=http');
      print('  Real image service: PICTOR_BASE_URL and PICTOR_API_KEY (without them the emulator above is used)');
    }
    const drain = async () => (runnerOfService ? runnerOfService.drain(runnerConfig.shutdownGraceMs) : 0);
    return { emulatorUrl, drain, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

async function run(): Promise<void> {
  loadDotEnv();
  let service: Service;
  try {
    service = await startService(process.env, (line) => process.stdout.write(`${line}\n`));
  } catch (error) {
    if (error instanceof ValidationError || error instanceof LedgerUnreadableError) {
      process.stderr.write(`pictor: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`pictor: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
    return;
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A second signal: stop now. Jobs still running are shown as interrupted at the next start.
      process.stdout.write(`${signal} again: stopping at once.\n`);
      process.exit(1);
    }
    stopping = true;
    process.stdout.write(`${signal}: taking no new jobs; letting running ones finish (a second ${signal} stops at once)…\n`);
    void service
      .drain()
      .then(() => service.stop())
      .then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  await run();
}
