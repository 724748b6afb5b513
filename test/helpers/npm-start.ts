import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { onTestFinished } from 'vitest';
import { followOutput, type ChildOutput, type FollowedOutput } from './child-output.js';

/** What `npm start` runs, from the sources (as `node dist/bots/main.js` once built). */
export const MAIN = fileURLToPath(new URL('../../bots/main.ts', import.meta.url));

/** tsx, found from here: a start in another folder (`cwd`) finds it too. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** How long a start killed at the end of its test may take to close before that test fails for leaving it behind. */
const CLOSES_WITHIN_MS = 10_000;

/**
 * `npm start` as its own process, with only `env` set (and PATH; its log silent unless `env` sets PICTOR_LOG_LEVEL),
 * run as `user` and in `cwd` (where it reads `.env`) when given; killed when the test ends, whatever it did, and
 * waited for until it has closed (the test fails if it has not within CLOSES_WITHIN_MS), so the folders it wrote are
 * removed after it and the next test starts without it. Its output, readable while it runs.
 */
export function startRunning(env: Record<string, string>, user: { uid?: number; gid?: number; cwd?: string } = {}): { child: ChildProcessByStdio<null, Readable, Readable>; output: FollowedOutput } {
  const child = spawn(process.execPath, ['--import', TSX, MAIN], { env: { PATH: process.env.PATH, PICTOR_LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...user });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  onTestFinished(async () => {
    child.kill('SIGKILL');
    const bound = new AbortController();
    const late = await Promise.race([closed.then(() => false), delay(CLOSES_WITHIN_MS, true, { signal: bound.signal, ref: false })]);
    bound.abort();
    if (late) throw new Error(`npm start (pid ${child.pid}) had not closed ${CLOSES_WITHIN_MS / 1000} s after it was killed: it may be left running`);
  });
  return { child, output: followOutput(child) };
}

/** `npm start` as its own process (see `startRunning`), to its exit: what it wrote and its exit code. */
export function start(env: Record<string, string>, user: { uid?: number; gid?: number; cwd?: string } = {}): Promise<ChildOutput> {
  return startRunning(env, user).output.ended;
}
