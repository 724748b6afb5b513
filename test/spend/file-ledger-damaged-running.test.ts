import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileQuotaStore, LedgerUnreadableError } from '../../src/internal.js';
import { ledgerDir, openQuotaStore } from '../../src/spend/open-store.js';
import type { QuotaStore } from '../../src/spend/types.js';
import { useTempDirs } from '../helpers/runner-harness.js';

const newDir = useTempDirs();
const open: QuotaStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});
function storeAt(dir: string, options: Partial<ConstructorParameters<typeof FileQuotaStore>[0]> = {}): FileQuotaStore {
  const store = new FileQuotaStore({ dir, ...options });
  open.push(store);
  return store;
}

const T0 = Date.now();
const job = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'high' };
/** Reserves `jobId` at T0 plus `second` seconds (each job at its own time, as the copy's times tell them apart). */
const reserve = (s: QuotaStore, jobId: string, usd: number, second: number, userKey = 'slack:U1') =>
  s.reserve({ jobId, userKey, scopeKey: 'slack:T1', estimateUsd: usd, limits: { userConcurrentJobs: 1 }, now: T0 + second * 1000, job });
const brokenCopies = async (dir: string) => (await readdir(dir)).filter((f) => f.startsWith('quota-ledger.json.broken-'));

describe('a ledger file damaged while a job runs', () => {
  it.each([
    ['not JSON (cut short)', '{"version":2,"spent":'],
    ['not a ledger', '{"version": 9}'],
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

  it('is said through the same sentence as at start, naming the copy kept aside', async () => {
    const dataDir = await newDir();
    const sentences: string[] = [];
    const store = await openQuotaStore({ dataDir, onRestored: (sentence) => sentences.push(sentence) });
    open.push(store);
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
