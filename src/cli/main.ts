#!/usr/bin/env node
import { readFileSync, realpathSync } from 'node:fs';
import { unknownSettingWarnings } from '../core/setting-names.js';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorCodeOf, isPictorError, ValidationError, type PictorError } from '../core/errors.js';
import { BudgetExceededError, LedgerBusyError, LedgerUnreadableError } from '../spend/errors.js';
import { loadDotEnv, readCoreConfig } from '../config.js';
import { processOutput } from '../core/process-output.js';
import { runsAsPictorScript } from '../core/npm-script.js';
import { writableFolder } from '../core/env.js';
import { createCliLogger } from './cli-logger.js';
import { JobFailure } from './job-failure.js';
import { closestWord, COMMANDS } from './flags.js';
import type { CliContext, CliIo } from './context.js';
import { cleanForTerminal } from './terminal-text.js';

const USAGE = `Usage: pictor <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`)
  .join('\n')}

Environment (also read from ./.env):
  PICTOR_BASE_URL           the image service (unset: an embedded emulator is used, no money is spent)
  PICTOR_API_KEY            its key (required with PICTOR_BASE_URL)
  PICTOR_TIMEOUT_SECONDS    longest time one request may take once sent (default 900)
  PICTOR_MAX_RETRIES        retries of what cannot have been billed (default 2)
  PICTOR_IMAGES_PER_MINUTE  pace requests to the account's limit (default: no pacing)
  PICTOR_MAX_CONCURRENT     requests in flight at once (default 4)
  REDIS_URL                 share those limits, the spend ledger and its caps with other Pictor processes
  PICTOR_ACCOUNT_DAILY_USD, PICTOR_ACCOUNT_MONTHLY_USD   caps on what the account may spend (default: none)
  PICTOR_DATA_DIR           the file spend ledger without REDIS_URL (default ~/.local/state/pictor,
                            or $XDG_STATE_HOME/pictor; the emulator's ledger is its emulator/ folder)
  PICTOR_LOG_LEVEL          error (default for the CLI; info for pictor console), warn, info, debug, trace, silent
  PICTOR_LOG_FORMAT         human (default) or json

Run "pictor <command> --help" for a command's options; "pictor --version" for the version.`;

/** What to do about each failure, in a sentence. */
const ADVICE: Partial<Record<PictorError['code'], string>> = {
  authentication_failed: 'Check PICTOR_API_KEY.',
  permission_denied: 'This key may not use the model; ask the service provider.',
  moderation_blocked: 'The service refused the prompt or image; rephrase it.',
  rate_limited: 'The service is busy; wait a minute and try again, or set PICTOR_IMAGES_PER_MINUTE to your limit.',
  quota_exhausted: 'The account is out of credit; add credit with the service provider.',
  connection_failed: 'Check PICTOR_BASE_URL and the network, then try again.',
  timeout: 'The service took too long; if the request was sent it may have been billed, so check before retrying; or raise PICTOR_TIMEOUT_SECONDS.',
  server_error: 'The service had a problem; try again later.',
  stream_broken: 'The result was cut off; the job may have been billed, so check before retrying.',
  not_found: 'Check that PICTOR_BASE_URL points at the service (without /v1 is fine).',
  // The error's own message already says the job may have been billed and was not sent again.
  bad_response: 'Check the service before retrying.',
};

/**
 * Runs the CLI; returns the exit code: 0 success, 2 invalid input or settings
 * (nothing sent), 1 service or network failure, or images paid for that could
 * not be written where asked (they are saved elsewhere and the path printed).
 * Every line printed passes through `cleanForTerminal`: text from the server
 * never drives the terminal.
 */
export async function main(argv: string[], env: NodeJS.ProcessEnv, io: CliIo): Promise<number> {
  const out = { stdout: (line: string) => io.stdout(cleanForTerminal(line)), stderr: (line: string) => io.stderr(cleanForTerminal(line)) };
  const [command, ...args] = argv;
  const json = args.includes('--json');
  try {
    if (command === '--version' || command === '-v' || command === 'version') {
      out.stdout(packageVersion());
      return 0;
    }
    if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
      if (command === 'help' && (args[0] === 'generate' || args[0] === 'edit')) {
        const { EDIT_USAGE, GENERATE_USAGE } = await import('./commands/image-job.js');
        out.stdout(args[0] === 'edit' ? EDIT_USAGE : GENERATE_USAGE);
      } else out.stdout(USAGE);
      return command === undefined ? 2 : 0;
    }
    const config = readCoreConfig(env);
    // `pictor console` is a long-running server: its log says what it does at its own level unless PICTOR_LOG_LEVEL says otherwise.
    const defaultLevel = command === 'console' ? (await import('./commands/console.js')).CONSOLE_LOG_LEVEL : undefined;
    const logger = await createCliLogger({ env, level: config.logLevel, defaultLevel, secrets: [config.apiKey], line: out.stderr });
    const ctx: CliContext = {
      ...out,
      env,
      cwd: io.cwd,
      terminal: io.terminal,
      progressEveryMs: io.progressEveryMs,
      connect: async (options) => {
        // generate and edit keep their jobs in the file ledger without REDIS_URL: a folder that cannot be used is named before anything is sent.
        if (!config.redis) writableFolder('PICTOR_DATA_DIR', config.spend.dataDir);
        return (await import('../connect.js')).connect(config, logger, options);
      },
      client: (c) => c.client,
    };
    switch (command) {
      case 'generate':
      case 'edit':
        return await (await import('./commands/image-job.js')).runImageJob(command, args, ctx);
      case 'price':
        return await (await import('./commands/price.js')).runPrice(args, ctx);
      case 'emulator':
        return await (await import('./commands/emulator.js')).runEmulator(args, ctx);
      case 'console':
        return await (await import('./commands/console.js')).runConsole(args, ctx, config, logger);
      case 'usage':
        return await (await import('./commands/usage.js')).runUsage(args, ctx, config, io.stdoutIsTerminal === true);
      case 'completion':
        return (await import('./commands/completion.js')).runCompletion(args, ctx);
      default: {
        const near = closestWord(command, Object.keys(COMMANDS));
        out.stderr(`pictor: unknown command ${JSON.stringify(command)}.${near ? ` Did you mean "${near}"?` : ''} Run "pictor --help" for the commands.`);
        return 2;
      }
    }
  } catch (error) {
    return report(error, out, json, command === 'generate' || command === 'edit');
  }
}

/**
 * Prints a failure; returns the exit code. `sends`: the command sends requests (generate, edit), so a refusal before
 * sending says "Nothing was sent."; other commands (usage, price, emulator) never send, and do not say it.
 */
function report(failure: unknown, io: Pick<CliContext, 'stdout' | 'stderr'>, json: boolean, sends: boolean): number {
  // A job that failed after it was handed to the client: with --json its line also says what was written and charged.
  const job = failure instanceof JobFailure ? failure.job : {};
  const error = failure instanceof JobFailure ? failure.error : failure;
  // A JobFailure is a job whose request was sent (`image-job.ts`): whatever failed after, it is never "Nothing was sent."
  const nothingSent = sends && !(failure instanceof JobFailure) ? ' Nothing was sent.' : '';
  if (error instanceof ValidationError) {
    const param = error.param;
    // The allowed values only when the message does not already name them all (it usually does).
    const values = error.allowed?.split(/,\s*|\s+or\s+/).map((v) => v.trim()) ?? [];
    const allowed = error.allowed && !values.every((v) => error.message.includes(v)) ? ` Allowed: ${error.allowed}.` : '';
    if (json) io.stdout(JSON.stringify({ ok: false, code: error.code, param, message: error.message, ...job }));
    io.stderr(`pictor: ${error.message.replace(/\.$/, '')}.${allowed}${nothingSent}`);
    return 2;
  }
  if (error instanceof LedgerUnreadableError) {
    // A ledger file the CLI cannot use: nothing was sent; the message names the file and what to do.
    if (json) io.stdout(JSON.stringify({ ok: false, code: error.code, path: error.path, message: error.message, ...job }));
    io.stderr(`pictor: ${error.message}${nothingSent}`);
    return 2;
  }
  if (error instanceof LedgerBusyError) {
    // Another process holds the ledger: a job refused so was not sent (one that was, ends as a JobFailure); trying again works.
    if (json) io.stdout(JSON.stringify({ ok: false, code: error.code, path: error.path, retryable: true, message: error.message, ...job }));
    io.stderr(`pictor: ${error.message}.${nothingSent}`);
    return 1;
  }
  if (error instanceof BudgetExceededError) {
    if (json) io.stdout(JSON.stringify({ ok: false, code: error.code, limitUsd: error.limitUsd, leftUsd: error.leftUsd, resetsAt: new Date(error.resetsAt).toISOString(), message: error.message, ...job }));
    io.stderr(`pictor: ${error.message}${nothingSent}`);
    return 1;
  }
  if (isPictorError(error)) {
    // Redis's own message already says what to do (start it, fix or unset REDIS_URL); the service's advice would mislead.
    // (By name: the Redis client is loaded only when REDIS_URL is set.)
    const advice = error.name === 'RedisUnavailableError' ? '' : (ADVICE[error.code] ?? '');
    const requestId = (error as { requestId?: string }).requestId;
    if (json) io.stdout(JSON.stringify({ ok: false, code: error.code, message: error.message, requestId: requestId ?? null, ...job }));
    io.stderr(`pictor: ${error.message}${requestId ? ` (request ${requestId})` : ''}. ${advice}`.trim());
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (json) io.stdout(JSON.stringify({ ok: false, code: errorCodeOf(error), message, ...job }));
  io.stderr(`pictor: ${message}`);
  return 1;
}

/** This package's version, from the package.json above this file (in the sources and in the built `dist/`). */
function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'pictor' && pkg.version) return pkg.version;
    } catch {
      // not here; look one level up
    }
    const parent = dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}

/**
 * The directory `--image` and `--out` paths start from: the one the user ran
 * the command from. Under `npm run pictor`, npm starts the script in the
 * package's root and keeps the user's directory in INIT_CWD; it is used only
 * when this process is Pictor's own npm script (npm names the package `pictor`
 * and the working directory is its root), not in another project's npm script
 * that runs `pictor`, whose paths start from that project's root as npm runs
 * every script. `.env` and a relative PICTOR_DATA_DIR are read from the working
 * directory, not from here.
 */
export function userDirectory(env: NodeJS.ProcessEnv, cwd: string = process.cwd()): string {
  if (env.INIT_CWD && runsAsPictorScript(env, cwd)) return resolve(env.INIT_CWD);
  return cwd;
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

/**
 * Runs the CLI as this process: the process's own streams, `.env`, argv and
 * environment; returns the exit code. The entry points (this file run
 * directly, and the built `pictor` command, bin.ts) call it.
 */
export async function runCli(): Promise<number> {
  // A reader that went away (pictor usage | head -1): the rest of the output is dropped, quietly.
  const output = processOutput();
  const io: CliIo = {
    stdout: output.out,
    stderr: output.err,
    // A live line only on a real terminal (as the spinner library judges one: not dumb, not CI).
    terminal: process.stderr.isTTY && process.env.TERM !== 'dumb' && !('CI' in process.env) ? process.stderr : undefined,
    stdoutIsTerminal: process.stdout.isTTY === true,
    cwd: userDirectory(process.env),
  };
  try {
    // `.env` from the working directory: under `npm run pictor` the package's root, where `.env.example` is copied. One
    // to fix is a settings error (exit 2), reported as every other failure of a command (plain, or --json): not
    // `loadDotEnvOrExit`, which writes its own line.
    for (const line of loadDotEnv()) io.stderr(cleanForTerminal(`pictor: warning: ${line}`));
    for (const line of unknownSettingWarnings(process.env)) io.stderr(cleanForTerminal(`pictor: warning: ${line}`));
    return await main(process.argv.slice(2), process.env, io);
  } catch (error) {
    const command = process.argv[2];
    return report(error, { stdout: (l) => io.stdout(cleanForTerminal(l)), stderr: (l) => io.stderr(cleanForTerminal(l)) }, process.argv.includes('--json'), command === 'generate' || command === 'edit');
  }
}

if (isEntryPoint()) process.exitCode = await runCli();
