import type { Redis } from 'ioredis';
import type { LoggerLike, RedisConfig } from '../../src/index.js';
import { FileStateStore } from './FileStateStore.js';
import { RedisStateStore } from './RedisStateStore.js';
import type { StateStore } from './StateStore.js';

/**
 * The bots' state store: Redis (keys under `<prefix>:bots:`) when the service
 * shares one (`REDIS_URL`), else the data folder.
 */
export async function openStateStore(options: {
  dataDir: string;
  redis?: { config: RedisConfig; connection: Redis } | undefined;
  leaseMs?: number | undefined;
  logger: LoggerLike;
}): Promise<StateStore> {
  if (!options.redis) return new FileStateStore({ dataDir: options.dataDir });
  return RedisStateStore.open({ redis: options.redis.connection, prefix: options.redis.config.prefix, leaseMs: options.leaseMs, logger: options.logger });
}
