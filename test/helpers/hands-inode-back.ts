import * as fsp from 'node:fs/promises';
import { vi } from 'vitest';

/**
 * From now on, the file at `path` keeps the inode it has now, whatever file is there: as a file system that hands a
 * freed inode back to the next file made. For a test file that mocks `node:fs/promises` with `open` spied on (its
 * `vi.mock`, listed in MOCKS_MODULES): the spy's implementation is wrapped, its handles' `stat` answering that inode.
 * Answers how many opens of the file it has answered so: a test checks it did (a path spelled otherwise is not caught,
 * and a new inode would make the test pass without the case it is about).
 */
export async function handsInodeBack(path: string): Promise<{ handedBack: () => number }> {
  const { ino } = await fsp.stat(path);
  let handedBack = 0;
  const real = vi.mocked(fsp.open).getMockImplementation()!;
  vi.mocked(fsp.open).mockImplementation(async (...args: Parameters<typeof fsp.open>) => {
    const handle = await real(...args);
    if (String(args[0]) !== path) return handle;
    handedBack++;
    const realStat = handle.stat.bind(handle);
    handle.stat = (async () => Object.assign(await realStat(), { ino })) as typeof handle.stat;
    return handle;
  });
  return { handedBack: () => handedBack };
}
