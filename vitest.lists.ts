/** The test files of each vitest project (vitest.config.ts), paths from the repository's root. */

/**
 * Integration tests: what starts processes (npm start, the CLI as a command, children sharing a Redis), drives
 * discord.js or Bolt against the fakes of Discord and Slack, or a Redis of several processes. The rest are the unit
 * tests (`npm run test:quick`). A new test file is a unit test unless it matches here.
 */
export const INTEGRATION = [
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
  'test/cli/data-dir-config.test.ts',
  'test/cli/interrupt.test.ts',
  'test/cli/killed-while-settling.test.ts',
  'test/cli/commands/completion.test.ts',
  'test/spend/processes.test.ts',
  'test/spend/data-folder-lock-processes.test.ts',
  'test/spend/redis-quota-store.test.ts',
  'test/console/browser.test.ts',
  'test/nodes/package.test.ts',
  'test/nodes/pictor-image-redis.test.ts',
  'test/helpers/npm-start.test.ts',
  'test/helpers/killed-at-test-end.test.ts',
];

/**
 * Unit test files that replace a module with `vi.mock`: they get a module graph of their own (every other file shares
 * its worker's, `isolate: false`, and a mock there would reach the files run after it). A file using `vi.mock` that is
 * in neither list fails test/vitest-lists.test.ts.
 */
export const MOCKS_MODULES = ['test/spend/file-quota-store-commit.test.ts', 'test/spend/cut-off-rule-decides-stores.test.ts', 'test/spend/file-ledger-open-reads.test.ts', 'test/spend/file-ledger-errno.test.ts', 'test/cli/output-paths-whole.test.ts', 'test/core/atomic-file-no-hard-links.test.ts', 'test/core/atomic-file-leftovers.test.ts', 'test/core/atomic-file-folder-sync.test.ts', 'test/cli/commands/image-job-interrupted-writing.test.ts'];
/** Integration test files that replace a module with `vi.mock`: a module graph of their own too. */
export const INTEGRATION_MOCKS_MODULES = ['test/bots/slack/surface.test.ts', 'test/bots/state/upgrade-stops.test.ts', 'test/bots/state/file-forget-reads.test.ts', 'test/bots/console-reconciles.test.ts'];
