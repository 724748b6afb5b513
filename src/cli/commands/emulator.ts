import { readCoreConfig } from '../../config.js';
import { createEmulator, DEV_API_KEY, emulatorBanner, FAULT_NAMES, SERVICE_LIKE_LATENCY_MS, type EmulatorServer, type FaultName } from '../../emulator/index.js';
import { EMULATOR_FLAGS, parseFlags } from '../flags.js';
import type { CliContext } from '../context.js';
import { PictorError, ValidationError } from '../../core/errors.js';
import { runsAsPictorScript } from '../../core/npm-script.js';

export const EMULATOR_USAGE = `Usage: pictor emulator [--port P] [--host H] [--api-key KEY …] [--latency-ms MS] [--images-per-minute N] [--fault NAME[:N] …] [--out-of-credit]

Serves the image service's interface locally (127.0.0.1 by default; --port 0 picks a free port).
Accepts the keys given, else PICTOR_API_KEY, else a development key that it prints.

  --port P               default 4010; 0 picks a free port
  --host H               default 127.0.0.1
  --latency-ms MS        time of a medium-quality 1024x1024 image (low takes half, high twice,
                         larger sizes in proportion); default PICTOR_EMULATOR_LATENCY_MS, else ${SERVICE_LIKE_LATENCY_MS}; 0 = instant
  --images-per-minute N  refuse with 429 past N images a minute; default no limit
  --fault NAME[:N]       break the next N (default 1) requests that are valid, the way NAME says;
                         repeatable, applied in the order given. NAME is one of:
${FAULT_NAMES.map((name) => `                           ${name}`).join('\n')}
  --out-of-credit        answer every image request 429 insufficient_quota (an account out of credit)

Faults are described in src/emulator/README.md ("Faults").`;

/** A flag value that is not what it should be: exit 2 naming the flag (nothing is sent by this command, so no such wording). */
class FlagError extends PictorError<'validation_error'> {
  constructor(message: string) {
    super('validation_error', message);
  }
}

/** Runs until SIGINT/SIGTERM, then closes cleanly. */
export async function runEmulator(args: string[], ctx: CliContext, stopSignal?: AbortSignal): Promise<number> {
  let settings: ReturnType<typeof readFlags>;
  try {
    settings = readFlags(args, ctx);
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    ctx.stderr(`pictor emulator: ${error.message}. See pictor emulator --help.`);
    return 2;
  }
  if (settings === 'help') {
    ctx.stdout(EMULATOR_USAGE);
    return 0;
  }

  const emulator = createEmulator({
    apiKeys: settings.keys,
    latencyMs: settings.latencyMs,
    latencyScales: true,
    quotaExhausted: settings.outOfCredit,
    ...(settings.imagesPerMinute !== undefined ? { imagesPerMinute: settings.imagesPerMinute } : {}),
  });
  for (const { fault, count } of settings.faults) emulator.injectFault(fault, { count });
  let server: EmulatorServer;
  try {
    server = await emulator.listen({ port: settings.port, host: settings.host });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      const why = code === 'EADDRINUSE' ? 'is already in use' : code === 'EACCES' ? 'may not be used by this user' : 'is not an address of this machine';
      ctx.stderr(`pictor emulator: port ${settings.port} on ${settings.host} ${why}. Choose another with --port, or --port 0 for a free one.`);
      return 1;
    }
    throw error;
  }
  const printable = settings.keySource === 'development' ? DEV_API_KEY : undefined;
  for (const line of emulatorBanner({
    url: server.url,
    printableKey: printable,
    keySource: settings.keySource === 'flag' ? `one of the ${settings.keys.length} given with --api-key; set PICTOR_API_KEY to it` : 'your PICTOR_API_KEY',
    latencyMs: settings.latencyMs,
    latencyScales: true,
    latencySetting: '--latency-ms',
    ownNpmScript: runsAsPictorScript(ctx.env, process.cwd()),
  })) {
    ctx.stdout(line);
  }
  for (const { fault, count } of settings.faults) ctx.stdout(`Fault: the next ${count === 1 ? 'valid request gets' : `${count} valid requests get`} ${fault}.`);
  if (settings.outOfCredit) ctx.stdout('Every image request is answered 429 insufficient_quota (--out-of-credit).');

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    stopSignal?.addEventListener('abort', stop, { once: true });
  });
  await server.close();
  ctx.stderr('emulator stopped');
  return 0;
}

function readFlags(args: string[], ctx: CliContext) {
  let values;
  try {
    values = flagValues(args);
  } catch (error) {
    if (error instanceof ValidationError) throw new FlagError(error.message);
    throw error;
  }
  if (values.help) return 'help' as const;
  const port = wholeNumber('--port', values.port, 0, 65535) ?? 4010;
  const latencyMs = wholeNumber('--latency-ms', values['latency-ms'], 0, 600_000) ?? readCoreConfig(ctx.env).emulatorLatencyMs ?? SERVICE_LIKE_LATENCY_MS;
  const imagesPerMinute = wholeNumber('--images-per-minute', values['images-per-minute'], 1, 1_000_000);
  const given = values['api-key'] ?? [];
  if (given.some((key) => key.length === 0)) throw new FlagError('--api-key must not be empty');
  const keySource = given.length ? ('flag' as const) : ctx.env.PICTOR_API_KEY ? ('env' as const) : ('development' as const);
  const keys = given.length ? given : ctx.env.PICTOR_API_KEY ? [ctx.env.PICTOR_API_KEY] : [DEV_API_KEY];
  const faults = (values.fault ?? []).map(parseFault);
  return { port, host: values.host ?? '127.0.0.1', latencyMs, imagesPerMinute, keys, keySource, faults, outOfCredit: values['out-of-credit'] === true };
}

/** `--fault NAME[:N]`: a fault of the emulator's list, for the next N valid requests. */
function parseFault(value: string): { fault: FaultName; count: number } {
  const [name = '', count = '1', ...rest] = value.trim().split(':');
  const times = /^\d{1,7}$/.test(count) ? Number(count) : 0;
  if (!(FAULT_NAMES as readonly string[]).includes(name) || rest.length || times < 1) {
    throw new FlagError(`--fault must be one of ${FAULT_NAMES.join(', ')}, optionally followed by :N (how many requests, 1 or more), got ${JSON.stringify(value)}`);
  }
  return { fault: name as FaultName, count: times };
}

function flagValues(args: string[]) {
  return parseFlags(args, EMULATOR_FLAGS);
}

function wholeNumber(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new FlagError(`${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return n;
}
