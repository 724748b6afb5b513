import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** Removes `dir` once the running test has finished, passed or failed (after its afterEach hooks: a store they close is closed by then). */
function removedAfterTest(dir: string): string {
  onTestFinished(() => rm(dir, { recursive: true, force: true, maxRetries: 3 }));
  return dir;
}

/** A folder of its own under the system's temp folder for the running test, removed when it finishes. Call it inside a test. */
export async function testTempDir(prefix: string): Promise<string> {
  return removedAfterTest(await mkdtemp(join(tmpdir(), prefix)));
}

/** {@link testTempDir}, made at once (for a caller that cannot wait). */
export function testTempDirSync(prefix: string): string {
  return removedAfterTest(mkdtempSync(join(tmpdir(), prefix)));
}
