import { envNumber, type Env } from '../../src/index.js';
import { DEFAULT_LEASE_MS } from './RedisStateStore.js';

/**
 * `PICTOR_REPLICA_LEASE_SECONDS` (with `REDIS_URL` only): how long a replica's
 * hold on its running jobs outlives its last renewal. A replica that dies
 * (kill -9, a lost host) has its jobs marked interrupted by another within
 * this plus a third of it. Default 15; at least 0.1 (tests use short leases).
 */
export function readStateConfig(env: Env): { leaseMs: number } {
  const seconds = envNumber(env, 'PICTOR_REPLICA_LEASE_SECONDS', { min: 0.1, takes: 'a number of seconds, 0.1 or more' });
  return { leaseMs: seconds === undefined ? DEFAULT_LEASE_MS : Math.round(seconds * 1000) };
}
