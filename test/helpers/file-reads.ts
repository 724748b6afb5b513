import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { onTestFinished } from 'vitest';

/**
 * Runs `before(n)` just before the `n`th read of `file` (n from 1) through node:fs/promises, as every module reading it
 * sees it: what another process does to the file in that moment. The reads are as before once the running test has
 * finished. Returns how many reads of `file` came so far.
 */
export function beforeEachRead(file: string, before: (reads: number) => void | Promise<void>): { reads(): number } {
  const { readFile } = fsp;
  let reads = 0;
  fsp.readFile = (async (path: Parameters<typeof readFile>[0], options?: Parameters<typeof readFile>[1]) => {
    if (path === file) await before(++reads);
    return readFile(path, options);
  }) as typeof readFile;
  syncBuiltinESMExports();
  onTestFinished(() => {
    fsp.readFile = readFile;
    syncBuiltinESMExports();
  });
  return { reads: () => reads };
}
