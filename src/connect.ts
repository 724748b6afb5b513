import { PictorClient } from './client/PictorClient.js';
import { GuardedPictorClient } from './spend/guarded-client.js';
import { createImageLimiter } from './core/shared-limiter.js';
import type { Logger } from './core/logger.js';
import type { CoreConfig } from './config.js';
import { createEmulator, DEV_API_KEY } from './emulator/index.js';
import { openSpendGuard } from './spend/open-guard.js';

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
export async function connect(
  config: CoreConfig,
  logger: Logger,
  options: {
    emulatorPort?: number;
    /** Guard every request with the account's caps (default true); `npm start` guards in its job runner instead. */
    spendGuard?: boolean;
  } = {},
): Promise<Connection> {
  // With REDIS_URL this limiter is shared with every other Pictor process on the account.
  const limiter = await createImageLimiter({ imagesPerMinute: config.imagesPerMinute, maxConcurrent: config.maxConcurrent, redis: config.redis, logger });
  let spend;
  try {
    spend = options.spendGuard === false ? undefined : await openSpendGuard(config, logger);
  } catch (error) {
    await limiter.stop();
    throw error;
  }
  const stopAll = async () => {
    await limiter.stop();
    await spend?.close();
  };
  const common = { limiter, logger, timeoutMs: config.timeoutMs, maxRetries: config.maxRetries };
  const newClient = (baseURL: string, apiKey: string | undefined) =>
    spend ? new GuardedPictorClient({ ...common, baseURL, apiKey, guard: spend.guard }) : new PictorClient({ ...common, baseURL, apiKey });
  if (config.baseURL) {
    const client = newClient(config.baseURL, config.apiKey);
    return { client, emulatorUrl: undefined, close: stopAll };
  }
  const apiKey = config.apiKey ?? DEV_API_KEY;
  const emulator = createEmulator({ apiKeys: [apiKey] });
  let server;
  try {
    server = await emulator.listen({ port: options.emulatorPort ?? 0, host: '127.0.0.1' });
  } catch (error) {
    await stopAll();
    throw error;
  }
  logger.debug({ url: server.url }, 'no PICTOR_BASE_URL: started an embedded emulator (no money is spent)');
  const client = newClient(server.url, apiKey);
  return {
    client,
    emulatorUrl: server.url,
    close: async () => {
      await stopAll();
      await server.close();
    },
  };
}
