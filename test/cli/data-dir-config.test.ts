import { createRequire } from 'node:module';
import { accessSync, constants, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readOnlyFolder, UNPRIVILEGED, unprivilegedCanRead } from '../helpers/read-only-folder.js';
import { CLI_ENTRY, run, spawnCli, tempDir } from './run-cli.js';

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

  // As root, whom no mode stops, the CLI runs as an unprivileged user (a checkout that user cannot read is the one case left out).
  it.skipIf(!unprivilegedCanRead([CLI_ENTRY, createRequire(import.meta.url).resolve('tsx')]))('exits 2 naming PICTOR_DATA_DIR when the folder is read-only to it, and sends nothing', async () => {
    const { readOnly, writable } = await readOnlyFolder('pictor-cli-read-only-');
    const { code, stderr } = await spawnCli(['generate', '--prompt', 'a fox', '--quality', 'low', '--out', join(writable, 'out.png')], { env: { PICTOR_DATA_DIR: readOnly }, user: UNPRIVILEGED });
    expect(code).toBe(2);
    expect(stderr).toBe(`pictor: PICTOR_DATA_DIR must be a folder this process can write in: ${readOnly} cannot be made or written in (permission denied). Nothing was sent.\n`);
  }, 60_000);

  it('makes a missing folder, parents and all, and runs', async () => {
    const dir = await tempDir();
    const { code } = await run(['generate', '--prompt', 'a fox', '--quality', 'low', '--out', join(dir, 'out.png')], { PICTOR_DATA_DIR: join(dir, 'new', 'data') });
    expect(code).toBe(0);
    accessSync(join(dir, 'new', 'data'), constants.W_OK);
  }, 60_000);

  it('makes its default folder, under XDG_STATE_HOME, readable by this user only (0700), as the parents it makes: the ledger holds prompts', async () => {
    const dir = await tempDir();
    const { code } = await run(['generate', '--prompt', 'a fox', '--quality', 'low', '--out', join(dir, 'out.png')], { XDG_STATE_HOME: join(dir, 'state') });
    expect(code).toBe(0);
    expect([statSync(join(dir, 'state')).mode & 0o777, statSync(join(dir, 'state', 'pictor')).mode & 0o777]).toEqual([0o700, 0o700]);
  }, 60_000);
});
