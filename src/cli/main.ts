#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isPictorError, ValidationError, type PictorError } from '../core/errors.js';
import { createLogger } from '../core/logger.js';
import { BudgetExceededError } from '../spend/errors.js';
import { loadDotEnv, readCoreConfig } from '../config.js';
import { runEmulator } from './commands/emulator.js';
import { EDIT_USAGE, GENERATE_USAGE, runImageJob } from './commands/image-job.js';
import { runPrice } from './commands/price.js';
import { connect } from '../connect.js';
import type { CliContext } from './context.js';

const USAGE = `Usage: pictor <command> [options]

Commands:
  generate   make images from a prompt
  edit       edit images with a prompt
  price      what a request costs
  emulator   run a local stand-in for the image service

Environment: PICTOR_BASE_URL, PICTOR_API_KEY (with neither, an embedded emulator is used), PICTOR_LOG_LEVEL.
Run "pictor <command> --help" for a command's options.`;

/** What to do about each failure, in a sentence. */
const ADVICE: Partial<Record<PictorError['code'], string>> = {
  authentication_failed: 'Check PICTOR_API_KEY.',
  permission_denied: 'This key may not use the model; ask the service provider.',
  moderation_blocked: 'The service refused the prompt or image; rephrase it.',
  rate_limited: 'The service is busy; wait a minute and try again, or set PICTOR_IMAGES_PER_MINUTE to your limit.',
  quota_exhausted: 'The account is out of credit; add credit with the service provider.',
  connection_failed: 'Check PICTOR_BASE_URL and the network, then try again.',
  timeout: 'The service took too long; try again, or raise PICTOR_TIMEOUT_SECONDS.',
  server_error: 'The service had a problem; try again later.',
  stream_broken: 'The result was cut off; the job may have been billed, so check before retrying.',
  not_found: 'Check that PICTOR_BASE_URL points at the service (without /v1 is fine).',
};

/** Runs the CLI; returns the exit code: 0 success, 2 invalid input (nothing sent), 1 service or network failure. */
export async function main(argv: string[], env: NodeJS.ProcessEnv, io: Pick<CliContext, 'stdout' | 'stderr'>): Promise<number> {
  const [command, ...args] = argv;
  const json = args.includes('--json');
  try {
    const config = readCoreConfig(env);
    const logger = createLogger({ level: config.logLevel, secrets: [config.apiKey] });
    const ctx: CliContext = {
      ...io,
      env,
      connect: () => connect(config, logger),
      client: (c) => c.client,
    };
    switch (command) {
      case 'generate':
        return await runImageJob('generate', args, ctx);
      case 'edit':
        return await runImageJob('edit', args, ctx);
      case 'price':
        return await runPrice(args, ctx);
      case 'emulator':
        return await runEmulator(args, ctx);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.stdout(command === 'help' && args[0] === 'generate' ? GENERATE_USAGE : command === 'help' && args[0] === 'edit' ? EDIT_USAGE : USAGE);
        return command === undefined ? 2 : 0;
      default:
        io.stderr(`pictor: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    return report(error, io, json);
  }
}

function report(error: unknown, io: Pick<CliContext, 'stdout' | 'stderr'>, json: boolean): number {
  if (error instanceof ValidationError) {
    const param = error.param;
    const allowed = error.allowed ? ` Allowed: ${error.allowed}.` : '';
    if (json) io.stdout(JSON.stringify({ ok: false, code: error.code, param, message: error.message }));
    io.stderr(`pictor: ${error.message}.${allowed} Nothing was sent.`);
    return 2;
  }
  if (isPictorError(error)) {
    const advice = ADVICE[error.code] ?? '';
    const requestId = (error as { requestId?: string }).requestId;
    if (json) io.stdout(JSON.stringify({ ok: false, code: error.code, message: error.message, requestId: requestId ?? null }));
    io.stderr(`pictor: ${error.message}${requestId ? ` (request ${requestId})` : ''}. ${advice}`.trim());
    return 1;
  }
  if (error instanceof BudgetExceededError) {
    if (json) io.stdout(JSON.stringify({ ok: false, code: error.code, cap: error.cap, leftUsd: error.leftUsd, resetsAt: new Date(error.resetsAt).toISOString(), message: error.message }));
    io.stderr(`pictor: ${error.message} Nothing was sent.`);
    return 1;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (json) io.stdout(JSON.stringify({ ok: false, code: 'internal_error', message }));
  io.stderr(`pictor: ${message}`);
  return 1;
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

if (isEntryPoint()) {
  loadDotEnv();
  main(process.argv.slice(2), process.env, {
    stdout: (line) => process.stdout.write(`${line}\n`),
    stderr: (line) => process.stderr.write(`${line}\n`),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`pictor: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
