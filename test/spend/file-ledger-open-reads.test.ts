import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
import type { FileQuotaStore } from '../../src/internal.js';
import { useFileQuotaStores, useTempDirs } from '../helpers/runner-harness.js';

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return { ...actual, readFileSync: vi.fn(actual.readFileSync) };
});
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return { ...actual, readFile: vi.fn(actual.readFile) };
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
