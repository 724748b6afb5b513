import { randomBytes } from 'node:crypto';
import { copyFile, link, open, rename, rm } from 'node:fs/promises';

export interface WriteFileAtomicallyOptions {
  /** Kept as a copy of the version being replaced (a damaged file is restored from it). */
  backupPath?: string | undefined;
  /** Default 0600. */
  mode?: number | undefined;
}

/**
 * Writes `path` so that it is always either its old or its new version, never
 * missing or torn: a temporary file beside it, fsync, then a rename over it.
 * With `backupPath`, the old version becomes the backup first, by a hard link
 * (instant, atomic; a copy where the file system has none), so `path` itself
 * is never removed. No old version yet (a first write): no backup.
 */
export async function writeFileAtomically(path: string, data: string | Uint8Array, options: WriteFileAtomicallyOptions = {}): Promise<void> {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const backupTemp = `${temp}.bak`;
  try {
    const handle = await open(temp, 'w', options.mode ?? 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.backupPath !== undefined && (await copyAside(path, backupTemp))) await rename(backupTemp, options.backupPath);
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    await rm(backupTemp, { force: true });
    throw error;
  }
}

/** A hard link to (or a copy of) `file` at `aside`; false when there is no `file`. */
async function copyAside(file: string, aside: string): Promise<boolean> {
  try {
    await link(file, aside);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'ENOSYS') throw error;
  }
  try {
    await copyFile(file, aside);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
