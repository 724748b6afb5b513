import { userInfo } from 'node:os';
import type { CoreConfig } from '../config.js';
import type { LoggerLike } from '../client/PictorClient.js';
import type { RedisLink } from '../core/redis-connection.js';
import { accountCaps } from './caps.js';
import { SpendGuard } from './spend-guard.js';
import { openQuotaStore, type LedgerKind } from './open-store.js';

/**
 * The spend guard of a process that sends requests itself (the CLI): the
 * account's caps on the shared ledger — Redis with `REDIS_URL`, else the file
 * ledger in `PICTOR_DATA_DIR` (default the user's state folder) — or, for a
 * Pictor emulator (`ledgerKindOf`), the same caps on the emulator's own ledger.
 * Every job is recorded in one or the other, for `pictor usage`.
 */
export async function openSpendGuard(
  config: CoreConfig,
  ledger: LedgerKind,
  logger: LoggerLike,
  link?: RedisLink,
): Promise<{ guard: SpendGuard; close(): Promise<void> }> {
  const store = await openQuotaStore({
    redis: config.redis,
    link,
    dataDir: config.spend.dataDir,
    ledger,
    usageRetentionDays: config.spend.usageRetentionDays,
    logger,
  });
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): spending is still counted, under "unknown".
  }
  const guard = new SpendGuard({ store, limits: accountCaps(config.spend.caps), userKey: `cli:${user}`, scopeKey: 'cli', recordPrompts: config.spend.recordPrompts });
  return {
    guard,
    // The caller got its result without waiting for the job's settle: it lands (or is kept) before the ledger closes.
    close: async () => {
      await guard.settlesUnderWay();
      await store.close();
    },
  };
}
