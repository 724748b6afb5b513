import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LedgerUnreadableError, type FileQuotaStore } from '../../src/internal.js';
import { useFileQuotaStores, useTempDirs } from '../helpers/runner-harness.js';

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return { ...actual, readFileSync: vi.fn(actual.readFileSync), renameSync: vi.fn(actual.renameSync) };
});
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, readFile: vi.fn(actual.readFile), rename: vi.fn(actual.rename), open: vi.fn(actual.open) };
});

afterEach(() => {
  vi.mocked(fs.readFileSync).mockRestore();
  vi.mocked(fs.renameSync).mockRestore();
  vi.mocked(fsp.readFile).mockRestore();
  vi.mocked(fsp.rename).mockRestore();
  vi.mocked(fsp.open).mockRestore();
});

const newDir = useTempDirs();
const storeAt = useFileQuotaStores();

const reserve = (s: FileQuotaStore, jobId: string, usd: number) =>
  s.reserve({ jobId, userKey: 'discord:u1', scopeKey: 'discord:g1', estimateUsd: usd, limits: {}, now: Date.now() });

/** How many times each file was read since the last `mockClear`, by either read the store uses. */
function readsOf(...paths: string[]): number[] {
  const calls = [...vi.mocked(fs.readFileSync).mock.calls, ...vi.mocked(fsp.readFile).mock.calls].map(([path]) => String(path));
  return paths.map((path) => calls.filter((called) => called === path).length);
}

/** A ledger with a job settled, then another reserved (its backup copy holds the version before that). */
async function ledgerIn(dir: string): Promise<string> {
  const first = storeAt(dir);
  await reserve(first, 'a', 0.4);
  await first.settle('a', 0.4);
  await reserve(first, 'b', 0.1);
  await first.close();
  return first.path;
}

describe('opening a file ledger', () => {
  it('reads the ledger file once', async () => {
    const dir = await newDir();
    const path = await ledgerIn(dir);
    const store = storeAt(dir);
    vi.mocked(fs.readFileSync).mockClear();
    vi.mocked(fsp.readFile).mockClear();

    expect(await store.open()).toEqual({ restoredFromBackup: false });

    expect(readsOf(path)).toEqual([1]);
    expect(await store.spentToday('discord:u1', Date.now())).toBeCloseTo(0.5, 9);
  });

  it('reads the damaged ledger file and its backup copy once each when it puts the copy back, not the copy again once put in its place', async () => {
    const dir = await newDir();
    const path = await ledgerIn(dir);
    await fsp.writeFile(path, '{"version":2,"spent":{');
    const store = storeAt(dir);
    vi.mocked(fs.readFileSync).mockClear();
    vi.mocked(fsp.readFile).mockClear();

    expect(await store.open()).toMatchObject({ restoredFromBackup: true });

    expect(readsOf(path, store.backupPath)).toEqual([1, 1]);
    // The copy is the version before the last change: job a settled, job b not yet reserved.
    expect(await store.spentToday('discord:u1', Date.now())).toBeCloseTo(0.4, 9);
  });
});

describe('a file ledger put back from its backup copy at the worst moment', () => {
  /** A ledger damaged after job-1's settle was written: its backup copy shows job-1 reserved and sent, its usage day file its settle. */
  async function damagedAfterSettle(dir: string): Promise<string> {
    const first = storeAt(dir);
    await reserve(first, 'job-1', 0.224);
    await first.markSent('job-1');
    await first.settle('job-1', 0.0562);
    await first.close();
    await fsp.writeFile(first.path, '{"version":2,"spent":{"');
    return first.path;
  }

  /** A store started past the first one's lease: its reservations are a gone process's. */
  const laterStoreAt = (dir: string) => {
    const later = () => Date.now() + 5 * 60_000;
    return { store: storeAt(dir, { clock: later }), later };
  };

  it('stops with the error naming the usage records when they cannot be read, and leaves the ledger as it was: the next start charges what it recorded', async () => {
    const dir = await newDir();
    const path = await damagedAfterSettle(dir);
    const { store, later } = laterStoreAt(dir);
    const actual = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
    vi.mocked(fsp.open).mockImplementation((file, ...rest) =>
      String(file).startsWith(store.usagePath) ? Promise.reject(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })) : actual.open(file, ...rest),
    );

    const error = await store.open().catch((e: unknown) => e);

    expect(error).toBeInstanceOf(LedgerUnreadableError);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: store.usagePath });
    expect((error as Error).message).toContain(`${store.usagePath} cannot be read`);
    expect(await fsp.readFile(path, 'utf8')).toBe('{"version":2,"spent":{"');
    await store.close();
    vi.mocked(fsp.open).mockRestore();

    const next = laterStoreAt(dir).store;
    expect(await next.open()).toMatchObject({ restoredFromBackup: true });
    expect(await next.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect(await next.spentToday('discord:u1', Date.now())).toBeCloseTo(0.0562, 9);
  });

  it('puts the copy in place already charged with what the usage records held: a crash after that one write leaves nothing to charge at estimate', async () => {
    const dir = await newDir();
    const path = await damagedAfterSettle(dir);
    const { store, later } = laterStoreAt(dir);
    // The process dies after the first file put in the ledger's place: any later one fails.
    let placed = 0;
    const crashAfterFirst = (to: unknown) => {
      if (String(to) === path && ++placed > 1) throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
    };
    const actual = await vi.importActual<typeof import('node:fs')>('node:fs');
    const actualP = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
    vi.mocked(fs.renameSync).mockImplementation((from, to) => (crashAfterFirst(to), actual.renameSync(from, to)));
    vi.mocked(fsp.rename).mockImplementation(async (from, to) => (crashAfterFirst(to), actualP.rename(from, to)));

    await store.open().catch(() => undefined);
    await store.close();
    vi.mocked(fs.renameSync).mockRestore();
    vi.mocked(fsp.rename).mockRestore();

    const next = laterStoreAt(dir).store;
    await next.open();
    expect(await next.reconcile(later())).toEqual({ released: [], settledAtEstimate: [], chargedUsd: 0 });
    expect(await next.spentToday('discord:u1', Date.now())).toBeCloseTo(0.0562, 9);
    expect(await next.activeJobs()).toEqual([]);
  });
});
