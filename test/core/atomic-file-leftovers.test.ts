import * as fsp from 'node:fs/promises';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { removeLeftoverTemps, writeFileAtomically } from '../../src/core/atomic-file.js';
import { testTempDir } from '../helpers/temp-dir.js';

// `rename` is the real one unless a test holds it (a write stopped between its temporary file and its rename).
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return { ...real, rename: vi.fn(real.rename) };
});

describe('the temporary files atomic writes left', () => {
  it('are removed, with their .bak, when no write of this process is making them: a write under way here keeps its own and ends whole', async () => {
    const dir = await testTempDir('pictor-leftovers-');
    const file = join(dir, 'record.json');
    await writeFile(file, 'old');
    // What a kill -9 between the write and the rename left (another pid), each a whole version holding a prompt.
    await writeFile(`${file}.4242.0a1b2c3d.tmp`, 'a QUIXOTIC cat');
    await writeFile(`${file}.4242.0a1b2c3d.tmp.bak`, 'a QUIXOTIC cat');
    await writeFile(join(dir, 'other.json.4242.0a1b2c3d.tmp'), 'a QUIXOTIC dog');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const realRename = vi.mocked(fsp.rename).getMockImplementation()!;
    let reachedRename!: () => void;
    const atRename = new Promise<void>((resolve) => (reachedRename = resolve));
    vi.mocked(fsp.rename).mockImplementationOnce(async (from, to) => (reachedRename(), await held, realRename(from, to)));
    const writing = writeFileAtomically(file, 'new');
    await atRename; // the write's temporary file is whole and waits for its rename
    expect((await readdir(dir)).filter((name) => name.includes(`.${process.pid}.`))).toHaveLength(1);

    expect((await removeLeftoverTemps(dir, ['record.json'])).sort()).toEqual([`${file}.4242.0a1b2c3d.tmp`, `${file}.4242.0a1b2c3d.tmp.bak`]);
    // Only the files named: another file's is left to its own writer.
    expect(await readdir(dir)).toContain('other.json.4242.0a1b2c3d.tmp');
    release();
    await writing;
    expect(await readFile(file, 'utf8')).toBe('new');
    expect(await removeLeftoverTemps(dir)).toEqual([join(dir, 'other.json.4242.0a1b2c3d.tmp')]);
    expect(await readdir(dir)).toEqual(['record.json']);
  });
});
