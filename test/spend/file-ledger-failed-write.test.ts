import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileQuotaStore } from '../../src/internal.js';
import { useTempDirs } from '../helpers/runner-harness.js';

const newDir = useTempDirs();
let store: FileQuotaStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** Until the returned function is called, every write of the ledger fails (its backup copy cannot take its name) and leaves the file as it was. */
async function ledgerWritesFail(store: FileQuotaStore): Promise<() => Promise<void>> {
  await rm(store.backupPath, { force: true });
  await mkdir(store.backupPath);
  await writeFile(join(store.backupPath, 'in-the-way'), '');
  return () => rm(store.backupPath, { recursive: true });
}

describe('a release of the file ledger whose write fails', () => {
  it('keeps the process’s copy of the reservation still in the file: its lease is still renewed, so no other process ends the job', async () => {
    let now = Date.now();
    store = new FileQuotaStore({ dir: await newDir(), clock: () => now });
    await store.open();
    await store.reserve({ jobId: 'job-1', userKey: 'slack:U1', scopeKey: 'slack:T1', estimateUsd: 0.05, limits: {}, now });
    await store.markSent('job-1');

    const writesWork = await ledgerWritesFail(store);
    await expect(store.release('job-1')).rejects.toThrow();
    await writesWork();

    now += 40_000;
    await store.renewLease();
    const ledger = JSON.parse(await readFile(store.path, 'utf8'));
    expect(Object.keys(ledger.reservations)).toEqual(['job-1']);
    expect(Object.values(ledger.owners)).toMatchObject([{ renewedAt: now }]);
  });
});
