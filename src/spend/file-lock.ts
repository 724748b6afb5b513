import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { linkSync, rmSync, writeFileSync } from 'node:fs';
import { open, readFile, rm, stat } from 'node:fs/promises';

/**
 * A lock shared by the processes of one machine: a file holding the owner's
 * pid and host, which appears with its content at once (written beside it, then
 * hard-linked into place, which fails when the lock exists), so a process
 * killed while taking the lock never leaves an empty one behind. A lock whose
 * owner is dead (same host, pid gone) is stale and broken — under a second
 * "breaker" lock, so two processes breaking it at once can never remove a
 * fresh lock. A lock of another host (a network folder) is stale only when it
 * has not changed for `staleMs`; one without a readable owner (a folder that
 * cannot link, a damaged file) after `UNREADABLE_STALE_MS`.
 *
 * Taking a free lock and letting it go are synchronous calls on a tiny file
 * (microseconds on a local disk), not awaited ones: on a busy event loop each
 * awaited call waits a turn of the loop, and taking the lock is three of them.
 */
export interface FileLockOptions {
  /** Give up after this long. Default 10 s. */
  timeoutMs?: number | undefined;
  /** A lock of another host older than this is stale. Default 60 s. */
  staleMs?: number | undefined;
}

const HOST = hostname();

export async function withFileLock<T>(path: string, task: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  await acquire(path, options);
  try {
    return await task();
  } finally {
    rmSync(path, { force: true });
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

async function acquire(path: string, options: FileLockOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  let triedAfterLetGo = false;
  for (let attempt = 0; ; attempt++) {
    if (await tryCreate(path, `${process.pid}\n${HOST}\n`)) return;
    const holder = await readHolder(path);
    if (holder && (await isStale(path, holder, staleMs))) {
      await breakStale(path, holder.raw, staleMs);
      continue;
    }
    // Gone between the try and the read: its owner let go just then, so it is free. Tried once more, even once the
    // time is up (a caller with `timeoutMs: 0` asks whether the lock is free, and it is).
    if (!holder && !triedAfterLetGo) {
      triedAfterLetGo = true;
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`the lock ${path} is held by ${holder ? `process ${holder.pid} on ${holder.host}` : 'another process'} for more than ${timeoutMs / 1000} s`);
    }
    await sleep(Math.min(25, 1 + attempt) + Math.random() * 2);
  }
}

/** A lock without a readable owner is stale once unchanged this long: a live owner fills it in far sooner. */
export const UNREADABLE_STALE_MS = 2000;

/** Errors of a file system that has no hard links (some network and FUSE folders): the lock is then made with O_EXCL. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

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
  raw: string;
}

async function readHolder(path: string): Promise<Holder | undefined> {
  try {
    const raw = await readFile(path, 'utf8');
    const [pid, host] = raw.split('\n');
    return { pid: Number(pid), host: host ?? '', raw };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function isStale(path: string, holder: Holder, staleMs: number): Promise<boolean> {
  const readable = Number.isInteger(holder.pid) && holder.pid > 0 && holder.host !== '';
  if (readable && holder.host === HOST) return !isProcessAlive(holder.pid);
  // Another host's lock, or one without an owner: only time tells (an owner still filling it in is brief).
  try {
    return Date.now() - (await stat(path)).mtimeMs > (readable ? staleMs : Math.min(staleMs, UNREADABLE_STALE_MS));
  } catch {
    return false;
  }
}

async function breakStale(path: string, seen: string, staleMs: number): Promise<void> {
  const breaker = `${path}.break`;
  if (!(await tryCreate(breaker, `${process.pid}\n${HOST}\n`))) {
    const other = await readHolder(breaker);
    if (other && (await isStale(breaker, other, staleMs))) await rm(breaker, { force: true });
    await sleep(2);
    return;
  }
  try {
    // Under the breaker nobody else removes the lock: if it still holds what we saw, its owner is still dead.
    const now = await readHolder(path);
    if (now && now.raw === seen) await rm(path, { force: true });
  } finally {
    await rm(breaker, { force: true });
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
