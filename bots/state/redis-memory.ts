import type { Redis } from 'ioredis';
import type { LoggerLike } from 'pictor';
import type { BotSpaces } from './spaces.js';
import type { SpaceDefinition } from './StateStore.js';

const MIB = 1024 * 1024;

/**
 * What one small record costs Redis beyond its value: its key, TTL, and its entries in its space's index and sizes
 * (measured on Redis 7 for the `audit-ended` and `forgotten` spaces: ~440 bytes a record at 50 000 records, ~550 at
 * 2 000); a key taken once (`claimOnce`) is one key with its TTL, less.
 */
export const REDIS_RECORD_BYTES = 640;

/**
 * The most bytes the bots' bounded spaces keep in all: a space's `maxBytes`, or for a space bounded by its count alone
 * (values of a few bytes), `maxCount` records of `REDIS_RECORD_BYTES` — what `maxmemory` must leave room for, beside
 * the ledger. The spaces whose keys are taken once (`claimOnce`: a Slack request's signature, a Slack message, a
 * Discord interaction over HTTP) are counted the same way, though on Redis only their minutes bound them: their count is how many are
 * expected within those minutes, each one key with its TTL.
 */
export function stateBytesBound(spaces: BotSpaces): number {
  const bounds: SpaceDefinition[] = Object.values(spaces);
  return bounds.reduce((sum, { maxBytes, maxCount = 0 }) => sum + (maxBytes ?? maxCount * REDIS_RECORD_BYTES), 0);
}

/**
 * Warns (once, at start) when Redis's `maxmemory` is below what the bots' state may hold plus room for the ledger:
 * Redis would refuse writes. (Whether Redis may evict keys at all is said once by whoever opens the link,
 * `RedisLink.open`.)
 */
export async function warnIfRedisTooSmall(redis: Redis, spaces: BotSpaces, logger: LoggerLike): Promise<void> {
  const info = await redis.info('memory').catch(() => '');
  const maxmemory = Number(/^maxmemory:(\d+)/m.exec(info)?.[1] ?? 0);
  const needed = stateBytesBound(spaces);
  if (maxmemory > 0 && maxmemory < needed + 64 * MIB) {
    logger.warn(
      { maxmemoryMb: Math.round(maxmemory / MIB), stateBoundMb: Math.round(needed / MIB) },
      'Redis maxmemory leaves too little room for what the bots may keep (kept images, jobs, history) plus the ledger: raise maxmemory or lower PICTOR_KEPT_IMAGES_MB (see docs/shared-limits.md)',
    );
  }
}
