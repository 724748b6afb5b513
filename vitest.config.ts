import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
// Which test file runs in which project.
import { INTEGRATION, INTEGRATION_MOCKS_MODULES, MOCKS_MODULES } from './vitest.lists.js';

export default defineConfig({
  // bots/ and nodes/ import the core by its package name: the sources, as tsconfig.json's "paths" map it.
  resolve: {
    alias: [
      { find: /^pictor$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      { find: /^pictor\/internal$/, replacement: fileURLToPath(new URL('./src/internal.ts', import.meta.url)) },
    ],
  },
  test: {
    // A Redis for the shared-limits tests: PICTOR_TEST_REDIS_URL, or a throwaway redis-server from PATH.
    globalSetup: ['test/setup/redis.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Most of a test's time is spent waiting (on a fake platform, the emulator, a child process), not computing:
    // vitest's default of one worker per core but one (a single worker on 2 cores) left the machine idle most of
    // the run. Measured in bench/RESULTS.md ("Test suite").
    maxWorkers: 4,
    // One module graph per worker, not per file: the files import the same modules (zod, undici, sharp, discord.js,
    // Bolt, n8n-workflow), and loading them again for each file was most of the suite's CPU time. A test must
    // therefore leave global state as it found it; a file that replaces a module (vi.mock) runs isolated.
    isolate: false,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...INTEGRATION, ...MOCKS_MODULES] } },
      { extends: true, test: { name: 'unit-isolated', include: MOCKS_MODULES, isolate: true } },
      { extends: true, test: { name: 'integration', include: INTEGRATION, exclude: INTEGRATION_MOCKS_MODULES } },
      { extends: true, test: { name: 'integration-isolated', include: INTEGRATION_MOCKS_MODULES, isolate: true } },
    ],
  },
});
