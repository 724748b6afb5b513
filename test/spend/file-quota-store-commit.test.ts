import { basename } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FileQuotaStore } from '../../src/internal.js';
import { useTempDirs } from '../helpers/runner-harness.js';

/**
 * What a commit of the file ledger waits for. A job's `markSent` stands between
 * the limiter letting its request go and the request leaving, so on a busy
 * event loop every awaited file call there delays the request by a turn of the
 * loop: a commit awaits its fsyncs (the files', then the folder's, so a power
 * cut cannot take the rename back) and nothing else.
 */
const io = vi.hoisted(() => ({ recording: false, awaited: [] as string[], synced: [] as string[], paths: new Map<number, string>() }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<Record<string, unknown>>();
  const counted = Object.fromEntries(
    Object.entries(actual).map(([name, value]) => [
      name,
      typeof value === 'function'
        ? (...args: unknown[]) => {
            if (io.recording) io.awaited.push(name);
            return (value as (...a: unknown[]) => unknown)(...args);
          }
        : value,
    ]),
  );
  return { ...counted, default: counted };
});

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const openSync = ((path: string, ...rest: unknown[]) => {
    const fd = (actual.openSync as (...a: unknown[]) => number)(path, ...rest);
    io.paths.set(fd, String(path));
    return fd;
  }) as typeof actual.openSync;
  const fsync = ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
    const path = io.paths.get(fd) ?? '?';
    if (io.recording) io.synced.push(actual.statSync(path, { throwIfNoEntry: false })?.isDirectory() ? 'its folder' : basename(path).replace(/\.\d+\.[0-9a-f]+\.tmp$/, '.tmp'));
    actual.fsync(fd, callback);
  }) as typeof actual.fsync;
  return { ...actual, openSync, fsync, default: { ...actual, openSync, fsync } };
});

const newDir = useTempDirs();
let store: FileQuotaStore | undefined;
beforeEach(() => {
  io.recording = false;
  io.awaited.length = 0;
  io.synced.length = 0;
});
afterEach(async () => {
  io.recording = false;
  await store?.close();
  store = undefined;
});

async function reservedJob(): Promise<FileQuotaStore> {
  store = new FileQuotaStore({ dir: await newDir() });
  await store.open();
  expect(await store.reserve({ jobId: 'job-1', userKey: 'slack:U1', scopeKey: 'slack:T1', estimateUsd: 0.05, limits: {}, now: Date.now() })).toEqual({ ok: true });
  return store;
}

describe('a commit of the file ledger', () => {
  it('records a job as sent with one fsync of the ledger and one of its folder, and no other awaited file call', async () => {
    const ledger = await reservedJob();

    io.recording = true;
    await ledger.markSent('job-1');
    io.recording = false;

    expect(io.awaited).toEqual([]);
    expect(io.synced).toEqual(['quota-ledger.json.tmp', 'its folder']);
  });

  it('names the day’s first usage record durably: the usage folder it makes, its feed epoch and its day file each with their folder synced, before the ledger', async () => {
    const ledger = await reservedJob();
    await ledger.markSent('job-1');

    io.recording = true;
    expect(await ledger.settle('job-1', 0.011)).toBe(true);
    io.recording = false;

    expect(io.awaited).toEqual([]);
    expect(io.synced).toEqual(['its folder', 'feed-epoch.tmp', 'its folder', expect.stringMatching(/^\d{4}-\d{2}-\d{2}\.jsonl$/), 'its folder', 'quota-ledger.json.tmp', 'its folder']);
  });

  it('settles a job with the usage record synced first, then the ledger and its folder, and no other awaited file call', async () => {
    const ledger = await reservedJob();
    await ledger.markSent('job-1');
    // The day's file is there already (an earlier job's record).
    expect(await ledger.reserve({ jobId: 'job-0', userKey: 'slack:U1', scopeKey: 'slack:T1', estimateUsd: 0.05, limits: {}, now: Date.now() })).toEqual({ ok: true });
    await ledger.markSent('job-0');
    await ledger.settle('job-0', 0.011);

    io.recording = true;
    expect(await ledger.settle('job-1', 0.011)).toBe(true);
    io.recording = false;

    expect(io.awaited).toEqual([]);
    expect(io.synced).toEqual([expect.stringMatching(/^\d{4}-\d{2}-\d{2}\.jsonl$/), 'quota-ledger.json.tmp', 'its folder']);
  });

  it('commits a burst of markSents that arrive while a commit is under way together: one more write (its fsync and its folder’s), not one each', async () => {
    const ledger = await reservedJob();
    for (let i = 2; i <= 20; i++) await ledger.reserve({ jobId: `job-${i}`, userKey: `slack:U${i}`, scopeKey: 'slack:T1', estimateUsd: 0.05, limits: {}, now: Date.now() });

    io.recording = true;
    await Promise.all(Array.from({ length: 20 }, (_, i) => ledger.markSent(`job-${i + 1}`)));
    io.recording = false;

    expect(io.awaited).toEqual([]);
    expect(io.synced.length).toBeGreaterThanOrEqual(2);
    expect(io.synced.length).toBeLessThanOrEqual(4);
    expect(new Set(io.synced)).toEqual(new Set(['quota-ledger.json.tmp', 'its folder']));
  });
});
