import { hostname } from 'node:os';
import { open, readFile, rm, stat } from 'node:fs/promises';

/**
 * A lock shared by the processes of one machine: a file created with O_EXCL
 * holding the owner's pid and host. A lock whose owner is dead (same host, pid
 * gone) is stale and broken — under a second O_EXCL "breaker" file, so two
 * processes breaking it at once can never remove a fresh lock. A lock of
 * another host (a network folder) is stale only when it has not changed for
 * `staleMs`.
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
    await rm(path, { force: true });
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
  for (let attempt = 0; ; attempt++) {
    if (await tryCreate(path, `${process.pid}\n${HOST}\n`)) return;
    const holder = await readHolder(path);
    if (holder && (await isStale(path, holder, staleMs))) {
      await breakStale(path, holder.raw, staleMs);
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`the ledger lock ${path} is held by ${holder ? `process ${holder.pid} on ${holder.host}` : 'another process'} for more than ${timeoutMs / 1000} s`);
    }
    await sleep(Math.min(25, 1 + attempt) + Math.random() * 2);
  }
}

async function tryCreate(path: string, content: string): Promise<boolean> {
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
  // Written by a process between create and write: give it time (an empty file of a live process is brief).
  if (holder.host === HOST && holder.raw !== '') return !isProcessAlive(holder.pid);
  try {
    return Date.now() - (await stat(path)).mtimeMs > staleMs;
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
