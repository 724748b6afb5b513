import type { LoggerLike } from '../../client/PictorClient.js';
import type { CoreConfig } from '../../config.js';
import { statSync } from 'node:fs';
import { writableFolder } from '../../core/env.js';
import { ValidationError } from '../../core/errors.js';
import { hasFileLedger } from '../../spend/ledger-files.js';
import { readBreakerSettings } from '../../spend/breaker.js';
import { readDmCaps } from '../../spend/caps.js';
import { ledgerDir, ledgerRedis, openQuotaStore, type LedgerKind } from '../../spend/open-store.js';
import { DEFAULT_CONSOLE_PORT, readAlertConfig, readConsoleConfig, startConsole } from '../../console/index.js';
import { CONSOLE_FLAGS, parseFlags } from '../flags.js';
import type { CliContext } from '../context.js';

/** The level the console logs at while PICTOR_LOG_LEVEL is not set: a long-running server says what it does. */
export const CONSOLE_LOG_LEVEL = 'info';

export const CONSOLE_USAGE = `Usage: pictor console [--port P] [--host H] [--emulator]

A web page of what the account spends, for whoever pays the bill: today and this month against every cap, by
surface, server and user, a chart of the last 30 or 90 days, refusals, images per hour; recent jobs and the ones
running now (live); every cap and setting in force; the breaker; alerts. It reads the same ledger as pictor usage
and npm start: Redis with REDIS_URL, else the file ledger in PICTOR_DATA_DIR (default ~/.local/state/pictor). With
an alert destination set (PICTOR_ALERT_*), it also sends the alerts. Runs until Ctrl-C.

  --port P     default PICTOR_CONSOLE_PORT, else ${DEFAULT_CONSOLE_PORT}; 0 picks a free port
  --host H     default PICTOR_CONSOLE_HOST, else 127.0.0.1 (this machine only); any other needs PICTOR_CONSOLE_TOKEN
  --emulator   the embedded emulator's ledger (jobs run without PICTOR_BASE_URL) instead of the account's

Log in with PICTOR_CONSOLE_TOKEN, or with the link printed at start (a token made for this run). Read-only unless
PICTOR_CONSOLE_ALLOW_CHANGES=1. See docs/console.md.`;

/**
 * The console reads a file ledger; it never makes one. A folder that does not exist is refused (a mistyped
 * PICTOR_DATA_DIR used to become an empty ledger showing $0.00 everywhere); one that is not a folder this process can
 * write in is named as the other commands name it. A folder with no ledger in it is served, with a warning on every
 * page and in the log, until a job's record appears there (the answer: the warning then, else undefined).
 */
function fileLedgerWarning(dir: string, dataDir: string): (() => string | undefined) | undefined {
  try {
    statSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new ValidationError(
        'PICTOR_DATA_DIR',
        `no ledger found in ${dir}: the folder does not exist. Is PICTOR_DATA_DIR the folder the bots or n8n write (n8n: its credential's Ledger Folder)? The console reads a ledger, it does not make one`,
      );
    }
  }
  writableFolder('PICTOR_DATA_DIR', dataDir);
  writableFolder('PICTOR_DATA_DIR', dir);
  if (hasFileLedger(dir)) return undefined;
  const text = `no ledger found in ${dir}: is PICTOR_DATA_DIR the folder the bots or n8n write? Every figure here is $0.00 until a job is recorded there.`;
  return () => (hasFileLedger(dir) ? undefined : text);
}

/** Runs the console until SIGINT/SIGTERM (or `stopSignal`), then closes it and the ledger. */
export async function runConsole(args: string[], ctx: CliContext, config: CoreConfig, logger: LoggerLike, stopSignal?: AbortSignal): Promise<number> {
  const values = parseFlags(args, CONSOLE_FLAGS, 'console');
  if (values.help) {
    ctx.stdout(CONSOLE_USAGE);
    return 0;
  }
  // The flags stand for the variables they name, and are checked by the same rules (a port from 0 to 65535, a host off
  // this machine needs a token).
  const flags = [['PICTOR_CONSOLE_PORT', '--port', values.port], ['PICTOR_CONSOLE_HOST', '--host', values.host]] as const;
  const given: Record<string, string> = {};
  for (const [name, flag, value] of flags) {
    if (value === undefined) continue;
    // A blank variable is unset; a blank flag (--port "$UNSET") is a slip, not a wish for the default.
    if (value.trim() === '') throw new ValidationError(flag, `${flag} was given without a value: give one, or leave ${flag} out for the default`);
    given[name] = value;
  }
  const env = { ...ctx.env, ...given };
  let consoleConfig;
  try {
    consoleConfig = readConsoleConfig(env, { always: { port: DEFAULT_CONSOLE_PORT } })!;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    // What the rules say of a flag given names the flag, not the variable it stands for (in the field and the sentence).
    let { param, message } = error;
    for (const [name, flag] of flags) {
      if (!(name in given)) continue;
      if (param === name) param = flag;
      message = message.replaceAll(name, flag);
    }
    throw param === error.param && message === error.message ? error : new ValidationError(param, message);
  }
  const alerts = readAlertConfig(env);
  const ledger: LedgerKind = values.emulator ? 'emulator' : 'account';
  const ledgerWarning = config.redis ? undefined : fileLedgerWarning(ledgerDir(config.spend.dataDir, ledger), config.spend.dataDir);
  if (ledgerWarning?.() !== undefined) logger.warn({}, ledgerWarning()!);
  // Every step of the store that ends a gone process's reservations (the console's reconcile, the store's own each
  // lease, a read that met them) is told to the console, whose usage index reads the records it wrote.
  let reconciled: (() => void) | undefined;
  const store = await openQuotaStore({
    redis: config.redis,
    dataDir: config.spend.dataDir,
    ledger,
    usageRetentionDays: config.spend.usageRetentionDays,
    logger,
    reconcile: false,
    onReconciled: () => reconciled?.(),
  });
  const ledgerWhere = config.redis
    ? `the ${ledger === 'emulator' ? "emulator's" : "account's"} Redis ledger (prefix ${ledgerRedis(config.redis, ledger).prefix})`
    : `the ${ledger === 'emulator' ? "emulator's" : "account's"} file ledger in ${ledgerDir(config.spend.dataDir, ledger)}`;
  let running;
  try {
    running = await startConsole({
      source: {
        store,
        operator: { caps: config.spend.caps, dmCaps: readDmCaps(env), breaker: readBreakerSettings(env), imagesPerMinute: config.imagesPerMinute, ledger },
      },
      config: consoleConfig,
      alerts,
      ledgerWhere,
      logger,
      ledgerWarning,
      tellReconciles: (tell) => void (reconciled = tell),
    });
  } catch (error) {
    await store.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      ctx.stderr(`pictor console: port ${consoleConfig.port} on ${consoleConfig.host} cannot be used (${code}). Choose another with --port, or --port 0 for a free one.`);
      return 1;
    }
    throw error;
  }
  ctx.stdout(`Pictor console at ${running!.url} (${ledgerWhere}).`);
  ctx.stdout(running!.loginLink ? `Log in: ${running!.loginLink} (a token made for this run; set PICTOR_CONSOLE_TOKEN to choose your own)` : 'Log in with PICTOR_CONSOLE_TOKEN.');
  if (running!.watcher) ctx.stdout('Alerts: on (see the Alerts page).');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    stopSignal?.addEventListener('abort', stop, { once: true });
  });
  await running!.close();
  await store.close();
  ctx.stderr('console stopped');
  return 0;
}
