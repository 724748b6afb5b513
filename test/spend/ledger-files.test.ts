import { describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/core/redis-connection.js';
import { hasRedisLedger, RedisQuotaStore } from '../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const redis = testRedis();

describe.skipIf(redis.skipReason)('hasRedisLedger', () => {
  it('finds a Redis ledger by the keys its store writes: none before a job, a reservation while it runs, the usage record once settled', async () => {
    const url = requireRedisUrl(redis);
    const prefix = uniquePrefix('has-ledger');
    const client = await connectRedis(url);
    const store = await RedisQuotaStore.connect({ url, prefix });
    try {
      expect(await hasRedisLedger(client, prefix)).toBe(false);
      await store.reserve({ jobId: 'job-1', userKey: 'slack:U0', scopeKey: 'slack:T0', estimateUsd: 0.01, limits: {}, now: Date.now() });
      expect(await hasRedisLedger(client, prefix)).toBe(true);
      await store.settle('job-1', 0.01);
      expect(await hasRedisLedger(client, prefix)).toBe(true);
      expect(await hasRedisLedger(client, uniquePrefix('has-ledger-other'))).toBe(false);
    } finally {
      await store.close();
      client.disconnect();
      await deleteKeys(url, prefix);
    }
  });
});
