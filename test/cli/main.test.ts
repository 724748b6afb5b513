import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { runEmulator } from '../../src/cli/commands/emulator.js';
import { connect } from '../../src/connect.js';
import { readCoreConfig } from '../../src/config.js';
import { silentLogger } from '../../src/internal.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { describeImage, makeImage } from '../helpers/images.js';
import { useEmulator } from '../helpers/emulator.js';
import { tempDir } from './run-cli.js';

const env = useEmulator();

async function run(argv: string[], environment: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, environment, { stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('pictor generate', () => {
  it('runs against an embedded emulator when nothing is configured, and writes the images', async () => {
    const dir = await tempDir();
    const { code, stdout, stderr } = await run(['generate', '--prompt', 'a quiet harbour', '--n', '2', '--size', '1024x1536', '--quality', 'low', '--out', `${dir}/`]);
    expect(code).toBe(0);
    expect(stderr).toContain('embedded emulator');
    const files = (await readdir(dir)).sort();
    expect(files).toHaveLength(2);
    expect(files[0]).toMatch(/^a-quiet-harbour-.*-1\.png$/);
    expect(await describeImage(await readFile(join(dir, files[0]!)))).toMatchObject({ width: 1024, height: 1536, format: 'png' });
    expect(stdout).toContain('Would cost on the real service: $0.0106 (2 × $0.0053) (an emulator made it: nothing was spent)');
  });

  it('uses the configured service and key', async () => {
    const dir = await tempDir();
    const { code } = await run(['generate', '--prompt', 'x', '--out', join(dir, 'one.webp'), '--format', 'webp', '--compression', '40'], {
      PICTOR_BASE_URL: env.url,
      PICTOR_API_KEY: DEV_API_KEY,
    });
    expect(code).toBe(0);
    expect(await readdir(dir)).toEqual(['one.webp']);
    expect(env.emulator.requests[0]?.fields).toMatchObject({ output_format: 'webp', output_compression: 40 });
  });

  it('streams partial images beside the final one with a progress line', async () => {
    const dir = await tempDir();
    const { code, stderr } = await run(['generate', '--prompt', 'x', '--stream', '--partial-images', '2', '--out', join(dir, 'cat.png')], {
      PICTOR_BASE_URL: env.url,
      PICTOR_API_KEY: DEV_API_KEY,
    });
    expect(code).toBe(0);
    // One numbering, from 1, in the progress line and the file name.
    expect((await readdir(dir)).sort()).toEqual(['cat.partial-1.png', 'cat.partial-2.png', 'cat.png']);
    expect(stderr).toContain(`partial 1/2 of image 1/1 → ${join(dir, 'cat.partial-1.png')}`);
    expect(stderr).toContain(`partial 2/2 of image 1/1 → ${join(dir, 'cat.partial-2.png')}`);
  });

  it('numbers sibling files when a file name gets several images', async () => {
    const dir = await tempDir();
    await run(['generate', '--prompt', 'x', '--n', '3', '--out', join(dir, 'set.png')]);
    expect((await readdir(dir)).sort()).toEqual(['set-2.png', 'set-3.png', 'set.png']);
  });

  it('exits 2 naming the flag and the allowed values, and sends nothing', async () => {
    const { code, stderr } = await run(['generate', '--prompt', 'x', '--size', '512x512'], { PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY });
    expect(code).toBe(2);
    expect(stderr).toContain('--size');
    expect(stderr).toContain('1024x1024, 1024x1536, 1536x1024');
    expect(env.emulator.requests).toHaveLength(0);
  });

  it('exits 2 for the transparent-with-jpeg rule and explains it', async () => {
    const { code, stderr } = await run(['generate', '--prompt', 'x', '--background', 'transparent', '--format', 'jpeg']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--format: output_format must be png or webp when background is transparent/);
  });

  it('exits 2 for an unknown flag and for a missing prompt', async () => {
    expect((await run(['generate', '--promt', 'x'])).code).toBe(2);
    expect((await run(['generate'])).stderr).toContain('--prompt is required');
  });

  it('exits 1 with what happened and what to do when the service refuses the key', async () => {
    const { code, stderr } = await run(['generate', '--prompt', 'x'], { PICTOR_BASE_URL: env.url, PICTOR_API_KEY: 'wrong-key-123456' });
    expect(code).toBe(1);
    expect(stderr).toContain('Check PICTOR_API_KEY');
    expect(stderr).not.toContain('wrong-key-123456');
  });

  it('exits 1 when the service cannot be reached', async () => {
    const { code, stderr } = await run(['generate', '--prompt', 'x'], { PICTOR_BASE_URL: 'http://127.0.0.1:9', PICTOR_API_KEY: 'k', PICTOR_MAX_RETRIES: '0' });
    expect(code).toBe(1);
    expect(stderr).toContain('PICTOR_BASE_URL');
  });

  it('names a wrong path once when the service answers 404 with it', async () => {
    const { code, stderr } = await run(['generate', '--prompt', 'x'], { PICTOR_BASE_URL: `${env.url}/api`, PICTOR_API_KEY: DEV_API_KEY });
    expect(code).toBe(1);
    expect(stderr.split('POST /api/v1/images/generations')).toHaveLength(2);
  });

  it('does not blame PICTOR_BASE_URL when it is Redis that cannot be reached', async () => {
    const { code, stderr } = await run(['generate', '--prompt', 'x'], { REDIS_URL: 'redis://127.0.0.1:9' });
    expect(code).toBe(1);
    expect(stderr).toContain('REDIS_URL');
    expect(stderr).not.toContain('PICTOR_BASE_URL');
  });

  it('prints one machine-readable result with --json', async () => {
    const dir = await tempDir();
    const { code, stdout } = await run(['generate', '--prompt', 'x', '--quality', 'high', '--json', '--out', `${dir}/`]);
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as { ok: boolean; files: string[]; cost: { basis: string; totalUsd: number } };
    expect(result.ok).toBe(true);
    expect(result.files).toHaveLength(1);
    expect(result.cost).toMatchObject({ basis: 'table', totalUsd: 0.22366 });
  });

  it('prints a machine-readable failure with --json', async () => {
    const { code, stdout } = await run(['generate', '--prompt', 'x', '--n', '0', '--json']);
    expect(code).toBe(2);
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, code: 'validation_error', param: 'n' });
  });
});

describe('pictor edit', () => {
  it('sends every --image as an image[] part', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.png'), await makeImage('png'));
    await writeFile(join(dir, 'b.jpg'), await makeImage('jpeg'));
    const { code } = await run(['edit', '--prompt', 'make it snow', '--image', join(dir, 'a.png'), '--image', join(dir, 'b.jpg'), '--out', join(dir, 'out/')], {
      PICTOR_BASE_URL: env.url,
      PICTOR_API_KEY: DEV_API_KEY,
    });
    expect(code).toBe(0);
    expect(env.emulator.requests[0]?.images.map((p) => p.contentType)).toEqual(['image/png', 'image/jpeg']);
    expect(await readdir(join(dir, 'out'))).toHaveLength(1);
  });

  it('refuses a file that is not an image, by its content', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'notes.png'), 'just text');
    const { code, stderr } = await run(['edit', '--prompt', 'x', '--image', join(dir, 'notes.png')]);
    expect(code).toBe(2);
    expect(stderr).toContain('notes.png');
  });

  it('refuses a truncated image before sending it, naming --image', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'cut.jpg'), (await makeImage('jpeg')).subarray(0, 200));
    const { code, stderr } = await run(['edit', '--prompt', 'x', '--image', join(dir, 'cut.jpg')], { PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY });
    expect(code).toBe(2);
    expect(stderr).toMatch(/--image: image "cut\.jpg" is a damaged JPEG image/);
    expect(env.emulator.requests).toHaveLength(0);
  });

  it('says so when an image file cannot be read', async () => {
    const { code, stderr } = await run(['edit', '--prompt', 'x', '--image', '/nonexistent/a.png']);
    expect(code).toBe(2);
    expect(stderr).toContain('cannot read /nonexistent/a.png');
  });
});

describe('pictor price', () => {
  it.each(['1024x1024', '1024x1536', '1536x1024'])('shows a per-image price that adds up to the total (%s, 4 images, every quality)', async (size) => {
    for (const quality of ['low', 'medium', 'high']) {
      const { stdout } = await run(['price', '--size', size, '--quality', quality, '--n', '4']);
      const [, total, each] = /: \$([\d.]+) \(4 × \$([\d.]+)\)/.exec(stdout)!;
      expect(Math.round(Number(each) * 4 * 1e6) / 1e6).toBe(Number(total));
    }
  });

  it('prints a table price and its basis', async () => {
    const { code, stdout } = await run(['price', '--size', '1024x1024', '--quality', 'medium', '--n', '2']);
    expect(code).toBe(0);
    expect(stdout).toContain('$0.11236 (2 × $0.05618)');
    expect(stdout).toContain('basis: table');
  });

  it('flags an estimate for quality auto', async () => {
    const { stdout } = await run(['price', '--size', '1536x1024', '--quality', 'auto', '--json']);
    expect(JSON.parse(stdout)).toMatchObject({ basis: 'estimate', perImageUsd: 0.1749 });
  });
});

describe('refusals of commands that send nothing', () => {
  it.each([
    [['usage', '--by', 'color']],
    [['price', '--quality', 'ultra']],
  ])('pictor %s names the flag without saying "Nothing was sent." (it never sends)', async (argv) => {
    const { code, stderr } = await run(argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^pictor: --/);
    expect(stderr).not.toContain('Nothing was sent');
  });
});

describe('pictor emulator', () => {
  it('prints its URL once listening and answers until stopped', async () => {
    const out: string[] = [];
    let printed!: () => void;
    const listening = new Promise<void>((resolve) => (printed = resolve));
    const stop = new AbortController();
    const stdout = (l: string) => (out.push(l), printed());
    const running = runEmulator(['--port', '0'], { stdout, stderr: () => {}, env: {}, connect: () => Promise.reject(new Error('unused')), client: (c) => c.client }, stop.signal);
    await Promise.race([listening, running]); // its first line, not a poll with a 1 s bound
    const url = /listening on (\S+)/.exec(out[0]!)?.[1];
    expect(out.join('\n')).toContain(`API key: ${DEV_API_KEY}`);
    const config = readCoreConfig({ PICTOR_BASE_URL: url, PICTOR_API_KEY: DEV_API_KEY });
    const connection = await connect(config, silentLogger());
    expect((await connection.client.generate({ prompt: 'x', quality: 'low' })).data).toHaveLength(1);
    await connection.close();
    stop.abort();
    await expect(running).resolves.toBe(0);
  });
});
