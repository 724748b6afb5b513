import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { testTempDir } from './temp-dir.js';

/**
 * Who a child process runs as so that a folder of mode 0555 is read-only to it: this process's user, or, when that is
 * root (whom no mode stops, as in many CI containers), the unprivileged `nobody` (uid and gid 65534), as a deployment
 * runs Pictor (the image's user is not root).
 */
export const UNPRIVILEGED: { uid?: number; gid?: number } = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

/** Whether the child can run as `UNPRIVILEGED` here: that user reads every one of `files` (a checkout in root's home it cannot). */
export function unprivilegedCanRead(files: string[]): boolean {
  if (UNPRIVILEGED.uid === undefined) return true;
  const probe = spawnSync(process.execPath, ['-e', `for (const f of ${JSON.stringify(files)}) require('node:fs').accessSync(f, require('node:fs').constants.R_OK)`], { ...UNPRIVILEGED, stdio: 'ignore' });
  return probe.status === 0;
}

/**
 * A folder for one test that a child run as `UNPRIVILEGED` can go through, with `readOnly` (mode 0555: it cannot write
 * there; empty, so it goes with the rest) and `writable` (mode 0777) in it. Removed after the test.
 */
export async function readOnlyFolder(prefix: string): Promise<{ dir: string; readOnly: string; writable: string }> {
  const dir = await testTempDir(prefix);
  chmodSync(dir, 0o755);
  const readOnly = join(dir, 'read-only');
  const writable = join(dir, 'writable');
  mkdirSync(readOnly);
  mkdirSync(writable);
  chmodSync(readOnly, 0o555);
  chmodSync(writable, 0o777);
  return { dir, readOnly, writable };
}
