import busboy from 'busboy';
import { Agent } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { encodeBody, send } from '../../src/client/transport.js';
import { parseEditRequest, parseGenerationRequest } from '../../src/spec/validate.js';
import { makeImage } from '../helpers/images.js';
import { head, misbehavingServer, type MisbehavingServer } from './misbehaving-server.js';

/** Reads a multipart body the way a server does (busboy, as the emulator). */
function parse(body: Buffer, contentType: string): Promise<{ fields: Record<string, string>; files: { name: string; filename: string; mimeType: string; bytes: Buffer }[] }> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const files: { name: string; filename: string; mimeType: string; bytes: Buffer }[] = [];
    const parser = busboy({ headers: { 'content-type': contentType } });
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => files.push({ name, filename: info.filename ?? '', mimeType: info.mimeType, bytes: Buffer.concat(chunks) }));
    });
    parser.on('close', () => resolve({ fields, files }));
    parser.on('error', reject);
    parser.end(body);
  });
}

describe('encodeBody', () => {
  it('sends a generation as JSON with its length', () => {
    const encoded = encodeBody(parseGenerationRequest({ prompt: 'a fox' }));
    expect(encoded.contentType).toBe('application/json');
    expect(encoded.contentLength).toBe(Buffer.byteLength(encoded.body as string));
  });

  it('sends an edit as multipart whose image parts are the caller’s own buffers (no copy), each let go once handed on, with the exact length', async () => {
    const png = Buffer.from(await makeImage('png'));
    const jpeg = Buffer.from(await makeImage('jpeg'));
    const request = parseEditRequest({ prompt: 'line one\nline two', image: [{ data: png, filename: 'a "quoted"\nname.png' }, { data: jpeg }], quality: 'low' });
    const encoded = encodeBody(request);
    expect(encoded.contentType).toMatch(/^multipart\/form-data; boundary=/);
    const parts = [...(encoded.body as Iterable<Uint8Array>)];
    expect(parts.filter((part) => part === png || part === jpeg)).toHaveLength(2);
    // A second reading gets nothing: the body held its parts only until they were handed on.
    expect([...(encoded.body as Iterable<Uint8Array>)]).toEqual([]);
    const body = Buffer.concat(parts);
    expect(body.length).toBe(encoded.contentLength);

    const { fields, files } = await parse(body, encoded.contentType);
    expect(fields).toMatchObject({ prompt: 'line one\r\nline two', quality: 'low', model: 'gpt-image-2' });
    expect(files.map((f) => [f.name, f.filename, f.mimeType])).toEqual([
      ['image[]', 'a %22quoted%22%0D%0Aname.png', 'image/png'],
      ['image[]', 'image-2.jpg', 'image/jpeg'],
    ]);
    expect(files[0]!.bytes.equals(png)).toBe(true);
    expect(files[1]!.bytes.equals(jpeg)).toBe(true);
  });
});

describe('send', () => {
  let server: MisbehavingServer | undefined;
  const dispatcher = new Agent();
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  afterAll(() => dispatcher.close());

  it('says a response has ended only once the service has sent its last byte', async () => {
    let end: () => void = () => {};
    server = await misbehavingServer(async (req) => {
      await req.body();
      req.socket.write(`${head(200, { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked' })}5\r\nfirst\r\n`);
      end = () => req.socket.write('6\r\nsecond\r\n0\r\n\r\n');
    });
    const response = await send({
      url: `${server.url}/v1/images/generations`,
      apiKey: 'sk-test',
      request: parseGenerationRequest({ prompt: 'a fox', stream: true }),
      userAgent: 'test',
      dispatcher,
      signal: new AbortController().signal,
      headersTimeoutMs: 10_000,
      idleTimeoutMs: 10_000,
    });
    const chunks = response.body[Symbol.asyncIterator]();
    expect(Buffer.from((await chunks.next()).value as Uint8Array).toString()).toBe('first');
    expect(response.ended()).toBe(false);
    end();
    let rest = '';
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) rest += Buffer.from(next.value as Uint8Array).toString();
    expect(rest).toBe('second');
    expect(response.ended()).toBe(true);
  });
});
