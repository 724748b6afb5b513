import { describe, expect, it } from 'vitest';
import { readStateConfig } from '../../../bots/state/index.js';

describe('the bots’ state settings', () => {
  it('leave the lease to the Redis store when PICTOR_REPLICA_LEASE_SECONDS is unset, and give it in ms when set', () => {
    expect(readStateConfig({}).leaseMs).toBeUndefined();
    expect(readStateConfig({ PICTOR_REPLICA_LEASE_SECONDS: '0.5' }).leaseMs).toBe(500);
    expect(() => readStateConfig({ PICTOR_REPLICA_LEASE_SECONDS: '0.05' })).toThrow(/PICTOR_REPLICA_LEASE_SECONDS/);
  });
});
