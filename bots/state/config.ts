import { envNumber, envSeconds, type Env } from 'pictor/internal';
import { DEFAULT_KEPT_IMAGES_MB } from './spaces.js';

/**
 * The bots' state settings:
 * - `PICTOR_REPLICA_LEASE_SECONDS` (with `REDIS_URL` only): how long a replica's hold on its running jobs outlives
 *   its last renewal. A replica that dies has its jobs marked interrupted by another within this plus a third of
 *   it. Unset, the Redis store keeps its own default (15); at least 0.1 (tests use short leases).
 * - `PICTOR_KEPT_IMAGES_MB`: the bytes of Discord job images kept for their buttons (in the data folder or Redis);
 *   past it the oldest go first and their buttons say the job is too old. Default 256.
 */
export function readStateConfig(env: Env): { leaseMs: number | undefined; keptImagesBytes: number } {
  const seconds = envSeconds(env, 'PICTOR_REPLICA_LEASE_SECONDS', { min: 0.1 });
  const keptMb = envNumber(env, 'PICTOR_KEPT_IMAGES_MB', { int: true, min: 16, max: 1024 * 1024, takes: 'a whole number of megabytes, 16 or more' });
  return { leaseMs: seconds === undefined ? undefined : Math.round(seconds * 1000), keptImagesBytes: (keptMb ?? DEFAULT_KEPT_IMAGES_MB) * 1024 * 1024 };
}
