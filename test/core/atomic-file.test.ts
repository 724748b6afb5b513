import { link, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { restoreFromBackup, unreadFileOf, writeFileAtomically } from '../../src/internal.js';
import { testTempDir } from '../helpers/temp-dir.js';

const tempDir = () => testTempDir('pictor-atomic-');

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

  it('leaves no temporary file behind when the backup copy is already the file itself (a crash between the backup and the rename leaves them one file under two names)', async () => {
    const dir = await tempDir();
    const file = join(dir, 'store.json');
    await writeFileAtomically(file, 'one', { backupPath: `${file}.bak`, inline });
    // What a write stopped after the backup's rename and before the file's leaves: the backup a hard link of the file.
    await link(file, `${file}.bak`);

    await writeFileAtomically(file, 'two', { backupPath: `${file}.bak`, inline });

    expect(await readFile(file, 'utf8')).toBe('two');
    expect(await readFile(`${file}.bak`, 'utf8')).toBe('one');
    expect((await readdir(dir)).sort()).toEqual(['store.json', 'store.json.bak']);
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

describe('restoreFromBackup', () => {
  const good = (text: string) => text.startsWith('ok');

  it('puts a good backup copy in place of a missing file, handing `restored` the copy’s text as checked', async () => {
    const dir = await tempDir();
    const file = join(dir, 'ledger.json');
    await writeFile(`${file}.bak`, 'ok 1');
    const handed: string[] = [];

    const answer = await restoreFromBackup(file, `${file}.bak`, good, { restored: (backup) => (handed.push(backup), `${backup} + since`) });

    expect(answer).toEqual({ restored: true });
    expect(handed).toEqual(['ok 1']);
    expect(await readFile(file, 'utf8')).toBe('ok 1 + since');
  });

  it('throws the read error of a backup copy that exists but cannot be read (here a folder), not taking it for a damaged copy, and touches nothing', async () => {
    const dir = await tempDir();
    const file = join(dir, 'ledger.json');
    await mkdir(`${file}.bak`);

    await expect(restoreFromBackup(file, `${file}.bak`, good)).rejects.toMatchObject({ code: 'EISDIR', path: `${file}.bak` });
    await writeFile(file, 'damaged');
    await expect(restoreFromBackup(file, `${file}.bak`, good)).rejects.toMatchObject({ code: 'EISDIR', path: `${file}.bak` });
    expect((await readdir(dir)).sort()).toEqual(['ledger.json', 'ledger.json.bak']);
    expect(await readFile(file, 'utf8')).toBe('damaged');
  });

  it('throws the read error of a file that exists but cannot be read (here a folder), not taking it for a damaged one: nothing is moved or put back', async () => {
    const dir = await tempDir();
    const file = join(dir, 'ledger.json');
    await mkdir(file);
    await writeFile(`${file}.bak`, 'ok 1');

    await expect(restoreFromBackup(file, `${file}.bak`, good)).rejects.toMatchObject({ code: 'EISDIR', path: file });
    expect((await readdir(dir)).sort()).toEqual(['ledger.json', 'ledger.json.bak']);
    expect((await stat(file)).isDirectory()).toBe(true);
  });

  it('throws a backup copy that is not a file (a folder) as unread even beside a good file, touching nothing: every write would fail on it', async () => {
    const dir = await tempDir();
    const file = join(dir, 'ledger.json');
    await writeFile(file, 'ok 2');
    await mkdir(`${file}.bak`);

    const error = await restoreFromBackup(file, `${file}.bak`, good).catch((e: unknown) => e);

    expect(unreadFileOf(error)).toBe(`${file}.bak`);
    expect(await readFile(file, 'utf8')).toBe('ok 2');
    expect(await readdir(dir)).toEqual(['ledger.json', 'ledger.json.bak']);
  });
});
