import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { followOutput, type ChildOutput, type FollowedOutput } from './child-output.js';
import { killedAtTestEnd } from './killed-at-test-end.js';

/** What `npm start` runs, from the sources (as `node dist/bots/main.js` once built). */
export const MAIN = fileURLToPath(new URL('../../bots/main.ts', import.meta.url));

/** tsx, found from here: a start in another folder (`cwd`) finds it too. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/**
 * `npm start` as its own process, with only `env` set (and PATH; its log silent unless `env` sets PICTOR_LOG_LEVEL),
 * run as `user` and in `cwd` (where it reads `.env`) when given; killed when the test ends and waited for until it has
 * closed (`killedAtTestEnd`), so the folders it wrote are removed after it and the next test starts without it. Its
 * output, readable while it runs.
 */
export function startRunning(env: Record<string, string>, user: { uid?: number; gid?: number; cwd?: string } = {}): { child: ChildProcessByStdio<null, Readable, Readable>; output: FollowedOutput } {
  const child = spawn(process.execPath, ['--import', TSX, MAIN], { env: { PATH: process.env.PATH, PICTOR_LOG_LEVEL: 'silent', ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...user });
  killedAtTestEnd(child, 'npm start');
  return { child, output: followOutput(child) };
}

/** `npm start` as its own process (see `startRunning`), to its exit: what it wrote and its exit code. */
export function start(env: Record<string, string>, user: { uid?: number; gid?: number; cwd?: string } = {}): Promise<ChildOutput> {
  return startRunning(env, user).output.ended;
}
