import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/core/redis-connection.js';
import { hasFileLedger, hasRedisLedger, RedisQuotaStore } from '../../src/internal.js';
import { useTempDirs } from '../helpers/runner-harness.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const newDir = useTempDirs();

describe('hasFileLedger', () => {
  it.each(['quota-ledger.json', 'quota-ledger.json.bak', 'usage.jsonl'])('finds a file ledger kept as %s alone (a backup copy is what a start puts back)', async (name) => {
    const dir = await newDir();
    expect(hasFileLedger(dir)).toBe(false);
    await writeFile(join(dir, name), '');
    expect(hasFileLedger(dir)).toBe(true);
  });

  it('finds a file ledger kept as its usage folder alone (usage records, prompts maybe)', async () => {
    const dir = await newDir();
    await mkdir(join(dir, 'usage'));
    expect(hasFileLedger(dir)).toBe(true);
  });
});

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
