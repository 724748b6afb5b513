import { spawnSync } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FileQuotaStore, RedisQuotaStore, type QuotaStore } from '../../src/internal.js';
import { damagedWithin } from '../../src/spend/usage-records.js';
import { useTempDirs } from '../helpers/runner-harness.js';
import { deleteKeys, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { newestUsageFile, usageText, writeUsageDays } from '../helpers/usage-days.js';

const newDir = useTempDirs();
const redis = testRedis();
const prefixes: string[] = [];
const open: QuotaStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  if (redis.url) for (const prefix of prefixes) await deleteKeys(redis.url, prefix);
});

const DAY = 24 * 60 * 60_000;
const job = { operation: 'generate' as const, n: 2, size: '1024x1024', quality: 'low' };

const stores = {
  file: async (options: { usageRetentionDays?: number } = {}) => {
    const store = new FileQuotaStore({ dir: await newDir(), ...options });
    open.push(store);
    return store;
  },
  redis: async () => {
    const prefix = uniquePrefix('usage');
    prefixes.push(prefix);
    const store = await RedisQuotaStore.connect({ url: redis.url!, prefix });
    open.push(store);
    return store;
  },
};

async function settled(store: QuotaStore, jobId: string, usd: number, userKey = 'discord:u1', scopeKey = 'discord:g1', requestId?: string) {
  expect(await store.reserve({ jobId, userKey, scopeKey, estimateUsd: usd * 2, limits: {}, now: Date.now(), job })).toEqual({ ok: true });
  await store.markSent(jobId);
  await store.settle(jobId, usd, { requestId });
}

describe.each(['file', 'redis'] as const)('usage records (%s ledger)', (kind) => {
  const skip = kind === 'redis' && redis.skipReason !== undefined;

  it.skipIf(skip)('writes one record per settled job with who, where, what, the cost and the request id, and none for a release', async () => {
    const store = await stores[kind]();
    const before = Date.now();
    await settled(store, 'a', 0.0127, 'discord:u1', 'discord:g1', 'req_123');
    await settled(store, 'b', 0.05, 'slack:U2', 'slack:T1');
    await store.reserve({ jobId: 'c', userKey: 'cli:me', scopeKey: 'cli', estimateUsd: 0.2, limits: {}, now: Date.now(), job });
    await store.release('c');
    const records = await store.usage({});
    expect(records.map((r) => r.jobId)).toEqual(['a', 'b']);
    expect(records[0]).toEqual({
      jobId: 'a',
      time: expect.any(Number),
      day: new Date(before).toISOString().slice(0, 10),
      month: new Date(before).toISOString().slice(0, 7),
      surface: 'discord',
      userKey: 'discord:u1',
      scopeKey: 'discord:g1',
      operation: 'generate',
      n: 2,
      size: '1024x1024',
      quality: 'low',
      costUsd: 0.0127,
      basis: 'table',
      requestId: 'req_123',
      reservedAt: expect.any(Number),
    });
    expect(records[0]!.time).toBeGreaterThanOrEqual(before);
    expect(records[0]!.reservedAt).toBeGreaterThanOrEqual(before);
    expect(records[1]).toMatchObject({ surface: 'slack', costUsd: 0.05 });
    expect(records.reduce((sum, r) => sum + r.costUsd, 0)).toBeCloseTo(await store.spentToday('account', Date.now()), 9);
  });

  it.skipIf(skip)('filters by time, user and scope', async () => {
    const store = await stores[kind]();
    await settled(store, 'a', 0.01, 'discord:u1', 'discord:g1');
    await settled(store, 'b', 0.02, 'discord:u2', 'discord:g1');
    await settled(store, 'c', 0.03, 'discord:u1', 'discord:g2');
    expect((await store.usage({ userKey: 'discord:u1' })).map((r) => r.jobId)).toEqual(['a', 'c']);
    expect((await store.usage({ scopeKey: 'discord:g1' })).map((r) => r.jobId)).toEqual(['a', 'b']);
    // A job counts in the UTC day it was reserved: a query from tomorrow on finds none of today's.
    expect(await store.usage({ since: Date.now() + DAY })).toEqual([]);
    expect(await store.usage({ until: Date.now() - DAY })).toEqual([]);
  });
});

describe('usage records of the file ledger', () => {
  it('charges a job whose settle was recorded before its process died (and before the ledger change) what its record says, once, keeping that one record', async () => {
    const dir = await newDir();
    const pid = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());
    const owner = `${hostname()}:${pid}:dead`;
    const now = Date.now();
    const day = new Date(now).toISOString().slice(0, 10);
    const reservation = (usd: number) => ({ userKey: 'cli:me', scopeKey: 'cli', usd, day, month: day.slice(0, 7), at: now, owner, sent: true, job });
    await writeFile(
      join(dir, 'quota-ledger.json'),
      JSON.stringify({
        version: 2,
        spent: {},
        reservations: { torn: reservation(0.3), unrecorded: reservation(0.2) },
        owners: { [owner]: { pid, host: hostname(), renewedAt: now } },
        uncertain: {},
        lastJobAt: {},
      }),
    );
    // Its settle's record reached the usage records (written by an older version: no month, basis "actual"); the ledger write
    // that would have ended the reservation did not. The other job's settle never came.
    const torn = { jobId: 'torn', time: now, day, surface: 'cli', userKey: 'cli:me', scopeKey: 'cli', costUsd: 0.1, basis: 'actual', requestId: 'req_torn', outcome: 'completed', reservedAt: now };
    await writeUsageDays(dir, `${JSON.stringify(torn)}\n{"jobId":"cut-sh`);
    const reopened = new FileQuotaStore({ dir });
    open.push(reopened);
    // A read before anything ended them counts them as their end will.
    expect((await reopened.spentMany(['account'], now + 1000)).get('account')!.day).toBeCloseTo(0.3, 9);
    expect(await reopened.reconcile(now + 1000)).toEqual({ released: [], settledAtEstimate: ['unrecorded'], settledAsRecorded: ['torn'], chargedUsd: 0.3 });
    const records = await reopened.usage({});
    expect(records).toEqual([
      expect.objectContaining({ jobId: 'torn', basis: 'table', costUsd: 0.1, requestId: 'req_torn', outcome: 'completed' }),
      expect.objectContaining({ jobId: 'unrecorded', basis: 'uncertain', costUsd: 0.2 }),
    ]);
    expect((await usageText(dir)).match(/"torn"/g)).toHaveLength(1);
    expect(await reopened.spentToday('account', now + 1000)).toBeCloseTo(0.3, 9);
    expect(Object.keys(JSON.parse(await readFile(join(dir, 'quota-ledger.json'), 'utf8')).uncertain)).toEqual(['unrecorded']);
  });

  it('keeps the usage day files private and drops the days past the retention', async () => {
    const dir = await newDir();
    const old = { jobId: 'old', time: Date.now() - 3 * DAY, day: '2000-01-01', surface: 'cli', userKey: 'cli:me', scopeKey: 'cli', costUsd: 1, basis: 'actual' };
    await writeUsageDays(dir, `${JSON.stringify(old)}\n`);
    const store = new FileQuotaStore({ dir, usageRetentionDays: 2 });
    open.push(store);
    await settled(store, 'new', 0.01);
    // The day's first commit that writes drops the days past retention.
    await store.close();
    const reopened = new FileQuotaStore({ dir, usageRetentionDays: 2 });
    open.push(reopened);
    expect((await reopened.usage({})).map((r) => r.jobId)).toEqual(['new']);
    expect((await stat(await newestUsageFile(dir))).mode & 0o777).toBe(0o600);
    expect(await usageText(dir)).not.toContain('"old"');
  });
});

describe('damaged lines of a range', () => {
  it('counts a damaged line settled just after midnight in the day its job was asked for (a record goes by its day, settled up to a day later)', () => {
    const june = Date.UTC(2030, 5, 1);
    // Between two records settled just after midnight: the damaged one may be a job of 31 May.
    const line = { after: june + 10_000, before: june + 60_000 };
    expect(damagedWithin([line], Date.UTC(2030, 4, 1), june)).toBe(1);
    expect(damagedWithin([line], june, Date.UTC(2030, 6, 1))).toBe(1);
    // Written after a record settled more than a day after the range's end: not of the range.
    expect(damagedWithin([{ after: june + 86_400_000 + 1, before: undefined }], Date.UTC(2030, 4, 1), june)).toBe(0);
  });
});
