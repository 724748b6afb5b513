import type { ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';

/** What a child process wrote and how it ended. */
export interface ChildOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A running child's output: what it has written so far, and all of it once it has closed. */
export interface FollowedOutput {
  stdout(): string;
  stderr(): string;
  /** Answered once the child has closed (its streams read to their end); rejects if it could not start. */
  ended: Promise<ChildOutput>;
}

/** Collects everything a spawned child writes to stdout and stderr, readable while it runs. */
export function followOutput(child: ChildProcessByStdio<null, Readable, Readable>): FollowedOutput {
  let stdout = '';
  let stderr = '';
  // Decoded as a stream: a character split across two chunks (our sentences' ’ is three bytes) stays whole.
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const ended = new Promise<ChildOutput>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { stdout: () => stdout, stderr: () => stderr, ended };
}

/** Collects everything a spawned child writes to stdout and stderr, answered once it has closed (rejects if it could not start). */
export function outputOf(child: ChildProcessByStdio<null, Readable, Readable>): Promise<ChildOutput> {
  return followOutput(child).ended;
}
