import { createEmulator, DEV_API_KEY } from '../../emulator/index.js';
import { numberFlag, parseFlags } from '../flags.js';
import { ValidationError } from '../../core/errors.js';
import type { CliContext } from '../context.js';

export const EMULATOR_USAGE = `Usage: pictor emulator [--port P] [--host H] [--api-key KEY …] [--latency-ms MS] [--images-per-minute N]

Serves the image service's interface locally (127.0.0.1 by default; --port 0 picks a free port).
Accepts the keys given, else PICTOR_API_KEY, else a development key that it prints.`;

/** Runs until SIGINT/SIGTERM, then closes cleanly. */
export async function runEmulator(args: string[], ctx: CliContext, stopSignal?: AbortSignal): Promise<number> {
  const values = parseFlags(args, {
    port: { type: 'string' },
    host: { type: 'string' },
    'api-key': { type: 'string', multiple: true },
    'latency-ms': { type: 'string' },
    'images-per-minute': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    ctx.stdout(EMULATOR_USAGE);
    return 0;
  }
  const port = numberFlag(values.port) ?? 4010;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ValidationError('--port', '--port must be an integer from 0 to 65535');
  }
  const latency = numberFlag(values['latency-ms']);
  if (latency !== undefined && (typeof latency !== 'number' || latency < 0)) throw new ValidationError('--latency-ms', '--latency-ms must be a number ≥ 0');
  const ipm = numberFlag(values['images-per-minute']);
  if (ipm !== undefined && (typeof ipm !== 'number' || ipm <= 0)) throw new ValidationError('--images-per-minute', '--images-per-minute must be a number > 0');

  const given = values['api-key'] ?? [];
  const keys = given.length ? given : ctx.env.PICTOR_API_KEY ? [ctx.env.PICTOR_API_KEY] : [DEV_API_KEY];
  const emulator = createEmulator({
    apiKeys: keys,
    ...(latency !== undefined ? { latencyMs: latency as number } : {}),
    ...(ipm !== undefined ? { imagesPerMinute: ipm as number } : {}),
  });
  const server = await emulator.listen({ port, host: values.host ?? '127.0.0.1' });
  ctx.stdout(`Pictor emulator listening on ${server.url}`);
  if (!given.length && !ctx.env.PICTOR_API_KEY) ctx.stdout(`API key: ${DEV_API_KEY}`);
  else ctx.stdout(`Accepting ${keys.length} API key${keys.length === 1 ? '' : 's'} (not printed).`);
  ctx.stdout(`Try: PICTOR_BASE_URL=${server.url} PICTOR_API_KEY=<key> pictor generate --prompt "a lighthouse at dusk"`);

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
