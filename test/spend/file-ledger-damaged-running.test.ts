import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LedgerUnreadableError } from '../../src/internal.js';
import { ledgerDir, openQuotaStore } from '../../src/spend/open-store.js';
import type { QuotaStore } from '../../src/spend/types.js';
import { useFileQuotaStores, useTempDirs } from '../helpers/runner-harness.js';

const newDir = useTempDirs();
const storeAt = useFileQuotaStores();

const T0 = Date.now();
const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'high' };
/** Reserves `jobId` at T0 plus `second` seconds (each job at its own time, as the copy's times tell them apart). */
const reserve = (s: QuotaStore, jobId: string, usd: number, second: number, userKey = 'slack:U1') =>
  s.reserve({ jobId, userKey, scopeKey: 'slack:T1', estimateUsd: usd, limits: { userConcurrentJobs: 1 }, now: T0 + second * 1000, job });
/** A ledger whose member's job 'first' was charged $0.05 and whose 'second' ($0.224 at most) is reserved, nothing sent. */
async function firstSettledSecondReserved() {
  const store = storeAt(await newDir(), { onRestored: () => undefined, onReservationLost: () => undefined });
  await store.open();
  await reserve(store, 'first', 0.05, 0);
  await store.settle('first', 0.05);
  await reserve(store, 'second', 0.224, 1);
  return store;
}
const brokenCopies = async (dir: string) => (await readdir(dir)).filter((f) => f.startsWith('quota-ledger.json.broken-'));

describe('a ledger file damaged while a job runs', () => {
  it.each([
    ['not JSON (cut short)', '{"version":2,"spent":'],
    ['not a ledger', '{"version": 9}'],
    ['a ledger holding a negative amount', JSON.stringify({ version: 2, spent: { [new Date(T0).toISOString().slice(0, 10)]: { account: -5 } }, reservations: {}, owners: {}, uncertain: {}, lastJobAt: {} })],
    ['a ledger holding an amount too large to count', JSON.stringify({ version: 2, spent: { [new Date(T0).toISOString().slice(0, 10)]: { account: 1e308 } }, reservations: {}, owners: {}, uncertain: {}, lastJobAt: {} })],
  ])('that is %s is moved aside and its backup copy put back by the next step, which says so, and the job is charged', async (_what, damaged) => {
    const dir = await newDir();
    const restored: { brokenCopy?: string | undefined }[] = [];
    const store = storeAt(dir, { onRestored: (r) => restored.push(r) });
    await store.open();
    await reserve(store, 'first', 0.05, 0);
    await store.settle('first', 0.05);
    await reserve(store, 'second', 0.224, 1);
    await store.markSent('second');
    await writeFile(store.path, damaged);

    expect(await store.settle('second', 0.0562)).toBe(true);

    const broken = await brokenCopies(dir);
    expect(broken).toHaveLength(1);
    expect(await readFile(join(dir, broken[0]!), 'utf8')).toBe(damaged);
    expect(restored).toEqual([{ brokenCopy: join(dir, broken[0]!) }]);
    expect(await store.spentToday('slack:U1', T0)).toBeCloseTo(0.1062, 9);
    expect(await store.activeJobs()).toEqual([]);
    // Not refused for ever after: the next job of the same user (one at a time) is taken.
    expect(await reserve(store, 'third', 0.05, 2)).toEqual({ ok: true });
  });

  it('is put back for a read without the lock too, rather than failing it', async () => {
    const dir = await newDir();
    const store = storeAt(dir, { onRestored: () => undefined });
    await store.open();
    await reserve(store, 'first', 0.05, 0);
    await store.settle('first', 0.05);
    await writeFile(store.path, '{"version":2,"spent":');

    expect((await store.spentMany(['account'], T0)).get('account')?.day).toBeCloseTo(0.05, 9);
  });

  it('is put back for a read without the lock when it holds an amount too large to count, as a locked step would, rather than showing Infinity', async () => {
    const dir = await newDir();
    const store = storeAt(dir, { onRestored: () => undefined });
    await store.open();
    await reserve(store, 'first', 0.05, 0);
    await store.settle('first', 0.05);
    const day = new Date(T0).toISOString().slice(0, 10);
    await writeFile(store.path, JSON.stringify({ version: 2, spent: { [day]: { account: 1e308 } }, reservations: {}, owners: {}, uncertain: {}, lastJobAt: {} }));

    expect((await store.spentMany(['account'], T0)).get('account')?.day).toBeCloseTo(0.05, 9);
    expect(await brokenCopies(dir)).toHaveLength(1);
  });

  it('fails a read without the lock, naming the ledger, when it holds an amount too large to count and its backup copy is damaged too', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await store.open();
    await reserve(store, 'first', 0.05, 0);
    await store.settle('first', 0.05);
    const day = new Date(T0).toISOString().slice(0, 10);
    await writeFile(store.path, JSON.stringify({ version: 2, spent: { [day]: { account: 1e308 } }, reservations: {}, owners: {}, uncertain: {}, lastJobAt: {} }));
    await writeFile(store.backupPath, '{"version":2,"reservations":');

    const error = await store.spentMany(['account'], T0).catch((e: unknown) => e);

    expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.path });
    await expect(store.spentToday('account', T0)).rejects.toMatchObject({ code: 'ledger_unreadable', path: store.path });
  });

  it('is said through the same sentence as at start, naming the copy kept aside', async () => {
    const dataDir = await newDir();
    const sentences: string[] = [];
    const store = await openQuotaStore({ dataDir, onRestored: (sentence) => sentences.push(sentence) });
    onTestFinished(() => store.close());
    await reserve(store, 'first', 0.05, 0);
    await store.settle('first', 0.05);
    await reserve(store, 'second', 0.2, 1);
    const path = join(ledgerDir(dataDir), 'quota-ledger.json');
    await writeFile(path, 'not a ledger');

    expect(await store.settle('second', 0.1)).toBe(true);

    const [broken] = await brokenCopies(ledgerDir(dataDir));
    expect(sentences).toEqual([`The spend ledger ${path} was unreadable (kept as ${join(ledgerDir(dataDir), broken!)}): restored its backup copy ${path}.bak, one change behind.`]);
  });

  it('still fails the step, naming the ledger, when the backup copy is damaged too (nothing moved aside)', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await store.open();
    await reserve(store, 'first', 0.05, 0);
    await writeFile(store.path, '{"version":2,"spent":');
    await writeFile(store.backupPath, '{"version":2,"reservations":');

    const error = await store.settle('first', 0.05).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LedgerUnreadableError);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.path });
    expect((error as Error).message).toMatch(/quota-ledger\.json is not JSON .*no good backup copy/);
    expect(await brokenCopies(dir)).toEqual([]);
  });
});

describe('a ledger put back from a backup copy older than jobs settled since', () => {
  it('adds the settles the usage records hold of jobs reserved after the copy: the day’s spent is the sum of the settles', async () => {
    const dir = await newDir();
    const store = storeAt(dir, { onRestored: () => undefined });
    await store.open();
    await reserve(store, 'first', 0.05, 0);
    await store.settle('first', 0.05);
    const copy = await readFile(store.path, 'utf8');
    // Reserved and settled after the copy: neither is in it.
    await reserve(store, 'second', 0.224, 1);
    await store.settle('second', 0.0562);
    await reserve(store, 'third', 0.1, 2);
    await store.settle('third', 0.02, { basis: 'estimate' });
    await writeFile(store.backupPath, copy);
    await writeFile(store.path, '{"version":2,"spent":');

    const settles = (await store.usage({})).reduce((sum, r) => sum + r.costUsd, 0);
    expect(settles).toBeCloseTo(0.1262, 9);
    expect(await store.spentToday('slack:U1', T0)).toBeCloseTo(settles, 9);
    expect(await store.spentThisMonth('account', T0)).toBeCloseTo(settles, 9);
    expect(await store.spentToday('slack:T1', T0)).toBeCloseTo(settles, 9);
    // Written so: the next restore starts from these totals.
    expect(JSON.parse(await readFile(store.path, 'utf8')).spent[new Date(T0).toISOString().slice(0, 10)]).toMatchObject({ 'slack:U1': 0.1262 });
    expect(await store.usage({})).toHaveLength(3);
  });

  it('at start, counts once each job: charged in the copy, open in the copy, and reserved after it', async () => {
    const dir = await newDir();
    const first = storeAt(dir);
    await first.open();
    await reserve(first, 'charged', 0.05, 0);
    await first.settle('charged', 0.05);
    await reserve(first, 'open', 0.224, 1);
    await first.markSent('open');
    const copy = await readFile(first.path, 'utf8');
    await first.settle('open', 0.0562);
    await reserve(first, 'after', 0.3, 2);
    await first.markSent('after');
    await first.settle('after', 0.25);
    await first.close();
    await writeFile(first.backupPath, copy);
    await writeFile(first.path, '{"version": 9}');

    // Past the first store's lease: its reservations are a gone process's.
    const later = () => Date.now() + 5 * 60_000;
    const store = storeAt(dir, { clock: later });
    expect(await store.open()).toMatchObject({ restoredFromBackup: true });
    expect(await store.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });

    expect(await store.spentToday('slack:U1', T0)).toBeCloseTo(0.3562, 9);
    expect(await store.spentThisMonth('account', T0)).toBeCloseTo(0.3562, 9);
    expect(JSON.parse(await readFile(store.path, 'utf8')).uncertain).toEqual({});
  });

  it('keeps a job a reconcile charged after the copy as uncertain, as its record says', async () => {
    const dir = await newDir();
    const first = storeAt(dir);
    await first.open();
    await reserve(first, 'charged', 0.05, 0);
    await first.settle('charged', 0.05);
    const copy = await readFile(first.path, 'utf8');
    await reserve(first, 'cut-off', 0.3, 1);
    await first.markSent('cut-off');
    await first.close();
    // Ended at its estimate by a later process, after the copy.
    const later = () => Date.now() + 5 * 60_000;
    const second = storeAt(dir, { clock: later });
    await second.open();
    expect(await second.reconcile(later())).toMatchObject({ settledAtEstimate: ['cut-off'] });
    await writeFile(second.backupPath, copy);
    await writeFile(second.path, '{"version":2,"spent":');

    expect(await second.spentToday('slack:U1', T0)).toBeCloseTo(0.35, 9);
    expect(Object.keys(JSON.parse(await readFile(second.path, 'utf8')).uncertain)).toEqual(['cut-off']);
  });

  it('does not count again a job the copy charged from a process’s own copy of its reservation (the ledger had lost it)', async () => {
    const store = await firstSettledSecondReserved();
    // Put back one change behind: 'second' is not in it, and is charged from this process's copy.
    await writeFile(store.path, 'damaged');
    expect(await store.settle('second', 0.0562)).toBe(true);
    // Another user's job: the copy of the next change holds the charge of 'second'.
    await reserve(store, 'other', 0.1, 2, 'slack:U2');
    await writeFile(store.path, 'damaged again');

    expect(await store.spentToday('slack:U1', T0)).toBeCloseTo(0.1062, 9);
    // 'other' is one change behind again (its process's copy charges it when it settles).
    expect(await store.spentToday('account', T0)).toBeCloseTo(0.1062, 9);
  });

  it('does not count again a job the ledger lost and got back when it was sent, then settled, once a copy holds its charge', async () => {
    const store = await firstSettledSecondReserved();
    await writeFile(store.path, 'damaged');
    // Put back one change behind, without 'second': sending it puts it back from this process's copy.
    await store.markSent('second');
    expect(await store.settle('second', 0.0562)).toBe(true);
    await reserve(store, 'other', 0.1, 2, 'slack:U2');
    await writeFile(store.path, 'damaged again');

    expect(await store.spentToday('slack:U1', T0)).toBeCloseTo(0.1062, 9);
  });
});
