import type { TestProject } from 'vitest/node';
import { startThrowawayRedis } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Redis the shared-limits tests use; '' when there is none (they are skipped, or fail in CI). */
    pictorTestRedisUrl: string;
  }
}

/** The one line a test run prints when it has no Redis. */
export const REDIS_SKIP_LINE =
  'Redis tests: skipped (no redis-server on PATH, PICTOR_TEST_REDIS_URL unset). To run them: install redis-server (Debian/Ubuntu: apt-get install redis-server) or set PICTOR_TEST_REDIS_URL=redis://127.0.0.1:6379';

/**
 * vitest globalSetup: the Redis for the tests that need one. PICTOR_TEST_REDIS_URL
 * when it is set; otherwise a throwaway redis-server on a free loopback port when
 * one is on PATH (stopped after the run); otherwise none, said in one line.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const configured = process.env.PICTOR_TEST_REDIS_URL?.trim();
  if (configured) {
    project.provide('pictorTestRedisUrl', configured);
    return undefined;
  }
  const redis = await startThrowawayRedis();
  if (!redis) {
    // In CI (CI=true) the tests that need Redis fail rather than skip (test/helpers/shared-limits-redis.ts).
    const inCi = /^(1|true|yes)$/i.test(process.env.CI ?? '');
    console.log(inCi ? REDIS_SKIP_LINE.replace('skipped', 'missing, and CI=true: they fail') : REDIS_SKIP_LINE);
    project.provide('pictorTestRedisUrl', '');
    return undefined;
  }
  console.log(`Redis tests: using a throwaway redis-server at ${redis.url} (set PICTOR_TEST_REDIS_URL to use another)`);
  project.provide('pictorTestRedisUrl', redis.url);
  return () => redis.stop();
}
