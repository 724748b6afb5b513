import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { inject } from 'vitest';
import { connectRedis } from '../../src/core/redis-connection.js';

/**
 * Which Redis the shared-limits tests use: `PICTOR_TEST_REDIS_URL`, or else a
 * throwaway redis-server the test run started (test/setup/redis.ts). Without
 * either they are skipped, except in CI (`CI=true`), where a missing Redis
 * fails them instead.
 */
export interface TestRedis {
  url: string | undefined;
  /** Set when the tests are skipped: why. */
  skipReason: string | undefined;
}

export function testRedis(): TestRedis {
  const url = inject('pictorTestRedisUrl') || process.env.PICTOR_TEST_REDIS_URL?.trim() || undefined;
  const inCi = /^(1|true|yes)$/i.test(process.env.CI ?? '');
  if (url || inCi) return { url, skipReason: undefined };
  return { url: undefined, skipReason: 'skipped: no Redis (install redis-server, or set PICTOR_TEST_REDIS_URL)' };
}

/** The URL, or the failure a CI run must report when there is none. */
export function requireRedisUrl(redis: TestRedis): string {
  if (!redis.url) throw new Error('no Redis, and CI=true: the shared-limits tests need redis-server on PATH or PICTOR_TEST_REDIS_URL (see .ci/run)');
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

/** A key's value whatever its type (for tests that look at everything Pictor keeps). */
export async function dumpKey(redis: Redis, key: string): Promise<unknown> {
  const type = await redis.type(key);
  if (type === 'string') return redis.get(key);
  if (type === 'hash') return redis.hgetall(key);
  if (type === 'list') return redis.lrange(key, 0, -1);
  if (type === 'set') return redis.smembers(key);
  if (type === 'zset') return redis.zrange(key, 0, -1);
  if (type === 'stream') return redis.xrange(key, '-', '+');
  return type;
}
