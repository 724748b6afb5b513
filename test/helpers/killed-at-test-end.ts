import type { ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { onTestFinished } from 'vitest';

/** How long a child killed at the end of its test may take to close before that test fails for leaving it behind. */
export const CLOSES_WITHIN_MS = 10_000;

/**
 * `child`, just spawned, killed with SIGKILL when the running test ends, whatever it did, and waited for until it has
 * closed (its streams read to their end): the test fails, naming it as `name`, if it has not within CLOSES_WITHIN_MS.
 * So what it wrote is removed after it and the next test starts without it.
 */
export function killedAtTestEnd(child: ChildProcess, name = 'the child process'): void {
  // Listened for from the spawn on: a child that closes before the test ends is not waited for again.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  onTestFinished(async () => {
    // A child that could not start has nothing to kill or wait for (its spawn error is the test's to see).
    if (child.pid === undefined) return;
    child.kill('SIGKILL');
    const bound = new AbortController();
    const late = await Promise.race([closed.then(() => false), delay(CLOSES_WITHIN_MS, true, { signal: bound.signal, ref: false })]);
    bound.abort();
    if (late) throw new Error(`${name} (pid ${child.pid}) had not closed ${CLOSES_WITHIN_MS / 1000} s after it was killed: it may be left running`);
  });
}
