import { mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileQuotaStore, LedgerUnreadableError } from '../../src/internal.js';
import { useFileQuotaStores, useTempDirs } from '../helpers/runner-harness.js';

const newDir = useTempDirs();
const storeAt = useFileQuotaStores();

const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'high' };
const reserve = (s: FileQuotaStore, jobId: string, usd: number, userKey = 'slack:U1') =>
  s.reserve({ jobId, userKey, scopeKey: 'slack:T1', estimateUsd: usd, limits: { userConcurrentJobs: 1 }, now: Date.now(), job });

describe('a ledger file deleted while a job runs', () => {
  it('is put back from its backup copy by the next step, which says so, and the job is charged and recorded', async () => {
    const dir = await newDir();
    const restored: unknown[] = [];
    const store = storeAt(dir, { onRestored: (r) => restored.push(r) });
    await store.open();
    await reserve(store, 'first', 0.05);
    await store.settle('first', 0.05);
    await reserve(store, 'second', 0.224);
    await store.markSent('second');
    await rm(store.path);

    expect(await store.settle('second', 0.0562)).toBe(true);

    expect(restored).toEqual([{ brokenCopy: undefined }]);
    expect(await store.spentToday('slack:U1', Date.now())).toBeCloseTo(0.1062, 9);
    expect((await store.usage({})).map((r) => [r.jobId, r.costUsd, r.basis])).toEqual([
      ['first', 0.05, 'table'],
      ['second', 0.0562, 'table'],
    ]);
    expect(await store.activeJobs()).toEqual([]);
    // Not refused for ever after: the next job of the same user (one at a time) is taken.
    expect(await reserve(store, 'third', 0.05)).toEqual({ ok: true });
  });

  it('charges from the process’s copy a job the backup copy does not know (reserved by the last change)', async () => {
    const dir = await newDir();
    const lost: unknown[] = [];
    const store = storeAt(dir, { onReservationLost: (l) => lost.push(l) });
    await store.open();
    await reserve(store, 'first', 0.05);
    await store.settle('first', 0.05);
    await reserve(store, 'second', 0.224);
    await rm(store.path);

    expect(await store.settle('second', 0.0562)).toBe(true);

    expect(lost).toMatchObject([{ jobId: 'second', foundAt: 'settle', chargedUsd: 0.0562 }]);
    expect(await store.spentThisMonth('account', Date.now())).toBeCloseTo(0.1062, 9);
  });

  it('does not bring back a job this process released by the last change: no slot taken, nothing charged at the next start', async () => {
    const dir = await newDir();
    const first = storeAt(dir, { onRestored: () => undefined });
    await first.open();
    await reserve(first, 'first', 0.05);
    await first.settle('first', 0.05);
    await reserve(first, 'released', 0.224);
    await first.markSent('released');
    // The last change: the backup copy is the one before it, the job still reserved and sent.
    await first.release('released');
    await rm(first.path);

    expect(await first.activeJobs()).toEqual([]);
    // Its user's one job at a time is free again.
    expect(await reserve(first, 'next', 0.05)).toEqual({ ok: true });
    await first.release('next');
    await first.close();

    // Past the first store's lease: what it left open is a gone process's.
    const later = () => Date.now() + 5 * 60_000;
    const second = storeAt(dir, { clock: later });
    await second.open();
    expect(await second.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect(await second.spentToday('slack:U1', Date.now())).toBeCloseTo(0.05, 9);
    expect((await second.usage({})).map((r) => r.jobId)).toEqual(['first']);
  });

  it('is put back for a read without the lock too, rather than read as a fresh ledger with nothing spent', async () => {
    const dir = await newDir();
    const store = storeAt(dir, { onRestored: () => undefined });
    await store.open();
    await reserve(store, 'first', 0.05);
    await store.settle('first', 0.05);
    await rm(store.path);

    expect((await store.spentMany(['account'], Date.now())).get('account')?.day).toBeCloseTo(0.05, 9);
  });

  it('names both files, and says the backup copy is damaged, when that copy cannot take its place', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await store.open();
    await reserve(store, 'first', 0.05);
    await rm(store.path);
    await writeFile(store.backupPath, '{"version":2,"spent":');

    const error = await store.settle('first', 0.05).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LedgerUnreadableError);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.path });
    expect((error as Error).message).toContain(`${store.path} is missing, and its backup copy ${store.backupPath} is damaged`);
    expect((error as Error).message).not.toMatch(/no good backup/);
  });
});

describe('a backup copy that cannot be read', () => {
  it('is named as unreadable, not as damaged, when the ledger is missing: the start is refused and nothing is changed', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await mkdir(store.backupPath);

    const error = await store.open().catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LedgerUnreadableError);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.backupPath });
    expect((error as Error).message).toContain(`${store.backupPath} cannot be read (the backup copy of the spend ledger ${store.path})`);
    expect((error as Error).message).not.toMatch(/damaged/);
    expect(await readdir(dir)).toEqual(['quota-ledger.json.bak']);
  });

  it('refuses the start when it is a folder beside a good ledger, rather than failing every job at its first write', async () => {
    const dir = await newDir();
    const first = storeAt(dir);
    await first.open();
    await reserve(first, 'job-1', 0.05);
    await first.release('job-1');
    await first.close();
    await rm(first.backupPath);
    await mkdir(first.backupPath);
    const ledger = await readFile(first.path, 'utf8');
    const store = storeAt(dir);

    const error = await store.open().catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LedgerUnreadableError);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.backupPath });
    expect((error as Error).message).toContain(`${store.backupPath} cannot be read (the backup copy of the spend ledger ${store.path})`);
    expect(await readFile(store.path, 'utf8')).toBe(ledger);
  });

  it('is named as unreadable for the chat admins’ caps too, rather than starting without them', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await mkdir(`${store.capOverridesPath}.bak`);

    const error = await store.open().catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LedgerUnreadableError);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: `${store.capOverridesPath}.bak` });
    expect((error as Error).message).toContain("cannot be read (the backup copy of the chat admins' caps)");
  });
});

describe('a ledger that exists but cannot be read (its permissions, a disk error; here a folder in its place)', () => {
  /** A ledger with a good backup copy beside it, then made unreadable. */
  async function unreadableLedgerIn(dir: string): Promise<FileQuotaStore> {
    const first = storeAt(dir);
    await first.open();
    await reserve(first, 'first', 0.05);
    await first.settle('first', 0.05);
    await first.close();
    await rm(first.path);
    await mkdir(first.path);
    return storeAt(dir);
  }

  it('refuses the start naming it as unreadable, not damaged, and leaves it and its backup copy as they are', async () => {
    const dir = await newDir();
    const store = await unreadableLedgerIn(dir);
    const backup = await readFile(store.backupPath, 'utf8');

    const error = await store.open().catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LedgerUnreadableError);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.path });
    expect((error as Error).message).toContain(`${store.path} cannot be read (the spend ledger)`);
    expect((error as Error).message).not.toMatch(/damaged/);
    expect((await readdir(dir)).filter((f) => f.startsWith('quota-ledger.json')).sort()).toEqual(['quota-ledger.json', 'quota-ledger.json.bak']);
    expect(await readFile(store.backupPath, 'utf8')).toBe(backup);
  });

  it('fails the next step with the same error when it becomes unreadable while the process runs', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await store.open();
    await reserve(store, 'first', 0.05);
    await store.settle('first', 0.05);
    await rm(store.path);
    await mkdir(store.path);

    const error = await reserve(store, 'second', 0.05).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LedgerUnreadableError);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.path });
    expect((await readdir(dir)).some((f) => f.includes('.broken-'))).toBe(false);
  });

  it('fails a read without the lock (activeJobs, spentMany) with the same error, and leaves it as it is', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await store.open();
    await reserve(store, 'first', 0.05);
    await store.settle('first', 0.05);
    // Read once, so the next reads would take it as unchanged if they did not see the file change.
    await store.activeJobs();
    await rm(store.path);
    await mkdir(store.path);

    for (const read of [
      () => store.activeJobs(),
      () => store.spentMany(['account'], Date.now()),
    ]) {
      const error = await read().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LedgerUnreadableError);
      expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.path });
      expect((error as Error).message).toContain(`${store.path} cannot be read (the spend ledger)`);
    }
    expect((await readdir(dir)).filter((f) => f.startsWith('quota-ledger.json')).sort()).toEqual(['quota-ledger.json', 'quota-ledger.json.bak']);
  });

  it('refuses the start for the chat admins’ caps too, rather than rolling them back to their backup copy', async () => {
    const dir = await newDir();
    const first = storeAt(dir);
    await first.open();
    await first.setCapOverride('slack:T1', 'userMonthlyUsd', 9, 'slack:admin', Date.now());
    await first.setCapOverride('slack:T1', 'userMonthlyUsd', 5, 'slack:admin', Date.now());
    await first.close();
    await rm(first.capOverridesPath);
    await mkdir(first.capOverridesPath);
    const store = storeAt(dir);

    const error = await store.open().catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LedgerUnreadableError);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.capOverridesPath });
    expect((error as Error).message).toContain(`${store.capOverridesPath} cannot be read (the chat admins' caps)`);
    expect((await readdir(dir)).some((f) => f.includes('.broken-'))).toBe(false);
  });
});

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

describe('a ledger put back from its backup copy by another process', () => {
  it('loses a job the first process released by the last change once that process next writes: its user’s slot is free, nothing is charged', async () => {
    // A second process on the same ledger: one store per file per process, so the other opens it through a link (in
    // the test's folder, removed with it).
    const root = await newDir();
    const dir = join(root, 'ledger');
    await mkdir(dir);
    const alias = join(root, 'other-process');
    await symlink(dir, alias);
    const first = storeAt(dir);
    await first.open();
    // A job it still runs (it renews its lease while it holds one), and one sent then released (answered, billed nothing).
    await reserve(first, 'running', 0.05, 'slack:U2');
    await reserve(first, 'released', 0.224);
    await first.markSent('released');
    // The last change: the backup copy is the one before it, the job still reserved and sent, under the first process.
    await first.release('released');
    await writeFile(first.path, '{"version":2,"spent":{"');

    const second = storeAt(alias);
    expect(await second.open()).toMatchObject({ restoredFromBackup: true });
    // The copy brings it back: nobody holds it, yet it takes its user's one job at a time while the first process lives.
    expect((await second.activeJobs()).map((j) => j.jobId)).toEqual(['running', 'released']);
    expect(await reserve(second, 'next', 0.05)).toMatchObject({ ok: false, code: 'user_concurrency' });

    // The first process's next write (here its lease renewal) drops what it no longer holds, as its own restore would.
    await first.renewLease();

    expect((await second.activeJobs()).map((j) => j.jobId)).toEqual(['running']);
    expect(await reserve(second, 'next', 0.05)).toEqual({ ok: true });
    await second.release('next');
    await first.settle('running', 0.05);
    await first.close();
    // Past the first process's lease: nothing of it is left to charge at its estimate.
    const later = Date.now() + 5 * 60_000;
    expect(await second.reconcile(later)).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect(await second.spentToday('slack:U1', Date.now())).toBe(0);
    expect((await second.usage({})).map((r) => r.jobId)).toEqual(['running']);
  });
});

describe('a job this process just reserved', () => {
  it('is held from the moment its reservation is written: the commit right behind it, which drops what this process does not hold, keeps it', async () => {
    const store = storeAt(await newDir());
    await store.open();
    const reserved = reserve(store, 'just-reserved', 0.05);
    // Asked once the reserve's commit has begun: it is the next commit.
    await Promise.resolve();
    const next = store.countRefusals({ user_cooldown: 1 }, Date.now());

    expect(await reserved).toEqual({ ok: true });
    await next;

    // Two commits were written, not one: the backup copy is the file before the last write, the reserve's alone.
    const written = async (path: string) => JSON.parse(await readFile(path, 'utf8')) as { reservations: Record<string, unknown>; refusals?: Record<string, Record<string, number>> };
    const [before, last] = [await written(store.backupPath), await written(store.path)];
    expect([Object.keys(before.reservations), before.refusals ?? {}]).toEqual([['just-reserved'], {}]);
    expect(Object.values(last.refusals ?? {})).toEqual([{ user_cooldown: 1 }]);
    expect((await store.activeJobs()).map((j) => j.jobId)).toEqual(['just-reserved']);
    expect(await reserve(store, 'second', 0.05)).toMatchObject({ ok: false, code: 'user_concurrency' });
  });
});
