import { z } from 'zod';
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

const blankToUndefined = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);

const RedisEnvSchema = z.object({
  REDIS_URL: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .refine(isRedisUrl, { error: () => 'REDIS_URL must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379' })
      .optional(),
  ),
  PICTOR_REDIS_PREFIX: z.preprocess(
    blankToUndefined,
    z
      .string()
      .trim()
      .regex(PREFIX_PATTERN, {
        error: () => 'PICTOR_REDIS_PREFIX must be 1 to 64 letters, digits, _ . : or -, starting with a letter or digit',
      })
      .optional(),
  ),
});

/**
 * Reads `REDIS_URL` and `PICTOR_REDIS_PREFIX`. Returns undefined without a
 * `REDIS_URL` (each process then limits and budgets on its own). Throws a
 * ValidationError naming the variable; the URL's password never appears in it.
 */
export function readRedisConfig(env: NodeJS.ProcessEnv): RedisConfig | undefined {
  const parsed = RedisEnvSchema.safeParse({ REDIS_URL: env.REDIS_URL, PICTOR_REDIS_PREFIX: env.PICTOR_REDIS_PREFIX });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const variable = String(issue.path[0] ?? 'REDIS_URL');
    const raw = env[variable];
    // A URL that does not parse cannot be redacted reliably, so it is never echoed.
    const got = variable === 'PICTOR_REDIS_PREFIX' && typeof raw === 'string' ? ` (got ${JSON.stringify(raw)})` : '';
    throw new ValidationError(variable, `${issue.message}${got}`);
  }
  const { REDIS_URL: url, PICTOR_REDIS_PREFIX: prefix } = parsed.data;
  if (url === undefined) {
    if (prefix !== undefined) {
      throw new ValidationError('PICTOR_REDIS_PREFIX', 'PICTOR_REDIS_PREFIX is set but REDIS_URL is not: set REDIS_URL to share limits through Redis, or unset the prefix');
    }
    return undefined;
  }
  return { url, prefix: prefix ?? DEFAULT_REDIS_PREFIX };
}

/** The config with the URL's password hidden, for logs. */
export function describeRedisConfig(config: RedisConfig): string {
  return `${redactRedisUrl(config.url)} (prefix ${config.prefix})`;
}

function isRedisUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
  } catch {
    return false;
  }
}
