import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A Redis for the shared-limits tests: PICTOR_TEST_REDIS_URL, or a throwaway redis-server from PATH.
    globalSetup: ['test/setup/redis.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
