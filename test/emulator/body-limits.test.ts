import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { AUTH, edit, editForm, errorOf, generate, solidImage } from './emulator-helpers.js';

const emulator = createEmulator();
afterAll(() => emulator.close());

const MiB = 1024 * 1024;

/** An endless body that counts the bytes the emulator pulled from it. */
function endlessBody(chunk: Uint8Array = new Uint8Array(64 * 1024)) {
  const counter = { pulled: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      counter.pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { body, counter };
}

/** A multipart body that streams `prefix` then endless filler (an image part that never ends). */
function endlessImagePart(boundary: string) {
  const head = new TextEncoder().encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nx\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="image[]"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`,
  );
  let sentHead = false;
  const counter = { pulled: 0 };
  const filler = new Uint8Array(256 * 1024);
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = sentHead ? filler : head;
      sentHead = true;
      counter.pulled += next.byteLength;
      controller.enqueue(next);
    },
  });
  return { body, counter };
}

/** A body that sends `head`, then breaks (as an upload whose connection dropped halfway). */
function bodyBreakingAfter(head: string): ReadableStream<Uint8Array> {
  let sent = false;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(new Error('the upload broke off'));
      sent = true;
      controller.enqueue(new TextEncoder().encode(head));
    },
  });
}

/** Fetch's error's cause's code, or the answer's status when fetch did not fail. */
async function failureOf(answer: Promise<Response>): Promise<unknown> {
  return answer.then(
    (response) => response.status,
    (error: unknown) => ({ name: (error as Error).name, code: ((error as Error).cause as { code?: unknown } | undefined)?.code }),
  );
}

function post(target: Emulator, path: string, headers: Record<string, string>, body: ReadableStream<Uint8Array>): Promise<Response> {
  return target.fetch(path, { method: 'POST', headers, body, duplex: 'half' } as RequestInit);
}

/** Sends raw bytes over a socket and resolves with the first chunk of the answer (its status line and headers). */
function rawExchange(url: string, head: string, bodyBytes = 0): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(head);
      if (bodyBytes > 0) socket.write(Buffer.alloc(bodyBytes));
    });
    let answer = '';
    socket.on('data', (data) => {
      answer += data.toString('latin1');
      if (answer.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

describe('the emulator reads request bodies only as far as it must', () => {
  it('refuses a huge unauthenticated body without reading it', async () => {
    const { body, counter } = endlessBody();
    const response = await post(emulator, '/v1/images/edits', { 'content-type': 'multipart/form-data; boundary=x' }, body);
    expect(response.status).toBe(401);
    expect(counter.pulled).toBeLessThan(MiB);
  });

  it('answers a huge unauthenticated upload over HTTP before the body has been sent', async () => {
    const server = await emulator.listen();
    const head =
      'POST /v1/images/edits HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=x\r\n' +
      `Content-Length: ${800 * MiB}\r\n\r\n`;
    const answer = await rawExchange(server.url, head, 64 * 1024);
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    await server.close();
  });

  it('refuses a generation whose declared length is past the limit, unread, with 413', async () => {
    const { body, counter } = endlessBody();
    const response = await post(emulator, '/v1/images/generations', { ...AUTH, 'content-type': 'application/json', 'content-length': String(10 * MiB) }, body);
    expect(response.status).toBe(413);
    expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', code: 'request_too_large' });
    expect(counter.pulled).toBeLessThan(MiB);
  });

  it('stops reading a generation body of unknown length as soon as it passes the limit', async () => {
    const { body, counter } = endlessBody();
    const response = await post(emulator, '/v1/images/generations', { ...AUTH, 'content-type': 'application/json' }, body);
    expect(response.status).toBe(413);
    expect((await errorOf(response)).code).toBe('request_too_large');
    expect(counter.pulled).toBeLessThan(MiB);
  });

  it('refuses an edit whose declared length is past the limit, unread, with 413', async () => {
    const small = createEmulator({ maxImageBytes: 1000 });
    const { body, counter } = endlessBody();
    const response = await post(small, '/v1/images/edits', { ...AUTH, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(100 * MiB) }, body);
    expect(response.status).toBe(413);
    expect((await errorOf(response)).code).toBe('request_too_large');
    expect(counter.pulled).toBeLessThan(MiB);
    await small.close();
  });

  it('stops reading an edit as soon as one image passes maxImageBytes, naming that image', async () => {
    const small = createEmulator({ maxImageBytes: 2 * MiB });
    const { body, counter } = endlessImagePart('b0undary');
    const response = await post(small, '/v1/images/edits', { ...AUTH, 'content-type': 'multipart/form-data; boundary=b0undary' }, body);
    expect(response.status).toBe(413);
    expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', param: 'image[0]', code: 'file_too_large' });
    expect(counter.pulled).toBeLessThan(4 * MiB);
    await small.close();
  });
});

describe('a request body that breaks halfway is not answered: the connection is reset', () => {
  it('a generation whose body breaks after its first bytes fails as fetch fails on a reset (ECONNRESET), not with an answer', async () => {
    const body = bodyBreakingAfter('{"prompt":"a lighthouse at d');
    const answer = post(emulator, '/v1/images/generations', { ...AUTH, 'content-type': 'application/json' }, body);
    expect(await failureOf(answer)).toEqual({ name: 'TypeError', code: 'ECONNRESET' });
  });

  it('an edit whose upload breaks inside its image fails as fetch fails on a reset (ECONNRESET), not with an answer', async () => {
    const body = bodyBreakingAfter(
      `--b0undary\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nx\r\n` +
        `--b0undary\r\nContent-Disposition: form-data; name="image[]"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG`,
    );
    const answer = post(emulator, '/v1/images/edits', { ...AUTH, 'content-type': 'multipart/form-data; boundary=b0undary' }, body);
    expect(await failureOf(answer)).toEqual({ name: 'TypeError', code: 'ECONNRESET' });
  });
});

describe('the request log', () => {
  it('keeps sizes, types and hashes of edit images but not their bytes by default', async () => {
    const png = await solidImage('#00aa55');
    const response = await edit(emulator, [{ bytes: png, name: 'a.png' }], { prompt: 'x', quality: 'low' });
    expect(response.status).toBe(200);
    const part = emulator.requests.at(-1)!.images[0]!;
    expect(part).toMatchObject({ field: 'image[]', filename: 'a.png', contentType: 'image/png', size: png.length });
    expect(part.sha256).toBe(createHash('sha256').update(png).digest('hex'));
    expect(part.bytes).toBeUndefined();
  });

  it('keeps the bytes when a test asks for them with recordImageBytes', async () => {
    const keeping = createEmulator({ recordImageBytes: true });
    const png = await solidImage('#5500aa');
    const response = await keeping.fetch('/v1/images/edits', { method: 'POST', headers: AUTH, body: editForm([{ bytes: png }], { prompt: 'x', quality: 'low' }) });
    expect(response.status).toBe(200);
    expect(Buffer.from(keeping.requests.at(-1)!.images[0]!.bytes!).equals(png)).toBe(true);
    await keeping.close();
  });
});

describe('malformed requests get 400, not a retryable 500', () => {
  it.each(['[::1', 'exa mple.com', 'a/b'])('answers 400 to the Host header %j', async (host) => {
    const server = await emulator.listen();
    const answer = await rawExchange(server.url, `GET /v1/images/generations HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    await server.close();
  });

  it('answers 400 to a generation whose content type is not JSON', async () => {
    const response = await generate(emulator, { prompt: 'x', quality: 'low' }, { headers: { 'content-type': 'text/plain' } });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_content_type' });
  });

  it('still takes JSON with a charset', async () => {
    const response = await generate(emulator, { prompt: 'x', quality: 'low' }, { headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(response.status).toBe(200);
  });
});
