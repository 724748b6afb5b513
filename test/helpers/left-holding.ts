import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { outputOf } from './child-output.js';
import { killedAtTestEnd } from './killed-at-test-end.js';

/** A timer this long or longer, still pending after an attempt was given up, holds the process noticeably. */
export const HOLDING_MS = 1000;

/** How a child that gave up an attempt ended, and what of the attempt was still holding it then. */
export interface LeftAfterGivingUp {
  code: number | null;
  stderr: string;
  /** What the attempt returned (as JSON). */
  said: unknown;
  /** The lengths of the attempt's timers still pending and holding the process that are {@link HOLDING_MS} or longer. */
  holding: number[];
  /** Everything left, to show when `holding` is not empty: the active handles and every holding timer's length. */
  left: string;
}

/**
 * Runs `attempt`, the body of an async function in its own Node process (ES modules, with tsx: it may import the
 * project's `.ts` files), that gives something up and returns what it says of it. Every timer it starts is recorded;
 * one turn of the loop after it returns, the child tells what is left of the attempt and ends by itself (the returned
 * promise waits for that). The child is killed after the running test if it has not ended, and waited for until it has
 * closed.
 */
export function givingUpInAChild(attempt: string): { child: ChildProcessByStdio<null, Readable, Readable>; ended: Promise<LeftAfterGivingUp> } {
  const script = `
    // Every timer of the attempt, with its length: after it returns, none long enough to hold the process must be left.
    const timers = new Set();
    const setTimeoutOf = globalThis.setTimeout;
    globalThis.setTimeout = (fn, ms, ...args) => {
      const timer = setTimeoutOf(fn, ms, ...args);
      timers.add({ timer, ms });
      return timer;
    };
    const said = await (async () => {
      ${attempt}
    })();
    console.log(JSON.stringify(said ?? null));
    // One turn of the loop for the attempt's last steps, then what is left of it: the handles, and the timers still
    // pending that hold the process (their lengths).
    await new Promise((resolve) => setImmediate(resolve));
    const holding = [...timers].filter(({ timer }) => !timer._destroyed && timer.hasRef()).map(({ ms }) => ms);
    console.log(JSON.stringify({ heldBy: process.getActiveResourcesInfo(), holding }));
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  killedAtTestEnd(child, 'the child giving up an attempt');
  const ended = outputOf(child).then(({ code, stdout, stderr }) => {
    const lines = stdout.trim().split('\n');
    if (lines.length !== 2) throw new Error(`the child did not tell what was left (exit ${code}): ${stdout}${stderr}`);
    const [said, left] = lines.map((line) => JSON.parse(line) as unknown) as [unknown, { holding: number[] }];
    return { code, stderr, said, holding: left.holding.filter((ms) => ms >= HOLDING_MS), left: JSON.stringify(left) };
  });
  return { child, ended };
}
