import { randomBytes } from 'node:crypto';
import { closeSync, copyFileSync, fsync, linkSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { copyFile, link, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

export type WriteFileAtomicallyOptions = WriteOptions &
  (
    | {
        /** Kept as a copy of the version being replaced (a damaged file is restored from it). */
        backupPath?: string | undefined;
        exclusive?: false | undefined;
      }
    | {
        backupPath?: undefined;
        /**
         * Never replaces a file: the whole new version takes the name only if nothing has it, else the write fails
         * with EEXIST (as `wx` does) and the file that has it is untouched. Default false.
         */
        exclusive: true;
      }
  );

interface WriteOptions {
  /** Default 0600 (before the umask). */
  mode?: number | undefined;
  /**
   * Every step but the fsyncs as a synchronous call (microseconds for a small
   * file on a local disk); only the fsyncs (the file's, then its folder's) are
   * awaited. For small files written
   * on a hot path (the spend ledger): on a busy event loop each awaited call
   * costs a turn of the loop, and a write is eight of them. Default false.
   */
  inline?: boolean | undefined;
}

/**
 * Writes `path` so that it is always either its old or its new version, never
 * missing or torn: a temporary file beside it, fsync, then a rename over it,
 * then an fsync of the folder, so that a power cut after the write answered
 * cannot take the rename back (where a folder cannot be synced, as on Windows,
 * that last step is skipped).
 * With `backupPath`, the old version becomes the backup first, by a hard link
 * (instant, atomic; a copy where the file system has none), so `path` itself
 * is never removed. No old version yet (a first write): no backup.
 * With `exclusive`, the temporary file is hard-linked to `path` instead, which
 * fails on an existing file, then removed. A write a crash stopped leaves at
 * most the temporary file (`<path>.<pid>.<hex>.tmp`, and with `backupPath` its `.bak`), never a torn `path`: a
 * whole version of the file, which `removeLeftoverTemps` removes.
 * Where the file system has no hard links, an exclusive write claims the name
 * with an empty file first (`wx`) and renames the new version over it: a crash
 * between those two steps leaves that empty file under `path` (never a part
 * of the new version); a rename that fails removes it again.
 */
export async function writeFileAtomically(path: string, data: string | Uint8Array, options: WriteFileAtomicallyOptions = {}): Promise<void> {
  const fs = options.inline ? INLINE : AWAITED;
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const backupTemp = `${temp}.bak`;
  // The file the failing step was writing: the backup copy's name during its steps, else `path`.
  let writing = path;
  WRITING.add(resolve(temp));
  try {
    await fs.writeDurably(temp, data, options.mode ?? 0o600);
    if (options.exclusive) {
      await linkExclusively(fs, temp, path);
      await fs.rm(temp);
      await fs.syncFolder(path);
      return;
    }
    if (options.backupPath !== undefined && (await copyAside(fs, path, backupTemp))) {
      writing = options.backupPath;
      await fs.rename(backupTemp, options.backupPath);
      // A rename between two names of one file does nothing (POSIX): a backup that is a link of the file already (a
      // crash between this rename and the file's left it so) would keep `backupTemp`, a whole copy, beside it.
      await fs.rm(backupTemp);
      if (dirname(resolve(options.backupPath)) !== dirname(resolve(path))) await fs.syncFolder(options.backupPath);
      writing = path;
    }
    await fs.rename(temp, path);
    await fs.syncFolder(path);
  } catch (error) {
    await fs.rm(temp);
    await fs.rm(backupTemp);
    if (error instanceof Error) writeErrors.set(error, writing);
    throw error;
  } finally {
    WRITING.delete(resolve(temp));
  }
}

/** The errors of `writeFileAtomically`, each with the file it was writing (`path`, or its backup copy's name). */
const writeErrors = new WeakMap<object, string>();

/**
 * The file a failed `writeFileAtomically` was writing when `error` is its error (the system error names a temporary
 * file, or none); undefined for any other error.
 */
export function unwrittenFileOf(error: unknown): string | undefined {
  return error instanceof Error ? writeErrors.get(error) : undefined;
}

/** The temporary files of the atomic writes this process is making now (absolute paths): never leftovers. */
const WRITING = new Set<string>();
/** `<file>.<pid>.<hex>.tmp`, or its `.bak`: the temporary files of an atomic write of `<file>`. */
const TEMP_NAME = /^(.+)\.\d+\.[0-9a-f]{8}\.tmp(\.bak)?$/;

/**
 * Removes the temporary files of atomic writes in `dir` that no write of this process is making: what a crash or a
 * kill -9 left between a write and its rename, each a whole version of its file (a record, the ledger with its
 * prompts). Only those of `files` (names in `dir`; default every file). Only for a caller that alone writes those
 * files while it runs (under their lock, or in a folder held by this process): another process's write under way
 * would lose its temporary file. Answers the paths removed.
 */
export async function removeLeftoverTemps(dir: string, files?: readonly string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(dir).catch(() => [])) {
    const file = TEMP_NAME.exec(name)?.[1];
    if (file === undefined || (files && !files.includes(file)) || WRITING.has(resolve(dir, name.replace(/\.bak$/, '')))) continue;
    await rm(join(dir, name), { force: true });
    removed.push(join(dir, name));
  }
  return removed;
}

/** The file system calls an atomic write is made of, awaited one by one or made inline (all but the fsync). */
interface WriteSteps {
  /** Creates `path` with `data` and syncs it to disk. */
  writeDurably(path: string, data: string | Uint8Array, mode: number): Promise<void>;
  link(from: string, to: string): Promise<void> | void;
  /** Creates `path` empty; fails with EEXIST if it exists. */
  create(path: string): Promise<void> | void;
  copyFile(from: string, to: string): Promise<void> | void;
  rename(from: string, to: string): Promise<void> | void;
  /** Removes `path` if it exists. */
  rm(path: string): Promise<void> | void;
  /**
   * Syncs the folder holding `path` to disk: the renames and links made in it outlive a power cut. Skipped where a
   * folder cannot be opened or synced (`FOLDER_SYNC_UNSUPPORTED`); any other error is thrown.
   */
  syncFolder(path: string): Promise<void>;
}

const AWAITED: WriteSteps = {
  async writeDurably(path, data, mode) {
    const handle = await open(path, 'w', mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
  link,
  create: async (path) => (await open(path, 'wx')).close(),
  copyFile,
  rename,
  rm: (path) => rm(path, { force: true }),
  async syncFolder(path) {
    await skipIfUnsupported(async () => {
      const handle = await open(dirname(path), 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    });
  },
};

const INLINE: WriteSteps = {
  async writeDurably(path, data, mode) {
    const fd = openSync(path, 'w', mode);
    try {
      await writeAllAndSync(fd, data);
    } finally {
      closeSync(fd);
    }
  },
  link: linkSync,
  create: (path) => closeSync(openSync(path, 'wx')),
  copyFile: copyFileSync,
  rename: renameSync,
  rm: (path) => rmSync(path, { force: true }),
  syncFolder: (path) => syncFolder(dirname(path)),
};

/**
 * Syncs the folder holding `path`, so a name just made there outlives a power cut; skipped where folders cannot be
 * synced. Inline but the fsync (a commit of the file ledger awaits nothing else: `file-quota-store-commit.test.ts`).
 */
export function syncFolderHolding(path: string): Promise<void> {
  return INLINE.syncFolder(path);
}

/** Syncs `folder` itself, so the names made in it outlive a power cut: {@link syncFolderHolding} of a name in it. */
export async function syncFolder(folder: string): Promise<void> {
  await skipIfUnsupported(async () => {
    const fd = openSync(folder, 'r');
    try {
      await new Promise<void>((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
    } finally {
      closeSync(fd);
    }
  });
}

/** Why a folder cannot be opened or synced here (Windows opens no folder; some file systems sync none): nothing to do. */
const FOLDER_SYNC_UNSUPPORTED = new Set(['EISDIR', 'EPERM', 'EINVAL', 'ENOTSUP', 'EOPNOTSUPP']);

async function skipIfUnsupported(step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (error) {
    if (!FOLDER_SYNC_UNSUPPORTED.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
  }
}

/** Writes all of `data` at the descriptor's position (synchronously), then fsync(2) on the thread pool: the one step that may take long. */
export async function writeAllAndSync(fd: number, data: string | Uint8Array): Promise<void> {
  writeFileSync(fd, data);
  await new Promise<void>((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
}

/** Why a file system takes no hard link (or none between these two names). */
const NO_HARD_LINK = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS']);

const noHardLink = (error: unknown) => NO_HARD_LINK.has((error as NodeJS.ErrnoException).code ?? '');

/**
 * Gives `temp` the name `path` unless something has it (EEXIST): a hard link, or where there is none, the name claimed
 * with an empty file and `temp` renamed over it. When that rename fails, the empty claim (ours) is removed, so it does
 * not hold the name against the next write.
 */
async function linkExclusively(fs: WriteSteps, temp: string, path: string): Promise<void> {
  try {
    await fs.link(temp, path);
    return;
  } catch (error) {
    if (!noHardLink(error)) throw error;
  }
  await fs.create(path);
  try {
    await fs.rename(temp, path);
  } catch (error) {
    await fs.rm(path);
    throw error;
  }
}

/** A hard link to (or a copy of) `file` at `aside`; false when there is no `file`. */
async function copyAside(fs: WriteSteps, file: string, aside: string): Promise<boolean> {
  try {
    await fs.link(file, aside);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    if (!noHardLink(error)) throw error;
  }
  try {
    await fs.copyFile(file, aside);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** The read errors `restoreFromBackup` throws, each naming its file in `path`. */
const readErrors = new WeakSet<object>();

/** The file `restoreFromBackup` could not read when `error` is that read's error; undefined for any other error. */
export function unreadFileOf(error: unknown): string | undefined {
  return error instanceof Error && readErrors.has(error) ? (error as NodeJS.ErrnoException).path : undefined;
}

/** `file`'s text; undefined when there is none; any other read error thrown marked (`unreadFileOf`). */
async function readIfThere(file: string): Promise<string | undefined> {
  if (!(await isFileIfThere(file))) return undefined;
  return readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw unread(error, file);
  });
}

/**
 * Whether `file` exists (false when it does not); one that is not a regular file (a folder, a pipe: never read, a pipe
 * would block the read) is thrown as unread (`unreadFileOf`), as is an error of the look itself.
 */
async function isFileIfThere(file: string): Promise<boolean> {
  const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw unread(error, file);
  });
  if (!info || info.isFile()) return info !== undefined;
  const code = info.isDirectory() ? 'EISDIR' : 'EINVAL';
  throw unread(Object.assign(new Error(`${code}: not a regular file, read '${file}'`), { code, syscall: 'read', path: file }), file);
}

/** `error` marked as the failed read of `file` (`unreadFileOf`). */
function unread(error: NodeJS.ErrnoException, file: string): NodeJS.ErrnoException {
  // Named: a read error may name no file (EISDIR).
  error.path ??= file;
  readErrors.add(error);
  return error;
}

/**
 * The one restore of a file written with a backup copy (`writeFileAtomically`'s `backupPath`): when `path` is missing
 * although its backup exists, or is not `good`, a good backup takes its place (a bad file is kept as
 * `<path>.broken-<time>`). `path` is checked first and the backup only then, each once; `restored` is handed the
 * backup's text as checked and answers what takes its place, made before anything is touched (when it throws,
 * nothing was) and put in place by one atomic write: a crash leaves either the file as it was (or moved aside: the
 * next restore runs again) or the whole result, never the backup as it is. Only a file read whole and found not
 * `good` is damaged: either file that exists but cannot be read (EACCES, EIO, a folder) is thrown as read (its `path`
 * the file's; `unreadFileOf` tells it from an error of the restore itself), nothing touched, so the caller names that
 * rather than rolling back to the copy or naming a damaged one. The backup of a good file is not read, but one that is
 * not a regular file (a folder in its place, on which every write would fail) is thrown so too. Answers what it did; a caller then reads `path` and
 * names what is wrong if it is still bad.
 */
export async function restoreFromBackup(
  path: string,
  backupPath: string,
  good: (text: string) => boolean,
  options: { now?: number | undefined; restored?: ((backup: string) => string | Promise<string>) | undefined } = {},
): Promise<{ restored: boolean; brokenCopy?: string | undefined }> {
  const main = await readIfThere(path);
  if (main !== undefined && good(main)) {
    // The backup copy of a good file is not read, but where there is one it must be a file: every write would fail on it.
    await isFileIfThere(backupPath);
    return { restored: false };
  }
  const backup = await readIfThere(backupPath);
  if (backup === undefined || !good(backup)) return { restored: false };
  const text = options.restored ? await options.restored(backup) : backup;
  const brokenCopy = main === undefined ? undefined : `${path}.broken-${new Date(options.now ?? Date.now()).toISOString().replace(/[:.]/g, '-')}`;
  if (brokenCopy) await rename(path, brokenCopy);
  await writeFileAtomically(path, text);
  return { restored: true, brokenCopy };
}
