import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { keptLedgerKeys } from './RedisQuotaStore.js';

/**
 * The files of a file ledger, all in one data folder. `FileQuotaStore.open()`
 * checks each before a surface takes jobs (see docs/spend-guard.md).
 */
export const LEDGER_FILES = {
  /** Spending and reservations; `<name>.bak` is the previous version. */
  ledger: 'quota-ledger.json',
  /** One JSON line per settled job. */
  usage: 'usage.jsonl',
  /** The chat admins' caps per scope; `<name>.bak` is the previous version. */
  capOverrides: 'cap-overrides.json',
  /** Slack request signatures seen in the last minutes (HTTP mode), so a replay is dropped after a restart too. */
  replay: 'slack-replay.json',
} as const;

/**
 * Whether `dir` holds a file ledger: its spending, its usage records, or only the backup copy a start puts back (a
 * forget must reach that copy's prompts too). The readers (`pictor usage`, the console) make none.
 */
export function hasFileLedger(dir: string): boolean {
  return [LEDGER_FILES.ledger, `${LEDGER_FILES.ledger}.bak`, LEDGER_FILES.usage].some((name) => existsSync(join(dir, name)));
}

/**
 * Whether the Redis ledger under `prefix` holds anything a forget erases: its usage records or a reservation not yet
 * ended — two keys looked up in one EXISTS, not a walk of the keyspace.
 */
export async function hasRedisLedger(redis: Pick<Redis, 'exists'>, prefix: string): Promise<boolean> {
  return (await redis.exists(...keptLedgerKeys(prefix))) > 0;
}
