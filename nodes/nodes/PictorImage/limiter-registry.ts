import { createHash } from 'node:crypto';
import { ImageLimiter } from 'pictor';
import { type LedgerKind, type RedisConfig, type RedisLogger, createImageLimiter, ledgerRedis, normalizeBaseURL } from 'pictor/internal';

/** Which account and limits a throttle stands for. */
export interface ThrottleKey {
  baseURL: string;
  apiKey: string;
  /** Undefined: no pacing by images (429s still pause everyone sharing the limiter). */
  imagesPerMinute: number | undefined;
  maxConcurrent: number;
  /** Where other processes (n8n workers, Pictor bots) share the account's limits; undefined: this n8n process only. */
  redis?: RedisConfig | undefined;
  /**
   * `emulator` when the Base URL is a Pictor emulator (`ledgerKindOf`): shared under the emulator ledger's prefix, so its
   * jobs never use the account's images per minute, pauses or concurrency. Default `account`.
   */
  ledger?: LedgerKind | undefined;
}

export interface LimiterForOptions {
  /** Told when a shared limiter loses its Redis connection and gets it back. */
  logger?: RedisLogger | undefined;
}

/**
 * One limiter per account and limits for the whole n8n process: every
 * execution of every workflow that uses the same credential and limits shares
 * it, so 50 items, or several workflows at once, stay under the account limit.
 * The promise is kept, so executions that start together wait for one
 * connection to Redis instead of each opening their own.
 */
const limiters = new Map<string, Promise<ImageLimiter>>();

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 16);

/** The registry key: ledger kind, base URL, hashes of the key and of the Redis URL and prefix (never the key or URL themselves), and the limits. */
export function throttleId(key: ThrottleKey): string {
  const shared = key.redis ? `redis:${digest(key.redis.url, key.redis.prefix)}` : 'local';
  return [key.ledger ?? 'account', normalizeBaseURL(key.baseURL), digest(key.apiKey), key.imagesPerMinute ?? 'unpaced', key.maxConcurrent, shared].join('|');
}

/**
 * The limiter for these settings, made on first use: the only place the node's
 * limiters are created. With `redis` it is shared through Redis with every
 * process given the same URL and prefix (core's `createImageLimiter`), and
 * rejects with RedisUnavailableError when Redis cannot be reached; a failure
 * is not kept, so the next execution tries again.
 */
export function limiterFor(key: ThrottleKey, options: LimiterForOptions = {}): Promise<ImageLimiter> {
  const id = throttleId(key);
  const known = limiters.get(id);
  if (known) return known;
  const made = makeLimiter(id, key, options);
  limiters.set(id, made);
  made.catch(() => {
    if (limiters.get(id) === made) limiters.delete(id);
  });
  return made;
}

async function makeLimiter(id: string, key: ThrottleKey, options: LimiterForOptions): Promise<ImageLimiter> {
  const { imagesPerMinute, maxConcurrent, redis } = key;
  // Shared: the core picks the bottleneck id (the ledger's prefix); the bucket runs on the service's clock either way.
  if (redis) return createImageLimiter({ imagesPerMinute, maxConcurrent, redis: ledgerRedis(redis, key.ledger), logger: options.logger });
  return new ImageLimiter({
    id: `n8n-nodes-pictor|${id}`,
    imagesPerMinute,
    maxConcurrent,
  });
}
