import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileQuotaStore, operatorMustFix } from '../../src/internal.js';
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

describe('a write of the file ledger that fails with a file-system error', () => {
  it('refuses the step as a ledger file the process cannot use (exit 2, the operator’s to fix), naming the file in the way', async () => {
    const now = Date.now();
    store = new FileQuotaStore({ dir: await newDir(), clock: () => now });
    await store.open();
    await store.reserve({ jobId: 'job-1', userKey: 'slack:U1', scopeKey: 'slack:T1', estimateUsd: 0.05, limits: {}, now });

    await ledgerWritesFail(store);
    const error = await store.reserve({ jobId: 'job-2', userKey: 'slack:U2', scopeKey: 'slack:T1', estimateUsd: 0.05, limits: {}, now }).catch((e: unknown) => e);

    expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.backupPath });
    expect(operatorMustFix(error)).toBe(true);
  });
});
