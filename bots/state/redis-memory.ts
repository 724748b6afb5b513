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

/** Redis's allocator (jemalloc) gives a value the next of its size classes, 4 per doubling past 64 bytes: up to 25 % more. */
export const ALLOCATOR_ROUNDING = 1.25;

/**
 * The most bytes the bots' spaces take on Redis, beside the ledger: each space's `maxBytes` as the allocator rounds
 * them, plus `REDIS_RECORD_BYTES` for each of its `maxCount` records (for keys taken once, only their TTL bounds them
 * on Redis: their count is how many are expected within it).
 */
export function stateBytesBound(spaces: BotSpaces): number {
  const bounds: SpaceDefinition[] = Object.values(spaces);
  return bounds.reduce((sum, { maxBytes = 0, maxCount = 0 }) => sum + maxBytes * ALLOCATOR_ROUNDING + maxCount * REDIS_RECORD_BYTES, 0);
}

/** Warns (at start) when Redis's `maxmemory` is below what the bots' state may hold plus room for the ledger. */
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
