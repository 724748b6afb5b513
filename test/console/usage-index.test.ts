import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { rounded, UsageIndex } from '../../src/console/usage-index.js';
import { FileQuotaStore } from '../../src/spend/FileQuotaStore.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import type { QuotaStore, UsageFeed, UsageRecord } from '../../src/spend/types.js';
import { sumUsage, usageByKey } from '../../src/spend/usage-totals.js';
import { deleteKeys, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { LEDGER_WAIT_MS } from '../../src/console/server.js';
import { newestUsageFile } from '../helpers/usage-days.js';

const redis = testRedis();
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const makers: Record<string, () => Promise<QuotaStore>> = {
  file: async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pictor-index-'));
    const store = new FileQuotaStore({ dir });
    cleanups.push(async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    });
    return store;
  },
  redis: async () => {
    const prefix = uniquePrefix('index');
    const store = await RedisQuotaStore.connect({ url: redis.url!, prefix });
    cleanups.push(async () => {
      await store.close();
      await deleteKeys(redis.url!, prefix);
    });
    return store;
  },
};

async function settle(store: QuotaStore, jobId: string, userKey: string, scopeKey: string, usd: number, n = 1) {
  expect(await store.reserve({ jobId, userKey, scopeKey, estimateUsd: usd * 2, limits: {}, now: Date.now(), job: { operation: 'generate', n, size: '1024x1024', quality: 'low' } })).toEqual({ ok: true });
  await store.markSent(jobId);
  await store.settle(jobId, usd, { outcome: 'completed', images: n });
}

describe.each(Object.keys(makers).filter((k) => k !== 'redis' || !redis.skipReason))('the console’s usage index (%s ledger)', (kind) => {
  it('adds the records up as pictor usage does, and takes only the new ones at each refresh', async () => {
    const store = await makers[kind]!();
    const index = new UsageIndex({ readWaitMs: LEDGER_WAIT_MS, store });
    await settle(store, 'a', 'discord:1', 'discord:g', 0.1, 2);
    await settle(store, 'b', 'slack:U1', 'slack:T', 0.25);
    await index.refresh();
    await settle(store, 'c', 'cli:me', 'cli', 0.05, 3);
    await index.refresh();
    const today = new Date().toISOString().slice(0, 10);
    const records = await store.usage({});
    const day = index.day(today)!;
    const { key: _, ...expected } = sumUsage(records, 'x');
    expect(rounded(day.total)).toEqual(expected);
    for (const row of usageByKey(records, (r) => r.surface)) expect(day.surfaces.get(row.key)!.usd).toBeCloseTo(row.usd, 9);
    expect(index.records).toBe(3);
    expect(index.recent(() => true, 10).map((r) => r.jobId)).toEqual(['c', 'b', 'a']);
  });
});

describe('the console’s usage index over a file ledger', () => {
  it('counts the later of two records of a job (the earlier is taken away), as the ledger did', async () => {
    const store = (await makers.file!()) as FileQuotaStore;
    const index = new UsageIndex({ readWaitMs: LEDGER_WAIT_MS, store });
    await settle(store, 'a', 'discord:1', 'discord:g', 0.1);
    await index.refresh();
    const usage = store.storage.kind === 'file' ? await newestUsageFile(store.storage.dir) : '';
    const text = await readFile(usage, 'utf8');
    const first = JSON.parse(text.trim().split('\n').at(-1)!) as Record<string, unknown>;
    // A reconcile charged the job again at its estimate (its process died between the record and the ledger).
    await writeFile(usage, `${text}${JSON.stringify({ ...first, costUsd: 0.2, basis: 'uncertain', time: Date.now() })}\n`);
    await index.refresh();
    const today = new Date().toISOString().slice(0, 10);
    expect(index.day(today)!.total).toMatchObject({ jobs: 1, usd: 0.2, uncertainUsd: 0.2 });
    await settle(store, 'b', 'discord:1', 'discord:g', 0.3);
    await index.refresh();
    expect(index.day(today)!.total.jobs).toBe(2);
  });
});

describe('the console’s usage index over a year of records', () => {
  it('keeps the totals by server and user only for this month and the last (older days: in all and by surface), so it stays small', async () => {
    const time = { now: Date.now() - 100 * 24 * 60 * 60_000 };
    const dir = await mkdtemp(join(tmpdir(), 'pictor-index-'));
    const store = new FileQuotaStore({ dir, clock: () => time.now });
    cleanups.push(async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    });
    const old = async (jobId: string, userKey: string) => {
      expect(await store.reserve({ jobId, userKey, scopeKey: 'discord:g', estimateUsd: 0.2, limits: {}, now: time.now })).toEqual({ ok: true });
      await store.markSent(jobId);
      await store.settle(jobId, 0.1);
    };
    await old('a', 'discord:1');
    const oldDay = new Date(time.now).toISOString().slice(0, 10);
    time.now = Date.now();
    await old('b', 'discord:2');
    const index = new UsageIndex({ readWaitMs: LEDGER_WAIT_MS, store });
    await index.refresh();
    expect(index.day(oldDay)).toMatchObject({ total: { jobs: 1, usd: 0.1 } });
    expect([...index.day(oldDay)!.surfaces.keys()]).toEqual(['discord']);
    expect(index.day(oldDay)!.users.size + index.day(oldDay)!.scopes.size).toBe(0);
    const today = index.day(new Date().toISOString().slice(0, 10))!;
    expect([...today.users.keys()]).toEqual(['discord:2']);
    expect([...today.scopes.keys()]).toEqual(['discord:g']);
  });
});

describe('the console’s usage index when the ledger stalls', () => {
  it('asks the ledger again once a read has had its wait, and counts a record once though the stalled read answers late', async () => {
    vi.useFakeTimers();
    try {
      const asked: { cursor: string | undefined; answer: (feed: UsageFeed) => void }[] = [];
      const usageSince = (cursor: string | undefined) => new Promise<UsageFeed>((answer) => asked.push({ cursor, answer }));
      const now = Date.now();
      const index = new UsageIndex({ store: { usageSince }, now: () => now, readWaitMs: 5000 });
      const day = new Date(now).toISOString().slice(0, 10);
      const record: UsageRecord = { jobId: 'a', time: now, day, month: day.slice(0, 7), surface: 'discord', userKey: 'discord:1', scopeKey: 'discord:g', costUsd: 0.1, basis: 'table' };
      const stalled = index.refresh();
      // Calls while the read is within its wait share it.
      void index.refresh();
      expect(asked).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(5000);
      // Past its wait the next call reads again, and is answered.
      const again = index.refresh();
      expect(asked).toHaveLength(2);
      asked[1]!.answer({ records: [record], cursor: '1', reset: false });
      await again;
      expect(index.records).toBe(1);
      // The stalled read answers at last with the same record: dropped, not counted twice.
      asked[0]!.answer({ records: [record], cursor: '1', reset: false });
      await stalled;
      expect(index.records).toBe(1);
      expect(index.day(day)!.total.usd).toBeCloseTo(0.1, 9);
      // The next read goes on from where the answered one left off, and leaves no timer once answered.
      const next = index.refresh();
      expect(asked[2]!.cursor).toBe('1');
      asked[2]!.answer({ records: [], cursor: '1', reset: false });
      await next;
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('asks the ledger again at the next refresh after a read that failed, without waiting out its wait, and leaves no timer', async () => {
    vi.useFakeTimers();
    try {
      const asked: { answer: (feed: UsageFeed) => void; fail: (error: Error) => void }[] = [];
      const usageSince = () => new Promise<UsageFeed>((answer, fail) => asked.push({ answer, fail }));
      const index = new UsageIndex({ store: { usageSince }, readWaitMs: 5000 });
      const failed = index.refresh();
      asked[0]!.fail(new Error('the ledger is unreachable'));
      await expect(failed).rejects.toThrow('the ledger is unreachable');
      // At once, not 5 s on: the failed read is no longer shared.
      const again = index.refresh();
      expect(asked).toHaveLength(2);
      asked[1]!.answer({ records: [], cursor: '0', reset: false });
      await again;
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the console’s usage index read after this process wrote records', () => {
  it('does not share a read begun before the write: it waits for that one, then reads again and counts the record written', async () => {
    const asked: { cursor: string | undefined; answer: (feed: UsageFeed) => void }[] = [];
    const usageSince = (cursor: string | undefined) => new Promise<UsageFeed>((answer) => asked.push({ cursor, answer }));
    const now = Date.now();
    const index = new UsageIndex({ store: { usageSince }, now: () => now, readWaitMs: LEDGER_WAIT_MS });
    const day = new Date(now).toISOString().slice(0, 10);
    const record: UsageRecord = { jobId: 'ended', time: now, day, month: day.slice(0, 7), surface: 'cli', userKey: 'cli:owner', scopeKey: 'cli', costUsd: 0.25, basis: 'uncertain' };
    // A read under way (the live list's, say) when a reconcile writes the record of the job it ended.
    const before = index.refresh();
    index.written();
    const after = index.refresh();
    asked[0]!.answer({ records: [], cursor: '0', reset: false });
    await before;
    await vi.waitFor(() => expect(asked).toHaveLength(2));
    expect(asked[1]!.cursor).toBe('0');
    asked[1]!.answer({ records: [record], cursor: '1', reset: false });
    await after;
    expect(index.recent(() => true, 1)).toEqual([record]);
  });

  it('is not failed by the failure of the read it waited for: its own read answers it', async () => {
    const asked: { answer: (feed: UsageFeed) => void; fail: (error: Error) => void }[] = [];
    const usageSince = () => new Promise<UsageFeed>((answer, fail) => asked.push({ answer, fail }));
    const index = new UsageIndex({ store: { usageSince }, readWaitMs: LEDGER_WAIT_MS });
    const before = index.refresh();
    index.written();
    const after = index.refresh();
    asked[0]!.fail(new Error('the ledger is unreachable'));
    await expect(before).rejects.toThrow('the ledger is unreachable');
    await vi.waitFor(() => expect(asked).toHaveLength(2));
    asked[1]!.answer({ records: [], cursor: '0', reset: false });
    await expect(after).resolves.toBeUndefined();
  });

  it('shares the read under way with calls made after it began when nothing was written meanwhile', async () => {
    const asked: ((feed: UsageFeed) => void)[] = [];
    const index = new UsageIndex({ store: { usageSince: () => new Promise<UsageFeed>((answer) => asked.push(answer)) }, readWaitMs: LEDGER_WAIT_MS });
    const reads = [index.refresh(), index.refresh()];
    index.written();
    // Begun after the write: shared again by the calls after it.
    reads.push(index.refresh(), index.refresh());
    asked[0]!({ records: [], cursor: '0', reset: false });
    await vi.waitFor(() => expect(asked).toHaveLength(2));
    asked[1]!({ records: [], cursor: '0', reset: false });
    await Promise.all(reads);
    expect(asked).toHaveLength(2);
  });
});

describe('the console’s usage index over damaged lines of the usage records', () => {
  const at = (iso: string) => Date.parse(`${iso}T12:00:00Z`);
  const record = (jobId: string, iso: string): UsageRecord => ({ jobId, time: at(iso), day: iso, month: iso.slice(0, 7), surface: 'cli', userKey: 'cli:me', scopeKey: 'cli', costUsd: 0.05, basis: 'table' });
  /** An index over a ledger that answers `feeds` one read after another. */
  async function indexOver(...feeds: Omit<UsageFeed, 'cursor' | 'reset'>[]): Promise<UsageIndex> {
    const answers = feeds.map((feed, i): UsageFeed => ({ ...feed, cursor: String(i), reset: false }));
    const index = new UsageIndex({ readWaitMs: LEDGER_WAIT_MS, store: { usageSince: async () => answers.shift()! }, now: () => at('2030-06-27') });
    for (const _ of feeds) await index.refresh();
    return index;
  }
  const june = [Date.UTC(2030, 5, 1), Date.UTC(2030, 6, 1)] as const;
  const may = [Date.UTC(2030, 4, 1), Date.UTC(2030, 5, 1)] as const;

  it('counts a damaged line that ended a read in the months between the record before it and the first record of a later read', async () => {
    const index = await indexOver({ records: [record('a', '2030-05-03')], damagedAt: [1] }, { records: [record('b', '2030-06-27')], damagedAt: [] });

    expect([index.damagedLinesWithin(...may), index.damagedLinesWithin(...june)]).toEqual([1, 1]);
  });

  it('counts a damaged line between two records of May in May only, wherever the reads were cut', async () => {
    const endOfRead = await indexOver({ records: [record('a', '2030-05-03')], damagedAt: [1] }, { records: [record('b', '2030-05-04'), record('c', '2030-06-27')], damagedAt: [] });
    const startOfRead = await indexOver({ records: [record('a', '2030-05-03')], damagedAt: [] }, { records: [record('b', '2030-05-04'), record('c', '2030-06-27')], damagedAt: [0] });

    for (const index of [endOfRead, startOfRead]) expect([index.damagedLinesWithin(...may), index.damagedLinesWithin(...june)]).toEqual([1, 0]);
  });

  it('counts a damaged line with no record after it yet in every range from the record before it on', async () => {
    const index = await indexOver({ records: [record('a', '2030-05-03')], damagedAt: [1] });

    expect([index.damagedLinesWithin(Date.UTC(2030, 4, 1), Date.UTC(2030, 4, 2)), index.damagedLinesWithin(...may), index.damagedLinesWithin(...june)]).toEqual([0, 1, 1]);
  });
});
