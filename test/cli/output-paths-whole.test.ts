import * as fs from 'node:fs/promises';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeOutput } from '../../src/cli/output-paths.js';

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return { ...real, open: vi.fn(real.open), writeFile: vi.fn(real.writeFile) };
});

const dirs: string[] = [];
/** Files whose write never ends (the process "stopped"), closed after the test. */
const hanging: fs.FileHandle[] = [];
afterEach(async () => {
  vi.mocked(fs.open).mockReset();
  vi.mocked(fs.writeFile).mockReset();
  await Promise.all(hanging.splice(0).map((handle) => handle.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-whole-'));
  dirs.push(dir);
  return dir;
}

/**
 * The next write of a file (by `writeFile`, or through a handle opened for writing) takes only half of the bytes:
 * the first half reaches the disk, then the disk is full or the process is gone. Whatever name the image is written
 * under first is where it tears. `halfWritten` resolves once that half is on the disk.
 */
function writeHalfThen(end: 'fail' | 'hang'): { halfWritten: Promise<void> } {
  const realOpen = vi.mocked(fs.open).getMockImplementation()!;
  const realWriteFile = vi.mocked(fs.writeFile).getMockImplementation()!;
  let wroteHalf!: () => void;
  const halfWritten = new Promise<void>((resolve) => (wroteHalf = resolve));
  const torn = async (handle: fs.FileHandle, data: unknown) => {
    vi.mocked(fs.open).mockImplementation(realOpen);
    vi.mocked(fs.writeFile).mockImplementation(realWriteFile);
    const bytes = data as Uint8Array;
    await handle.write(bytes.subarray(0, bytes.length / 2));
    wroteHalf();
    if (end === 'fail') throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    hanging.push(handle);
    await new Promise(() => undefined);
  };
  vi.mocked(fs.open).mockImplementation(async (...args) => {
    const handle = await realOpen(...args);
    if (/[wa+]/.test(String(args[1] ?? 'r'))) handle.writeFile = (data) => torn(handle, data);
    return handle;
  });
  vi.mocked(fs.writeFile).mockImplementation(async (file, data, options) => {
    const flag = (typeof options === 'object' && options?.flag) || 'w';
    const handle = await realOpen(file as string, flag);
    try {
      await torn(handle, data);
    } finally {
      if (end === 'fail') await handle.close();
    }
  });
  return { halfWritten };
}

const image = Buffer.alloc(4096, 7);

describe('an image file is whole or absent under its name', () => {
  it('leaves no cut-off file under the name when the disk fills half way, and no sibling either', async () => {
    const dir = await folder();
    writeHalfThen('fail');
    await expect(writeOutput(join(dir, 'fox-2.png'), image, false)).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('leaves only a sibling named as unfinished when the process stops half way', async () => {
    const dir = await folder();
    const { halfWritten } = writeHalfThen('hang');
    void writeOutput(join(dir, 'fox-2.png'), image, false);
    await halfWritten;
    expect(await readdir(dir)).toEqual([expect.stringMatching(new RegExp(`^fox-2\\.png\\.${process.pid}\\.[0-9a-f]+\\.tmp$`))]);
    // Half the image, and not under its name.
    expect((await readFile(join(dir, (await readdir(dir))[0]!))).length).toBe(image.length / 2);
  });

  it('writes the whole image under its name and leaves no sibling', async () => {
    const dir = await folder();
    await writeOutput(join(dir, 'fox.png'), image, false);
    expect(await readdir(dir)).toEqual(['fox.png']);
    expect(await readFile(join(dir, 'fox.png'))).toEqual(image);
  });

  it('still never replaces an existing file without overwrite, and replaces it whole with it', async () => {
    const dir = await folder();
    await writeOutput(join(dir, 'fox.png'), Buffer.from('old'), false);
    await expect(writeOutput(join(dir, 'fox.png'), image, false)).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(join(dir, 'fox.png'), 'utf8')).toBe('old');
    await writeOutput(join(dir, 'fox.png'), image, true);
    expect(await readFile(join(dir, 'fox.png'))).toEqual(image);
    expect(await readdir(dir)).toEqual(['fox.png']);
  });
});
