import type { ChildProcess } from 'node:child_process';

/**
 * Resolves once `check` holds, looked at now and each time the process prints on stdout (after what the test keeps of
 * it); rejects as soon as the process exits first. No clock of its own: a start that a loaded machine slows is bounded
 * by the test's timeout alone, and a start that failed fails at once.
 */
export function untilPrinted(child: ChildProcess, check: () => boolean, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const look = () => {
      if (!check()) return;
      done();
      resolve();
    };
    const exited = (code: number | null, signal: NodeJS.Signals | null) => {
      done();
      reject(new Error(`the process exited (${signal ?? `code ${String(code)}`}) before ${what}`));
    };
    const done = () => {
      child.stdout?.off('data', look);
      child.off('exit', exited);
    };
    if (check()) return resolve();
    if (child.exitCode !== null || child.signalCode !== null) return exited(child.exitCode, child.signalCode);
    child.stdout?.on('data', look);
    child.once('exit', exited);
  });
}
