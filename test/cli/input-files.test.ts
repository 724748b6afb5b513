import { truncate, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { LIMITS } from '../../src/spec/constants.js';
import { useEmulator } from '../helpers/emulator.js';
import { run, tempDir } from './run-cli.js';

const env = useEmulator();
const service = () => ({ PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY });

describe('pictor edit --image reads only regular files, bounded', () => {
  it('refuses /dev/zero at once instead of reading it without end', async () => {
    const { code, stderr } = await run(['edit', '--prompt', 'x', '--image', '/dev/zero'], service());
    expect(code).toBe(2);
    expect(stderr).toContain('/dev/zero (not a regular file)');
    expect(env.emulator.requests).toHaveLength(0);
  });

  it('refuses a directory', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'pics'));
    const { code, stderr } = await run(['edit', '--prompt', 'x', '--image', join(dir, 'pics')], service());
    expect(code).toBe(2);
    expect(stderr).toContain('a directory, not a file');
  });

  it('says in words why a file cannot be read, not with an error code', async () => {
    const dir = await tempDir();
    const { code, stderr } = await run(['edit', '--prompt', 'x', '--image', join(dir, 'missing.png')], service());
    expect(code).toBe(2);
    expect(stderr).toContain(`--image: cannot read ${join(dir, 'missing.png')} (no such file or directory)`);
    expect(stderr).not.toContain('ENOENT');
  });

  it('refuses a file larger than the limit without reading it', async () => {
    const dir = await tempDir();
    const big = join(dir, 'big.png');
    await writeFile(big, '');
    await truncate(big, LIMITS.editImageMaxBytes + 1); // sparse: no disk used
    const { code, stderr } = await run(['edit', '--prompt', 'x', '--image', big], service());
    expect(code).toBe(2);
    expect(stderr).toContain('larger than 50 MB');
    expect(env.emulator.requests).toHaveLength(0);
  });
});
