import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { linkSync, rmSync, writeFileSync } from 'node:fs';
import { open, readFile, rm, stat } from 'node:fs/promises';

/**
 * A lock shared by the processes of one machine: a file holding the owner's
 * pid, host and a token of its own, which appears with its content at once
 * (written beside it, then hard-linked into place, which fails when the lock
 * exists), so a process killed while taking the lock never leaves an empty one
 * behind. A lock whose owner is dead (same host, pid gone) is stale and broken —
 * under a second "breaker" lock, so two processes breaking it at once can never
 * remove a fresh lock. A lock of another host (a network folder) is stale only
 * when it has not changed for `staleMs`; one without a readable owner (a folder
 * that cannot link, a damaged file) after `UNREADABLE_STALE_MS`. One naming this
 * host and this very pid whose token this process does not hold (see
 * `heldHere`) was left by an earlier process that had this pid — a
 * container started again, pid 1 both times — and is stale once unchanged for
 * `OWN_PID_LEFTOVER_MS`: its pid is alive (it is this process), so it would
 * otherwise look held for ever. The same rules judge the breaker.
 *
 * Taking a free lock and letting it go are synchronous calls on a tiny file
 * (microseconds on a local disk), not awaited ones: on a busy event loop each
 * awaited call waits a turn of the loop, and taking the lock is three of them.
 */
export interface FileLockOptions {
  /**
   * Give up after this long. Default `LOCK_WAIT_MS` (10 s). A lock an earlier process of this pid left is waited for longer: until it
   * is stale (`OWN_PID_LEFTOVER_MS` after it last changed) and taken over.
   */
  timeoutMs?: number | undefined;
  /** A lock of another host older than this is stale. Default 60 s. */
  staleMs?: number | undefined;
}

const HOST = hostname();

/** How long a lock held by another live process is waited for before giving up (`timeoutMs`'s default). */
export const LOCK_WAIT_MS = 10_000;

export async function withFileLock<T>(path: string, task: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const token = await acquire(path, options);
  try {
    return await task();
  } finally {
    letGo(path, token);
  }
}

/** True when a process with this pid runs on this machine (EPERM: it runs, as another user). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export const THIS_HOST = HOST;

/**
 * The tokens of the locks (and breakers) this process holds or is taking, whoever in it took them: two stores of one
 * file in one process, or a store and the data folder's lock, each see the other's lock as held, not as a leftover of
 * this pid. A token is added before its file can appear and removed once the file is gone.
 */
const heldHere = new Set<string>();

/**
 * A lock naming this pid on this machine that this process does not hold is stale once unchanged this long (or
 * `staleMs`, when shorter): a live holder of this pid and host name in another container sharing the folder has
 * renewed it (the data folder's lock: every 20 s) or let it go (the ledger's: held for a commit) by then.
 */
export const OWN_PID_LEFTOVER_MS = 40_000;

/** Takes the lock; answers its token. */
async function acquire(path: string, options: FileLockOptions): Promise<string> {
  const timeoutMs = options.timeoutMs ?? LOCK_WAIT_MS;
  const staleMs = options.staleMs ?? 60_000;
  const started = Date.now();
  let deadline = started + timeoutMs;
  let leftoverSeen = false;
  let triedAfterLetGo = false;
  for (let attempt = 0; ; attempt++) {
    const token = await tryTake(path);
    if (token) return token;
    const holder = await readHolder(path);
    // A stale lock is broken and tried again; one whose breaker someone else holds just then is waited for as a held one.
    if (holder && (await isStale(path, holder, staleMs)) && (await breakStale(path, holder.raw, staleMs))) continue;
    // Gone between the try and the read: its owner let go just then, so it is free. Tried once more, even once the
    // time is up (a caller with `timeoutMs: 0` asks whether the lock is free, and it is).
    if (!holder && !triedAfterLetGo) {
      triedAfterLetGo = true;
      continue;
    }
    // One naming this pid that this process does not hold (an earlier process of this pid left it) is waited for until
    // it is stale and taken over, however short `timeoutMs`: bounded by its age when first seen, so one a live twin
    // keeps renewing is still given up on. A caller that does not wait (`timeoutMs: 0`) is answered at once.
    if (holder && timeoutMs > 0 && !leftoverSeen && isOwnPidNotHeld(holder)) {
      leftoverSeen = true;
      const changed = await mtimeOf(path);
      if (changed !== undefined) deadline = Math.max(deadline, changed + Math.min(staleMs, OWN_PID_LEFTOVER_MS) + LEFTOVER_MARGIN_MS);
    }
    if (Date.now() > deadline) {
      throw new FileLockBusyError(path, holder ? `process ${holder.pid} on ${holder.host}` : 'another process', deadline - started);
    }
    await sleep(Math.min(25, 1 + attempt) + Math.random() * 2);
  }
}

/** A lock another process held for longer than the caller waits; its owner (the spend ledger: `LedgerBusyError`) says what it guards. */
export class FileLockBusyError extends Error {
  override readonly name = 'FileLockBusyError';
  constructor(
    readonly path: string,
    readonly holder: string,
    readonly waitedMs: number,
  ) {
    super(`lock ${path} is held by ${holder} for more than ${Math.round(waitedMs / 100) / 10} s`);
  }
}

/** How long past its stale age an own-pid leftover is waited for (a few polls: it is broken at the first after that age). */
const LEFTOVER_MARGIN_MS = 1000;

/** A lock naming this process's pid on this machine that this process does not hold: an earlier process of this pid left it, or a twin in another container holds it. */
function isOwnPidNotHeld(holder: Holder): boolean {
  return holder.host === HOST && holder.pid === process.pid && !heldHere.has(holder.token);
}

async function mtimeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mtimeMs;
  } catch {
    return undefined;
  }
}

/** A lock without a readable owner is stale once unchanged this long: a live owner fills it in far sooner. */
export const UNREADABLE_STALE_MS = 2000;

/** Errors of a file system that has no hard links (some network and FUSE folders): the lock is then made with O_EXCL. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/** Makes the lock file naming this process and a new token, counted as held here from before it exists; its token, or undefined when it exists. */
async function tryTake(path: string): Promise<string | undefined> {
  const token = randomBytes(8).toString('hex');
  heldHere.add(token);
  try {
    if (await tryCreate(path, `${process.pid}\n${HOST}\n${token}\n`)) return token;
  } catch (error) {
    heldHere.delete(token);
    throw error;
  }
  heldHere.delete(token);
  return undefined;
}

function letGo(path: string, token: string): void {
  try {
    rmSync(path, { force: true });
  } finally {
    heldHere.delete(token);
  }
}

/** Makes the lock file with `content` in one step; false when it exists. */
async function tryCreate(path: string, content: string): Promise<boolean> {
  const draft = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(draft, content, { mode: 0o600 });
  try {
    linkSync(draft, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return false;
    if (NO_LINKS.has(code)) return tryCreateExclusive(path, content);
    throw error;
  } finally {
    rmSync(draft, { force: true });
  }
}

async function tryCreateExclusive(path: string, content: string): Promise<boolean> {
  try {
    const handle = await open(path, 'wx', 0o600);
    try {
      await handle.writeFile(content);
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

interface Holder {
  pid: number;
  host: string;
  /** Empty in a lock written before locks carried one. */
  token: string;
  raw: string;
}

async function readHolder(path: string): Promise<Holder | undefined> {
  try {
    const raw = await readFile(path, 'utf8');
    const [pid, host, token] = raw.split('\n');
    return { pid: Number(pid), host: host ?? '', token: token ?? '', raw };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function isStale(path: string, holder: Holder, staleMs: number): Promise<boolean> {
  const readable = Number.isInteger(holder.pid) && holder.pid > 0 && holder.host !== '';
  if (readable && holder.host === HOST && holder.pid !== process.pid) return !isProcessAlive(holder.pid);
  if (readable && holder.host === HOST && heldHere.has(holder.token)) return false;
  // Another host's lock, one without an owner, or one of this pid not held here: only time tells (an owner still
  // filling it in is brief; a live one of this pid and host name in another container renews it or lets it go).
  const limit = !readable ? Math.min(staleMs, UNREADABLE_STALE_MS) : holder.host === HOST ? Math.min(staleMs, OWN_PID_LEFTOVER_MS) : staleMs;
  try {
    return Date.now() - (await stat(path)).mtimeMs > limit;
  } catch {
    return false;
  }
}

/** Removes the stale lock `seen` under the breaker; false when another holds the breaker just then (a stale breaker is removed, and taken). */
async function breakStale(path: string, seen: string, staleMs: number): Promise<boolean> {
  const breaker = `${path}.break`;
  let token = await tryTake(breaker);
  if (!token) {
    const other = await readHolder(breaker);
    if (other && (await isStale(breaker, other, staleMs))) await rm(breaker, { force: true });
    token = await tryTake(breaker);
    if (!token) return false;
  }
  try {
    // Under the breaker nobody else removes the lock: if it still holds what we saw and is still stale, it goes (a lock
    // written again meanwhile with the same words — a lock of this pid from before locks carried a token — is fresh).
    const now = await readHolder(path);
    if (now && now.raw === seen && (await isStale(path, now, staleMs))) await rm(path, { force: true });
  } finally {
    letGo(breaker, token);
  }
  return true;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
