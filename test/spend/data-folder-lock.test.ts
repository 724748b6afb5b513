import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATA_FOLDER_LOCK, holdDataFolder } from '../../src/spend/data-folder-lock.js';
import { testTempDir } from '../helpers/temp-dir.js';

describe('the data folder lock, held by a lock file that names no process yet', () => {
  it('refuses the start naming PICTOR_DATA_DIR and saying the lock names no process (one being written where the folder has no hard links), not "pid  on an unknown host"', async () => {
    const dir = await testTempDir('pictor-folder-unnamed-');
    writeFileSync(join(dir, DATA_FOLDER_LOCK), '');
    await expect(holdDataFolder(dir)).rejects.toMatchObject({ param: 'PICTOR_DATA_DIR', message: expect.stringContaining('is in use by another Pictor process (its lock names no process)') });
  });
});
