/**
 * Child-process entry: an HTTP server on 127.0.0.1 (port 0) that answers
 * `POST /<size>mb/v1/images/generations` with a pre-built SSE body holding ONE
 * `image_generation.completed` event whose `b64_json` is <size> MiB of base64
 * (argv[2]: comma-separated sizes, e.g. "15,30"): a real PNG, padded after its
 * end with random bytes to that size, so the client's image check (base64 that
 * decodes to an image of the asked format) passes and decodes every byte, as it
 * does for an image the service makes. The bodies are built before
 * listening and written whole, so serving costs the client nothing to wait for
 * but the bytes. Prints `{"url": …}` once listening; stops when stdin closes.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { EVENT_TYPES, PATHS } from '../../src/spec/index.js';
import { serveUntilParentLeaves } from './child-server.js';

const sizes = (process.argv[2] ?? '15,30').split(',').map(Number);
const bodies = new Map<string, Buffer>();
/** A small real PNG, made once: the start of every image served. */
const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 96, g: 128, b: 160 } } }).png().toBuffer();
for (const size of sizes) {
  if (!(size > 0)) throw new RangeError(`sizes must be positive numbers of MiB, got ${process.argv[2]}`);
  bodies.set(`/${size}mb${PATHS.generations}`, completedEvent(Math.round(size * 1024 * 1024)));
}

const server = createServer((req, res) => {
  const body = req.method === 'POST' ? bodies.get(req.url ?? '') : undefined;
  req.resume();
  req.on('end', () => {
    if (!body) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"unknown route","type":"invalid_request_error","param":null,"code":null}}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'content-length': String(body.length), 'x-request-id': 'req_bench' });
    res.end(body);
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;
serveUntilParentLeaves(`http://127.0.0.1:${port}`, async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** One completed event, framed as the service frames it, with `b64Chars` characters of base64 (a multiple of 4, unpadded). */
function completedEvent(b64Chars: number): Buffer {
  const bytes = ((b64Chars - (b64Chars % 4)) / 4) * 3;
  if (bytes < png.length) throw new RangeError(`an event of ${b64Chars} base64 characters cannot hold the ${png.length}-byte PNG`);
  const b64 = Buffer.concat([png, randomBytes(bytes - png.length)]).toString('base64');
  const data = {
    type: EVENT_TYPES.generationCompleted,
    b64_json: b64,
    created_at: Math.floor(Date.now() / 1000),
    size: '1536x1024',
    quality: 'high',
    background: 'opaque',
    output_format: 'png',
    usage: { total_tokens: 6240, input_tokens: 32, output_tokens: 6208, input_tokens_details: { text_tokens: 32, image_tokens: 0 } },
  };
  return Buffer.from(`event: ${EVENT_TYPES.generationCompleted}\ndata: ${JSON.stringify(data)}\n\n`);
}
