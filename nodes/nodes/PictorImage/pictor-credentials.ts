import { ValidationError } from '../../../src/core/errors.js';
import { readRedisConfig, type RedisConfig } from '../../../src/core/redis-config.js';

/** What the node reads from its "Pictor API" credential (the Redis fields are absent on credentials saved before they existed). */
export interface PictorCredentials {
  apiKey: string;
  baseUrl: string;
  /** Empty: the limiter is this n8n process's own. */
  redisUrl?: string | undefined;
  /** One per account; empty means the core's default. */
  redisPrefix?: string | undefined;
}

export const CREDENTIAL_NAME = 'pictorApi';

/**
 * Where processes sharing the account's limits meet, from the credential's
 * Redis URL and Key Prefix (checked by the core's `readRedisConfig`);
 * undefined when the Redis URL is empty. Throws the core's ValidationError
 * (`param` REDIS_URL or PICTOR_REDIS_PREFIX) for a bad value.
 */
export function sharedLimitsOf(credentials: PictorCredentials): RedisConfig | undefined {
  const url = typeof credentials.redisUrl === 'string' ? credentials.redisUrl : '';
  // The prefix has a default in the credential, so it only counts once a Redis URL is set.
  if (url.trim() === '') return undefined;
  const prefix = typeof credentials.redisPrefix === 'string' ? credentials.redisPrefix : '';
  return readRedisConfig({ REDIS_URL: url, PICTOR_REDIS_PREFIX: prefix });
}

/** Why a credential cannot work, before anything is sent; undefined when it may. Never echoes the Redis URL (it can hold a password). */
export function credentialProblem(credentials: PictorCredentials): string | undefined {
  if (typeof credentials.apiKey !== 'string' || credentials.apiKey.trim() === '') return 'Pictor API credential: the API Key is empty';
  const baseUrl = String(credentials.baseUrl ?? '');
  if (baseUrl.trim() === '') return 'Pictor API credential: the Base URL is empty; set the address of your image service';
  if (!(URL.canParse(baseUrl.trim()) && /^https?:$/.test(new URL(baseUrl.trim()).protocol))) {
    return `Pictor API credential: the Base URL ${JSON.stringify(baseUrl)} is not an http(s) address`;
  }
  try {
    sharedLimitsOf(credentials);
  } catch (error) {
    if (error instanceof ValidationError && error.param === 'PICTOR_REDIS_PREFIX') {
      return `Pictor API credential: the Redis Key Prefix ${JSON.stringify(credentials.redisPrefix)} is not valid; use 1 to 64 letters, digits, _ . : or -, starting with a letter or digit`;
    }
    return 'Pictor API credential: the Redis URL is not a redis:// or rediss:// address (e.g. redis://127.0.0.1:6379); leave it empty to limit this n8n process on its own';
  }
  return undefined;
}
