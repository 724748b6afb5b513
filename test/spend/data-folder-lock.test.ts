import fs, { rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DATA_FOLDER_LOCK, holdDataFolder } from '../../src/spend/data-folder-lock.js';
import { THIS_HOST } from '../../src/spend/file-lock.js';
import { beforeEachRead } from '../helpers/file-reads.js';
import { testTempDir } from '../helpers/temp-dir.js';

describe('the data folder lock, where a folder is in its file’s place', () => {
  it('refuses the start naming PICTOR_DATA_DIR and the lock’s path, saying to remove it', async () => {
    const dir = await testTempDir('pictor-folder-lock-dir-');
    fs.mkdirSync(join(dir, DATA_FOLDER_LOCK));
    await expect(holdDataFolder(dir)).rejects.toMatchObject({ code: 'validation_error', param: 'PICTOR_DATA_DIR', message: expect.stringContaining(`${join(dir, DATA_FOLDER_LOCK)} is not a file`) });
    await expect(holdDataFolder(dir)).rejects.toMatchObject({ message: expect.stringContaining('remove it') });
  });
});

describe('the data folder lock, held by a lock file that names no process yet', () => {
  it('refuses the start naming PICTOR_DATA_DIR and saying the lock names no process (one being written where the folder has no hard links), not "pid  on an unknown host"', async () => {
    const dir = await testTempDir('pictor-folder-unnamed-');
    writeFileSync(join(dir, DATA_FOLDER_LOCK), '');
    await expect(holdDataFolder(dir)).rejects.toMatchObject({ param: 'PICTOR_DATA_DIR', message: expect.stringContaining('is in use by another Pictor process (its lock names no process)') });
  });
});

/**
 * Runs `change` just before the start reads who holds the lock after its refusal for the `nth` time: what another
 * process does to the lock in that moment. Through node:fs itself, as every module reading it sees it.
 */
function onLockRead(lock: string, changes: Record<number, () => void>): void {
  const { readFileSync } = fs;
  let reads = 0;
  fs.readFileSync = ((path: fs.PathOrFileDescriptor, options?: unknown) => {
    if (path === lock) changes[++reads]?.();
    return readFileSync(path, options as BufferEncoding);
  }) as typeof fs.readFileSync;
  syncBuiltinESMExports();
  onTestFinished(() => {
    fs.readFileSync = readFileSync;
    syncBuiltinESMExports();
  });
}

describe('the data folder lock, changed by its holder between the refusal and the look at who holds it', () => {
  // A live process of this machine (the one that started this test run) holds the folder.
  const holder = `${process.ppid}\n${THIS_HOST}\n`;

  it('takes the folder when the lock that refused it is let go just before it reads who holds it', async () => {
    const dir = await testTempDir('pictor-folder-let-go-');
    const lock = join(dir, DATA_FOLDER_LOCK);
    writeFileSync(lock, holder);
    onLockRead(lock, { 1: () => rmSync(lock) });
    const held = await holdDataFolder(dir);
    expect(fs.readFileSync(lock, 'utf8')).toMatch(new RegExp(`^${process.pid}\n${THIS_HOST}\n`));
    await held.release();
  });

  it('refuses naming the holder, not "pid  on an unknown host", when the lock is being written again as it reads who holds it', async () => {
    const dir = await testTempDir('pictor-folder-rewritten-');
    const lock = join(dir, DATA_FOLDER_LOCK);
    writeFileSync(lock, holder);
    // Let go and taken again by a process whose lock is not yet filled in (a folder without hard links), then filled in.
    onLockRead(lock, { 1: () => writeFileSync(lock, ''), 2: () => writeFileSync(lock, holder) });
    await expect(holdDataFolder(dir)).rejects.toMatchObject({
      param: 'PICTOR_DATA_DIR',
      message: expect.stringContaining(`is in use by another Pictor process (pid ${process.ppid} on ${THIS_HOST})`),
    });
  });
});

describe('the data folder lock, left by this very pid before (a container started again, pid 1 both times)', () => {
  /** A lock naming this pid on this machine, untouched for a minute: an earlier process's, or a stalled twin's. */
  async function leftover(): Promise<{ dir: string; lock: string }> {
    const dir = await testTempDir('pictor-folder-own-pid-');
    const lock = join(dir, DATA_FOLDER_LOCK);
    writeFileSync(lock, `${process.pid}\n${THIS_HOST}\n`);
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, past, past);
    return { dir, lock };
  }

  it('is not removed while another process breaks the lock (the breaker every stale lock is broken under), and is taken over once that one is done', async () => {
    const { dir, lock } = await leftover();
    writeFileSync(`${lock}.break`, `${process.ppid}\n${THIS_HOST}\n`);
    await expect(holdDataFolder(dir)).rejects.toMatchObject({ param: 'PICTOR_DATA_DIR', message: expect.stringContaining(`(pid ${process.pid} on ${THIS_HOST})`) });
    expect(fs.statSync(lock).mtimeMs).toBeLessThan(Date.now() - 50_000);
    rmSync(`${lock}.break`);
    const held = await holdDataFolder(dir);
    await held.release();
  });

  it('is taken over when the breaker names this pid too and is as old: the earlier process was killed while it held the breaker, and this pid is alive', async () => {
    const { dir, lock } = await leftover();
    writeFileSync(`${lock}.break`, `${process.pid}\n${THIS_HOST}\n`);
    const past = new Date(Date.now() - 60_000);
    fs.utimesSync(`${lock}.break`, past, past);
    const held = await holdDataFolder(dir);
    expect(fs.readFileSync(lock, 'utf8')).toMatch(new RegExp(`^${process.pid}\n${THIS_HOST}\n`));
    expect(Date.now() - fs.statSync(lock).mtimeMs).toBeLessThan(10_000);
    expect(fs.existsSync(`${lock}.break`)).toBe(false);
    await held.release();
  });

  it('is not removed while a breaker naming this pid is fresh (a twin breaking a lock just then), and the breaker stays', async () => {
    const { dir, lock } = await leftover();
    writeFileSync(`${lock}.break`, `${process.pid}\n${THIS_HOST}\n`);
    await expect(holdDataFolder(dir)).rejects.toMatchObject({ param: 'PICTOR_DATA_DIR', message: expect.stringContaining(`(pid ${process.pid} on ${THIS_HOST})`) });
    expect(fs.statSync(lock).mtimeMs).toBeLessThan(Date.now() - 50_000);
    expect(fs.existsSync(`${lock}.break`)).toBe(true);
  });

  it('is not removed when, looked at again under the breaker, it has just been taken by a twin (same pid, same host name, another container sharing the folder)', async () => {
    const { dir, lock } = await leftover();
    // The twin removes the leftover and takes the folder between this start's look at the lock and its removal.
    const lockReads = beforeEachRead(lock, (reads) => {
      if (reads === 2) writeFileSync(lock, `${process.pid}\n${THIS_HOST}\n`);
    });
    await expect(holdDataFolder(dir)).rejects.toMatchObject({ param: 'PICTOR_DATA_DIR' });
    expect(lockReads.reads()).toBeGreaterThanOrEqual(2);
    expect(Date.now() - fs.statSync(lock).mtimeMs).toBeLessThan(10_000);
  });
});
