import { afterEach, describe, expect, it, vi } from 'vitest';
import { AlertWatcher } from '../../src/console/alerts/watcher.js';
import { startConsole, type RunningConsole } from '../../src/console/index.js';
import { silentLogger } from '../../src/internal.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { spyOnInstance } from '../helpers/instance-spy.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { NO_ALERTS, NO_DEAD_PROCESSES } from './console-harness.js';

/** A file ledger whose folder, as the console is told it, cannot be watched (it is not there). */
class UnwatchableFolderStore extends FileQuotaStore {
  override get storage(): FileQuotaStore['storage'] {
    return { kind: 'file', dir: `${this.path}.not-here` };
  }
}

describe('a settle of the console’s own process (npm start)', () => {
  const running: RunningConsole[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const console of running.splice(0)) await console.close();
  });

  async function consoleOver(store: FileQuotaStore): Promise<{ settledChecks: () => number }> {
    await store.open();
    const started = (await startConsole({
      source: { store, operator: { caps: { accountDailyUsd: 2 }, dmCaps: {}, breaker: undefined, imagesPerMinute: undefined, ledger: 'account' } },
      config: undefined,
      alerts: { ...NO_ALERTS, webhook: { url: 'http://127.0.0.1:9/alerts', secret: 'a-webhook-secret' } },
      ledgerWhere: 'a file ledger',
      logger: silentLogger(),
      tellReconciles: NO_DEAD_PROCESSES,
    }))!;
    running.push(started);
    const settled = spyOnInstance(AlertWatcher.prototype, 'settled', (watcher) => watcher === started.watcher).mockImplementation(() => undefined);
    started.settled();
    return { settledChecks: () => settled.mock.calls.length };
  }

  it('is left to the watch of a file ledger’s folder, which sees its write', async () => {
    const { settledChecks } = await consoleOver(new FileQuotaStore({ dir: await testTempDir('pictor-own-settle-') }));
    expect(settledChecks()).toBe(0);
  });

  it('looks at the alerts itself when the ledger’s folder cannot be watched', async () => {
    const { settledChecks } = await consoleOver(new UnwatchableFolderStore({ dir: await testTempDir('pictor-own-settle-') }));
    expect(settledChecks()).toBe(1);
  });
});
