import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileQuotaStore } from '../../src/internal.js';
import { useTempDirs } from '../helpers/runner-harness.js';

const newDir = useTempDirs();
const open: FileQuotaStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
function storeAt(dir: string, options: Partial<ConstructorParameters<typeof FileQuotaStore>[0]> = {}): FileQuotaStore {
  const store = new FileQuotaStore({ dir, ...options });
  open.push(store);
  return store;
}

const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'high' };
const reserve = (s: FileQuotaStore, jobId: string, usd: number, userKey = 'slack:U1') =>
  s.reserve({ jobId, userKey, scopeKey: 'slack:T1', estimateUsd: usd, limits: { userConcurrentJobs: 1 }, now: Date.now(), job });

describe('a ledger put back from its backup copy', () => {
  it('ends a job the copy still shows open at what its usage record says it was settled at, not again at its estimate', async () => {
    const dir = await newDir();
    const first = storeAt(dir);
    await first.open();
    await reserve(first, 'job-1', 0.224);
    await first.markSent('job-1');
    await first.settle('job-1', 0.0562);
    await first.close();
    // Damaged after the settle was written: the backup copy is the one before it, the job reserved and sent.
    await writeFile(join(dir, 'quota-ledger.json'), '{"version":2,"spent":{"');

    // Past the first store's lease: its reservations are a gone process's.
    const later = () => Date.now() + 5 * 60_000;
    const store = storeAt(dir, { clock: later });
    expect(await store.open()).toMatchObject({ restoredFromBackup: true });
    expect(await store.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });

    expect(await store.spentToday('slack:U1', Date.now())).toBeCloseTo(0.0562, 9);
    expect(await store.spentThisMonth('account', Date.now())).toBeCloseTo(0.0562, 9);
    expect(await store.activeJobs()).toEqual([]);
    expect((await store.usage({})).map((r) => [r.jobId, r.costUsd, r.basis])).toEqual([['job-1', 0.0562, 'table']]);
    expect((await readdir(dir)).some((f) => f.startsWith('quota-ledger.json.broken-'))).toBe(true);
    expect(JSON.parse(await readFile(store.path, 'utf8')).uncertain).toEqual({});
  });
});
