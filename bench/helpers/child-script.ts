import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from './child-server.js';

/**
 * Runs a TypeScript file under bench/helpers in its own node process (through
 * tsx) and parses the last line it prints as JSON.
 */
export function runChildScript<T>(script: string, args: readonly string[], nodeFlags: readonly string[] = []): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...nodeFlags, '--import', 'tsx', fileURLToPath(new URL(script, import.meta.url)), ...args],
      { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`${script} failed: ${error.message}\n${stderr}`));
          return;
        }
        const last = stdout.trim().split('\n').at(-1) ?? '';
        try {
          resolve(JSON.parse(last) as T);
        } catch {
          reject(new Error(`${script} printed no JSON result: ${stdout.slice(-500)}`));
        }
      },
    );
  });
}
