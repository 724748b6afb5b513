import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { connectRedis } from '../../src/core/redis-connection.js';

/**
 * Which Redis the shared-limits tests use: `PICTOR_TEST_REDIS_URL`. Without
 * it they are skipped, with the reason in their name, except in CI
 * (`CI=true`), where a missing Redis fails them instead.
 */
export interface TestRedis {
  url: string | undefined;
  /** Set when the tests are skipped: why. */
  skipReason: string | undefined;
}

export function testRedis(): TestRedis {
  const url = process.env.PICTOR_TEST_REDIS_URL?.trim() || undefined;
  const inCi = /^(1|true|yes)$/i.test(process.env.CI ?? '');
  if (url || inCi) return { url, skipReason: undefined };
  return { url: undefined, skipReason: 'skipped: set PICTOR_TEST_REDIS_URL (e.g. redis://127.0.0.1:6390) to run them' };
}

/** The URL, or the failure a CI run must report when there is none. */
export function requireRedisUrl(redis: TestRedis): string {
  if (!redis.url) throw new Error('PICTOR_TEST_REDIS_URL is not set, and CI=true: the shared-limits tests need a Redis (see .ci/run)');
  return redis.url;
}

/** A key prefix no other test uses. */
export function uniquePrefix(what: string): string {
  return `pictor-test:${what}:${randomUUID().slice(0, 8)}`;
}

/** Deletes every key a test made under `prefix` (ours and bottleneck's `b_<prefix>…`). */
export async function deleteKeys(url: string, prefix: string): Promise<void> {
  const redis: Redis = await connectRedis(url);
  try {
    for (const pattern of [`${prefix}:*`, `b_${prefix}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys);
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}
