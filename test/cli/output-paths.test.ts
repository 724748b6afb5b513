import { readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { describeImage } from '../helpers/images.js';
import { useEmulator } from '../helpers/emulator.js';
import { run, tempDir } from './run-cli.js';

const env = useEmulator();
const service = () => ({ PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY });
/** Removes the folder of the OS temp directory an image that could not be written where asked was saved to. */
const removeFallback = (saved: string) => rm(dirname(saved), { recursive: true, force: true });

describe('pictor --out is checked before anything is paid for', () => {
  it.each([
    ['a file used as a directory', async (dir: string) => (await writeFile(join(dir, 'file'), 'x'), join(dir, 'file', 'cat.png'))],
    ['a path under /proc', async () => '/proc/pictor-test/cat.png'],
    ['a directory under /proc', async () => '/proc/'],
    ['a dangling symbolic link', async (dir: string) => (await symlink('/nonexistent/dir/cat.png', join(dir, 'link.png')), join(dir, 'link.png'))],
  ])('exits 2 naming --out and sends nothing for %s', async (_case, make) => {
    const out = await make(await tempDir());
    const { code, stderr } = await run(['generate', '--prompt', 'x', '--out', out], service());
    expect(code).toBe(2);
    expect(stderr).toContain('--out');
    expect(env.emulator.requests).toHaveLength(0);
  });

  it('without --out, writes into ./out/ of the folder it was run from (made when missing) and says where each file went', async () => {
    const dir = await tempDir();
    const { code, stdout } = await run(['generate', '--prompt', 'a red kite', '--n', '2'], service(), { cwd: dir });
    expect(code).toBe(0);
    const files = (await readdir(join(dir, 'out'))).sort();
    expect(files).toHaveLength(2);
    expect(await readdir(dir)).toEqual(['out']);
    for (const file of files) expect(stdout).toContain(join(dir, 'out', file));
  });

  it('creates a missing directory before sending', async () => {
    const dir = join(await tempDir(), 'new', 'deeper');
    const { code } = await run(['generate', '--prompt', 'x', '--out', `${dir}/`], service());
    expect(code).toBe(0);
    expect(await readdir(dir)).toHaveLength(1);
  });

  it('refuses a file name whose extension does not match --format, naming both', async () => {
    const dir = await tempDir();
    const { code, stderr } = await run(['generate', '--prompt', 'x', '--format', 'jpeg', '--out', join(dir, 'x.png')], service());
    expect(code).toBe(2);
    expect(stderr).toMatch(/--out: .*x\.png ends in \.png but the images will be jpeg/);
    expect(env.emulator.requests).toHaveLength(0);
  });

  it('accepts .jpeg and .jpg for jpeg, and adds the extension to a name without one', async () => {
    const dir = await tempDir();
    expect((await run(['generate', '--prompt', 'x', '--format', 'jpeg', '--out', join(dir, 'a.jpeg')], service())).code).toBe(0);
    expect((await run(['generate', '--prompt', 'x', '--format', 'webp', '--out', join(dir, 'b')], service())).code).toBe(0);
    expect((await readdir(dir)).sort()).toEqual(['a.jpeg', 'b.webp']);
  });
});

describe('pictor never overwrites silently', () => {
  it('gives parallel runs of the same prompt in the same second files of their own', async () => {
    const dir = await tempDir();
    const runs = await Promise.all([1, 2, 3].map(() => run(['generate', '--prompt', 'same prompt', '--out', `${dir}/`], service())));
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(await readdir(dir)).toHaveLength(3);
  });

  it('refuses an existing file before sending, and replaces it with --overwrite', async () => {
    const dir = await tempDir();
    const path = join(dir, 'cat.png');
    await writeFile(path, 'precious');
    const refused = await run(['generate', '--prompt', 'x', '--out', path], service());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--overwrite');
    expect(await readFile(path, 'utf8')).toBe('precious');
    expect(env.emulator.requests).toHaveLength(0);

    expect((await run(['generate', '--prompt', 'x', '--out', path, '--overwrite'], service())).code).toBe(0);
    expect(await describeImage(await readFile(path))).toMatchObject({ format: 'png' });
  });
});

describe('pictor keeps images it paid for when writing fails after the job', () => {
  it('saves the final image to the temp directory and says where when --out broke during the stream, exit 1', async () => {
    const dir = await tempDir();
    const outDir = join(dir, 'out');
    let broken = false;
    const { code, stderr } = await run(
      ['generate', '--prompt', 'x', '--stream', '--partial-images', '2', '--out', join(outDir, 'cat.png')],
      service(),
      {
        stderr: (line) => {
          // After the first partial is written, the output directory becomes a file: no later write can succeed, even as root.
          if (!broken && line.includes('partial 1/2')) {
            broken = true;
            rmSync(outDir, { recursive: true });
            writeFileSync(outDir, 'in the way');
          }
        },
      },
    );
    expect(broken).toBe(true);
    expect(code).toBe(1);
    expect(stderr).toContain('partial 2/2 of image 1/1: could not write');
    const saved = /saved it to (\S+) instead/.exec(stderr)?.[1];
    expect(saved).toBeDefined();
    onTestFinished(() => removeFallback(saved!));
    expect(await describeImage(await readFile(saved!))).toMatchObject({ format: 'png' });
    expect(env.emulator.requests).toHaveLength(1);
  });

  it('lists the saved file in --json output with ok false', async () => {
    const dir = await tempDir();
    const outDir = join(dir, 'out');
    const { code, stdout } = await run(['generate', '--prompt', 'x', '--stream', '--partial-images', '1', '--json', '--out', join(outDir, 'cat.png')], service(), {
      stderr: (line) => {
        if (line.includes('partial 1/1')) {
          rmSync(outDir, { recursive: true });
          writeFileSync(outDir, 'in the way');
        }
      },
    });
    expect(code).toBe(1);
    const result = JSON.parse(stdout) as { ok: boolean; code: string; files: string[]; message: string };
    // As every failure's line: the sentence stderr says (where the image went instead) and what the ledger charged.
    expect(result).toMatchObject({ ok: false, code: 'output_not_written', charged: expect.any(Number) });
    onTestFinished(() => removeFallback(result.files[0]!));
    expect(result.message.startsWith(`could not write ${join(outDir, 'cat.png')} (`)).toBe(true);
    expect(result.message.endsWith(`; saved it to ${result.files[0]} instead.`)).toBe(true);
    expect((await stat(result.files[0]!)).isFile()).toBe(true);
  });

  it('saves every image of a job whose --out broke into one new folder of the temp directory', async () => {
    const dir = await tempDir();
    const outDir = join(dir, 'out');
    const { code, stderr } = await run(['generate', '--prompt', 'x', '--n', '2', '--stream', '--partial-images', '1', '--out', join(outDir, 'cat.png')], service(), {
      stderr: (line) => {
        if (line.includes('partial 1/1 of image 1/2')) {
          rmSync(outDir, { recursive: true });
          writeFileSync(outDir, 'in the way');
        }
      },
    });
    expect(code).toBe(1);
    const saved = [...stderr.matchAll(/saved it to (\S+) instead/g)].map((m) => m[1]!);
    for (const file of saved) onTestFinished(() => removeFallback(file));
    expect(saved).toHaveLength(2);
    expect(new Set(saved.map((file) => dirname(file))).size).toBe(1);
    expect((await readdir(dirname(saved[0]!))).sort()).toEqual(saved.map((file) => basename(file)).sort());
  });

  it('saves the next image of the job into a new folder of the temp directory when its folder there refuses it', async () => {
    const dir = await tempDir();
    const outDir = join(dir, 'out');
    const firstFolders: string[] = [];
    const { code, stderr } = await run(['generate', '--prompt', 'x', '--n', '2', '--stream', '--partial-images', '1', '--out', join(outDir, 'cat.png')], service(), {
      stderr: (line) => {
        if (line.includes('partial 1/1 of image 1/2')) {
          rmSync(outDir, { recursive: true });
          writeFileSync(outDir, 'in the way');
        }
        const first = /saved it to (\S+) instead/.exec(line)?.[1];
        if (first !== undefined && firstFolders.length === 0) {
          // The job's folder in the temp directory becomes a file: the next image cannot go there.
          firstFolders.push(dirname(first));
          rmSync(dirname(first), { recursive: true });
          writeFileSync(dirname(first), 'in the way');
        }
      },
    });
    for (const folder of firstFolders) onTestFinished(() => rm(folder, { force: true }));
    expect(code).toBe(1);
    const saved = [...stderr.matchAll(/saved it to (\S+) instead/g)].map((m) => m[1]!);
    for (const file of saved.slice(1)) onTestFinished(() => removeFallback(file));
    expect(saved).toHaveLength(2);
    expect(dirname(saved[0]!)).toBe(firstFolders[0]);
    expect(dirname(saved[1]!)).not.toBe(firstFolders[0]);
    expect(await describeImage(await readFile(saved[1]!))).toMatchObject({ format: 'png' });
  });

  describe('when the OS temp directory refuses them too', () => {
    /** After the first partial, --out becomes a file and so does the OS temp directory; `healAt` gives the temp directory back. */
    async function runBroken(healAt: string | undefined, extra: string[] = []) {
      const dir = await tempDir();
      const outDir = join(dir, 'out');
      const blocked = join(dir, 'no-temp');
      writeFileSync(blocked, 'not a directory');
      const before = process.env.TMPDIR;
      const heal = (): void => {
        if (before === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = before;
      };
      onTestFinished(heal);
      let broken = false;
      const result = await run(['generate', '--prompt', 'x', '--n', '2', '--stream', '--partial-images', '1', ...extra, '--out', join(outDir, 'cat.png')], service(), {
        stderr: (line) => {
          if (!broken && line.includes('partial 1/1 of image 1/2')) {
            broken = true;
            rmSync(outDir, { recursive: true });
            writeFileSync(outDir, 'in the way');
            process.env.TMPDIR = blocked;
          }
          if (healAt && line.includes(healAt)) heal();
        },
      });
      heal();
      expect(broken).toBe(true);
      return result;
    }

    it('keeps reading the stream, keeps the images in memory and saves them to the temp directory at the end, exit 1', async () => {
      const { code, stderr } = await runBroken('image 2/2 done');
      expect(code).toBe(1);
      expect(stderr).toContain('image 2/2 done');
      expect(stderr).toContain('kept in memory, tried again at the end');
      const saved = [...stderr.matchAll(/saved it to (\S+) instead/g)].map((m) => m[1]!);
      expect(saved).toHaveLength(2);
      for (const file of saved) onTestFinished(() => removeFallback(file));
      for (const file of saved) expect(await describeImage(await readFile(file))).toMatchObject({ format: 'png' });
      expect(env.emulator.requests).toHaveLength(1);
    });

    it('names the disk, not the service, for images no folder took, and says they are charged', async () => {
      const { code, stdout, stderr } = await runBroken(undefined, ['--json']);
      expect(code).toBe(1);
      expect(stderr).toContain('image 2/2 done');
      expect(stderr).toMatch(/cat\.png .* the disk refused it, not the service; the service made it, so it is charged/);
      expect(JSON.parse(stdout)).toMatchObject({
        ok: false,
        code: 'output_not_written',
        message: expect.stringMatching(/^could not write \S+cat\.png .* the disk refused it, not the service; the service made it, so it is charged\. could not write \S+cat-2\.png /),
        charged: expect.any(Number),
        files: [],
        lost: [expect.stringMatching(/cat\.png$/), expect.stringMatching(/cat-2\.png$/)],
      });
    });
  });
});
