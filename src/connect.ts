import { PictorClient, type LoggerLike } from './client/PictorClient.js';
import { ImageLimiter } from './core/image-limiter.js';
import type { CoreConfig } from './config.js';

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
 *
 * What only some set-ups need is imported when they need it: the Redis client
 * with `REDIS_URL`, the emulator (and its image encoder) without
 * `PICTOR_BASE_URL`, so a one-off CLI run against a service starts fast.
 */
export async function connect(
  config: CoreConfig,
  logger: LoggerLike,
  /** `emulatorLatencyMs`: the embedded emulator's base time per image when `PICTOR_EMULATOR_LATENCY_MS` is not set (default 0, instant). */
  options: { emulatorPort?: number; emulatorLatencyMs?: number } = {},
): Promise<Connection> {
  const limiter = await makeLimiter(config, logger);
  const common = { limiter, logger, timeoutMs: config.timeoutMs, maxRetries: config.maxRetries };
  if (config.baseURL) {
    const client = new PictorClient({ ...common, baseURL: config.baseURL, apiKey: config.apiKey });
    return { client, emulatorUrl: undefined, emulatorLatencyMs: undefined, close: () => limiter.stop() };
  }
  const latencyMs = config.emulatorLatencyMs ?? options.emulatorLatencyMs ?? 0;
  let server;
  let apiKey;
  try {
    const { createEmulator, DEV_API_KEY } = await import('./emulator/index.js');
    apiKey = config.apiKey ?? DEV_API_KEY;
    server = await createEmulator({ apiKeys: [apiKey], latencyMs, latencyScales: true }).listen({ port: options.emulatorPort ?? 0, host: '127.0.0.1' });
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

/** With REDIS_URL this limiter is shared with every other Pictor process on the account; without, it is this process's own. */
async function makeLimiter(config: CoreConfig, logger: LoggerLike): Promise<ImageLimiter> {
  const { imagesPerMinute, maxConcurrent, redis } = config;
  if (!redis) return new ImageLimiter({ imagesPerMinute, maxConcurrent });
  const { createImageLimiter } = await import('./core/shared-limiter.js');
  return createImageLimiter({ imagesPerMinute, maxConcurrent, redis, logger });
}
