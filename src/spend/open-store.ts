import { join, resolve } from 'node:path';
import type { RedisConfig } from '../core/redis-config.js';
import type { RedisLink, RedisLogger } from '../core/redis-connection.js';
import { FileQuotaStore } from './FileQuotaStore.js';
import type { LostReservation, QuotaStore, ReconcileReport } from './types.js';
import { DEFAULT_USAGE_RETENTION_DAYS } from './usage-records.js';

/**
 * Which ledger: the real account's, or the embedded emulator's. Jobs run
 * against the emulator (no `PICTOR_BASE_URL`) never count against the
 * account: they have a ledger of their own — the `emulator` folder inside
 * the data folder, or the Redis prefix `<prefix>:emulator`, which their
 * shared limiter uses too (`ledgerRedis`).
 */
export type LedgerKind = 'account' | 'emulator';

export interface OpenQuotaStoreOptions {
  /** With Redis: the ledger every process of the account shares. */
  redis?: RedisConfig | undefined;
  /** The process's link to that Redis (not closed by the store); default a connection of the store's own. */
  link?: RedisLink | undefined;
  /** Without Redis: the data folder of the file ledger. */
  dataDir: string;
  ledger?: LedgerKind | undefined;
  /** `PICTOR_USAGE_RETENTION_DAYS`. Default 400. */
  usageRetentionDays?: number | undefined;
  /** Warnings (a lease not renewed, reservations of a dead process ended, a file restored) and Redis's connection news. */
  logger?: RedisLogger | undefined;
  /** Told (one sentence) when a ledger file was replaced by its backup copy: a damaged one at start, or one deleted while the process runs. Default: a warning in the log. */
  onRestored?: ((sentence: string) => void) | undefined;
  /** End the reservations left by a process that died (kill -9, crash) before answering. Default true. */
  reconcile?: boolean | undefined;
  /** Called with what each step that ended a dead process's reservations (a reconcile, or a reserve, read or write that met them) charged or released, once, so metrics can count it. */
  onReconciled?: ((report: ReconcileReport) => void) | undefined;
  /** Called for each reservation the ledger had lost (Redis restarted empty, a flush), after the warning, so metrics can count it. */
  onReservationLost?: ((lost: LostReservation) => void) | undefined;
}

/** The data folder of a ledger: the emulator's is a folder of its own inside it. */
export function ledgerDir(dataDir: string, ledger: LedgerKind = 'account'): string {
  return ledger === 'emulator' ? resolve(join(dataDir, 'emulator')) : resolve(dataDir);
}

/** The Redis prefix of a ledger, and of the limiter its jobs go through: an emulator's never shares the account's keys. */
export function ledgerRedis(redis: RedisConfig, ledger: LedgerKind = 'account'): RedisConfig {
  return ledger === 'emulator' ? { ...redis, prefix: `${redis.prefix}:emulator` } : redis;
}

/**
 * The one way every surface (the CLI, `npm start`, the n8n node) opens its
 * ledger: Redis with a Redis config, else the file ledger in `dataDir`. Every
 * file of a file ledger is checked first (`FileQuotaStore.open`): a damaged
 * one is restored from its backup copy (said through `onRestored`) or the
 * open fails with LedgerUnreadableError naming the file and what to do —
 * so a surface never goes online with a ledger it cannot use. Then the
 * reservations of dead processes are ended.
 */
export async function openQuotaStore(options: OpenQuotaStoreOptions): Promise<QuotaStore> {
  const { logger } = options;
  const onError = (err: unknown) => logger?.warn({ err }, 'could not renew the spend lease (or drop expired usage records; or, on Redis, look through an older version\'s, or have Redis rewrite its append-only file after a forget; or an onReconciled hook failed, the ledger step it was told of written all the same: the error says which)');
  const onReservationLost = (lost: LostReservation) => {
    logger?.warn(
      lost,
      lost.foundAt === 'send'
        ? 'the spend ledger had lost the reservation of a job about to be sent (Redis restarted without its data, or was flushed): put it back'
        : 'the spend ledger had lost the reservation of a job the service answered (Redis restarted without its data, or was flushed): charged and recorded it all the same',
    );
    options.onReservationLost?.(lost);
  };
  const onReconciled = (report: ReconcileReport) => {
    logger?.warn(report, 'ended the reservations of a process that stopped without settling them');
    options.onReconciled?.(report);
  };
  const usageRetentionDays = options.usageRetentionDays ?? DEFAULT_USAGE_RETENTION_DAYS;
  let store: QuotaStore;
  if (options.redis) {
    const { RedisQuotaStore } = await import('./RedisQuotaStore.js'); // ioredis only with a Redis URL
    const { prefix } = ledgerRedis(options.redis, options.ledger);
    store = options.link
      ? new RedisQuotaStore({ redis: options.link.commands, prefix, onError, onReservationLost, onReconciled, usageRetentionDays })
      : await RedisQuotaStore.connect(ledgerRedis(options.redis, options.ledger), { logger, onError, onReservationLost, onReconciled, usageRetentionDays });
  } else {
    const tell = (sentence: string) => (options.onRestored ? options.onRestored(sentence) : logger?.warn({ path: file.path }, sentence));
    const ledgerRestored = ({ brokenCopy }: { brokenCopy?: string | undefined }) => {
      const what = brokenCopy ? `was unreadable (kept as ${brokenCopy})` : 'was missing';
      return `The spend ledger ${file.path} ${what}: restored its backup copy ${file.backupPath}, one change behind.`;
    };
    // Deleted while the process runs: put back by the next step, which goes on (the job it was for is charged).
    const file: FileQuotaStore = new FileQuotaStore({
      dir: ledgerDir(options.dataDir, options.ledger),
      onError,
      onReservationLost,
      onReconciled,
      onRestored: (restored) => tell(ledgerRestored(restored)),
      usageRetentionDays,
    });
    try {
      const opened = await file.open();
      if (opened.restoredFromBackup) tell(ledgerRestored(opened));
      if (opened.movedUsage) {
        const { records, damaged } = opened.movedUsage;
        logger?.info({ path: file.usagePath, records, damaged }, `Moved ${records} usage records of usage.jsonl into ${file.usagePath} (one file a day, prompts apart); ${damaged} damaged lines dropped.`);
      }
      if (opened.restoredCapOverrides) tell(`The chat admins' caps ${file.capOverridesPath} were unreadable: restored their backup copy, one change behind.`);
    } catch (error) {
      await file.close();
      throw error;
    }
    store = file;
  }
  if (options.reconcile === false) return store;
  try {
    await store.reconcile(Date.now()); // told through onReconciled, as every later one
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
