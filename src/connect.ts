import { PictorClient } from './client/PictorClient.js';
import { createImageLimiter } from './core/shared-limiter.js';
import type { Logger } from './core/logger.js';
import type { CoreConfig } from './config.js';
import { createEmulator, DEV_API_KEY } from './emulator/index.js';

export interface Connection {
  client: PictorClient;
  /** Set when no upstream is configured and an embedded emulator was started. */
  emulatorUrl: string | undefined;
  /** The embedded emulator's base time per image (service-like scaling), when one was started. */
  emulatorLatencyMs: number | undefined;
  /** Stops the limiter, then the embedded emulator (if any). */
  close(): Promise<void>;
}

/**
 * The one way an entry point (the CLI, `npm start`) gets its client: for the
 * configured service, or, with no `PICTOR_BASE_URL`, for an emulator started in
 * this process (the embedded default), always through the account's limiter
 * (shared through Redis with `REDIS_URL`).
 */
export async function connect(
  config: CoreConfig,
  logger: Logger,
  /** `emulatorLatencyMs`: the embedded emulator's base time per image when `PICTOR_EMULATOR_LATENCY_MS` is not set (default 0, instant). */
  options: { emulatorPort?: number; emulatorLatencyMs?: number } = {},
): Promise<Connection> {
  // With REDIS_URL this limiter is shared with every other Pictor process on the account.
  const limiter = await createImageLimiter({ imagesPerMinute: config.imagesPerMinute, maxConcurrent: config.maxConcurrent, redis: config.redis, logger });
  const common = { limiter, logger, timeoutMs: config.timeoutMs, maxRetries: config.maxRetries };
  if (config.baseURL) {
    const client = new PictorClient({ ...common, baseURL: config.baseURL, apiKey: config.apiKey });
    return { client, emulatorUrl: undefined, emulatorLatencyMs: undefined, close: () => limiter.stop() };
  }
  const apiKey = config.apiKey ?? DEV_API_KEY;
  const latencyMs = config.emulatorLatencyMs ?? options.emulatorLatencyMs ?? 0;
  const emulator = createEmulator({ apiKeys: [apiKey], latencyMs, latencyScales: true });
  let server;
  try {
    server = await emulator.listen({ port: options.emulatorPort ?? 0, host: '127.0.0.1' });
  } catch (error) {
    await limiter.stop();
    throw error;
  }
  logger.debug({ url: server.url }, 'no PICTOR_BASE_URL: started an embedded emulator (no money is spent)');
  const client = new PictorClient({ ...common, baseURL: server.url, apiKey });
  return {
    client,
    emulatorUrl: server.url,
    emulatorLatencyMs: latencyMs,
    close: async () => {
      await limiter.stop();
      await server.close();
    },
  };
}
