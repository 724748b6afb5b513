import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { writeFileAtomically } from '../../src/core/atomic-file.js';
import { testTempDir } from '../helpers/temp-dir.js';

// A file system without hard links (some network and FUSE mounts): every link is refused with EPERM.
const refuse = () => {
  throw Object.assign(new Error('operation not permitted, link'), { code: 'EPERM' });
};
// `rename` is the real one unless a test makes it fail.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return { ...real, linkSync: vi.fn(), renameSync: vi.fn(real.renameSync) };
});
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return { ...real, link: vi.fn(), rename: vi.fn(real.rename) };
});

beforeEach(() => {
  vi.mocked(fs.linkSync).mockImplementation(refuse);
  vi.mocked(fsp.link).mockImplementation(async () => refuse());
});
const tempDir = () => testTempDir('pictor-atomic-nolink-');

describe.each([
  { steps: 'awaited one by one', inline: false },
  { steps: 'inline but the fsync', inline: true },
])('writeFileAtomically where the file system has no hard links, its steps $steps', ({ inline }) => {
  it('exclusive: claims the free name and puts the whole new file there, leaving no temporary file', async () => {
    const dir = await tempDir();
    await writeFileAtomically(join(dir, 'fox.png'), 'image', { exclusive: true, inline });
    expect(await readFile(join(dir, 'fox.png'), 'utf8')).toBe('image');
    expect(await readdir(dir)).toEqual(['fox.png']);
    expect(inline ? fs.linkSync : fsp.link).toHaveBeenCalled();
  });

  it('exclusive: still never replaces a file that exists (EEXIST)', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'fox.png'), 'old');
    await expect(writeFileAtomically(join(dir, 'fox.png'), 'new', { exclusive: true, inline })).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(join(dir, 'fox.png'), 'utf8')).toBe('old');
    expect(await readdir(dir)).toEqual(['fox.png']);
  });

  it('exclusive: a rename that fails leaves neither the empty claim nor the temporary file, so the next write takes the name', async () => {
    const dir = await tempDir();
    const ioError = () => {
      throw Object.assign(new Error('i/o error, rename'), { code: 'EIO' });
    };
    if (inline) vi.mocked(fs.renameSync).mockImplementationOnce(ioError);
    else vi.mocked(fsp.rename).mockImplementationOnce(async () => ioError());
    await expect(writeFileAtomically(join(dir, 'fox.png'), 'image', { exclusive: true, inline })).rejects.toMatchObject({ code: 'EIO' });
    expect(await readdir(dir)).toEqual([]);

    await writeFileAtomically(join(dir, 'fox.png'), 'image', { exclusive: true, inline });
    expect(await readFile(join(dir, 'fox.png'), 'utf8')).toBe('image');
  });

  it('keeps the backup as a copy', async () => {
    const dir = await tempDir();
    const file = join(dir, 'store.json');
    await writeFileAtomically(file, 'one', { backupPath: `${file}.bak`, inline });
    await writeFileAtomically(file, 'two', { backupPath: `${file}.bak`, inline });
    expect(await readFile(`${file}.bak`, 'utf8')).toBe('one');
    expect(await readFile(file, 'utf8')).toBe('two');
  });
});
