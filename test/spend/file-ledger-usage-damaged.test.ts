import { appendFile, readFile, rm, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { FileQuotaStore } from '../../src/internal.js';
import { useFileQuotaStores, useTempDirs } from '../helpers/runner-harness.js';
import { newestUsageFile, writeUsageDays } from '../helpers/usage-days.js';

const newDir = useTempDirs();
const storeAt = useFileQuotaStores();

const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low' };

async function settle(store: FileQuotaStore, jobId: string): Promise<void> {
  await store.reserve({ jobId, userKey: 'slack:U1', scopeKey: 'slack:T1', estimateUsd: 0.05, limits: {}, now: Date.now(), job });
  await store.settle(jobId, 0.05);
}

/** A store with three settled jobs whose middle usage line is then damaged (today's record, not an old one). */
async function middleLineDamaged(): Promise<FileQuotaStore> {
  const store = storeAt(await newDir());
  await store.open();
  for (const id of ['job-1', 'job-2', 'job-3']) await settle(store, id);
  const file = await newestUsageFile(store.usagePath, '');
  const lines = (await readFile(file, 'utf8')).split('\n');
  lines[1] = '{"jobId":"job-2","garbage';
  await writeFile(file, lines.join('\n'));
  return store;
}

describe('usage day files with a damaged line among their records', () => {
  it('skips it and says how many lines were skipped, to a reader of the records and to the console’s feed', async () => {
    const store = await middleLineDamaged();
    let damaged: number | undefined;

    const records = await store.usage({ onDamagedLines: (n) => (damaged = n) });

    expect(records.map((r) => r.jobId)).toEqual(['job-1', 'job-3']);
    expect(damaged).toBe(1);
    expect(await store.usageSince(undefined)).toMatchObject({ damagedAt: [1] });
  });

  it('does not count a last line still being written', async () => {
    const store = storeAt(await newDir());
    await store.open();
    await settle(store, 'job-1');
    await appendFile(await newestUsageFile(store.usagePath, ''), '{"jobId":"job-2","ti');
    let damaged: number | undefined;

    expect(await store.usage({ onDamagedLines: (n) => (damaged = n) })).toHaveLength(1);
    expect(damaged).toBe(0);
    expect(await store.usageSince(undefined)).toMatchObject({ damagedAt: [] });
  });
});

describe('usage day files with damaged lines among records of other days', () => {
  it('counts for a query only the damaged lines that may hold a record of its days, by the times of the records around them', async () => {
    const store = storeAt(await newDir());
    await store.open();
    // Before the settle: its record is of this day, so the day of this time holds it even across midnight.
    const settledFrom = Date.now();
    await settle(store, 'today');
    const file = await newestUsageFile(store.usagePath, '');
    const [today] = (await readFile(file, 'utf8')).split('\n');
    const old = (i: number) => JSON.stringify({ ...JSON.parse(today!), jobId: `old-${i}`, time: Date.UTC(2020, 0, 3) + i * 60_000, day: '2020-01-03', month: '2020-01', prompt: 'x'.repeat(300) });
    const olds = (from: number) => Array.from({ length: 200 }, (_, i) => old(from + i));
    await rm(file);
    await writeUsageDays(store.usagePath, [...olds(0), '{"jobId":"old-damaged","dam', ...olds(200), '{"jobId":"then-damaged","dam', today, ''].join('\n'), '');
    const damagedFor = async (query: { since?: number; until?: number }) => {
      let damaged: number | undefined;
      await store.usage({ ...query, onDamagedLines: (n) => (damaged = n) });
      return damaged;
    };

    expect(await damagedFor({ since: settledFrom })).toBe(1);
    expect(await damagedFor({ since: Date.UTC(2020, 0, 3), until: Date.UTC(2020, 0, 4) })).toBe(2);
    expect(await damagedFor({ since: Date.UTC(2019, 0, 1), until: Date.UTC(2019, 0, 2) })).toBe(0);
    expect(await damagedFor({})).toBe(2);
  });
});
