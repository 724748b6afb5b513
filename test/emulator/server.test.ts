import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { describe, expect, it, vi } from 'vitest';
import { createEmulator } from '../../src/emulator/index.js';
import { AUTH, edit, errorOf, generate, metadataOf, parseSse, readEvents, solidImage } from './emulator-helpers.js';

const http = { fetch: globalThis.fetch };
const body = { prompt: 'a windmill in the rain', quality: 'low' };

describe('listening on a port', () => {
  it('serves on a free loopback port and gives its base URL without /v1', async () => {
    const emulator = createEmulator();
    const server = await emulator.listen({ port: 0 });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const response = await generate(http, body, { base: server.url });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('content-length')).not.toBeNull();
    expect((await metadataOf(((await response.json()) as { data: { b64_json: string }[] }).data[0]!.b64_json)).format).toBe('png');
    await emulator.close();
  });

  it('answers the same errors over HTTP as in process', async () => {
    const emulator = createEmulator();
    const server = await emulator.listen();
    const missingKey = await fetch(`${server.url}/v1/images/generations`, { method: 'POST', body: '{}' });
    expect(missingKey.status).toBe(401);
    const invalid = await generate(http, { ...body, size: '1x1' }, { base: server.url });
    expect(await errorOf(invalid)).toMatchObject({ param: 'size', code: 'invalid_value' });
    const unknown = await fetch(`${server.url}/v2/whatever`, { method: 'POST', headers: AUTH });
    expect(unknown.status).toBe(404);
    const wrongMethod = await fetch(`${server.url}/v1/images/edits`, { headers: AUTH });
    expect(wrongMethod.status).toBe(405);
    await emulator.close();
  });

  it('takes multipart edits over HTTP and records the image parts', async () => {
    const emulator = createEmulator();
    const server = await emulator.listen();
    const png = await solidImage('#aa5500');
    const response = await edit(http, [{ bytes: png, name: 'photo.png' }], { prompt: 'autumn', quality: 'low', n: '2' }, { base: server.url });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: unknown[] }).data).toHaveLength(2);
    const record = emulator.requests.at(-1)!;
    expect(record).toMatchObject({ route: 'edits', authorized: true, status: 200, stream: false });
    expect(record.fields).toMatchObject({ prompt: 'autumn', quality: 'low', n: 2 });
    expect(record.parsed).toMatchObject({ n: 2, size: '1024x1024' });
    expect(record.images).toHaveLength(1);
    expect(record.images[0]).toMatchObject({ field: 'image[]', filename: 'photo.png', contentType: 'image/png' });
    expect(record.images[0]).toMatchObject({ size: png.length, sha256: createHash('sha256').update(png).digest('hex') });
    await emulator.close();
  });

  it('streams events to the socket as they are produced, without buffering the body', async () => {
    // A stream that stalls after its first partial never ends: that partial reaches the client only if nothing holds
    // the body back until its end. No clock is read, so a busy machine cannot bunch the events up into a failure.
    const emulator = createEmulator({ latencyMs: 90 });
    emulator.injectFault('stalled_stream');
    const server = await emulator.listen();
    const response = await generate(http, { ...body, stream: true, partial_images: 2 }, { base: server.url });
    const first = await response.body!.getReader().read();
    expect(parseSse(new TextDecoder().decode(first.value))[0]!.event).toBe('image_generation.partial_image');
    expect(emulator.stats().openStreams).toBe(1);
    await emulator.close();
  });

  it('stops producing when the client goes away mid-stream', async () => {
    const emulator = createEmulator({ latencyMs: 3000 });
    const server = await emulator.listen();
    const controller = new AbortController();
    const response = await generate(http, { ...body, stream: true, partial_images: 3 }, { base: server.url, signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    expect(emulator.stats().openStreams).toBe(1);
    controller.abort();
    // The server sees the socket close on its own time: on a busy machine that can take past a second or two.
    await vi.waitFor(() => expect(emulator.stats().openStreams).toBe(0), { timeout: 15_000, interval: 10 });
    expect(emulator.stats().imagesGenerated).toBe(0);
    await emulator.close();
  });

  it('sends an event of about 30 MB in one piece', async () => {
    const emulator = createEmulator({ padImageBytes: 22_500_000 });
    const server = await emulator.listen();
    const response = await generate(http, { ...body, stream: true, partial_images: 1 }, { base: server.url });
    const events = await readEvents(response);
    expect(events.map((e) => e.event)).toEqual(['image_generation.partial_image', 'image_generation.completed']);
    expect((events[1]!.json.b64_json as string).length).toBeGreaterThanOrEqual(30_000_000);
    await emulator.close();
  });

  it('closes promptly even with idle keep-alive connections', async () => {
    const emulator = createEmulator();
    const server = await emulator.listen();
    const agentResponse = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${server.url}/v1/images/generations`,
        { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json', connection: 'keep-alive' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
    expect(agentResponse).toBe(200);
    const started = performance.now();
    await server.close();
    expect(performance.now() - started).toBeLessThan(1000);
    await expect(fetch(`${server.url}/v1/images/generations`, { method: 'POST' })).rejects.toThrow();
    await emulator.close();
  });

  it('emulator.close() closes every server it started', async () => {
    const emulator = createEmulator();
    const a = await emulator.listen();
    const b = await emulator.listen();
    await emulator.close();
    await expect(fetch(`${a.url}/v1/images/generations`, { method: 'POST' })).rejects.toThrow();
    await expect(fetch(`${b.url}/v1/images/generations`, { method: 'POST' })).rejects.toThrow();
  });

  it('fails to listen on a port that is taken', async () => {
    const emulator = createEmulator();
    const first = await emulator.listen();
    await expect(emulator.listen({ port: first.port })).rejects.toThrow(/EADDRINUSE/);
    await emulator.close();
  });
});

describe('observability', () => {
  it('records every request with its route, auth, fields and answer, and counts them', async () => {
    const emulator = createEmulator({ imagesPerMinute: 2 });
    await generate(emulator, { ...body, n: 2 });
    await generate(emulator, body);
    await generate(emulator, body, { headers: { authorization: 'Bearer wrong' } });
    await emulator.fetch('/nowhere', { method: 'POST' });
    expect(emulator.requests.map((r) => [r.route, r.authorized, r.status, r.error?.code ?? null])).toEqual([
      ['generations', true, 200, null],
      ['generations', true, 429, 'rate_limit_exceeded'],
      ['generations', false, 401, 'invalid_api_key'],
      [undefined, false, 404, 'unknown_url'],
    ]);
    expect(emulator.requests[0]!.fields).toEqual({ ...body, n: 2 });
    expect(emulator.requests[0]!.id).toMatch(/^req_/);
    expect(emulator.stats()).toMatchObject({
      requests: 4,
      imagesGenerated: 2,
      rateLimited: 1,
      byStatus: { 200: 1, 429: 1, 401: 1, 404: 1 },
    });
    emulator.reset();
    expect(emulator.requests).toHaveLength(0);
    expect(emulator.stats().requests).toBe(0);
    expect((await generate(emulator, { ...body, n: 2 })).status).toBe(200);
    await emulator.close();
  });

  it('keeps only the last maxRecordedRequests requests', async () => {
    const emulator = createEmulator({ maxRecordedRequests: 2 });
    for (let i = 0; i < 4; i++) await emulator.fetch('/nowhere', { method: 'POST' });
    expect(emulator.requests).toHaveLength(2);
    expect(emulator.stats().requests).toBe(4);
    await emulator.close();
  });

  it('exposes its settings and validates changes', () => {
    const emulator = createEmulator({ latencyMs: 5 });
    expect(emulator.settings).toMatchObject({ latencyMs: 5, defaultPartialImages: 2, moderationMarker: 'forbidden', quotaExhausted: false });
    expect(() => emulator.configure({ defaultPartialImages: 7 })).toThrow(RangeError);
    expect(() => emulator.configure({ latencyMs: -1 })).toThrow(RangeError);
    expect(emulator.settings.latencyMs).toBe(5);
  });
});
