import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ValidationError } from '../core/errors.js';
import { withFileLock } from './file-lock.js';

/** The lock file of the process whose bots keep their state in a data folder. */
export const DATA_FOLDER_LOCK = 'bots.lock';

/** A lock held until `release`. */
export interface HeldLock {
  release(): Promise<void>;
}

/**
 * Takes the data folder for this process's bots, for as long as it runs (until `release`): their state there is one
 * process's (two would sweep each other's running jobs as interrupted). The lock is `file-lock.ts`'s, held rather
 * than taken for a task: a lock left by a process of this machine that is gone (a kill -9, a crash) is taken over; one
 * held by a live process, or by a process of another machine (a network folder: nothing here tells whether it still
 * runs), refuses the start with a ValidationError naming `PICTOR_DATA_DIR`. The CLI and the console share only the
 * ledger there, and take no such lock. `release` gives it back (once every state of this process on the folder has).
 */
export async function holdDataFolder(dataDir: string): Promise<HeldLock> {
  const path = join(resolve(dataDir), DATA_FOLDER_LOCK);
  // One process is one holder, however many of its states share the folder (tests, an embedding program): the
  // first takes the lock, the last to let go gives it back.
  let shared = heldHere.get(path);
  if (!shared) {
    const previous = lettingGo.get(path);
    shared = { users: 0, taken: (previous ?? Promise.resolve()).then(() => take(dataDir, path)) };
    heldHere.set(path, shared);
  }
  const mine = shared;
  mine.users += 1;
  try {
    await mine.taken;
  } catch (error) {
    if (--mine.users === 0 && heldHere.get(path) === mine) heldHere.delete(path);
    throw error;
  }
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
      if (--mine.users > 0) return;
      if (heldHere.get(path) === mine) heldHere.delete(path);
      const gone = (await mine.taken)();
      lettingGo.set(path, gone);
      await gone.finally(() => lettingGo.get(path) === gone && lettingGo.delete(path));
    },
  };
}

/** The locks this process holds, by path, with how many of its states use each. */
const heldHere = new Map<string, { users: number; taken: Promise<() => Promise<void>> }>();
/** Locks of this process being given back, by path: a new hold waits for that first. */
const lettingGo = new Map<string, Promise<void>>();

/** Takes the lock (see `holdDataFolder`); answers how to give it back. */
async function take(dataDir: string, path: string): Promise<() => Promise<void>> {
  let letGo!: () => void;
  const released = new Promise<void>((done) => (letGo = done));
  let taken!: () => void;
  const takenNow = new Promise<void>((done) => (taken = done));
  const held = withFileLock(
    path,
    () => {
      taken();
      return released;
    },
    { timeoutMs: 0, staleMs: Number.POSITIVE_INFINITY },
  );
  try {
    await Promise.race([takenNow, held]);
  } catch (error) {
    const holder = holderOf(path);
    if (holder === undefined) throw error;
    throw new ValidationError(
      'PICTOR_DATA_DIR',
      `PICTOR_DATA_DIR ${resolve(dataDir)} is in use by another Pictor process (${holder}): one data folder belongs to one process. ` +
        `Stop that one first, give this one a PICTOR_DATA_DIR of its own, or run replicas with REDIS_URL. If that process is gone for good, delete ${path}.`,
    );
  }
  return () => {
    letGo();
    return held;
  };
}

/** Who holds the lock, in words ("pid 42 on host-a"), or undefined when there is none. */
function holderOf(path: string): string | undefined {
  try {
    const [pid, host] = readFileSync(path, 'utf8').split('\n');
    return `pid ${pid ?? '?'} on ${host || 'an unknown host'}`;
  } catch {
    return undefined;
  }
}
