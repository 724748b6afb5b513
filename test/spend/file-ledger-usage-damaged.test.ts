import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { FileQuotaStore } from '../../src/internal.js';
import { useFileQuotaStores, useTempDirs } from '../helpers/runner-harness.js';

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
  const lines = (await readFile(store.usagePath, 'utf8')).split('\n');
  lines[2] = '{"jobId":"job-2","garbage';
  await writeFile(store.usagePath, lines.join('\n'));
  return store;
}

describe('usage.jsonl with a damaged line among its records', () => {
  it('skips it and says how many lines were skipped, to a reader of the records and to the console’s feed', async () => {
    const store = await middleLineDamaged();
    let damaged: number | undefined;

    const records = await store.usage({ onDamagedLines: (n) => (damaged = n) });

    expect(records.map((r) => r.jobId)).toEqual(['job-1', 'job-3']);
    expect(damaged).toBe(1);
    expect(await store.usageSince(undefined)).toMatchObject({ damagedLines: 1 });
  });

  it('counts neither its rewrite line at the top nor a last line still being written', async () => {
    const store = storeAt(await newDir());
    await store.open();
    await settle(store, 'job-1');
    await appendFile(store.usagePath, '{"jobId":"job-2","ti');
    let damaged: number | undefined;

    expect(await store.usage({ onDamagedLines: (n) => (damaged = n) })).toHaveLength(1);
    expect(damaged).toBe(0);
    expect(await store.usageSince(undefined)).toMatchObject({ damagedLines: 0 });
  });
});
