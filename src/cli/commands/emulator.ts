import { readCoreConfig } from '../../config.js';
import { createEmulator, DEV_API_KEY, emulatorBanner, SERVICE_LIKE_LATENCY_MS, type EmulatorServer } from '../../emulator/index.js';
import { parseFlags } from '../flags.js';
import type { CliContext } from '../context.js';
import { PictorError, ValidationError } from '../../core/errors.js';

export const EMULATOR_USAGE = `Usage: pictor emulator [--port P] [--host H] [--api-key KEY …] [--latency-ms MS] [--images-per-minute N]

Serves the image service's interface locally (127.0.0.1 by default; --port 0 picks a free port).
Accepts the keys given, else PICTOR_API_KEY, else a development key that it prints.

  --port P               default 4010; 0 picks a free port
  --host H               default 127.0.0.1
  --latency-ms MS        time of a medium-quality 1024x1024 image (low takes half, high twice,
                         larger sizes in proportion); default PICTOR_EMULATOR_LATENCY_MS, else ${SERVICE_LIKE_LATENCY_MS}; 0 = instant
  --images-per-minute N  refuse with 429 past N images a minute; default no limit`;

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
    ...(settings.imagesPerMinute !== undefined ? { imagesPerMinute: settings.imagesPerMinute } : {}),
  });
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
  })) {
    ctx.stdout(line);
  }

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
  return { port, host: values.host ?? '127.0.0.1', latencyMs, imagesPerMinute, keys, keySource };
}

function flagValues(args: string[]) {
  return parseFlags(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    'api-key': { type: 'string', multiple: true },
    'latency-ms': { type: 'string' },
    'images-per-minute': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
}

function wholeNumber(flag: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new FlagError(`${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return n;
}
