import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createEmulator, type EmulatorServer } from '../../src/emulator/index.js';
import { edit, errorOf, generate, parseSse, solidImage } from './emulator-helpers.js';

const emulator = createEmulator();
let server: EmulatorServer;
const http = { fetch: globalThis.fetch };
const over = () => ({ base: server.url });

beforeAll(async () => {
  server = await emulator.listen({ port: 0 });
});
afterAll(() => emulator.close());
beforeEach(() => emulator.clearFaults());

const jsonBody = { prompt: 'a stormy sea', quality: 'low' };
const streamBody = { ...jsonBody, stream: true, partial_images: 2 };

/** Reads a body chunk by chunk to its end; returns the text that arrived and the error that ended it, if any. */
async function drain(response: Response, onText?: (text: string) => void): Promise<{ text: string; error: unknown }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const outcome = await reader.read().catch((error: unknown) => ({ error }));
    if ('error' in outcome) return { text, error: outcome.error };
    if (outcome.done) return { text, error: undefined };
    text += decoder.decode(outcome.value, { stream: true });
    onText?.(text);
  }
}

/**
 * Resolves once the event loop has turned: by then a drain has read every chunk an in-process emulator makes without
 * waiting (its body's pulls are promise jobs, all run before the next turn), so what it has not read was held back.
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('injected faults over a real port', () => {
  it('server_error answers 500 in the service error shape', async () => {
    emulator.injectFault('server_error');
    const response = await generate(http, jsonBody, over());
    expect(response.status).toBe(500);
    expect(await errorOf(response)).toMatchObject({ type: 'server_error', code: 'server_error' });
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect((await generate(http, jsonBody, over())).status).toBe(200);
  });

  it('service_unavailable answers 503 with retry-after', async () => {
    emulator.injectFault('service_unavailable', { retryAfterMs: 250 });
    const response = await generate(http, jsonBody, over());
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('retry-after-ms')).toBe('250');
    expect((await errorOf(response)).type).toBe('server_error');
  });

  it('rate_limited answers 429 rate_limit_exceeded with retry-after-ms', async () => {
    emulator.injectFault('rate_limited', { retryAfterMs: 1500 });
    const response = await generate(http, jsonBody, over());
    expect(response.status).toBe(429);
    expect(await errorOf(response)).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    expect(response.headers.get('retry-after-ms')).toBe('1500');
    expect(response.headers.get('retry-after')).toBe('2');
  });

  it('html_error answers 502 with an HTML page, as a proxy would', async () => {
    emulator.injectFault('html_error');
    const response = await generate(http, jsonBody, over());
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toContain('<h1>502 Bad Gateway</h1>');
  });

  it('reset_before_response destroys the connection before any byte: fetch rejects', async () => {
    emulator.injectFault('reset_before_response');
    await expect(generate(http, jsonBody, over())).rejects.toThrow(TypeError);
    expect(emulator.requests.at(-1)).toMatchObject({ fault: 'reset_before_response', status: 0 });
    expect((await generate(http, jsonBody, over())).status).toBe(200);
  });

  it('reset_mid_stream sends the first event, then the connection breaks', async () => {
    emulator.injectFault('reset_mid_stream');
    const response = await generate(http, streamBody, over());
    expect(response.status).toBe(200);
    const { text, error } = await drain(response);
    expect(error).toBeInstanceOf(TypeError);
    const events = parseSse(text);
    expect(events).toHaveLength(1);
    expect(events[0]!.event).toBe('image_generation.partial_image');
    expect(() => JSON.parse(events[0]!.data)).not.toThrow();
  });

  it('reset_mid_stream on a non-streamed request breaks the JSON body halfway', async () => {
    emulator.injectFault('reset_mid_stream');
    const response = await generate(http, jsonBody, over());
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it('malformed_event sends a first event whose data is not JSON, then the rest of the stream', async () => {
    emulator.injectFault('malformed_event');
    const events = parseSse(await (await generate(http, streamBody, over())).text());
    expect(events.map((e) => e.event)).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    expect(() => JSON.parse(events[0]!.data)).toThrow();
    expect(JSON.parse(events[2]!.data).type).toBe('image_generation.completed');
  });

  it('corrupt_partials sends partials whose images no decoder reads, and whole completed images', async () => {
    emulator.injectFault('corrupt_partials');
    const events = parseSse(await (await generate(http, streamBody, over())).text());
    expect(events.map((e) => e.event)).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    const images = events.map((e) => Buffer.from(JSON.parse(e.data).b64_json, 'base64'));
    for (const partial of images.slice(0, 2)) await expect(sharp(partial).stats()).rejects.toThrow();
    expect((await sharp(images[2]!).metadata()).format).toBe('png');
    // A non-streamed answer has no partials: it comes whole.
    emulator.injectFault('corrupt_partials');
    const json = (await (await generate(http, jsonBody, over())).json()) as { data: { b64_json: string }[] };
    expect((await sharp(Buffer.from(json.data[0]!.b64_json, 'base64')).metadata()).format).toBe('png');
  });

  it('stream_error_event sends an error event with the service error shape mid-stream, and no result', async () => {
    emulator.injectFault('stream_error_event');
    const events = parseSse(await (await generate(http, streamBody, over())).text());
    expect(events.map((e) => e.event)).toEqual(['image_generation.partial_image', 'error']);
    const data = JSON.parse(events[1]!.data);
    expect(data.error).toMatchObject({ type: 'server_error', code: 'server_error' });
    expect(typeof data.error.message).toBe('string');
  });

  it('stalled_stream sends headers and one partial, then nothing until the server closes', async () => {
    const own = createEmulator();
    const ownServer = await own.listen({ port: 0 });
    own.injectFault('stalled_stream');
    const response = await generate(http, streamBody, { base: ownServer.url });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    const firstText = new TextDecoder().decode(first.value);
    expect(parseSse(firstText).map((e) => e.event)).toEqual(['image_generation.partial_image']);
    // Nothing more is sent: the stream stays open with one partial out, and the read waiting on it ends only when the
    // server closes, with a broken connection (data sent meanwhile would have ended it first).
    const next = reader.read();
    await nextTurn();
    expect(own.stats()).toMatchObject({ openStreams: 1, partialImagesSent: 1, imagesGenerated: 0 });
    await ownServer.close();
    await expect(next).rejects.toThrow(TypeError);
    expect(own.stats()).toMatchObject({ openStreams: 0, partialImagesSent: 1, imagesGenerated: 0 });
    await own.close();
  });

  it('applies to the matching route only, count times, in the order injected', async () => {
    emulator.injectFault('server_error', { route: 'edits', count: 2 });
    emulator.injectFault('html_error');
    const png = await solidImage('#225577');
    expect((await generate(http, jsonBody, over())).status).toBe(502);
    expect((await edit(http, [{ bytes: png }], { prompt: 'x', quality: 'low' }, over())).status).toBe(500);
    expect((await edit(http, [{ bytes: png }], { prompt: 'x', quality: 'low' }, over())).status).toBe(500);
    expect((await edit(http, [{ bytes: png }], { prompt: 'x', quality: 'low' }, over())).status).toBe(200);
    expect(emulator.pendingFaults()).toEqual([]);
  });

  it('is not used up by requests that fail auth or validation', async () => {
    emulator.injectFault('server_error');
    expect((await generate(http, jsonBody, { ...over(), headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await generate(http, { ...jsonBody, n: 99 }, over())).status).toBe(400);
    expect((await generate(http, jsonBody, over())).status).toBe(500);
  });

  it('clearFaults drops every pending fault', async () => {
    emulator.injectFault('server_error', { count: 5 });
    expect(emulator.pendingFaults()).toHaveLength(1);
    emulator.clearFaults();
    expect((await generate(http, jsonBody, over())).status).toBe(200);
  });

  it('unknown_partial_images answers 400 naming partial_images, only to requests that send it', async () => {
    emulator.injectFault('unknown_partial_images', { count: 2 });
    expect((await generate(http, jsonBody, over())).status).toBe(200);
    const refused = await generate(http, streamBody, over());
    expect(refused.status).toBe(400);
    expect(await errorOf(refused)).toMatchObject({ type: 'invalid_request_error', param: 'partial_images', code: 'unknown_parameter' });
    expect((await generate(http, { ...jsonBody, stream: true }, over())).status).toBe(200);
    expect(emulator.pendingFaults()).toMatchObject([{ fault: 'unknown_partial_images', remaining: 1 }]);
  });

  it('refuses an unknown fault name', () => {
    expect(() => emulator.injectFault('meteor_strike' as never)).toThrow(/unknown emulator fault/);
  });
});

describe('injected faults in process', () => {
  it('reset_before_response makes fetch reject with a TypeError caused by ECONNRESET', async () => {
    const local = createEmulator();
    local.injectFault('reset_before_response');
    const error = await generate(local, jsonBody).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('fetch failed');
    expect(((error as TypeError).cause as { code?: string }).code).toBe('ECONNRESET');
    await local.close();
  });

  it('reset_mid_stream errors the body stream after the first event', async () => {
    const local = createEmulator();
    local.injectFault('reset_mid_stream');
    const { text, error } = await drain(await generate(local, streamBody));
    expect(parseSse(text)).toHaveLength(1);
    expect(error).toBeInstanceOf(TypeError);
    await local.close();
  });

  it('emulator.close() ends a stalled stream', async () => {
    const local = createEmulator();
    local.injectFault('stalled_stream');
    const response = await generate(local, streamBody);
    let stalled!: () => void;
    const firstEvent = new Promise<void>((resolve) => (stalled = resolve));
    const pending = drain(response, (text) => parseSse(text).length > 0 && stalled());
    await firstEvent;
    await local.close();
    const { text, error } = await pending;
    expect(parseSse(text)).toHaveLength(1);
    expect(error).toBeInstanceOf(TypeError);
  });

  it('stalled_stream with no partials sends headers only, then nothing until the emulator closes', async () => {
    const local = createEmulator();
    local.injectFault('stalled_stream');
    const response = await generate(local, { ...streamBody, partial_images: 0 });
    const pending = drain(response);
    await nextTurn();
    expect(local.stats()).toMatchObject({ openStreams: 1, imagesGenerated: 0 });
    await local.close();
    const { text, error } = await pending;
    expect(text).toBe('');
    expect(error).toBeInstanceOf(TypeError);
  });

  it('stream faults on a non-streamed request break the JSON answer instead', async () => {
    const local = createEmulator();
    local.injectFault('malformed_event');
    const truncated = await (await generate(local, jsonBody)).text();
    expect(() => JSON.parse(truncated)).toThrow();
    local.injectFault('stream_error_event');
    expect((await generate(local, jsonBody)).status).toBe(500);
    local.injectFault('stalled_stream');
    let halfIn!: () => void;
    const firstChunk = new Promise<void>((resolve) => (halfIn = resolve));
    const pending = drain(await generate(local, jsonBody), () => halfIn());
    await firstChunk;
    await nextTurn();
    await local.close();
    const { text, error } = await pending;
    expect(text.startsWith('{"created":')).toBe(true);
    expect(() => JSON.parse(text)).toThrow();
    expect(error).toBeInstanceOf(TypeError);
  });

  it('counts applied faults in the stats', async () => {
    const local = createEmulator();
    local.injectFault('server_error', { count: 2 });
    await generate(local, jsonBody);
    await generate(local, jsonBody);
    await generate(local, jsonBody);
    expect(local.stats()).toMatchObject({ faultsApplied: 2, byStatus: { 500: 2, 200: 1 } });
    await local.close();
  });
});
