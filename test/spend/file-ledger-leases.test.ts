import { fork } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FileQuotaStore } from '../../src/internal.js';
import { LAPSED_LEASES_AT_MOST } from '../../src/spend/ledger-document.js';
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
  it('is kept, charged nothing, when sent, and dropped at its process’s next write when that process went idle after releasing it and a restore brought it back', async () => {
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

    // Its process lives, and may still hold a sent job: it stays, counted against the caps, charged nothing.
    expect(await other.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect((await other.activeJobs()).map((j) => j.jobId)).toEqual(['released']);
    expect(await other.spentToday('slack:U1', Date.now())).toBeCloseTo(0.224, 9);
    expect(await other.usage({})).toEqual([]);

    // Its process's next write drops it before that write's reserve looks at the member's jobs.
    expect(await reserve(idle, 'next', 0.05)).toEqual({ ok: true });
    expect((await other.activeJobs()).map((j) => j.jobId)).toEqual(['next']);
    await idle.release('next');
    expect(await other.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect(await other.spentToday('slack:U1', Date.now())).toBe(0);
    expect(await other.usage({})).toEqual([]);
  });

  it('is dropped, charged nothing, when never sent; its process’s send puts it back from its copy when it still held it', async () => {
    const { dir, alias } = await sharedLedger();
    const lost: unknown[] = [];
    const holder = storeAt(dir, { onReservationLost: (l) => lost.push(l) });
    await holder.open();
    await reserve(holder, 'queued', 0.224);

    const other = storeAt(alias, { clock: later });
    expect(await other.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect(await other.activeJobs()).toEqual([]);

    await holder.markSent('queued');
    expect(lost).toMatchObject([{ jobId: 'queued', foundAt: 'send' }]);
    expect(await holder.settle('queued', 0.0562)).toBe(true);
    expect(await other.spentToday('slack:U1', Date.now())).toBeCloseTo(0.0562, 9);
  });

  it('is kept when sent, and charged at what the job cost by its process’s settle when that process still held it (its renewals failed for a whole lease)', async () => {
    const { dir, alias } = await sharedLedger();
    const lost: unknown[] = [];
    const holder = storeAt(dir, { onReservationLost: (l) => lost.push(l) });
    await holder.open();
    await reserve(holder, 'running', 0.224);
    await holder.markSent('running');

    // Its lease seen lapsed (its renewals failed: the ledger could not be read), its process alive: kept, not charged.
    const other = storeAt(alias, { clock: later });
    expect(await other.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect((await other.activeJobs()).map((j) => j.jobId)).toEqual(['running']);

    // The service answered: its settle charges what it cost, once.
    expect(await holder.settle('running', 0.0562)).toBe(true);

    expect(lost).toEqual([]);
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

/** Forks a process that reserves a job and marks it sent, and waits until it did. */
async function forkHolder(dir: string, jobId: string) {
  const proc = fork(CHILD, [dir, jobId, '0.224'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  const kill = async () => {
    proc.kill('SIGKILL');
    await exited;
  };
  try {
    await new Promise((resolve, reject) => {
      proc.once('message', resolve);
      proc.once('exit', (code) => reject(new Error(`the child exited with ${code} before its job was sent`)));
    });
  } catch (error) {
    await kill();
    throw error;
  }
  return kill;
}

describe('a sent job of a process whose lease lapsed while it lived (stalled, stopped with Ctrl-Z)', () => {
  it('is charged at its estimate once that process is killed before it settles', async () => {
    const { dir, alias } = await sharedLedger();
    const kill = await forkHolder(alias, 'stalled');
    const store = storeAt(dir, { clock: later });
    try {
      // Two minutes on its lease has lapsed, but its process lives and may still hold the job: nothing is ended.
      expect(await store.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
      expect((await store.activeJobs()).map((j) => j.jobId)).toEqual(['stalled']);
    } finally {
      await kill();
    }

    expect(await store.reconcile(later())).toEqual({ released: [], settledAtEstimate: ['stalled'], chargedUsd: 0.224 });
    expect((await store.usage({})).map((r) => [r.jobId, r.costUsd, r.basis])).toEqual([['stalled', 0.224, 'uncertain']]);
  });
});

describe('a sent job of a process whose lease lapsed long ago, its pid still alive (a container restarted, the pid reused)', () => {
  it('is charged at its estimate once the lease has been lapsed for LAPSED_LEASES_AT_MOST leases, though that pid lives', async () => {
    const { dir, alias } = await sharedLedger();
    const kill = await forkHolder(alias, 'reused');
    const longAfter = () => Date.now() + (LAPSED_LEASES_AT_MOST + 1) * 60_000;
    const store = storeAt(dir, { clock: longAfter });
    try {
      expect(await store.reconcile(longAfter())).toEqual({ released: [], settledAtEstimate: ['reused'], chargedUsd: 0.224 });
      expect((await store.usage({})).map((r) => [r.jobId, r.costUsd, r.basis])).toEqual([['reused', 0.224, 'uncertain']]);
    } finally {
      await kill();
    }
  });
});

describe('a reservation of a process killed with SIGKILL after sending its job', () => {
  it('is charged at its estimate and marked uncertain at once, its lease still current: its pid is gone', async () => {
    const { dir, alias } = await sharedLedger();
    const kill = await forkHolder(alias, 'killed');
    await kill();

    const store = storeAt(dir);
    expect(await store.reconcile(Date.now())).toEqual({ released: [], settledAtEstimate: ['killed'], chargedUsd: 0.224 });
    expect((await store.usage({})).map((r) => [r.jobId, r.costUsd, r.basis])).toEqual([['killed', 0.224, 'uncertain']]);
  });
});
