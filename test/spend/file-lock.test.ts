import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { FileLockBusyError, OWN_PID_LEFTOVER_MS, THIS_HOST, UNREADABLE_STALE_MS, withFileLock } from '../../src/spend/file-lock.js';
import { beforeEachRead } from '../helpers/file-reads.js';

const dirs: string[] = [];
async function lockPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-lock-'));
  dirs.push(dir);
  return join(dir, 'ledger.json.lock');
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('the ledger’s file lock', () => {
  it('lets one task in at a time, and leaves no file behind', async () => {
    const path = await lockPath();
    let inside = 0;
    let most = 0;
    const task = async () => {
      inside++;
      most = Math.max(most, inside);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inside--;
    };
    await Promise.all(Array.from({ length: 8 }, () => withFileLock(path, task)));
    expect(most).toBe(1);
    expect(await readdir(join(path, '..'))).toEqual([]);
  });

  it('breaks at once a lock whose owner on this machine is dead (a process killed while holding it)', async () => {
    const path = await lockPath();
    await writeFile(path, `2147483646\n${THIS_HOST}\n`);
    // A live owner's lock would hold it for the whole wait (5 s) and fail it.
    expect(await withFileLock(path, async () => 'in', { timeoutMs: 5000 })).toBe('in');
  });

  it('breaks an empty lock (a process killed between making it and writing its name) within seconds, not at the stale age of a live lock', async () => {
    const path = await lockPath();
    await writeFile(path, '');
    expect(await withFileLock(path, async () => 'in', { timeoutMs: UNREADABLE_STALE_MS + 5000, staleMs: 60_000 })).toBe('in');
  });

  it('takes a lock its live owner lets go between the failed try and the look at who owns it, even with no time to wait (timeoutMs 0)', async () => {
    const path = await lockPath();
    await writeFile(path, `${process.ppid}\n${THIS_HOST}\n`);
    // The owner lets go as the lock is read, a moment after the try that found it: the read finds no lock.
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => void vi.useRealTimers());
    const lockReads = beforeEachRead(path, async (reads) => {
      if (reads !== 1) return;
      await rm(path);
      vi.setSystemTime(Date.now() + 1);
    });
    expect(await withFileLock(path, async () => 'in', { timeoutMs: 0 })).toBe('in');
    expect(lockReads.reads()).toBe(1);
  });

  it('waits for a live owner and gives up naming it', async () => {
    const path = await lockPath();
    await writeFile(path, `${process.ppid}\n${THIS_HOST}\n`);
    await expect(withFileLock(path, async () => 'in', { timeoutMs: 300 })).rejects.toThrow(`held by process ${process.ppid} on ${THIS_HOST}`);
  });

  it('gives up with an error of its own, naming the lock, never the spend ledger (the alert log shares it): its owner says what waits on it', async () => {
    const path = await lockPath();
    await writeFile(path, `${process.ppid}\n${THIS_HOST}\n`);
    const error = await withFileLock(path, async () => 'in', { timeoutMs: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FileLockBusyError);
    expect(error).toMatchObject({ path, holder: `process ${process.ppid} on ${THIS_HOST}` });
    expect((error as { code?: unknown }).code).toBeUndefined();
  });
});

describe('the ledger’s file lock, naming this very pid (a container started again: pid 1 both times)', () => {
  /** Makes `file` look untouched since before the rule's age. */
  async function age(file: string): Promise<void> {
    const past = new Date(Date.now() - OWN_PID_LEFTOVER_MS - 20_000);
    await utimes(file, past, past);
  }

  it('takes a lock an earlier process of this pid left (killed while holding it), once untouched that long, within its wait', async () => {
    const path = await lockPath();
    await writeFile(path, `${process.pid}\n${THIS_HOST}\n`);
    await age(path);
    expect(await withFileLock(path, async () => 'in', { timeoutMs: 1000 })).toBe('in');
    expect(existsSync(path)).toBe(false);
  });

  it('takes a stale lock whose breaker an earlier process of this pid left (killed in the moment it held it)', async () => {
    const path = await lockPath();
    await writeFile(path, `2147483646\n${THIS_HOST}\n`);
    await writeFile(`${path}.break`, `${process.pid}\n${THIS_HOST}\n`);
    await age(`${path}.break`);
    expect(await withFileLock(path, async () => 'in', { timeoutMs: 1000 })).toBe('in');
    expect(await readdir(join(path, '..'))).toEqual([]);
  });

  it('waits for one this process holds, however old (two stores of one ledger in one process), and gives up naming it', async () => {
    const path = await lockPath();
    let letGo!: () => void;
    const holding = new Promise<void>((done) => (letGo = done));
    let taken!: () => void;
    const isTaken = new Promise<void>((done) => (taken = done));
    const first = withFileLock(path, async () => {
      taken();
      await holding;
      return 'first';
    });
    await isTaken;
    await age(path);
    await expect(withFileLock(path, async () => 'second', { timeoutMs: 300 })).rejects.toThrow(`held by process ${process.pid} on ${THIS_HOST}`);
    expect(await readFile(path, 'utf8')).toMatch(new RegExp(`^${process.pid}\n${THIS_HOST}\n`));
    letGo();
    expect(await first).toBe('first');
    expect(await withFileLock(path, async () => 'second', { timeoutMs: 0 })).toBe('second');
  });

  /** On a clock that moves `stepMs` at each look at the lock's owner; `onRead` runs at each look, before it. */
  function clockMovingAtEachLook(path: string, stepMs: number, onRead: (reads: number) => Promise<void> = async () => undefined): { reads: () => number } {
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => void vi.useRealTimers());
    return beforeEachRead(path, async (reads) => {
      vi.setSystemTime(Date.now() + stepMs);
      await onRead(reads);
    });
  }

  it('waits past its timeout for a lock an earlier process of this pid left, until it is old enough to be taken over (a restart right after a crash mid-commit)', async () => {
    const path = await lockPath();
    await writeFile(path, `${process.pid}\n${THIS_HOST}\n`);
    // Left 10 s ago: taken over 30 s from now, well past the commit's default 10 s wait.
    const left = new Date(Date.now() - OWN_PID_LEFTOVER_MS + 30_000);
    await utimes(path, left, left);
    const clock = clockMovingAtEachLook(path, 1000);
    expect(await withFileLock(path, async () => 'in')).toBe('in');
    expect(clock.reads()).toBeGreaterThan(10);
    expect(existsSync(path)).toBe(false);
  });

  it('waits past its timeout for a fresh one it does not hold, and takes it once let go (a live twin: same pid and host name, another container on the folder)', async () => {
    const path = await lockPath();
    await writeFile(path, `${process.pid}\n${THIS_HOST}\n`);
    // The twin's commit ends 20 s (of the clock) later.
    const clock = clockMovingAtEachLook(path, 1000, async (reads) => {
      if (reads === 20) await rm(path);
    });
    expect(await withFileLock(path, async () => 'in', { timeoutMs: 300 })).toBe('in');
    expect(clock.reads()).toBe(20);
  });

  it('gives up, naming it, on one a live twin keeps renewing: the wait is bounded by its age when first seen', async () => {
    const path = await lockPath();
    await writeFile(path, `${process.pid}\n${THIS_HOST}\n`);
    clockMovingAtEachLook(path, 1000, async () => {
      const now = new Date();
      await utimes(path, now, now);
    });
    await expect(withFileLock(path, async () => 'in', { timeoutMs: 300 })).rejects.toThrow(`held by process ${process.pid} on ${THIS_HOST}`);
  });

  it('asks a caller that does not wait (timeoutMs 0) nothing more: such a lock is held', async () => {
    const path = await lockPath();
    await writeFile(path, `${process.pid}\n${THIS_HOST}\n`);
    await expect(withFileLock(path, async () => 'in', { timeoutMs: 0 })).rejects.toThrow(`held by process ${process.pid} on ${THIS_HOST}`);
  });
});
