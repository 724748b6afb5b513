import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { connectRedis } from '../../src/core/redis-connection.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import { deleteKeys, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

/**
 * The money rule for a job cut off by its process's death (`cutOffCostUsd`) is the only place that decides what an
 * older version's reservation (no owner, sent or not unknown) is charged: a rule that said otherwise would change what
 * both stores do. Here it says an unknown cannot have been billed, and both stores release such a reservation.
 */
vi.mock('../../src/spend/charge-rules.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/spend/charge-rules.js')>();
  return { ...actual, cutOffCostUsd: (r: { usd: number; sent: boolean | undefined }) => (r.sent === true ? r.usd : undefined) };
});

const redis = testRedis();
const at = Date.now() - 60_000;
const day = new Date(at).toISOString().slice(0, 10);
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe('what an older version’s reservation is charged', () => {
  it('follows the money rule in the file store (a reservation of the first ledger format)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-cut-off-rule-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const ledger = { version: 1, spent: {}, reservations: { older: { userKey: 'u', scopeKey: 's', usd: 0.5, day, at } }, lastJobAt: {} };
    await writeFile(join(dir, 'quota-ledger.json'), JSON.stringify(ledger));
    const store = new FileQuotaStore({ dir });
    try {
      expect(await store.reconcile(Date.now())).toEqual({ released: ['older'], settledAtEstimate: [], chargedUsd: 0 });
      expect(await store.spentToday('s', at)).toBe(0);
    } finally {
      await store.close();
    }
  });

  it.skipIf(redis.skipReason)('follows the money rule in the Redis store (a reservation hash with no owner)', async () => {
    const client = await connectRedis(redis.url!);
    const prefix = uniquePrefix('cut-off-rule');
    cleanups.push(async () => {
      await deleteKeys(redis.url!, prefix);
      client.disconnect();
    });
    await client.hset(`${prefix}:quota:res:older`, { userKey: 'u', scopeKey: 's', nanos: 500_000_000, day, at });
    for (const key of ['u', 's', 'account']) await client.zadd(`${prefix}:quota:active:${key}`, at, 'older');
    const store = new RedisQuotaStore({ redis: client, prefix });
    try {
      expect(await store.reconcile(Date.now())).toEqual({ released: ['older'], settledAtEstimate: [], chargedUsd: 0 });
      expect(await store.spentToday('s', at)).toBe(0);
    } finally {
      await store.close();
    }
  });
});
