import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * Integration tests: what starts processes (npm start, the CLI as a command, children sharing a Redis), drives
 * discord.js or Bolt against the fakes of Discord and Slack, or a Redis of several processes. The rest are the unit
 * tests (`npm run test:quick`). A new test file is a unit test unless it matches here.
 */
const INTEGRATION = [
  'test/bots/*.test.ts',
  'test/bots/discord/**/*.test.ts',
  'test/bots/slack/**/*.test.ts',
  'test/bots/state/**/*.test.ts',
  'test/shared-limits/**/*.test.ts',
  'test/compat/**/*.test.ts',
  'test/setup/**/*.test.ts',
  'test/deploy/grafana-dashboard.test.ts',
  'test/cli/bundle.test.ts',
  'test/cli/entry-point.test.ts',
  'test/cli/interrupt.test.ts',
  'test/cli/commands/completion.test.ts',
  'test/spend/processes.test.ts',
  'test/spend/redis-quota-store.test.ts',
  'test/console/browser.test.ts',
  'test/nodes/package.test.ts',
  'test/nodes/pictor-image-redis.test.ts',
];

/** Unit test files that replace a module with `vi.mock`: they get a module graph of their own. */
const MOCKS_MODULES = ['test/spend/file-quota-store-commit.test.ts'];
/** Integration test files that replace a module with `vi.mock`: a module graph of their own too. */
const INTEGRATION_MOCKS_MODULES = ['test/bots/slack/surface.test.ts', 'test/bots/state/upgrade-stops.test.ts'];

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
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...INTEGRATION, ...MOCKS_MODULES, ...INTEGRATION_MOCKS_MODULES] } },
      { extends: true, test: { name: 'unit-isolated', include: MOCKS_MODULES, isolate: true } },
      { extends: true, test: { name: 'integration', include: INTEGRATION, exclude: [...MOCKS_MODULES, ...INTEGRATION_MOCKS_MODULES] } },
      { extends: true, test: { name: 'integration-isolated', include: INTEGRATION_MOCKS_MODULES, isolate: true } },
    ],
  },
});
