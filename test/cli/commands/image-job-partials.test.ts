import { createServer, type Server } from 'node:http';
import { readdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeImage } from '../../helpers/images.js';
import { run, tempDir } from '../run-cli.js';

/** A service whose stream names each partial's image (`image_index`), sending image 2's preview before image 1's. */
let service: { server: Server; url: string };
const previews: Record<number, Uint8Array> = {};
beforeAll(async () => {
  previews[0] = await makeImage('png', 16, 16, { r: 255, g: 0, b: 0 });
  previews[1] = await makeImage('png', 16, 16, { r: 0, g: 0, b: 255 });
  const final = Buffer.from(await makeImage('png')).toString('base64');
  const labels = { size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', created_at: 1 };
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...labels, ...data })}\n\n`;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(405).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const image of [1, 0]) {
        res.write(event('image_generation.partial_image', { partial_image_index: 0, image_index: image, b64_json: Buffer.from(previews[image]!).toString('base64') }));
      }
      res.write(event('image_generation.completed', { b64_json: final }));
      res.end(event('image_generation.completed', { b64_json: final }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  service = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
});
afterAll(() => new Promise<void>((resolve) => service.server.close(() => resolve())));

describe('pictor generate --stream writes each partial under the image the stream says it belongs to', () => {
  it('files and labels a preview of image 2 that comes before image 1 is done as image 2’s', async () => {
    const out = await tempDir();
    const args = ['generate', '--prompt', 'two boats', '--n', '2', '--quality', 'low', '--stream', '--partial-images', '1', '--out', `${out}/`];
    const { code, stderr } = await run(args, { PICTOR_BASE_URL: service.url, PICTOR_API_KEY: 'sk-test', PICTOR_MAX_RETRIES: '0' });

    expect(code).toBe(0);
    const partials = (await readdir(out)).filter((f) => f.includes('.partial-')).sort();
    expect(partials).toHaveLength(2);
    expect(partials.map((f) => f.replace(/^.*-(\d)\.partial-1\.png$/, '$1'))).toEqual(['1', '2']);
    expect(await readFile(join(out, partials[1]!))).toEqual(Buffer.from(previews[1]!));
    expect(await readFile(join(out, partials[0]!))).toEqual(Buffer.from(previews[0]!));
    expect(stderr).toContain('partial 1/1 of image 2/2 →');
    expect(stderr).toContain('partial 1/1 of image 1/2 →');
  });
});
