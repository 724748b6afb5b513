import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  type RedisConfig,
  type RedisLogger,
  readUsageRetentionDays,
  openQuotaStore,
  type LedgerKind,
  type QuotaStore,
  type SpendLimits,
  JobLedger,
} from 'pictor/internal';
import type { LoggerLike } from 'pictor';

/** Where the node's spending is counted, and the account caps it enforces there. */
export interface LedgerKey {
  /** The account's caps from the credential (undefined: no cap). */
  limits: SpendLimits;
  /** With a Redis URL: the ledger every process of the account shares (the bots' with the same REDIS_URL and prefix). */
  redis?: RedisConfig | undefined;
  /** Without Redis: the folder of the file ledger (shared by every process of this machine that uses it). */
  ledgerFolder: string;
  /** How long usage records are kept; default `PICTOR_USAGE_RETENTION_DAYS` of n8n's environment, else 400 days. */
  usageRetentionDays?: number | undefined;
  /** `emulator` when the credential's Base URL is a Pictor emulator (`ledgerKindOf`): its own ledger, never the account's. Default `account`. */
  ledger?: LedgerKind | undefined;
}

/**
 * n8n's own folder (`N8N_USER_FOLDER/.n8n`, else `~/.n8n`), where the node
 * keeps its file ledger by default: it survives restarts like n8n's database.
 */
export function defaultLedgerFolder(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.N8N_USER_FOLDER?.trim() || homedir(), '.n8n', 'pictor');
}

/** Whether requests go through a ledger at all: with Redis always (the account's spending is shared), else only when a cap is set. */
export function needsLedger(key: LedgerKey): boolean {
  return key.redis !== undefined || key.limits.accountDailyUsd !== undefined || key.limits.accountMonthlyUsd !== undefined;
}

/**
 * One ledger store per Redis (URL and prefix) or folder for the whole n8n
 * process, like the limiters: every execution of every workflow counts its
 * spending in the same place, and a file ledger has one store per process, as
 * the file lock expects. A failure is not kept, so the next execution tries again.
 */
const stores = new Map<string, Promise<QuotaStore>>();

const digest = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 16);

/** The registry key of a ledger: its kind and where it is (a hash of the Redis URL and prefix, or the folder). */
function ledgerId(key: LedgerKey): string {
  const where = key.redis ? `redis:${digest(key.redis.url, key.redis.prefix)}` : `file:${resolve(key.ledgerFolder)}`;
  return `${key.ledger ?? 'account'}:${where}`;
}

export function ledgerFor(key: LedgerKey, options: { logger?: RedisLogger | undefined } = {}): Promise<QuotaStore> {
  const id = ledgerId(key);
  const known = stores.get(id);
  if (known) return known;
  const made = openLedger(key, options);
  stores.set(id, made);
  made.catch(() => {
    if (stores.get(id) === made) stores.delete(id);
  });
  return made;
}

/**
 * One job ledger per ledger store for the whole n8n process (per Redis URL and prefix, or folder, and ledger kind; each
 * queue-mode worker has its own), kept like the store (a failure to open the store is not kept either): every request of
 * every execution and workflow goes through it. Before a request is reserved, its `begin` waits for the settles still
 * under way of the same workflow (the user key is `n8n:<workflow>`), then for those kept, of every workflow on that
 * store, to be tried once more — at most `NEXT_JOB_SETTLE_WAIT_MS` (1 s) in all. A settle the store takes within that
 * second no longer counts its estimate against the next item; past it, the next item is decided on the reservations
 * still held, and may be refused on that estimate.
 */
const jobLedgers = new Map<string, Promise<JobLedger>>();

export function jobLedgerFor(key: LedgerKey, options: { logger?: LoggerLike | undefined } = {}): Promise<JobLedger> {
  const id = ledgerId(key);
  const known = jobLedgers.get(id);
  if (known) return known;
  const made = ledgerFor(key, options).then((store) => new JobLedger({ store, logger: options.logger }));
  jobLedgers.set(id, made);
  made.catch(() => {
    if (jobLedgers.get(id) === made) jobLedgers.delete(id);
  });
  return made;
}

/** The one `openQuotaStore` of every surface: files checked (restored or refused naming the file), usage kept as long as the operator says. */
function openLedger(key: LedgerKey, options: { logger?: RedisLogger | undefined }): Promise<QuotaStore> {
  return openQuotaStore({
    redis: key.redis,
    dataDir: key.ledgerFolder,
    ledger: key.ledger,
    usageRetentionDays: key.usageRetentionDays ?? readUsageRetentionDays(process.env),
    logger: options.logger,
    // A file ledger has one store per process: an unreadable one (LedgerUnreadableError) is closed, so the next execution tries again.
  });
}
