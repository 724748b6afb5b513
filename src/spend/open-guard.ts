import { userInfo } from 'node:os';
import type { CoreConfig } from '../config.js';
import type { LoggerLike } from '../client/PictorClient.js';
import { accountCaps } from './caps.js';
import { FileQuotaStore } from './FileQuotaStore.js';
import { SpendGuard } from './guarded-client.js';
import type { QuotaStore } from './types.js';

/**
 * The spend guard of a process that sends requests itself (the CLI): the
 * account's caps on the shared ledger — Redis with `REDIS_URL`, else the file
 * ledger in `PICTOR_DATA_DIR`. Without Redis and without an account cap there
 * is nothing to enforce, and no ledger file is created.
 */
export async function openSpendGuard(config: CoreConfig, logger: LoggerLike): Promise<{ guard: SpendGuard; close(): Promise<void> } | undefined> {
  const limits = accountCaps(config.spend.caps);
  const capped = limits.accountDailyUsd !== undefined || limits.accountMonthlyUsd !== undefined;
  if (!config.redis && !capped) return undefined;
  let store: QuotaStore;
  if (config.redis) {
    const { RedisQuotaStore } = await import('./RedisQuotaStore.js'); // ioredis only with REDIS_URL
    store = await RedisQuotaStore.connect(config.redis, {
      logger,
      onError: (err) => logger.warn({ err }, 'could not renew the spend lease'),
      usageRetentionDays: config.spend.usageRetentionDays,
    });
  } else {
    const file = new FileQuotaStore({
      dir: config.spend.dataDir,
      onError: (err) => logger.warn({ err }, 'could not renew the spend lease'),
      usageRetentionDays: config.spend.usageRetentionDays,
    });
    try {
      const opened = await file.open();
      if (opened.restoredFromBackup) logger.warn({ path: file.path, brokenCopy: opened.brokenCopy }, 'the spend ledger was unreadable: restored its backup copy');
    } catch (error) {
      await file.close();
      throw error;
    }
    store = file;
  }
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): spending is still counted, under "unknown".
  }
  return {
    guard: new SpendGuard({ store, limits, userKey: `cli:${user}`, scopeKey: 'cli', recordPrompts: config.spend.recordPrompts }),
    close: () => store.close(),
  };
}
