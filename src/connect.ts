import { PictorClient } from '../client/PictorClient.js';
import { createImageLimiter } from '../core/shared-limiter.js';
import type { Logger } from '../core/logger.js';
import type { CoreConfig } from '../config.js';
import { createEmulator, DEV_API_KEY } from '../emulator/index.js';

export interface Connection {
  client: PictorClient;
  /** Set when no upstream is configured and an embedded emulator was started. */
  emulatorUrl: string | undefined;
  close(): Promise<void>;
}

/**
 * A client for the configured service, or, with no `PICTOR_BASE_URL`, for an
 * emulator started in this process (the embedded default).
 */
export async function connect(config: CoreConfig, logger: Logger): Promise<Connection> {
  // With REDIS_URL this limiter is shared with every other Pictor process on the account.
  const limiter = await createImageLimiter({ imagesPerMinute: config.imagesPerMinute, maxConcurrent: config.maxConcurrent, redis: config.redis, logger });
  const common = { limiter, logger, timeoutMs: config.timeoutMs, maxRetries: config.maxRetries };
  if (config.baseURL) {
    const client = new PictorClient({ ...common, baseURL: config.baseURL, apiKey: config.apiKey });
    return { client, emulatorUrl: undefined, close: () => limiter.stop() };
  }
  const apiKey = config.apiKey ?? DEV_API_KEY;
  const emulator = createEmulator({ apiKeys: [apiKey] });
  const server = await emulator.listen({ port: 0, host: '127.0.0.1' });
  logger.debug({ url: server.url }, 'no PICTOR_BASE_URL: using an embedded emulator');
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
