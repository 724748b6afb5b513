import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { ACCOUNT_KEY } from './types.js';

/**
 * The files of a file ledger, all in one data folder. `FileQuotaStore.open()`
 * checks each before a surface takes jobs (see docs/spend-guard.md).
 */
export const LEDGER_FILES = {
  /** Spending and reservations; `<name>.bak` is the previous version. */
  ledger: 'quota-ledger.json',
  /** The usage records: a folder of one file per UTC day, one JSON line per settled job (`usage-days.ts`). */
  usage: 'usage',
  /** Where older versions kept every usage record, prompts inside: moved into `usage` at open. */
  oldUsage: 'usage.jsonl',
  /** The chat admins' caps per scope; `<name>.bak` is the previous version. */
  capOverrides: 'cap-overrides.json',
  /** Slack request signatures seen in the last minutes (HTTP mode), so a replay is dropped after a restart too. */
  replay: 'slack-replay.json',
} as const;

/** The backup copy of a ledger file (`ledger`, `capOverrides`): its previous version, put back when the file is missing or damaged. */
export const backupOf = (file: string): string => `${file}.bak`;

/**
 * Whether `dir` holds a file ledger: its spending, its usage records, or only the backup copy a start puts back (a
 * forget must reach that copy's prompts too). The readers (`pictor usage`, the console) make none.
 */
export function hasFileLedger(dir: string): boolean {
  return [LEDGER_FILES.ledger, backupOf(LEDGER_FILES.ledger), LEDGER_FILES.usage, LEDGER_FILES.oldUsage].some((name) => existsSync(join(dir, name)));
}

/**
 * `<prefix>:quota:<parts>`: every key of a Redis ledger (the table in docs/shared-limits.md) is named here, beside the
 * files of a file ledger, in a module that loads no Redis client (the CLI's readers import it).
 */
export function quotaKey(prefix: string, ...parts: string[]): string {
  return [prefix, 'quota', ...parts].join(':');
}

/** The keys a Redis ledger keeps anything a forget erases in: its usage records, and the account's reservations not yet ended (every reservation is listed there). */
export function keptLedgerKeys(prefix: string): [usage: string, active: string] {
  return [quotaKey(prefix, 'usage'), quotaKey(prefix, 'active', ACCOUNT_KEY)];
}

/**
 * Whether the Redis ledger under `prefix` holds anything a forget erases: its usage records or a reservation not yet
 * ended — two keys looked up in one EXISTS, not a walk of the keyspace.
 */
export async function hasRedisLedger(redis: Pick<Redis, 'exists'>, prefix: string): Promise<boolean> {
  return (await redis.exists(...keptLedgerKeys(prefix))) > 0;
}
