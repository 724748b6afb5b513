import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeImage } from '../../helpers/images.js';
import { head, misbehavingServer, sse, type MisbehavingServer } from '../../client/misbehaving-server.js';
import { run, spawnCli, tempDir } from '../run-cli.js';

/** `pictor generate` against a service that answers a PNG request with images of other formats. */

const png = Buffer.from(await makeImage('png', 8, 8));
const jpeg = Buffer.from(await makeImage('jpeg', 8, 8));

let server: MisbehavingServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function completed(image: Buffer) {
  const event = { type: 'image_generation.completed', b64_json: image.toString('base64'), created_at: 1, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png' };
  return sse('image_generation.completed', { ...event, usage: { total_tokens: 3, input_tokens: 1, output_tokens: 2 } });
}

/** A service that sends `images` (plainly, or as a stream when asked to stream), whatever format was asked for. */
async function serviceSending(images: Buffer[]): Promise<MisbehavingServer> {
  server = await misbehavingServer(async (req) => {
    const body = (await req.body()).toString();
    if (req.method !== 'POST') return void req.socket.end(head(404, { 'content-type': 'application/json' }, '{}'));
    if (body.includes('"stream":true')) {
      const events = images.map(completed).join('');
      return void req.socket.end(head(200, { 'content-type': 'text/event-stream', 'content-length': String(Buffer.byteLength(events)) }, events));
    }
    const json = JSON.stringify({ created: 1, data: images.map((image) => ({ b64_json: image.toString('base64') })), output_format: 'png', usage: { total_tokens: 3, input_tokens: 1, output_tokens: 2 } });
    req.socket.end(head(200, { 'content-type': 'application/json' }, json));
  });
  return server;
}

async function generate(s: MisbehavingServer, args: string[]) {
  return run(['generate', '--prompt', 'a fox', '--quality', 'low', '--format', 'png', ...args], { PICTOR_BASE_URL: s.url, PICTOR_API_KEY: 'sk-test-format', PICTOR_MAX_RETRIES: '0' });
}

describe('pictor generate names each image for its real format', () => {
  it.each([['plain', []], ['streamed', ['--stream', '--partial-images', '0']]])('writes a JPEG sent for a PNG request as .jpg, and a PNG beside it as .png (%s)', async (_how, extra) => {
    const s = await serviceSending([png, jpeg]);
    const out = await tempDir();

    const { code, stdout } = await generate(s, ['--n', '2', '--out', `${out}/`, ...extra]);

    expect(code).toBe(0);
    const files = (await readdir(out)).sort();
    expect(files).toEqual([expect.stringMatching(/^a-fox-.*-1\.png$/), expect.stringMatching(/^a-fox-.*-2\.jpg$/)]);
    expect(await readFile(join(out, files[0]!))).toEqual(png);
    expect(await readFile(join(out, files[1]!))).toEqual(jpeg);
    expect(stdout).toContain('png, jpeg');
  });

  it.each([['plain', []], ['streamed', ['--stream', '--partial-images', '0']]])('with --json, gives each file its own format in `formats`, in the order of `files`, when an answer mixes them (%s)', async (_how, extra) => {
    const s = await serviceSending([jpeg, png]);
    const out = await tempDir();

    const { code, stdout } = await generate(s, ['--n', '2', '--json', '--out', `${out}/`, ...extra]);

    expect(code).toBe(0);
    const line = JSON.parse(stdout) as { files: string[]; formats: string[]; output_format: string };
    expect(line.files).toEqual([expect.stringMatching(/-1\.jpg$/), expect.stringMatching(/-2\.png$/)]);
    expect(line.formats).toEqual(['jpeg', 'png']);
    expect(await readFile(line.files[0]!)).toEqual(jpeg);
    expect(await readFile(line.files[1]!)).toEqual(png);
  });

  it('gives a JPEG the .jpg extension when --out names a file without one', async () => {
    const s = await serviceSending([jpeg]);
    const out = await tempDir();

    const { code } = await generate(s, ['--out', join(out, 'fox')]);

    expect(code).toBe(0);
    expect(await readdir(out)).toEqual(['fox.jpg']);
  });

  it('keeps the file name the user chose (--out fox.png) for a JPEG, and says on stderr that it is a JPEG', async () => {
    const s = await serviceSending([jpeg]);
    const out = await tempDir();

    const { code, stderr } = await generate(s, ['--out', join(out, 'fox.png')]);

    expect(code).toBe(0);
    expect(await readdir(out)).toEqual(['fox.png']);
    expect(await readFile(join(out, 'fox.png'))).toEqual(jpeg);
    expect(stderr).toContain(`image 1 is a JPEG, not the PNG its name says`);
    expect(stderr).toContain(join(out, 'fox.png'));
  });

  it('never replaces an existing .jpg without --overwrite when a JPEG comes for a PNG request: says which file was in the way and where the image went, and exits 1', async () => {
    const s = await serviceSending([jpeg]);
    const out = await tempDir();
    await writeFile(join(out, 'fox.jpg'), 'an older picture');

    // In its own process, as a user runs it: what it prints and its exit code.
    const { code, stdout, stderr } = await spawnCli(['generate', '--prompt', 'a fox', '--quality', 'low', '--format', 'png', '--out', join(out, 'fox'), '--json'], {
      env: { PICTOR_BASE_URL: s.url, PICTOR_API_KEY: 'sk-test-format', PICTOR_MAX_RETRIES: '0' },
    });

    expect(code).toBe(1);
    expect(await readFile(join(out, 'fox.jpg'), 'utf8')).toBe('an older picture');
    const line = JSON.parse(stdout) as { ok: boolean; code: string; files: string[]; formats: string[] };
    expect(line).toMatchObject({ ok: false, code: 'output_not_written', formats: ['jpeg'] });
    expect(line.files).toHaveLength(1);
    expect(await readFile(line.files[0]!)).toEqual(jpeg);
    expect(stderr).toContain(`image 1 is a JPEG (the service sent another format than asked for), and ${join(out, 'fox.jpg')} already exists: not replaced without --overwrite; saved the image to ${line.files[0]} instead.`);
  });

  it('replaces an existing .jpg with --overwrite when a JPEG comes for a PNG request', async () => {
    const s = await serviceSending([jpeg]);
    const out = await tempDir();
    await writeFile(join(out, 'fox.jpg'), 'an older picture');

    const { code } = await generate(s, ['--out', join(out, 'fox'), '--overwrite']);

    expect(code).toBe(0);
    expect(await readFile(join(out, 'fox.jpg'))).toEqual(jpeg);
  });
});
