import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { saveToFallback } from '../../src/cli/output-paths.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { useEmulator } from '../helpers/emulator.js';
import { run, tempDir } from './run-cli.js';

// The emulator poses as the real service here: its images are paid for.
const env = useEmulator({ identifyAsEmulator: false });
const service = () => ({ PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_MAX_RETRIES: '0' });

/** Sets TMPDIR for this test only. */
function useTmpdir(dir: string): void {
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  onTestFinished(() => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  });
}

/** `pictor generate --n 2 --stream` whose --out and OS temp directory both refuse files from the first partial image on. */
async function generateOnBrokenDisk(extra: string[] = []) {
  const dir = await tempDir();
  const outDir = join(dir, 'out');
  const blocked = join(dir, 'no-temp');
  writeFileSync(blocked, 'not a directory');
  let broken = false;
  const result = await run(['generate', '--prompt', 'x', '--n', '2', '--stream', '--partial-images', '1', ...extra, '--out', join(outDir, 'cat.png')], service(), {
    stderr: (line) => {
      if (!broken && line.includes('partial 1/1 of image 1/2')) {
        broken = true;
        rmSync(outDir, { recursive: true });
        writeFileSync(outDir, 'in the way');
        useTmpdir(blocked);
      }
    },
  });
  expect(broken).toBe(true);
  return result;
}

describe('pictor generate when the disk refuses the paid images', () => {
  it('says the image that arrived before the job failed could not be written, and names no file as written', async () => {
    // A 200 with 1 of the 2 images asked for: the job fails, its one image paid. The disk breaks while the service works.
    env.emulator.injectFault('short_result');
    env.emulator.configure({ latencyMs: 1_500 });
    onTestFinished(() => env.emulator.configure({ latencyMs: 0 }));
    const dir = await tempDir();
    const outDir = join(dir, 'out');
    const blocked = join(dir, 'no-temp');
    writeFileSync(blocked, 'not a directory');
    const running = run(['generate', '--prompt', 'x', '--n', '2', '--out', join(outDir, 'cat.png')], service());
    await vi.waitFor(() => expect(env.emulator.requests).toHaveLength(1), { timeout: 15_000 });
    rmSync(outDir, { recursive: true, force: true });
    writeFileSync(outDir, 'in the way');
    useTmpdir(blocked);

    const { code, stderr } = await running;

    expect(code).toBe(1);
    expect(stderr).toMatch(/cat\.png .* the disk refused it, not the service; the service made it, so it is charged/);
    expect(stderr).toContain('pictor: the job failed after 1 of 2 images; the one that arrived could not be written (see the lost images above).');
    expect(stderr).not.toContain('wrote the one that arrived');
  });

  it('prints no "Wrote 0 images" line when none of the images could be written, and exits 1', async () => {
    const { code, stdout, stderr } = await generateOnBrokenDisk();

    expect(code).toBe(1);
    expect(stderr).toMatch(/cat-2\.png .* the disk refused it, not the service/);
    expect(stdout).not.toMatch(/Wrote/);
    expect(stdout).toMatch(/^Cost: /m);
  });
});

describe('saving an image to the OS temp directory', () => {
  it('leaves no empty folder behind when the image cannot be written there', async () => {
    const temp = await mkdtemp(join(tmpdir(), 'pictor-fallback-test-'));
    onTestFinished(() => rm(temp, { recursive: true, force: true }));
    useTmpdir(temp);

    // A name longer than any file system takes: the folder is made, the file is refused.
    await expect(saveToFallback([{ wanted: join('/somewhere', `${'a'.repeat(300)}.png`), bytes: new Uint8Array([1, 2, 3]) }])).rejects.toMatchObject({ code: 'ENAMETOOLONG' });

    expect(await readdir(temp)).toEqual([]);
  });
});
