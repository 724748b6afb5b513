import { readFileSync, statSync, utimesSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ValidationError } from '../core/errors.js';
import { OWN_PID_LEFTOVER_MS, withFileLock } from './file-lock.js';

/** The lock file of the process whose bots keep their state in a data folder. */
export const DATA_FOLDER_LOCK = 'bots.lock';

/**
 * A held lock's file is touched this often, so one of another machine (a network folder, a container whose host name
 * changed when it was made again) that is not touched for `DATA_FOLDER_LOCK_STALE_MS` is known gone and taken over, and
 * one naming this very pid that this process does not hold, for `OWN_PID_LEFTOVER_MS` (two renewals), too.
 */
const RENEW_MS = OWN_PID_LEFTOVER_MS / 2;
export const DATA_FOLDER_LOCK_STALE_MS = 90_000;

/** A lock held until `release`. */
export interface HeldLock {
  release(): Promise<void>;
}

/**
 * Takes the data folder for this process's bots, for as long as it runs (until `release`): their state there is one
 * process's (two would sweep each other's running jobs as interrupted). The lock is `file-lock.ts`'s, held rather
 * than taken for a task and touched every 20 s while held: a lock left by a process of this machine that is gone (a
 * kill -9, a crash), or by this very pid before and untouched for 40 s (a container started again: pid 1 both times;
 * `file-lock.ts`'s rule for every lock, its breaker included), is taken over, and so
 * is one of another machine untouched for 90 s (a network folder, a container made again under a new host name); one
 * held by a live process refuses the start with a ValidationError naming `PICTOR_DATA_DIR` (a lock let go, or not yet
 * written, as this start looked at it is looked at again: two starts at once end one holding, one refused). The CLI and the console share only the
 * ledger there, and take no such lock. `release` gives it back (once every state of this process on the folder has).
 */
export async function holdDataFolder(dataDir: string, options: { renewMs?: number } = {}): Promise<HeldLock> {
  const path = join(resolve(dataDir), DATA_FOLDER_LOCK);
  // One process is one holder, however many of its states share the folder (tests, an embedding program): the
  // first takes the lock, the last to let go gives it back.
  let shared = heldHere.get(path);
  if (!shared) {
    const previous = lettingGo.get(path);
    shared = { users: 0, taken: (previous ?? Promise.resolve()).then(() => take(dataDir, path, options.renewMs ?? RENEW_MS)) };
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
async function take(dataDir: string, path: string, renewMs: number): Promise<() => Promise<void>> {
  let letGo!: () => void;
  const released = new Promise<void>((done) => (letGo = done));
  let held!: Promise<void>;
  for (let attempt = 1; ; attempt++) {
    let taken!: () => void;
    const takenNow = new Promise<void>((done) => (taken = done));
    held = withFileLock(
      path,
      () => {
        taken();
        return released;
      },
      { timeoutMs: 0, staleMs: DATA_FOLDER_LOCK_STALE_MS },
    );
    try {
      await Promise.race([takenNow, held]);
      break;
    } catch (error) {
      // Refused: by whom? A second process starting at once may be writing the lock, or letting it go, just then:
      // gone, the folder is tried again; unreadable, it is read again a moment later.
      const holder = holderOf(path);
      if ((holder === undefined || holder === UNREADABLE) && attempt < TAKE_ATTEMPTS) {
        await new Promise((done) => setTimeout(done, attempt * 5));
        continue;
      }
      // No lock there after all those tries: the refusal was not another process's (the folder's own error says why,
      // unless a folder or other entry that is not a file is in the lock's place: the operator's to remove).
      if (holder === undefined) throw notAFile(dataDir, path) ?? error;
      throw new ValidationError(
        'PICTOR_DATA_DIR',
        `PICTOR_DATA_DIR ${resolve(dataDir)} is in use by another Pictor process (${holder === UNREADABLE ? 'its lock names no process' : holder}): one data folder belongs to one process. ` +
          `Stop that one first, give this one a PICTOR_DATA_DIR of its own, or run replicas with REDIS_URL. If that process is gone for good, delete ${path} (one of another machine is taken over once it is not renewed for ${DATA_FOLDER_LOCK_STALE_MS / 1000} s).`,
      );
    }
  }
  const renewal = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(path, now, now);
    } catch {
      // Gone or unreachable for a moment: the next renewal tries again.
    }
  }, renewMs);
  renewal.unref();
  return () => {
    clearInterval(renewal);
    letGo();
    return held;
  };
}

/** The refusal of a start whose lock's place holds something that is not a file (a folder); undefined when it does not. */
function notAFile(dataDir: string, path: string): ValidationError | undefined {
  let info;
  try {
    info = statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
  if (!info || info.isFile()) return undefined;
  return new ValidationError(
    'PICTOR_DATA_DIR',
    `PICTOR_DATA_DIR ${resolve(dataDir)}: ${path} is not a file (${info.isDirectory() ? 'a folder' : 'not a regular file'}) where the bots keep their lock on the folder: remove it (no Pictor process uses it), then start again.`,
  );
}

/** How often a start refused by a lock that is gone, or not yet readable, when it looks tries again. */
const TAKE_ATTEMPTS = 5;
/** A lock file that names no process: being written (where the folder has no hard links), or damaged. */
const UNREADABLE = Symbol('unreadable');

/** Who holds the lock, in words ("pid 42 on host-a"); `UNREADABLE` when it names no process; undefined when there is none. */
function holderOf(path: string): string | typeof UNREADABLE | undefined {
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  const [pid, host] = content.split('\n');
  if (!/^[1-9]\d*$/.test(pid ?? '') || !host) return UNREADABLE;
  return `pid ${pid} on ${host}`;
}
