import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run, tempDir } from './run-cli.js';

/** Whether a folder's mode can keep this process from writing in it (not for root, which chmod cannot deny). */
function chmodDenies(): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'pictor-chmod-'));
  try {
    chmodSync(dir, 0o500);
    accessSync(dir, constants.W_OK);
    return false;
  } catch {
    return true;
  } finally {
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('pictor with a PICTOR_DATA_DIR it cannot use', () => {
  it('exits 2 naming PICTOR_DATA_DIR when it is a file, and sends nothing', async () => {
    const dir = await tempDir();
    writeFileSync(join(dir, 'afile'), '');
    const { code, stderr } = await run(['generate', '--prompt', 'a fox', '--quality', 'low', '--out', join(dir, 'out.png')], { PICTOR_DATA_DIR: join(dir, 'afile') });
    expect(code).toBe(2);
    expect(stderr).toBe(`pictor: PICTOR_DATA_DIR must be a folder this process can write in: ${join(dir, 'afile')} is a file, not a folder. Nothing was sent.`);
  });

  it('exits 2 naming PICTOR_DATA_DIR for the console too, which keeps its pauses in the ledger there', async () => {
    const dir = await tempDir();
    writeFileSync(join(dir, 'afile'), '');
    const { code, stderr } = await run(['console'], { PICTOR_DATA_DIR: join(dir, 'afile', 'inside') });
    expect(code).toBe(2);
    expect(stderr).toBe(`pictor: PICTOR_DATA_DIR must be a folder this process can write in: ${join(dir, 'afile', 'inside')} is inside a file, not a folder.`);
  });

  it.skipIf(!chmodDenies())('exits 2 naming PICTOR_DATA_DIR when the folder is read-only (not as root, whom a mode cannot stop)', async () => {
    const dir = await tempDir();
    const readOnly = join(dir, 'ro');
    mkdirSync(readOnly, { mode: 0o500 });
    try {
      const { code, stderr } = await run(['generate', '--prompt', 'a fox', '--quality', 'low', '--out', join(dir, 'out.png')], { PICTOR_DATA_DIR: readOnly });
      expect(code).toBe(2);
      expect(stderr).toMatch(new RegExp(`^pictor: PICTOR_DATA_DIR must be a folder this process can write in: ${readOnly} cannot be made or written in \\(permission denied\\)\\. Nothing was sent\\.$`));
    } finally {
      chmodSync(readOnly, 0o700);
    }
  });

  it('makes a missing folder, parents and all, and runs', async () => {
    const dir = await tempDir();
    const { code } = await run(['generate', '--prompt', 'a fox', '--quality', 'low', '--out', join(dir, 'out.png')], { PICTOR_DATA_DIR: join(dir, 'new', 'data') });
    expect(code).toBe(0);
    accessSync(join(dir, 'new', 'data'), constants.W_OK);
  }, 60_000);
});
