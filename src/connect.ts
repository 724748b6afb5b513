import { PictorClient, type LoggerLike } from './client/PictorClient.js';
import type { HookedRequest } from './client/request-hook.js';
import { ImageLimiter } from './core/image-limiter.js';
import type { RedisLink } from './core/redis-connection.js';
import { redactRedisUrl } from './core/redis-url.js';
import type { CoreConfig } from './config.js';
import { ledgerKindOf } from './spend/ledger-kind.js';
import type { LedgerKind } from './spend/open-store.js';
import type { SpendWatch } from './spend/spend-guard.js';

export interface Connection {
  client: PictorClient;
  /** Set when no upstream is configured and an embedded emulator was started. */
  emulatorUrl: string | undefined;
  /** The embedded emulator's base time per image (service-like scaling), when one was started. */
  emulatorLatencyMs: number | undefined;
  /** Where its jobs count: `emulator` for the embedded one and for a Pictor emulator `PICTOR_BASE_URL` points at (nothing is spent). */
  ledger: LedgerKind;
  /** Stops the limiter, then the embedded emulator (if any). */
  close(): Promise<void>;
}

/**
 * The one way an entry point (the CLI, `npm start`) gets its client: for the
 * configured service, or, with no `PICTOR_BASE_URL`, for an emulator started in
 * this process (the embedded default), always through the limiter of its
 * ledger (shared through Redis with `REDIS_URL`): the account's, or for an
 * emulator one of its own.
 *
 * What only some set-ups need is imported when they need it: the Redis client
 * with `REDIS_URL`, the emulator (and its image encoder) without
 * `PICTOR_BASE_URL`, so a one-off CLI run against a service starts fast.
 */
export async function connect(
  config: CoreConfig,
  logger: LoggerLike,
  options: {
    emulatorPort?: number;
    /** The embedded emulator's base time per image when `PICTOR_EMULATOR_LATENCY_MS` is not set (default 0, instant). */
    emulatorLatencyMs?: number;
    /** Guard every request with the account's caps (default true); `npm start` guards in its job runner instead. */
    spendGuard?: boolean;
    /** With `REDIS_URL`: the process's link to Redis (not closed here). Default a link of the connection's own. */
    redis?: RedisLink;
    /**
     * Told of each job the spend guard reserved, with its watch: once the client has handed over the job's result or
     * error, `watch.settled` is how the ledger ended it (settled and what, or released). A job refused before its
     * reservation is never told: no settle is coming for it.
     */
    onJob?: (watch: SpendWatch) => void;
    /**
     * Gives up connecting when aborted (the CLI's Ctrl+C): Redis's connection attempt and the emulator probe are
     * dropped at once, what was opened is closed, and the call rejects with the signal's reason. Nothing was sent.
     */
    signal?: AbortSignal;
  } = {},
): Promise<Connection> {
  const { signal } = options;
  signal?.throwIfAborted();
  // One command connection and one subscriber for the limiter and the ledger (see RedisLink).
  let link: RedisLink | undefined = options.redis;
  if (!link && config.redis) {
    const { RedisLink } = await import('./core/redis-connection.js');
    signal?.throwIfAborted();
    logger.debug({ redis: redactRedisUrl(config.redis.url) }, 'connecting to Redis');
    link = await RedisLink.open(config.redis, { logger, signal });
  }
  const closeLink = async () => {
    if (link && !options.redis) await link.close();
  };
  let limiter: ImageLimiter | undefined;
  let spend;
  let ledger: LedgerKind;
  try {
    signal?.throwIfAborted();
    // The ledger first: an emulator's jobs are paced by a limiter of its own, never the account's.
    ledger = await ledgerKindOf(config, { signal });
    signal?.throwIfAborted();
    limiter = await makeLimiter(config, ledger, logger, link);
    if (config.baseURL && ledger === 'emulator') logger.debug({ url: config.baseURL }, 'PICTOR_BASE_URL answers as a Pictor emulator: its jobs go to the emulator\'s ledger');
    spend = options.spendGuard === false ? undefined : await openGuard(config, ledger, logger, link);
    signal?.throwIfAborted();
  } catch (error) {
    await limiter?.stop();
    await spend?.close();
    await closeLink();
    throw error;
  }
  const stopAll = async () => {
    await limiter.stop();
    await spend?.close();
    await closeLink();
  };
  const common = { limiter, logger, timeoutMs: config.timeoutMs, maxRetries: config.maxRetries };
  const { onJob } = options;
  const guarded = spend?.guard.onRequest;
  const onRequest =
    guarded && onJob
      ? async (request: HookedRequest) => {
          const watch = await guarded(request);
          onJob(watch);
          return watch;
        }
      : guarded;
  const newClient = (baseURL: string, apiKey: string | undefined): PictorClient => new PictorClient({ ...common, baseURL, apiKey, onRequest });
  if (config.baseURL) {
    const client = newClient(config.baseURL, config.apiKey);
    return { client, emulatorUrl: undefined, emulatorLatencyMs: undefined, ledger, close: stopAll };
  }
  const latencyMs = config.emulatorLatencyMs ?? options.emulatorLatencyMs ?? 0;
  let server;
  let apiKey;
  try {
    const { createEmulator, DEV_API_KEY } = await import('./emulator/index.js');
    apiKey = config.apiKey ?? DEV_API_KEY;
    server = await createEmulator({ apiKeys: [apiKey], latencyMs, latencyScales: true }).listen({ port: options.emulatorPort ?? 0, host: '127.0.0.1' });
  } catch (error) {
    await stopAll();
    throw error;
  }
  logger.debug({ url: server.url }, 'no PICTOR_BASE_URL: started an embedded emulator (no money is spent)');
  const client = newClient(server.url, apiKey);
  return {
    client,
    emulatorUrl: server.url,
    emulatorLatencyMs: latencyMs,
    ledger,
    close: async () => {
      await stopAll();
      await server.close();
    },
  };
}

/**
 * With REDIS_URL this limiter is shared with every other Pictor process on the account; without, it is this process's
 * own. An emulator's is shared under the emulator ledger's prefix (`ledgerRedis`): its images, its 429 pauses and its
 * `PICTOR_MAX_CONCURRENT` never touch the account's limiter.
 */
async function makeLimiter(config: CoreConfig, ledger: LedgerKind, logger: LoggerLike, link: RedisLink | undefined): Promise<ImageLimiter> {
  const { imagesPerMinute, maxConcurrent, redis } = config;
  if (!redis) return new ImageLimiter({ imagesPerMinute, maxConcurrent });
  const [{ createImageLimiter }, { ledgerRedis }] = await Promise.all([import('./core/shared-limiter.js'), import('./spend/open-store.js')]);
  return createImageLimiter({ imagesPerMinute, maxConcurrent, redis: ledgerRedis(redis, ledger), link, logger });
}

/**
 * The spend guard: every job is recorded (for `pictor usage`) and held to the
 * account's caps, in the account's ledger or, for an emulator, the emulator's.
 */
async function openGuard(config: CoreConfig, ledger: LedgerKind, logger: LoggerLike, link: RedisLink | undefined) {
  const { openSpendGuard } = await import('./spend/open-guard.js');
  return openSpendGuard(config, ledger, logger, link);
}
