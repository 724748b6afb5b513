import type { ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';

/** What a child process wrote and how it ended. */
export interface ChildOutput {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Collects everything a spawned child writes to stdout and stderr, answered once it has closed (rejects if it could not start). */
export function outputOf(child: ChildProcessByStdio<null, Readable, Readable>): Promise<ChildOutput> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
