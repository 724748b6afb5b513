import { fork } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FileQuotaStore } from '../../src/internal.js';
import { useFileQuotaStores, useTempDirs } from '../helpers/runner-harness.js';

const CHILD = fileURLToPath(new URL('./file-ledger-lease-child.ts', import.meta.url));
const newDir = useTempDirs();
const storeAt = useFileQuotaStores();

const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'high' };
const reserve = (s: FileQuotaStore, jobId: string, usd: number) =>
  s.reserve({ jobId, userKey: 'slack:U1', scopeKey: 'slack:T1', estimateUsd: usd, limits: { userConcurrentJobs: 1 }, now: Date.now(), job });
/** Two minutes on: past the lease (60 s) of a process that renewed it now. */
const later = () => Date.now() + 2 * 60_000;

/** A ledger folder and a second path to it: one store per file per process, so the other process's store opens it through the link. */
async function sharedLedger(): Promise<{ dir: string; alias: string }> {
  const root = await newDir();
  const dir = join(root, 'ledger');
  await mkdir(dir);
  const alias = join(root, 'other-process');
  await symlink(dir, alias);
  return { dir, alias };
}

describe('a reservation whose owner’s lease lapsed while its process lives', () => {
  it('is dropped, charged nothing, when a process that went idle after releasing it finds it brought back by a restore', async () => {
    const { dir, alias } = await sharedLedger();
    const idle = storeAt(dir);
    await idle.open();
    await reserve(idle, 'released', 0.224);
    await idle.markSent('released');
    // Answered with an error, billed nothing: a release writes no usage record. Then the process holds no job, and renews no lease.
    await idle.release('released');
    await writeFile(idle.path, '{"version":2,"spent":{"');

    // Two minutes on, another process finds the ledger damaged and puts back the copy from before the release.
    const other = storeAt(alias, { clock: later });
    expect(await other.open()).toMatchObject({ restoredFromBackup: true });

    expect(await other.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect(await other.activeJobs()).toEqual([]);
    expect(await other.spentToday('slack:U1', Date.now())).toBe(0);
    expect(await other.usage({})).toEqual([]);
    expect(await reserve(other, 'next', 0.05)).toEqual({ ok: true });
  });

  it('is charged at what the job cost by its process’s settle when that process still held it (its renewals failed for a whole lease)', async () => {
    const { dir, alias } = await sharedLedger();
    const lost: unknown[] = [];
    const holder = storeAt(dir, { onReservationLost: (l) => lost.push(l) });
    await holder.open();
    await reserve(holder, 'running', 0.224);
    await holder.markSent('running');

    // Its lease seen lapsed (its renewals failed: the ledger could not be read), its process alive: dropped, not charged.
    const other = storeAt(alias, { clock: later });
    expect(await other.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect(await other.activeJobs()).toEqual([]);

    // The service answered: its settle puts the job back from the process's copy and charges what it cost, once.
    expect(await holder.settle('running', 0.0562)).toBe(true);

    expect(lost).toMatchObject([{ jobId: 'running', foundAt: 'settle', chargedUsd: 0.0562 }]);
    expect(await other.spentToday('slack:U1', Date.now())).toBeCloseTo(0.0562, 9);
    expect((await other.usage({})).map((r) => [r.jobId, r.costUsd, r.basis])).toEqual([['running', 0.0562, 'table']]);
    expect(await other.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
  });

  it('is ended as a gone process’s when the store that held it was closed, though its process (this one) lives', async () => {
    const dir = await newDir();
    const closed = storeAt(dir);
    await closed.open();
    await reserve(closed, 'sent', 0.224);
    await closed.markSent('sent');
    await closed.close();

    const next = storeAt(dir, { clock: later });
    expect(await next.reconcile(later())).toEqual({ released: [], settledAtEstimate: ['sent'], chargedUsd: 0.224 });
  });
});

describe('a reservation of a process killed with SIGKILL after sending its job', () => {
  it('is still charged at its estimate and marked uncertain once that process’s lease has lapsed too', async () => {
    const { dir, alias } = await sharedLedger();
    const proc = fork(CHILD, [alias, 'killed', '0.224'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    try {
      await new Promise((resolve, reject) => {
        proc.once('message', resolve);
        proc.once('exit', (code) => reject(new Error(`the child exited with ${code} before its job was sent`)));
      });
    } finally {
      proc.kill('SIGKILL');
      await exited;
    }

    const store = storeAt(dir, { clock: later });
    expect(await store.reconcile(later())).toEqual({ released: [], settledAtEstimate: ['killed'], chargedUsd: 0.224 });
    expect((await store.usage({})).map((r) => [r.jobId, r.costUsd, r.basis])).toEqual([['killed', 0.224, 'uncertain']]);
  });
});
