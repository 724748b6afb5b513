import { PictorClient } from './client/PictorClient.js';
import { createImageLimiter } from './core/shared-limiter.js';
import type { Logger } from './core/logger.js';
import type { CoreConfig } from './config.js';
import { createEmulator, DEV_API_KEY } from './emulator/index.js';

export interface Connection {
  client: PictorClient;
  /** Set when no upstream is configured and an embedded emulator was started. */
  emulatorUrl: string | undefined;
  /** Stops the limiter, then the embedded emulator (if any). */
  close(): Promise<void>;
}

/**
 * The one way an entry point (the CLI, `npm start`) gets its client: for the
 * configured service, or, with no `PICTOR_BASE_URL`, for an emulator started in
 * this process (the embedded default), always through the account's limiter
 * (shared through Redis with `REDIS_URL`).
 */
export async function connect(config: CoreConfig, logger: Logger, options: { emulatorPort?: number } = {}): Promise<Connection> {
  // With REDIS_URL this limiter is shared with every other Pictor process on the account.
  const limiter = await createImageLimiter({ imagesPerMinute: config.imagesPerMinute, maxConcurrent: config.maxConcurrent, redis: config.redis, logger });
  const common = { limiter, logger, timeoutMs: config.timeoutMs, maxRetries: config.maxRetries };
  if (config.baseURL) {
    const client = new PictorClient({ ...common, baseURL: config.baseURL, apiKey: config.apiKey });
    return { client, emulatorUrl: undefined, close: () => limiter.stop() };
  }
  const apiKey = config.apiKey ?? DEV_API_KEY;
  const emulator = createEmulator({ apiKeys: [apiKey] });
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
    close: async () => {
      await limiter.stop();
      await server.close();
    },
  };
}
