import * as fs from 'node:fs/promises';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { writeOutput } from '../../src/cli/output-paths.js';

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return { ...real, writeFile: vi.fn(real.writeFile) };
});

const dirs: string[] = [];
afterEach(async () => {
  vi.mocked(fs.writeFile).mockReset();
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
async function folder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-whole-'));
  dirs.push(dir);
  return dir;
}

/** The write stops half way: the first half reaches the disk, then the disk is full or the process is gone. */
function writeHalfThen(end: 'fail' | 'hang') {
  vi.mocked(fs.writeFile).mockImplementationOnce(async (file, data) => {
    const bytes = data as Uint8Array;
    const real = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises');
    await real.writeFile(file as string, bytes.subarray(0, bytes.length / 2));
    if (end === 'fail') throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    await new Promise(() => undefined);
  });
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
    writeHalfThen('hang');
    void writeOutput(join(dir, 'fox-2.png'), image, false);
    await vi.waitFor(async () => expect(await readdir(dir)).toEqual([`.fox-2.png.partial-${process.pid}`]));
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
