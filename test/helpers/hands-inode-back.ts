import * as fsp from 'node:fs/promises';
import { vi } from 'vitest';

/**
 * From now on, the file at `path` keeps the inode it has now, whatever file is there: as a file system that hands a
 * freed inode back to the next file made. For a test file that mocks `node:fs/promises` with `open` spied on (its
 * `vi.mock`, listed in MOCKS_MODULES): the spy's implementation is wrapped, its handles' `stat` answering that inode.
 */
export async function handsInodeBack(path: string): Promise<void> {
  const { ino } = await fsp.stat(path);
  const real = vi.mocked(fsp.open).getMockImplementation()!;
  vi.mocked(fsp.open).mockImplementation(async (...args: Parameters<typeof fsp.open>) => {
    const handle = await real(...args);
    if (String(args[0]) !== path) return handle;
    const realStat = handle.stat.bind(handle);
    handle.stat = (async () => Object.assign(await realStat(), { ino })) as typeof handle.stat;
    return handle;
  });
}
