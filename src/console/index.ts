import type { LoggerLike } from '../client/PictorClient.js';
import { FileAlertLog, MemoryAlertLog, RedisAlertLog, type AlertLog } from './alerts/alert-log.js';
import { alertChannels } from './alerts/channels.js';
import { hasDestination, type AlertConfig } from './alerts/config.js';
import { AlertWatcher } from './alerts/watcher.js';
import { newToken } from './auth.js';
import type { ConsoleConfig } from './config.js';
import { LEDGER_WAIT_MS, startConsoleServer } from './server.js';
import type { ConsoleSource } from './source.js';
import { UsageIndex } from './usage-index.js';
import { LedgerNow } from './ledger-now.js';
import { watchLedgerFolder } from './ledger-watch.js';

export { readConsoleConfig, DEFAULT_CONSOLE_PORT, isLoopbackHost, type ConsoleConfig } from './config.js';
export { readAlertConfig, hasDestination, type AlertConfig } from './alerts/config.js';
export { signWebhook, verifyWebhook, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './alerts/webhook-signature.js';
export type { Alert, AlertChannel } from './alerts/channels.js';
export type { ConsoleSource, BotsView, OperatorSettings, SettingRow, ChatSettingRow, KeptImage, KeptImages } from './source.js';
export { UsageIndex } from './usage-index.js';
export { spendFigures, type SpendFigures } from './figures.js';

export interface StartConsoleOptions {
  source: ConsoleSource;
  /** The page (`PICTOR_CONSOLE_*`); undefined: no page, only the alerts. */
  config: ConsoleConfig | undefined;
  alerts: AlertConfig;
  /** Where the ledger is, in words, for the footer of the pages. */
  ledgerWhere: string;
  logger: LoggerLike;
  now?: (() => number) | undefined;
  /** How often the jobs page's live part reads the ledger while someone watches. Default 1 s. */
  liveIntervalMs?: number | undefined;
  /** How long a page waits for the ledger before it answers 503 (default 5 s). */
  ledgerWaitMs?: number | undefined;
  /**
   * How long a change, the live stream's reads, a name, a thumbnail, the usage records' shared read and the alerts'
   * check wait for the ledger (default `ledgerWaitMs`): read here once and passed down.
   */
  backendWaitMs?: number | undefined;
  /** Where the alerts sent and the rules chosen are kept; default beside the ledger (its data folder, its Redis prefix, or memory). */
  alertLog?: AlertLog | undefined;
  /** A warning every page shows while it holds (no ledger where the console reads it). */
  ledgerWarning?: (() => string | undefined) | undefined;
  /**
   * Hands over, once and before the first read, what to call for each step of `source.store` in this process that ended
   * gone processes' reservations: call it from the store's `onReconciled` (beside whatever else that hook does, such as
   * counting the charge in metrics), for every step, the console's reconcile, the store's own each lease and a read that
   * met them alike. Those steps write *interrupted* records, and the usage index reads again for them: without it, a job
   * such a step ended as a page or the live list read could be in neither the running jobs nor the recent ones. Required:
   * the store takes its `onReconciled` when it is made, before the console exists, so every caller wires it.
   */
  tellReconciles: (reconciled: () => void) => void;
}

export interface RunningConsole {
  /** Where the page is; undefined without one. */
  url: string | undefined;
  /** The address that logs in once with the token made at start; undefined when `PICTOR_CONSOLE_TOKEN` is set (or there is no page). */
  loginLink: string | undefined;
  /**
   * A job of this process was refused, by its code: a refusal by a cap or the breaker looks at the alerts, at once for
   * the first, then at most once every few seconds (see `AlertWatcher.refused`); a user's pace does not.
   */
  refused(code: string): void;
  /**
   * A job of this process was settled: the alerts are looked at soon (see `AlertWatcher.settled`), unless the watch of a
   * file ledger's folder sees the write already (decided here, not by the caller).
   */
  settled(): void;
  /** The alert watcher, when a destination is set. */
  readonly watcher: AlertWatcher | undefined;
  close(): Promise<void>;
}

/**
 * The key owner's console: its page (when `PICTOR_CONSOLE_PORT` is set, or
 * for `pictor console`) and its alerts (when a destination is set), both from
 * the ledger's usage records through one `UsageIndex`. Undefined when there
 * is neither.
 */
export async function startConsole(options: StartConsoleOptions): Promise<RunningConsole | undefined> {
  const { source, config, alerts, logger } = options;
  if (!config && !hasDestination(alerts)) return undefined;
  // The waits, read once here: every part of the console bounds its reads of the ledger with these.
  const ledgerWaitMs = options.ledgerWaitMs ?? LEDGER_WAIT_MS;
  const backendWaitMs = options.backendWaitMs ?? ledgerWaitMs;
  const index = new UsageIndex({ store: source.store, now: options.now, readWaitMs: backendWaitMs });
  options.tellReconciles(() => index.written());
  // Read in the background: the first page waits for the same read.
  void index.refresh().catch((error: unknown) => logger.warn({ err: error }, 'the console could not read the usage records'));
  const log = options.alertLog ?? alertLogOf(source);
  const channels = alertChannels(alerts, { slackToken: source.bots?.slackToken?.bind(source.bots) });
  // One reconcile of gone processes' reservations for the pages, the live list and the alerts (it runs at most every few seconds).
  const ledgerNow = new LedgerNow(source.store, { index, now: options.now, readWaitMs: backendWaitMs, onError: (err) => logger.warn({ err }, 'the console could not end the reservations of gone processes') });
  const watcher = channels.length > 0 ? new AlertWatcher({ source, index, log, channels, config: alerts, logger, now: options.now, ledgerNow, readWaitMs: backendWaitMs }) : undefined;
  watcher?.start();
  // Other processes on a file ledger (the CLI, n8n, the bots) tell no one of their jobs: each write of the ledger looks
  // at the alerts, under the same bound as a job settled here. A Redis ledger's writes are seen by the clock's check only.
  const storage = source.store.storage;
  const watching = watcher && storage?.kind === 'file' ? watchLedgerFolder(storage.dir, () => watcher.settled(), logger) : undefined;
  let server: Awaited<ReturnType<typeof startConsoleServer>> | undefined;
  let loginLink: string | undefined;
  if (config) {
    const token = config.token ?? newToken();
    try {
      server = await startConsoleServer({
        source,
        config,
        token,
        generatedToken: config.token === undefined,
        index,
        alerts: { config: alerts, log, channels: channels.map((c) => c.id), poke: () => watcher?.poke() },
        ledgerWhere: options.ledgerWhere,
        logger,
        now: options.now,
        liveIntervalMs: options.liveIntervalMs,
        ledgerNow,
        ledgerWaitMs,
        backendWaitMs,
        ledgerWarning: options.ledgerWarning,
      });
    } catch (error) {
      watching?.close();
      await watcher?.stop();
      throw error;
    }
    if (config.token === undefined) loginLink = `${server.url}/login?token=${token}`;
  }
  return {
    url: server?.url,
    loginLink,
    refused: (code) => watcher?.refused(code),
    // A settle of this process's own: the folder's watch, when there is one, sees its write already.
    settled: () => void (watching === undefined && watcher?.settled()),
    watcher,
    async close() {
      // The folder's watch first: no write of the ledger looks at the alerts once they stop.
      watching?.close();
      await watcher?.stop();
      await server?.close();
    },
  };
}

/** The alert log beside the ledger: its data folder, its Redis prefix, or memory. */
function alertLogOf(source: ConsoleSource): AlertLog {
  const storage = source.store.storage;
  if (storage?.kind === 'file') return new FileAlertLog(storage.dir);
  if (storage?.kind === 'redis') return new RedisAlertLog(storage.redis, storage.prefix);
  return new MemoryAlertLog();
}
