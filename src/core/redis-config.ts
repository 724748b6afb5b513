import { envError, envText, envUrl, type Env } from './env.js';
import { ValidationError } from './errors.js';
import { redactRedisUrl } from './redis-url.js';

/**
 * Where processes that share one account meet: a Redis URL and a key prefix
 * per account. Every Pictor process (CLI, bots, n8n) given the same URL and
 * prefix shares one rate limiter, one queue and one spending ledger.
 */
export interface RedisConfig {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://…` (TLS). */
  url: string;
  /** Put in front of every key; one per account (API key). Default `pictor`. */
  prefix: string;
}

export const DEFAULT_REDIS_PREFIX = 'pictor';

/** Letters, digits and `_ . : -`, starting with a letter or digit; no spaces or braces. */
const PREFIX_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;

/** A database number: digits only (the Redis client reads `3abc` as 3 and `abc` as NaN, so neither is let through). */
const DB_PATTERN = /^[0-9]+$/;

/**
 * The URL's database: the path (`/3`) or, without a path, the `db` query parameter the Redis client also reads; 0 when
 * it names none. The one check of a Redis URL's database, for every entry (the bots, the CLI and n8n read the URL here;
 * `connectRedis` asks again for a URL given to it directly). Throws a ValidationError naming `setting` (default
 * REDIS_URL) for anything but an empty path or `/<non-negative integer>`, or a URL that does not parse; never with the
 * URL in it.
 */
export function redisDatabaseOf(url: string, setting = 'REDIS_URL'): number {
  const refused = () => new ValidationError(setting, `${setting} must be a redis:// or rediss:// URL whose path is empty or a database number (e.g. redis://127.0.0.1:6379/2)`);
  if (!URL.canParse(url)) throw refused();
  const parsed = new URL(url);
  const path = parsed.pathname === '/' ? '' : parsed.pathname.replace(/^\//, '');
  const query = parsed.searchParams.get('db') ?? '';
  for (const db of [path, query]) if (db !== '' && !DB_PATTERN.test(db)) throw refused();
  // The path wins over the query, as the Redis client reads them.
  const db = Number(path || query || '0');
  if (!Number.isSafeInteger(db)) throw refused();
  return db;
}

/**
 * Reads `REDIS_URL` and `PICTOR_REDIS_PREFIX`. Returns undefined without a
 * `REDIS_URL` (each process then limits and budgets on its own). Throws a
 * ValidationError naming the variable (a path other than empty or a database
 * number among the reasons); the URL's password never appears in it.
 */
export function readRedisConfig(env: Env): RedisConfig | undefined {
  // A URL that does not parse cannot be redacted reliably, so it is never echoed.
  const url = envUrl(env, 'REDIS_URL', { protocols: ['redis', 'rediss'], example: 'redis://127.0.0.1:6379', secret: true });
  const prefix = envText(env, 'PICTOR_REDIS_PREFIX');
  if (prefix !== undefined && !PREFIX_PATTERN.test(prefix)) {
    throw envError(env, 'PICTOR_REDIS_PREFIX', '1 to 64 letters, digits, _ . : or -, starting with a letter or digit');
  }
  if (url === undefined) {
    if (prefix !== undefined) {
      throw new ValidationError('PICTOR_REDIS_PREFIX', 'PICTOR_REDIS_PREFIX is set but REDIS_URL is not: set REDIS_URL to share limits through Redis, or unset the prefix');
    }
    return undefined;
  }
  redisDatabaseOf(url, 'REDIS_URL');
  return { url, prefix: prefix ?? DEFAULT_REDIS_PREFIX };
}

/** The config with the URL's password hidden, for logs. */
export function describeRedisConfig(config: RedisConfig): string {
  return `${redactRedisUrl(config.url)} (prefix ${config.prefix})`;
}
