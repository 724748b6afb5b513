import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileAtomically } from '../../src/internal.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-atomic-'));
  dirs.push(dir);
  return dir;
}

describe.each([
  { steps: 'awaited one by one', inline: false },
  { steps: 'inline but the fsync', inline: true },
])('writeFileAtomically, its steps $steps', ({ inline }) => {
  it('writes a first version (0600) with no backup, then keeps the previous version as the backup', async () => {
    const dir = await tempDir();
    const file = join(dir, 'store.json');
    await writeFileAtomically(file, 'one', { backupPath: `${file}.bak`, inline });
    expect(await readdir(dir)).toEqual(['store.json']);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    await writeFileAtomically(file, 'two', { backupPath: `${file}.bak`, inline });

    expect(await readFile(file, 'utf8')).toBe('two');
    expect(await readFile(`${file}.bak`, 'utf8')).toBe('one');
    expect((await readdir(dir)).sort()).toEqual(['store.json', 'store.json.bak']);
  });

  it('never leaves the file missing to a reader while it is rewritten', async () => {
    const dir = await tempDir();
    const file = join(dir, 'store.json');
    await writeFileAtomically(file, '0', { backupPath: `${file}.bak`, inline });
    let writing = true;
    const reads: string[] = [];
    const reader = (async () => {
      while (writing) reads.push(await readFile(file, 'utf8'));
    })();

    for (let i = 1; i <= 50; i++) await writeFileAtomically(file, String(i), { backupPath: `${file}.bak`, inline });
    writing = false;
    await reader;

    expect(reads.length).toBeGreaterThan(0);
    for (const text of reads) expect(Number(text)).toBeGreaterThanOrEqual(0);
  });

  it('leaves no temporary file behind when the write fails', async () => {
    const dir = await tempDir();
    await expect(writeFileAtomically(join(dir, 'missing', 'store.json'), 'x', { inline })).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readdir(dir)).toEqual([]);
  });

  it('exclusive: gives a new file its name whole, with the mode asked, and leaves no temporary file', async () => {
    const dir = await tempDir();
    const file = join(dir, 'fox.png');
    await writeFileAtomically(file, 'image', { exclusive: true, mode: 0o640, inline });
    expect(await readFile(file, 'utf8')).toBe('image');
    expect((await stat(file)).mode & 0o777).toBe(0o640 & ~process.umask());
    expect(await readdir(dir)).toEqual(['fox.png']);
  });

  it('exclusive: never replaces a file that exists (EEXIST), and leaves no temporary file', async () => {
    const dir = await tempDir();
    const file = join(dir, 'fox.png');
    await writeFileAtomically(file, 'old', { inline });
    await expect(writeFileAtomically(file, 'new', { exclusive: true, inline })).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(file, 'utf8')).toBe('old');
    expect(await readdir(dir)).toEqual(['fox.png']);
  });
});
