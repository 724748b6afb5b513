import diagnosticsChannel from 'node:diagnostics_channel';
import { getEventListeners } from 'node:events';
import { Pool, type Dispatcher } from 'undici';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { answerByteBound, EVENT_BYTE_BOUND } from '../../src/client/answer-bound.js';
import { MAX_ERROR_BODY_BYTES } from '../../src/client/PictorClient.js';
import { decodeImages, imagesOfFailure, isCompletedEvent, PictorClient, type ImageStreamEvent, type PictorClientOptions, type RequestEnding, type RequestWatch } from '../../src/index.js';
import { makeImage } from '../helpers/images.js';
import { MAX_KNOWN_SECRETS, registerSecret } from '../../src/core/redact-secrets.js';
import { requestReceived, useEmulator } from '../helpers/emulator.js';
import { head, misbehavingServer, sse, type MisbehavingServer, type SeenRequest } from './misbehaving-server.js';

/**
 * The client against servers that break the rules on purpose. Each server
 * counts the requests it saw: wherever the first may have been billed, it must
 * see exactly one.
 */

const KEY = 'sk-proj-Z9y8X7w6V5u4T3s2R1q0';
let server: MisbehavingServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(onRequest: (request: SeenRequest) => void | Promise<void>): Promise<MisbehavingServer> {
  server = await misbehavingServer(onRequest);
  return server;
}

function clientOf(s: MisbehavingServer, extra: PictorClientOptions = {}): PictorClient {
  return new PictorClient({ baseURL: s.url, apiKey: KEY, maxRetries: 2, ...extra });
}

const png = (await makeImage('png', 8, 8)).slice();
const jpeg = (await makeImage('jpeg', 8, 8)).slice();
const PNG_B64 = Buffer.from(png).toString('base64');
const JPEG_B64 = Buffer.from(jpeg).toString('base64');

function resultBody(images: string[]): string {
  return JSON.stringify({ created: 1, data: images.map((b64_json) => ({ b64_json })), usage: { total_tokens: 3, input_tokens: 1, output_tokens: 2 } });
}

function completed(b64 = PNG_B64, extra: Record<string, unknown> = {}) {
  return {
    type: 'image_generation.completed',
    b64_json: b64,
    created_at: 1,
    size: '1024x1024',
    quality: 'low',
    background: 'opaque',
    output_format: 'png',
    usage: { total_tokens: 3, input_tokens: 1, output_tokens: 2 },
    ...extra,
  };
}

const SSE_HEAD = head(200, { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked' });
/** One chunk of a chunked body. */
const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

async function failureOf(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: Error & Record<string, unknown>) => error,
  );
}

describe('a request that may have reached the service is sent once', () => {
  it('does not resend after the connection is reset once the whole body was written', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.resetAndDestroy();
    });
    const error = await failureOf(clientOf(s).generate({ prompt: 'x' }));
    expect(error).toMatchObject({ code: 'stream_broken', message: expect.stringMatching(/may have been billed; not sent again|may have been billed, so it was not sent again/) });
    expect(s.requests).toBe(1);
  });

  it('does not resend when a proxy resets the connection a while after the request', async () => {
    // Reset once the client, too, has seen its whole request leave (undici's `bodySent`, when it counts it as sent):
    // it is waiting for the answer then.
    let sent!: () => void;
    const requestSent = new Promise<void>((resolve) => (sent = resolve));
    const onSent = () => sent();
    diagnosticsChannel.subscribe('undici:request:bodySent', onSent);
    onTestFinished(() => void diagnosticsChannel.unsubscribe('undici:request:bodySent', onSent));
    const s = await serve(async (req) => {
      await req.body();
      await requestSent;
      req.socket.resetAndDestroy();
    });
    const error = await failureOf(clientOf(s).generate({ prompt: 'x' }));
    expect(error).toMatchObject({ code: 'stream_broken' });
    expect(s.requests).toBe(1);
  });

  it('does not resend when the server closes the connection without answering', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end();
    });
    const error = await failureOf(clientOf(s).generate({ prompt: 'x' }));
    expect(error).toMatchObject({ code: 'stream_broken' });
    expect(s.requests).toBe(1);
  });

  it('reports a 413 sent while a 16-image upload is still being written as that answer, sent once', async () => {
    // A whole PNG followed by 2 MB of zero padding: what follows its IEND is not read, so each image passes the input check.
    const big = Buffer.concat([png, Buffer.alloc(2 * 1024 * 1024)]);
    const s = await serve((req) => {
      req.socket.write(
        head(413, { 'content-type': 'application/json', connection: 'close' }, JSON.stringify({ error: { message: 'Request entity too large', type: 'invalid_request_error', code: null, param: null } })),
      );
      req.socket.resetAndDestroy();
    });
    const image = Array.from({ length: 16 }, () => ({ data: big }));
    const error = await failureOf(clientOf(s).edit({ prompt: 'x', image }));
    expect(error).toMatchObject({ code: 'bad_request', status: 413 });
    expect(error.message).toMatch(/too large/);
    expect(s.requests).toBe(1);
  });

  it('does not resend a streamed request whose connection breaks before the first event', async () => {
    let socket: SeenRequest['socket'] | undefined;
    const s = await serve(async (req) => {
      await req.body();
      socket = req.socket;
      req.socket.write(SSE_HEAD);
    });
    // Broken once the client has the answer's head (its 200), before any event.
    const error = await failureOf(clientOf(s).generateStream({ prompt: 'x' }, { onAccepted: () => socket?.resetAndDestroy() }).finalResult());
    expect(error).toMatchObject({ code: 'stream_broken' });
    expect(s.requests).toBe(1);
  });

  it('retries a refused connection, which cannot have reached the service', async () => {
    const s = await serve(() => {});
    const url = s.url;
    await s.close();
    server = undefined;
    const retries: string[] = [];
    const client = new PictorClient({ baseURL: url, apiKey: KEY, maxRetries: 2 });
    const error = await failureOf(client.generate({ prompt: 'x' }, { onRetry: ({ error: e }) => retries.push(e.code) }));
    expect(error).toMatchObject({ code: 'connection_failed' });
    expect(retries).toEqual(['connection_failed', 'connection_failed']);
  });

  it('retries a name that does not resolve', async () => {
    const retries: string[] = [];
    const client = new PictorClient({ baseURL: 'http://pictor-test.invalid', apiKey: KEY, maxRetries: 1 });
    const error = await failureOf(client.generate({ prompt: 'x' }, { onRetry: ({ error: e }) => retries.push(e.code) }));
    expect(error).toMatchObject({ code: 'connection_failed' });
    expect(retries).toEqual(['connection_failed']);
  });

  it('says a timeout after the request was sent may be billed, and sends it once', async () => {
    // The timeout's own clock is faked, and moved on once the server has read the request: no race with a busy machine.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    let read!: () => void;
    const received = new Promise<void>((resolve) => (read = resolve));
    const s = await serve(async (req) => {
      await req.body();
      read();
    });
    const failure = failureOf(clientOf(s, { timeoutMs: 400 }).generate({ prompt: 'x' }));
    await received;
    vi.advanceTimersByTime(400);
    const error = await failure;
    expect(error).toMatchObject({ code: 'timeout', mayBeBilled: true });
    expect(error.message).toMatch(/may have been billed/);
    expect(s.requests).toBe(1);
  });
});

describe('a connection carries one request', () => {
  it('opens a fresh connection for each request although the server would keep one alive', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.write(head(200, { 'content-type': 'application/json', connection: 'keep-alive', 'keep-alive': 'timeout=60' }, resultBody([PNG_B64])));
    });
    const client = clientOf(s);
    await client.generate({ prompt: 'x' });
    await client.generate({ prompt: 'y' });
    await new PictorClient({ baseURL: s.url, apiKey: KEY }).generate({ prompt: 'z' });
    expect(s.requests).toBe(3);
    expect(s.connections).toBe(3);
    await s.requestConnectionsClosed();
  });
});

describe('a job is done when its images are in', () => {
  it('says a stream that runs out of time after it started may be billed', async () => {
    // The timeout's own clock is faked, and moved on once the first partial is in: no race with a busy machine.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    const s = await serve(async (req) => {
      await req.body();
      req.socket.write(SSE_HEAD + chunk(sse('image_generation.partial_image', { ...completed(), type: 'image_generation.partial_image', partial_image_index: 0, usage: undefined })));
    });
    let startedStreaming!: () => void;
    const firstEvent = new Promise<void>((resolve) => (startedStreaming = resolve));
    const stream = clientOf(s, { timeoutMs: 500, idleTimeoutMs: 60_000 }).generateStream({ prompt: 'x', partial_images: 1 });
    const failure = failureOf((async () => {
      for await (const _event of stream) startedStreaming();
    })());
    await firstEvent;
    vi.advanceTimersByTime(500);
    const error = await failure;
    expect(error).toMatchObject({ code: 'timeout', kind: 'total', mayBeBilled: true });
    expect(error.message).toMatch(/may have been billed/);
    expect(s.requests).toBe(1);
  });


  it('ends a stream at its last completed event although the server keeps the connection open', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.write(SSE_HEAD + chunk(sse('image_generation.completed', completed())) + chunk(sse('image_generation.completed', completed())));
    });
    const events: ImageStreamEvent[] = [];
    for await (const event of clientOf(s, { idleTimeoutMs: 60_000 }).generateStream({ prompt: 'x', n: 2 })) events.push(event);
    expect(events.filter(isCompletedEvent)).toHaveLength(2);
    await s.requestConnectionsClosed();
    expect(s.requests).toBe(1);
    expect(s.requests).toBe(1);
  });

  it('gives the final result of such a stream at once', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.write(SSE_HEAD + chunk(sse('image_generation.completed', completed())));
    });
    const result = await clientOf(s, { idleTimeoutMs: 60_000 }).generateStream({ prompt: 'x' }).finalResult();
    expect(decodeImages(result)[0]).toEqual(Buffer.from(png));
    await s.requestConnectionsClosed();
    expect(s.requests).toBe(1);
  });

  it('keeps the last image although what follows it in the same read is not JSON (the rest is not needed)', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(SSE_HEAD + chunk(sse('image_generation.completed', completed()) + sse(undefined, '{"type": "image_generation.compl')) + chunk(''));
    });
    const result = await clientOf(s).generateStream({ prompt: 'x' }).finalResult();
    expect(decodeImages(result)[0]).toEqual(Buffer.from(png));
    expect(s.requests).toBe(1);
  });

  it('ends a plain result whose body is whole although the server never ends it', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.write(head(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }) + chunk(resultBody([PNG_B64])));
    });
    const result = await clientOf(s, { idleTimeoutMs: 60_000 }).generate({ prompt: 'x' });
    expect(result.data).toHaveLength(1);
    await s.requestConnectionsClosed();
    expect(s.requests).toBe(1);
  });
});

describe('a key the server echoes back is never shown', () => {
  it.each([KEY, 'pictor-live-q7Rk2mZx9VbN4tLw'])('scrubs %s from the message, toString, stack and headers of a 401', async (key) => {
    const s = await serve(async (req) => {
      await req.body();
      const auth = req.headers.authorization ?? '';
      req.socket.end(
        head(
          401,
          { 'content-type': 'application/json', 'x-echo': auth },
          JSON.stringify({ error: { message: `Incorrect API key provided: ${key}. You passed ${auth}.`, type: 'invalid_request_error', code: 'invalid_api_key' } }),
        ),
      );
    });
    const error = await failureOf(new PictorClient({ baseURL: s.url, apiKey: key }).generate({ prompt: 'x' }));
    expect(error).toMatchObject({ code: 'authentication_failed', status: 401 });
    const everything = [error.message, String(error), error.stack, JSON.stringify(error), JSON.stringify(error.headers)].join('\n');
    expect(everything).not.toContain(key);
    expect(everything).not.toContain(key.slice(6));
    expect(error.message).toContain('[redacted]');
  });
});

describe('a key of no known shape, echoed back by the server, on a client that lives long beside many others', () => {
  it(`is still hidden after more than ${MAX_KNOWN_SECRETS} other secrets were registered since the client was made, plain or streamed`, async () => {
    // Letters and digits only: nothing but the registry knows it is a key.
    const key = 'Quiet0Owl7Lantern3Meadow5Brook';
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(401, { 'content-type': 'application/json' }, JSON.stringify({ error: { message: `Incorrect API key provided: ${key}.`, type: 'invalid_request_error' } })));
    });
    const client = new PictorClient({ baseURL: s.url, apiKey: key, maxRetries: 0 });
    // The keys of the clients made since (one per user of an n8n host, say).
    for (let i = 0; i <= MAX_KNOWN_SECRETS; i++) registerSecret(`another-users-key-${i}-0123456789`);
    for (const job of [client.generate({ prompt: 'x' }), client.generateStream({ prompt: 'x' }).finalResult()]) {
      const error = await failureOf(job);
      expect(error).toMatchObject({ code: 'authentication_failed' });
      expect([error.message, String(error), JSON.stringify(error)].join('\n')).not.toContain(key);
      expect(error.message).toContain('[redacted]');
    }
  });
});

describe('a key the server echoes back as its request id is never shown', () => {
  /** Answers every request with `status` and `body`, its x-request-id the caller's key (or `id`). */
  async function echoingId(status: number, body: string, id?: string): Promise<MisbehavingServer> {
    return serve(async (req) => {
      await req.body();
      const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      req.socket.end(head(status, { 'content-type': 'application/json', 'x-request-id': id ?? key }, body));
    });
  }
  const answers = [
    ['a 401', 401, JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } })],
    ['a 400', 400, JSON.stringify({ error: { message: 'bad size', type: 'invalid_request_error', param: 'size' } })],
    ['a 200 that is not the result', 200, JSON.stringify({ created: 1 })],
  ] as const;

  for (const key of [KEY, 'pictor-live-q7Rk2mZx9VbN4tLw']) {
    it.each(answers)(`hides ${key} in the request id of the error of %s, plain or streamed`, async (_name, status, body) => {
      const s = await echoingId(status, body);
      const client = new PictorClient({ baseURL: s.url, apiKey: key, maxRetries: 0 });
      for (const job of [client.generate({ prompt: 'x' }), client.generateStream({ prompt: 'x' }).finalResult()]) {
        const error = await failureOf(job);
        expect(error.requestId).toBe('[redacted]');
        expect([JSON.stringify(error), String(error)].join('\n')).not.toContain(key);
      }
    });

    it(`hides ${key} in the request id of a result`, async () => {
      const s = await echoingId(200, resultBody([PNG_B64]));
      const result = await new PictorClient({ baseURL: s.url, apiKey: key }).generate({ prompt: 'x' });
      expect(result.data).toHaveLength(1);
      expect(result.requestId).toBe('[redacted]');
    });
  }

  it('keeps a plain request id as the service sent it, on an error and on a result', async () => {
    const s = await echoingId(401, answers[0][2], 'req_7f3a9c0e2b');
    expect(await failureOf(clientOf(s).generate({ prompt: 'x' }))).toMatchObject({ code: 'authentication_failed', requestId: 'req_7f3a9c0e2b' });
    await s.close();
    const ok = await echoingId(200, resultBody([PNG_B64]), 'req_7f3a9c0e2b');
    expect((await clientOf(ok).generate({ prompt: 'x' })).requestId).toBe('req_7f3a9c0e2b');
  });
});

describe('an answer that is not what was asked is a bad_response, never retried', () => {
  it.each([
    ['no images', resultBody([])],
    ['fewer images than asked', resultBody([PNG_B64])],
    ['more images than asked', resultBody([PNG_B64, PNG_B64, PNG_B64])],
    ['something that is not base64', resultBody(['not base64!', PNG_B64])],
    ['base64 that is not an image', resultBody([Buffer.from('hello world, no image here').toString('base64'), PNG_B64])],
    ['a body that is not JSON', 'Internal Server Error, but 200'],
  ])('rejects %s', async (_what, body) => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(200, { 'content-type': 'application/json' }, body));
    });
    const error = await failureOf(clientOf(s).generate({ prompt: 'x', n: 2 }));
    expect(error).toMatchObject({ code: 'bad_response', message: expect.stringMatching(/may have been billed/) });
    expect(s.requests).toBe(1);
  });

  it('keeps the whole images of a cut-off body read as leniently as a whole answer (JSON-escaped lines, URL-safe, unpadded), each labelled with its format', async () => {
    const wrapped = JSON.stringify(JPEG_B64.replace(/.{1,16}/g, '$&\n')).slice(1, -1);
    const urlSafe = PNG_B64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    expect(wrapped).toContain('\\n');
    const cut = `{"created":1,"data":[{"b64_json":"${wrapped}"},{"b64_json" : "${urlSafe}"},{"b64_json":"${PNG_B64.slice(0, 20)}`;
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(200, { 'content-type': 'application/json' }, cut));
    });
    const error = await failureOf(clientOf(s).generate({ prompt: 'x', n: 3 }));
    expect(error).toMatchObject({ code: 'bad_response', partial: { output_format: 'jpeg', data: [{ output_format: 'jpeg' }, { output_format: 'png' }] } });
    expect(decodeImages(error.partial as { data: { b64_json: string }[] })).toEqual([Buffer.from(jpeg), Buffer.from(png)]);
  });

  it('keeps the images that did come on the error, so a paid image is not lost', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(200, { 'content-type': 'application/json' }, resultBody([PNG_B64])));
    });
    const error = await failureOf(clientOf(s).generate({ prompt: 'x', n: 2 }));
    expect(error).toMatchObject({ code: 'bad_response', partial: { data: [{ b64_json: PNG_B64 }] } });
  });

  it.each([
    ['null', { b64_json: null }],
    ['left out', { revised_prompt: 'x' }],
    ['not an object', null],
  ])('keeps the paid image of an answer whose other entry has its image %s, on the error', async (_what, entry) => {
    const body = JSON.stringify({ created: 1, data: [{ b64_json: PNG_B64 }, entry] });
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(200, { 'content-type': 'application/json' }, body));
    });
    const error = await failureOf(clientOf(s).generate({ prompt: 'x', n: 2 }));
    expect(error).toMatchObject({ code: 'bad_response', message: expect.stringMatching(/1 of the 2 images/), partial: { data: [{ b64_json: PNG_B64 }] } });
    expect(s.requests).toBe(1);
  });

  it('hands such an image on first when the answer is JSON to a streamed request, and does not carry it again on the error', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(200, { 'content-type': 'application/json' }, JSON.stringify({ created: 1, data: [{ b64_json: PNG_B64 }, { b64_json: null }] })));
    });
    const events: ImageStreamEvent[] = [];
    const error = await failureOf((async () => {
      for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2 })) events.push(event);
    })());
    expect(error).toMatchObject({ code: 'bad_response', message: expect.stringMatching(/1 of the 2 images/) });
    expect(error.partial).toBeUndefined();
    expect(events).toMatchObject([{ type: 'image_generation.completed', b64_json: PNG_B64 }]);
  });

  it('rejects a completed event whose image is not an image, the image before it handed on and not carried again', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(SSE_HEAD + chunk(sse('image_generation.completed', completed()) + sse('image_generation.completed', completed(Buffer.from('hello world, no image here').toString('base64')))) + chunk(''));
    });
    const images: string[] = [];
    const error = await failureOf((async () => {
      for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2 })) images.push(event.b64_json);
    })());
    expect(error).toMatchObject({ code: 'bad_response', message: expect.stringMatching(/completed image 2/) });
    expect(images).toEqual([PNG_B64]);
    // A stream's error carries no image: those that came whole were handed on as they came, a bad one is none.
    expect(error.partial).toBeUndefined();
  });

  it('names the target of a redirect and does not follow or resend it', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(302, { location: 'https://elsewhere.example/v1/images/generations?token=abc' }, ''));
    });
    const error = await failureOf(clientOf(s).generate({ prompt: 'x' }));
    expect(error).toMatchObject({ code: 'api_error', status: 302 });
    expect(error.message).toContain('https://elsewhere.example/v1/images/generations');
    expect(error.message).not.toContain('token=abc');
    expect(s.requests).toBe(1);
  });
});

describe('a paid image that came whole before the answer broke off reaches the caller, with the failure’s own code', () => {
  /** A JSON answer to n=2 whose first image came whole and whose second was cut off. */
  const cutResult = `{"created":1,"data":[{"b64_json":"${PNG_B64}"},{"b64_json":"${PNG_B64.slice(0, 20)}`;
  const JSON_TYPE = { 'content-type': 'application/json' };

  it.each([
    ['its content-length promised more than came', (socket: SeenRequest['socket']) => socket.end(head(200, { ...JSON_TYPE, 'content-length': cutResult.length + 5000 }) + cutResult)],
    ['its chunked body stopped without its last chunk', (socket: SeenRequest['socket']) => socket.end(head(200, { ...JSON_TYPE, 'transfer-encoding': 'chunked' }) + chunk(cutResult))],
    ['the connection was reset after the first image', (socket: SeenRequest['socket']) => socket.write(head(200, { ...JSON_TYPE, 'content-length': cutResult.length + 5000 }) + cutResult, () => socket.resetAndDestroy())],
  ])('keeps the whole image on a stream_broken error when %s', async (_what, answer) => {
    const s = await serve(async (req) => {
      await req.body();
      answer(req.socket);
    });
    const error = await failureOf(clientOf(s).generate({ prompt: 'x', n: 2, quality: 'low' }));
    expect(error).toMatchObject({ code: 'stream_broken', partial: { data: [{ b64_json: PNG_B64, output_format: 'png' }], cost: { n: 1, totalUsd: 0.00636 } } });
    expect(decodeImages(error.partial as { data: { b64_json: string }[] })).toEqual([Buffer.from(png)]);
    expect(s.requests).toBe(1);
  });

  it('keeps it on a timeout error when the service goes silent after it', async () => {
    // The request's own clock is faked, and moved on once the client was handed the cut result: no race with a busy
    // machine. (The idle timeout is undici's, on a clock of its own that fake timers do not move; it ends the read the
    // same way.)
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    const s = await serve(async (req) => {
      await req.body();
      req.socket.write(head(200, { ...JSON_TYPE, 'content-length': cutResult.length + 5000 }) + cutResult);
    });
    let handed!: () => void;
    const cutResultHanded = new Promise<void>((resolve) => (handed = resolve));
    const { dispatcher } = countingDispatcher(s, (bytes) => bytes === cutResult.length && handed());
    const failure = failureOf(clientOf(s, { dispatcher, timeoutMs: 400, idleTimeoutMs: 600_000 }).generate({ prompt: 'x', n: 2 }));
    await cutResultHanded;
    // What the client was handed reaches its reader within the same turn of the event loop (no timer in between).
    await new Promise((resolve) => setImmediate(resolve));
    vi.advanceTimersByTime(400);
    const error = await failure;
    expect(error).toMatchObject({ code: 'timeout', kind: 'total', mayBeBilled: true, partial: { data: [{ b64_json: PNG_B64 }] } });
    expect(s.requests).toBe(1);
    await dispatcher.close();
  });

  it('hands it on first when the answer is JSON to a streamed request, then fails with the failure’s code', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(200, { ...JSON_TYPE, 'transfer-encoding': 'chunked' }) + chunk(cutResult));
    });
    const events: ImageStreamEvent[] = [];
    const error = await failureOf((async () => {
      for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2 })) events.push(event);
    })());
    expect(error).toMatchObject({ code: 'stream_broken' });
    expect(events).toMatchObject([{ type: 'image_generation.completed', b64_json: PNG_B64 }]);
  });

  it('hands on a completed event whose data came whole but whose blank line did not, then fails with the failure’s code', async () => {
    const unended = sse('image_generation.completed', completed()).slice(0, -1);
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(SSE_HEAD + chunk(sse('image_generation.completed', completed()) + unended));
    });
    const images: string[] = [];
    const error = await failureOf((async () => {
      for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 3 })) if (isCompletedEvent(event)) images.push(event.b64_json);
    })());
    expect(error).toMatchObject({ code: 'stream_broken', message: expect.stringMatching(/connection broke/) });
    expect(images).toEqual([PNG_B64, PNG_B64]);
    expect(s.requests).toBe(1);
  });

  it('ends the job with such an event when it is the last image asked for: all images are in', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(SSE_HEAD + chunk(sse('image_generation.completed', completed()).slice(0, -1)));
    });
    const result = await clientOf(s).generateStream({ prompt: 'x' }).finalResult();
    expect(decodeImages(result)).toEqual([Buffer.from(png)]);
  });

  it('hands on no event whose data was cut short, and fails with the failure’s code, not as an event that is not JSON', async () => {
    const cut = sse('image_generation.completed', completed());
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(SSE_HEAD + chunk(sse('image_generation.completed', completed()) + cut.slice(0, cut.length - 20)));
    });
    const images: string[] = [];
    const error = await failureOf((async () => {
      for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2 })) if (isCompletedEvent(event)) images.push(event.b64_json);
    })());
    expect(error).toMatchObject({ code: 'stream_broken', message: expect.stringMatching(/connection broke/) });
    expect(images).toEqual([PNG_B64]);
  });
});

describe('a stream hands each paid image on once: its error does not carry them again, and finalResult() puts the ones it read on its error', () => {
  const JSON_TYPE = { 'content-type': 'application/json' };
  const NOT_AN_IMAGE = Buffer.from('hello world, no image here').toString('base64');
  /** Answers to n=2 that bring one whole image and then fail, with the code they fail with. */
  const answers: [string, string, (socket: SeenRequest['socket']) => void][] = [
    ['a JSON answer whose second image is null', 'bad_response', (socket) => socket.end(head(200, JSON_TYPE, JSON.stringify({ created: 1, data: [{ b64_json: PNG_B64 }, { b64_json: null }] })))],
    ['a JSON answer cut short in its second image', 'stream_broken', (socket) => socket.end(head(200, { ...JSON_TYPE, 'transfer-encoding': 'chunked' }) + chunk(`{"created":1,"data":[{"b64_json":"${PNG_B64}"},{"b64_json":"${PNG_B64.slice(0, 20)}`))],
    ['events whose second image is not an image', 'bad_response', (socket) => socket.end(SSE_HEAD + chunk(sse('image_generation.completed', completed()) + sse('image_generation.completed', completed(NOT_AN_IMAGE))) + chunk(''))],
    ['events that end after the first image', 'stream_broken', (socket) => socket.end(SSE_HEAD + chunk(sse('image_generation.completed', completed())) + chunk(''))],
  ];

  it.each(answers)('gives a reader of %s its image once, as an event: imagesOfFailure(error) has none', async (_what, code, answer) => {
    const s = await serve(async (req) => {
      await req.body();
      answer(req.socket);
    });
    const events: ImageStreamEvent[] = [];
    const error = await failureOf((async () => {
      for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2 })) events.push(event);
    })());
    expect(error).toMatchObject({ code });
    expect([...events, ...imagesOfFailure(error)].map((event) => event.b64_json)).toEqual([PNG_B64]);
    expect(error.partial).toBeUndefined();
  });

  it.each(answers)('fails finalResult() on %s with its image on the error, priced for it', async (_what, code, answer) => {
    const s = await serve(async (req) => {
      await req.body();
      answer(req.socket);
    });
    const error = await failureOf(clientOf(s).generateStream({ prompt: 'x', n: 2, quality: 'low' }).finalResult());
    expect(error).toMatchObject({ code, partial: { data: [{ b64_json: PNG_B64, output_format: 'png' }], cost: { n: 1, totalUsd: 0.00636 } } });
    expect(imagesOfFailure(error).map((event) => event.b64_json)).toEqual([PNG_B64]);
  });

  it.each(answers)('tells the watch of finalResult() on %s of its image once, and ends it with the error the caller gets', async (_what, code, answer) => {
    const s = await serve(async (req) => {
      await req.body();
      answer(req.socket);
    });
    const images: string[] = [];
    const endings: RequestEnding[] = [];
    const onRequest = (): RequestWatch => ({ onImage: (image) => void images.push(image.b64_json), end: (ending) => void endings.push(ending) });
    const error = await failureOf(clientOf(s, { onRequest }).generateStream({ prompt: 'x', n: 2, quality: 'low' }).finalResult());
    expect(error).toMatchObject({ code, partial: { data: [{ b64_json: PNG_B64 }], cost: { n: 1 } } });
    expect(images).toEqual([PNG_B64]);
    expect(endings).toHaveLength(1);
    expect(endings[0]).toMatchObject({ kind: 'failed' });
    expect((endings[0] as { error: unknown }).error).toBe(error);
  });

  /** Answers to n=2 that fail before any image came whole, with the code they fail with. */
  const failingFirst: [string, string, (socket: SeenRequest['socket']) => void][] = [
    ['a JSON answer with no image', 'bad_response', (socket) => socket.end(head(200, JSON_TYPE, JSON.stringify({ created: 1, data: [{ b64_json: null }, { b64_json: null }] })))],
    ['a JSON answer cut short in its first image', 'stream_broken', (socket) => socket.end(head(200, { ...JSON_TYPE, 'transfer-encoding': 'chunked' }) + chunk(`{"created":1,"data":[{"b64_json":"${PNG_B64.slice(0, 20)}`))],
    ['events whose first image is not an image', 'bad_response', (socket) => socket.end(SSE_HEAD + chunk(sse('image_generation.completed', completed(NOT_AN_IMAGE))) + chunk(''))],
    ['events that end before any image', 'stream_broken', (socket) => socket.end(SSE_HEAD + chunk(sse('image_generation.partial_image', { ...completed(), type: 'image_generation.partial_image', partial_image_index: 0 })) + chunk(''))],
  ];

  it.each(failingFirst)('fails finalResult() and a reader of %s alike, with no image on the error', async (_what, code, answer) => {
    const s = await serve(async (req) => {
      await req.body();
      answer(req.socket);
    });
    const final = await failureOf(clientOf(s).generateStream({ prompt: 'x', n: 2, quality: 'low' }).finalResult());
    const completedRead: ImageStreamEvent[] = [];
    const read = await failureOf((async () => {
      for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2, quality: 'low', partial_images: 1 })) if (isCompletedEvent(event)) completedRead.push(event);
    })());
    for (const error of [final, read]) {
      expect(error).toMatchObject({ code });
      expect(error.partial).toBeUndefined();
      expect(imagesOfFailure(error)).toEqual([]);
    }
    expect(completedRead).toEqual([]);
  });
});

describe('an answer within the rules but out of the ordinary is accepted', () => {
  it.each([
    [1, 3, 'in the same chunk'],
    [2, 4, 'in the same chunk'],
    [2, 3, 'in a later chunk'],
  ])('hands on the images asked for (n=%i) when %i completed events come, the ones past them %s not handed on', async (n, sent, where) => {
    const events = Array.from({ length: sent }, () => sse('image_generation.completed', completed()));
    const body = where === 'in the same chunk' ? chunk(events.join('')) : chunk(events.slice(0, n).join('')) + chunk(events.slice(n).join(''));
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(SSE_HEAD + body + chunk(''));
    });
    const warn = vi.fn();
    const images: Buffer[] = [];
    for await (const event of clientOf(s, { logger: { debug() {}, info() {}, warn, error() {} } }).generateStream({ prompt: 'x', n })) {
      if (isCompletedEvent(event)) images.push(Buffer.from(event.b64_json, 'base64'));
    }
    expect(images).toEqual(Array.from({ length: n }, () => Buffer.from(png)));
    const result = await clientOf(s).generateStream({ prompt: 'x', n }).finalResult();
    expect(result.data).toHaveLength(n);
    expect(result.cost).toMatchObject({ n, totalUsd: 0.00636 * n });
    // Seen with the last image (one chunk is one read): told once, without the image.
    if (where === 'in the same chunk') expect(warn).toHaveBeenCalledExactlyOnceWith({ requestId: undefined, n, extra: sent - n }, expect.stringMatching(/more completed images than asked for/));
    expect(s.requests).toBe(2);
  });

  it('takes a completed event with "error": null as a success, and skips unknown untyped events', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(SSE_HEAD + chunk(sse('ping', '') + sse('ping', {}) + sse('image_generation.completed', completed(PNG_B64, { error: null }))) + chunk(''));
    });
    const result = await clientOf(s).generateStream({ prompt: 'x' }).finalResult();
    expect(result.data).toHaveLength(1);
  });

  it.each([
    ['with its length', (body: string) => head(200, { 'content-type': 'application/json' }, body)],
    ['chunked', (body: string) => head(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }) + chunk(body) + chunk('')],
  ])('takes a whole JSON result followed by bytes that are not JSON as the result, sent %s', async (_how, answer) => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(answer(`${resultBody([PNG_B64, PNG_B64])}\nGARBAGE{{{`));
    });
    const result = await clientOf(s).generate({ prompt: 'x', n: 2 });
    expect(decodeImages(result)).toEqual([Buffer.from(png), Buffer.from(png)]);
    expect(result.cost).toMatchObject({ n: 2 });
    const streamed = await clientOf(s).generateStream({ prompt: 'x', n: 2 }).finalResult();
    expect(streamed.data).toHaveLength(2);
    expect(s.requests).toBe(2);
  });

  it.each([
    ['wrapped in lines of 76', PNG_B64.replace(/(.{76})/g, '$1\n')],
    ['wrapped in CRLF lines and spaces', PNG_B64.replace(/(.{64})/g, '$1\r\n ')],
    ['without its padding', PNG_B64.replace(/=+$/, '')],
    ['URL-safe', PNG_B64.replace(/\+/g, '-').replace(/\//g, '_')],
  ])('takes an image whose base64 is %s, streamed or not', async (_how, b64) => {
    const s = await serve(async (req) => {
      const body = await req.body();
      const streamed = body.includes('"stream":true');
      req.socket.end(streamed ? SSE_HEAD + chunk(sse('image_generation.completed', completed(b64))) + chunk('') : head(200, { 'content-type': 'application/json' }, resultBody([b64])));
    });
    expect(decodeImages(await clientOf(s).generate({ prompt: 'x' }))).toEqual([Buffer.from(png)]);
    expect(decodeImages(await clientOf(s).generateStream({ prompt: 'x' }).finalResult())).toEqual([Buffer.from(png)]);
  });

  it.each(['plain', 'streamed', 'JSON to a streamed request'])('delivers a JPEG sent when PNG was asked (%s) as a JPEG, told once at warn', async (how) => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(
        how === 'streamed'
          ? SSE_HEAD + chunk(sse('image_generation.completed', completed(JPEG_B64)) + sse('image_generation.completed', completed(JPEG_B64))) + chunk('')
          : head(200, { 'content-type': 'application/json' }, resultBody([JPEG_B64, JPEG_B64])),
      );
    });
    const warn = vi.fn();
    const client = clientOf(s, { logger: { debug() {}, info() {}, warn, error() {} } });
    if (how === 'plain') {
      const result = await client.generate({ prompt: 'x', n: 2, output_format: 'png' });
      expect(result).toMatchObject({ output_format: 'jpeg' });
      expect(decodeImages(result)).toEqual([Buffer.from(jpeg), Buffer.from(jpeg)]);
    } else {
      const events: ImageStreamEvent[] = [];
      for await (const event of client.generateStream({ prompt: 'x', n: 2, output_format: 'png' })) events.push(event);
      expect(events).toMatchObject([{ output_format: 'jpeg', b64_json: JPEG_B64 }, { output_format: 'jpeg', b64_json: JPEG_B64 }]);
    }
    // Told once, without the image.
    expect(warn.mock.calls.filter(([, message]) => /another format than the one asked for/.test(String(message)))).toEqual([
      [{ requestId: undefined, asked: 'png', sent: 'jpeg' }, expect.any(String)],
    ]);
    expect(s.requests).toBe(1);
  });

  it.each(['plain', 'streamed', 'JSON to a streamed request'])('labels each image of an answer that mixes formats with its own (%s): a PNG and a JPEG are a png and a jpeg', async (how) => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(
        how === 'streamed'
          ? SSE_HEAD + chunk(sse('image_generation.completed', completed(PNG_B64)) + sse('image_generation.completed', completed(JPEG_B64))) + chunk('')
          : head(200, { 'content-type': 'application/json' }, resultBody([PNG_B64, JPEG_B64])),
      );
    });
    const warn = vi.fn();
    const client = clientOf(s, { logger: { debug() {}, info() {}, warn, error() {} } });
    const result =
      how === 'plain' ? await client.generate({ prompt: 'x', n: 2, output_format: 'png' }) : await client.generateStream({ prompt: 'x', n: 2, output_format: 'png' }).finalResult();
    expect(result.data).toMatchObject([{ output_format: 'png' }, { output_format: 'jpeg' }]);
    expect(decodeImages(result)).toEqual([Buffer.from(png), Buffer.from(jpeg)]);
    expect(warn.mock.calls.filter(([, message]) => /another format than the one asked for/.test(String(message)))).toEqual([
      [{ requestId: undefined, asked: 'png', sent: 'jpeg' }, expect.any(String)],
    ]);
  });

  it.each(['streamed', 'JSON to a streamed request'])('hands on each completed event of an answer that mixes formats labelled with its own (%s)', async (how) => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(
        how === 'streamed'
          ? SSE_HEAD + chunk(sse('image_generation.completed', completed(PNG_B64)) + sse('image_generation.completed', completed(JPEG_B64))) + chunk('')
          : head(200, { 'content-type': 'application/json' }, resultBody([PNG_B64, JPEG_B64])),
      );
    });
    const events: ImageStreamEvent[] = [];
    for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2, output_format: 'png' })) events.push(event);
    expect(events.filter(isCompletedEvent).map((event) => event.output_format)).toEqual(['png', 'jpeg']);
  });

  it('takes a plain JSON answer to a streamed request as the result', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(200, { 'content-type': 'application/json' }, resultBody([PNG_B64, PNG_B64])));
    });
    const stream = clientOf(s).generateStream({ prompt: 'x', n: 2 });
    const events: ImageStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((e) => e.type)).toEqual(['image_generation.completed', 'image_generation.completed']);
    const again = await clientOf(s).generateStream({ prompt: 'x', n: 2 }).finalResult();
    expect(again).toMatchObject({ data: [{ b64_json: PNG_B64 }, { b64_json: PNG_B64 }], usage: { total_tokens: 3 } });
  });
});

describe('a whole JSON result to a streamed request is taken as the result whatever its content type, unless it says event stream', () => {
  it.each([
    ['no content type', {}],
    ['text/plain', { 'content-type': 'text/plain; charset=utf-8' }],
    ['text/json', { 'content-type': 'text/json' }],
  ])('takes it with %s, as the same answer to a plain request is', async (_what, headers) => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(200, headers, `\r\n  ${resultBody([PNG_B64, JPEG_B64])}`));
    });
    const plain = await clientOf(s).generate({ prompt: 'x', n: 2 });
    const events: ImageStreamEvent[] = [];
    for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2 })) events.push(event);
    expect(events).toMatchObject(plain.data.map(({ b64_json, output_format }) => ({ type: 'image_generation.completed', b64_json, output_format })));
    expect(events).toHaveLength(2);
  });

  it('still reads events from a body without a content type that does not start with {', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(200, {}, `\n${sse('image_generation.completed', completed())}`));
    });
    const result = await clientOf(s).generateStream({ prompt: 'x' }).finalResult();
    expect(decodeImages(result)).toEqual([Buffer.from(png)]);
  });

  it.each([
    ['a JSON result', () => resultBody([PNG_B64])],
    ['events', () => sse('image_generation.completed', completed())],
  ])('reads %s after a MiB of whitespace in chunks of its own, as if it were not there', async (_what, answer) => {
    const blank = ' \r\n\t'.repeat(256 * 1024);
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(200, {}, `${blank}${answer()}`));
    });
    const result = await clientOf(s).generateStream({ prompt: 'x' }).finalResult();
    expect(decodeImages(result)).toEqual([Buffer.from(png)]);
  });

  it('reads a body said to be an event stream as events although it starts with {', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(200, { 'content-type': 'text/event-stream' }, resultBody([PNG_B64])));
    });
    const error = await failureOf(clientOf(s).generateStream({ prompt: 'x' }).finalResult());
    expect(error).toMatchObject({ code: 'stream_broken', message: expect.stringMatching(/ended before the final image/) });
  });
});

describe('an error event inside a stream is told by its type when it has no code', () => {
  it.each([
    ['server_error', 'server_error'],
    ['requests', 'api_error'],
  ])('maps an error event of type %s with code null to %s', async (type, code) => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(SSE_HEAD + chunk(sse('error', { type: 'error', error: { message: 'The server had an error', type, code: null } })) + chunk(''));
    });
    const error = await failureOf(clientOf(s).generateStream({ prompt: 'x' }).finalResult());
    expect(error).toMatchObject({ code, serviceType: type });
    expect(s.requests).toBe(1);
  });
});

describe('what a server sends in an error is bounded and cleaned', () => {
  it('reads at most 64 KiB of a huge error body and prints a short message', async () => {
    let written: Promise<number> | undefined;
    const s = await serve(async (req) => {
      await req.body();
      req.socket.write(head(400, { 'content-type': 'application/json', 'content-length': 50 * 1024 * 1024 }));
      req.socket.write('{"error":{"type":"invalid_request_error","message":"');
      written = pumpBody(req.socket, 50 * 1024 * 1024, Buffer.alloc(64 * 1024, 'A'));
    });
    const error = await failureOf(clientOf(s).generate({ prompt: 'x' }));
    expect(error).toMatchObject({ code: 'bad_request', status: 400 });
    expect(error.message.length).toBeLessThan(500);
    await s.requestConnectionsClosed();
    expect(s.requests).toBe(1);
    expect(await written).toBeLessThan(20 * 1024 * 1024);
  });

  it('keeps the start of an error page past 64 KiB for its message, reading little more than 64 KiB of it', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.write(head(403, { 'content-type': 'text/html', 'content-length': 50 * 1024 * 1024 }));
      req.socket.write('<html><head><title>Blocked by the gateway</title></head><body>');
      void pumpBody(req.socket, 50 * 1024 * 1024, Buffer.alloc(64 * 1024, ' '));
    });
    const { dispatcher, read } = countingDispatcher(s);
    const error = await failureOf(clientOf(s, { dispatcher }).generate({ prompt: 'x' }));
    expect(error).toMatchObject({ code: 'permission_denied', status: 403 });
    expect(error.message).toContain('Blocked by the gateway');
    await s.requestConnectionsClosed();
    expect(s.requests).toBe(1);
    // What was handed to the client: the bound, and what was already on its way when it stopped reading.
    expect(read.bytes).toBeLessThan(MAX_ERROR_BODY_BYTES + 2 * read.largestChunk);
  });

  it('strips ANSI escapes and control characters from the service message', async () => {
    const s = await serve(async (req) => {
      await req.body();
      const message = '\u001b[2J\u001b[31mdanger\u001b[0m\u0007 line\r\nbreak \u001b]0;title\u0007end';
      req.socket.end(head(400, { 'content-type': 'application/json' }, JSON.stringify({ error: { message, type: 'invalid_request_error' } })));
    });
    const error = await failureOf(clientOf(s).generate({ prompt: 'x' }));
    // eslint-disable-next-line no-control-regex
    expect(error.message).not.toMatch(/[\u0000-\u001f\u007f]/);
    expect(error.message).toContain('danger line break end');
  });
});

/**
 * A dispatcher to `s` that counts the bytes of the answers' bodies it hands the client, and their largest chunk;
 * `onCount` is told the bytes so far as each chunk is handed on.
 */
function countingDispatcher(s: MisbehavingServer, onCount?: (bytes: number) => void): { dispatcher: Dispatcher; read: { bytes: number; largestChunk: number } } {
  const read = { bytes: 0, largestChunk: 0 };
  const count = (chunk: Buffer) => {
    read.bytes += chunk.length;
    read.largestChunk = Math.max(read.largestChunk, chunk.length);
    onCount?.(read.bytes);
  };
  const dispatcher = new Pool(s.url).compose((dispatch) => (options, handler) =>
    dispatch(options, {
      ...bound(handler),
      ...(handler.onResponseData && { onResponseData: (controller, chunk) => (count(chunk), handler.onResponseData!(controller, chunk)) }),
      ...(handler.onData && { onData: (chunk: Buffer) => (count(chunk), handler.onData!(chunk)) }),
    }),
  );
  return { dispatcher, read };
}

/** The methods of a dispatch handler, bound to it, to be overridden one by one. */
function bound(handler: Dispatcher.DispatchHandler): Dispatcher.DispatchHandler {
  const methods: Record<string, unknown> = {};
  for (let o: object | null = handler; o && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
    for (const key of Object.getOwnPropertyNames(o)) {
      const value = (handler as unknown as Record<string, unknown>)[key];
      if (key !== 'constructor' && typeof value === 'function' && !(key in methods)) methods[key] = (value as (...a: unknown[]) => unknown).bind(handler);
    }
  }
  return methods as Dispatcher.DispatchHandler;
}

/**
 * Writes `fill` again and again, each time the client has taken what went before, until `limit` bytes went out or the
 * client let go; resolves with how many went out. The answer is not ended: that is for the caller.
 */
function pumpBody(socket: SeenRequest['socket'], limit: number, fill: Buffer | string): Promise<number> {
  const piece = Buffer.from(fill);
  return new Promise((resolve) => {
    let written = 0;
    const pump = () => {
      while (written < limit && !socket.destroyed) {
        written += piece.length;
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
      resolve(written);
    };
    socket.once('close', () => resolve(written));
    pump();
  });
}

/**
 * Writes `opening`, then base64 (or `fill`) without end until the client lets go or `limit` bytes went out (then the
 * body ends, the image still open); resolves with what was written.
 */
async function endlessImage(socket: SeenRequest['socket'], opening: string, limit: number, fill = 'A'): Promise<number> {
  socket.write(opening);
  const opened = Buffer.byteLength(opening);
  const written = opened + (await pumpBody(socket, limit - opened, chunk(fill.repeat(64 * 1024))));
  if (!socket.destroyed) socket.end(chunk(''));
  return written;
}

describe('an answer is read no further than any answer to the request can go', () => {
  it.each([
    ['a plain result', false],
    ['a JSON answer to a streamed request (its bound has no previews)', true],
  ])('stops reading %s whose second image never ends at the bound of its 2 images, and keeps the first', async (_, stream) => {
    const cap = answerByteBound(2);
    let written: Promise<number> | undefined;
    const s = await serve(async (req) => {
      await req.body();
      const opening = `{"created": 1, "data": [{"b64_json": "${PNG_B64}"}, {"b64_json": "`;
      written = endlessImage(req.socket, head(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }) + chunk(opening), cap + 32 * 1024 * 1024);
    });
    const { dispatcher, read } = countingDispatcher(s);
    const client = clientOf(s, { dispatcher });
    const images: string[] = [];
    const error = await failureOf(
      stream
        ? (async () => {
            for await (const event of client.generateStream({ prompt: 'x', n: 2, partial_images: 3 })) images.push(event.b64_json);
          })()
        : client.generate({ prompt: 'x', n: 2 }),
    );
    expect(error).toMatchObject({ code: 'bad_response', message: expect.stringMatching(/more than 65 MiB for 2 images/) });
    // The first image is kept: on the error of a plain request, handed on before the error by a stream.
    if (stream) expect(images).toEqual([PNG_B64]);
    else expect(error).toMatchObject({ partial: { data: [{ b64_json: PNG_B64 }] } });
    expect(read.bytes).toBeGreaterThan(cap);
    expect(read.bytes).toBeLessThanOrEqual(cap + read.largestChunk);
    await s.requestConnectionsClosed();
    expect(await written).toBeLessThan(cap + 32 * 1024 * 1024);
    await dispatcher.close();
  });

  it('stops reading a stream at one image\'s bound past its last event, whatever the images and previews asked for', async () => {
    let written: Promise<number> | undefined;
    const s = await serve(async (req) => {
      await req.body();
      const opening = sse('image_generation.completed', completed()) + 'event: image_generation.completed\ndata: {"type": "image_generation.completed", "b64_json": "';
      written = endlessImage(req.socket, SSE_HEAD + chunk(opening), EVENT_BYTE_BOUND + 32 * 1024 * 1024);
    });
    const { dispatcher, read } = countingDispatcher(s);
    const events: ImageStreamEvent[] = [];
    // The bots' defaults: 10 images, 2 previews each (the whole answer may be 30 times one image).
    const error = await failureOf((async () => {
      for await (const event of clientOf(s, { dispatcher }).generateStream({ prompt: 'x', n: 10, partial_images: 2 })) events.push(event);
    })());
    expect(error).toMatchObject({ code: 'bad_response', message: expect.stringMatching(/more than 33 MiB without ending an event/) });
    // The image before it was handed on, and the error does not carry it again.
    expect(events.map((event) => event.b64_json)).toEqual([PNG_B64]);
    expect(error.partial).toBeUndefined();
    // The first event, then the second past the bound by less than the chunk that crossed it (counted exactly from the first one's end).
    const first = Buffer.byteLength(sse('image_generation.completed', completed()));
    expect(read.bytes).toBeGreaterThan(first + EVENT_BYTE_BOUND);
    expect(read.bytes).toBeLessThanOrEqual(first + EVENT_BYTE_BOUND + read.largestChunk);
    await s.requestConnectionsClosed();
    expect(await written).toBeLessThan(EVENT_BYTE_BOUND + 32 * 1024 * 1024);
    await dispatcher.close();
  });

  it.each([
    ['spaces', 'no content type', {}, ' '],
    ['line ends', 'text/plain', { 'content-type': 'text/plain' }, '\r\n'],
  ])('stops reading an answer of nothing but %s (%s) at one image\'s bound', async (_what, _type, headers, fill) => {
    let written: Promise<number> | undefined;
    const s = await serve(async (req) => {
      await req.body();
      written = endlessImage(req.socket, head(200, { ...headers, 'transfer-encoding': 'chunked' }), EVENT_BYTE_BOUND + 32 * 1024 * 1024, fill);
    });
    const { dispatcher, read } = countingDispatcher(s);
    const error = await failureOf(clientOf(s, { dispatcher }).generateStream({ prompt: 'x' }).finalResult());
    expect(error).toMatchObject({ code: 'bad_response', message: expect.stringMatching(/more than 33 MiB of whitespace before its answer began/) });
    // JSON or events is told by its first character; the whitespace before it is counted, not kept, and read up to the bound only.
    expect(read.bytes).toBeGreaterThan(EVENT_BYTE_BOUND);
    expect(read.bytes).toBeLessThanOrEqual(EVENT_BYTE_BOUND + read.largestChunk);
    await s.requestConnectionsClosed();
    expect(await written).toBeLessThan(EVENT_BYTE_BOUND + 32 * 1024 * 1024);
    await dispatcher.close();
  });

  it('reads a stream whose events are each as large as wire-format.md calls normal (30 MB), more than one image\'s bound in all', async () => {
    const preview = 'A'.repeat(30_000_000);
    const s = await serve(async (req) => {
      await req.body();
      req.socket.write(SSE_HEAD);
      for (const index of [0, 1]) {
        req.socket.write(chunk(sse('image_generation.partial_image', { ...completed(preview), type: 'image_generation.partial_image', partial_image_index: index, usage: undefined })));
      }
      req.socket.end(chunk(sse('image_generation.completed', completed())) + chunk(''));
    });
    const types: string[] = [];
    for await (const event of clientOf(s).generateStream({ prompt: 'x', partial_images: 2 })) types.push(event.type);
    expect(types).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
  });
});

describe('a stream\'s bound holds for each event, counted from the end of the one before', () => {
  /** A preview of exactly `bytes` bytes on the wire, its blank line included. */
  function previewOfBytes(bytes: number, index: number): string {
    const event = (b64: string) => sse('image_generation.partial_image', { ...completed(b64), type: 'image_generation.partial_image', partial_image_index: index, usage: undefined });
    return event('A'.repeat(bytes - Buffer.byteLength(event(''))));
  }

  /** Serves a small preview, then one of `bytes` bytes whose start shares the small one's chunk, then the image. */
  async function previewsInOneChunk(bytes: number): Promise<MisbehavingServer> {
    const large = previewOfBytes(bytes, 1);
    return serve(async (req) => {
      await req.body();
      req.socket.write(SSE_HEAD + chunk(previewOfBytes(1_000, 0) + large.slice(0, 4_096)));
      req.socket.write(chunk(large.slice(4_096)));
      req.socket.end(chunk(sse('image_generation.completed', completed())) + chunk(''));
    });
  }

  it('reads an event of exactly the bound although it started in the chunk that ended the event before it', async () => {
    const s = await previewsInOneChunk(EVENT_BYTE_BOUND);
    const types: string[] = [];
    for await (const event of clientOf(s).generateStream({ prompt: 'x', partial_images: 2 })) types.push(event.type);
    expect(types).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
  });

  it('refuses an event one byte past the bound that started in the chunk that ended the event before it', async () => {
    const s = await previewsInOneChunk(EVENT_BYTE_BOUND + 1);
    const types: string[] = [];
    const error = await failureOf((async () => {
      for await (const event of clientOf(s).generateStream({ prompt: 'x', partial_images: 2 })) types.push(event.type);
    })());
    expect(error).toMatchObject({ code: 'bad_response', message: expect.stringMatching(/more than 33 MiB without ending an event/) });
    expect(types).toEqual(['image_generation.partial_image']);
  });
});

describe('partial images past the ones asked for are skipped, and the job goes on', () => {
  const partial = (index: number, b64 = PNG_B64) => sse('image_generation.partial_image', { ...completed(b64), type: 'image_generation.partial_image', partial_image_index: index, usage: undefined });

  /** A logger that keeps what it is told at warn, as text. */
  function warnings(): { logger: PictorClientOptions['logger']; told: string[] } {
    const told: string[] = [];
    const none = () => {};
    return { told, logger: { debug: none, info: none, error: none, warn: (obj, msg) => told.push(`${msg ?? ''} ${JSON.stringify(obj)}`) } };
  }

  /** Serves `events` (SSE text) in one chunk each, then ends the body. */
  async function streaming(events: string[]): Promise<MisbehavingServer> {
    return serve(async (req) => {
      await req.body();
      req.socket.write(SSE_HEAD);
      for (const event of events) req.socket.write(chunk(event));
      req.socket.end(chunk(''));
    });
  }

  const handedOn = (events: ImageStreamEvent[]) => events.map((event) => ('partial_image_index' in event ? `partial ${event.partial_image_index}` : 'completed'));

  it('hands on 2 of 50 partials when 2 were asked for, tells it once without the image, and gives the final image', async () => {
    const preview = Buffer.from('a preview the service should not have sent').toString('base64');
    const s = await streaming([...Array.from({ length: 50 }, (_, i) => partial(i, preview)), sse('image_generation.completed', completed())]);
    const { logger, told } = warnings();
    const events: ImageStreamEvent[] = [];
    for await (const event of clientOf(s, { logger }).generateStream({ prompt: 'x', partial_images: 2 })) events.push(event);
    expect(handedOn(events)).toEqual(['partial 0', 'partial 1', 'completed']);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/partial image past the ones asked for/);
    expect(told[0]).not.toContain(preview);
    expect(s.requests).toBe(1);
  });

  it('counts unlabelled partials per index over the stream: an index seen n times already is skipped, and so is an index past the ones asked for', async () => {
    const s = await streaming([
      partial(0), partial(0), partial(0), partial(0),
      sse('image_generation.completed', completed()),
      partial(1), partial(2), partial(0),
      sse('image_generation.completed', completed()),
    ]);
    const events: ImageStreamEvent[] = [];
    for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2, partial_images: 2 })) events.push(event);
    expect(handedOn(events)).toEqual(['partial 0', 'partial 0', 'completed', 'partial 1', 'completed']);
  });

  it('hands on every partial asked for when the service interleaves the images', async () => {
    const s = await streaming([partial(0), partial(0), partial(1), partial(1), sse('image_generation.completed', completed()), sse('image_generation.completed', completed())]);
    const events: ImageStreamEvent[] = [];
    for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2, partial_images: 2 })) events.push(event);
    expect(handedOn(events)).toEqual(['partial 0', 'partial 0', 'partial 1', 'partial 1', 'completed', 'completed']);
  });

  it('hands on every partial asked for when the images complete out of turn', async () => {
    const s = await streaming([partial(0), partial(0), partial(1), sse('image_generation.completed', completed()), partial(1), sse('image_generation.completed', completed())]);
    const events: ImageStreamEvent[] = [];
    for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2, partial_images: 2 })) events.push(event);
    expect(handedOn(events)).toEqual(['partial 0', 'partial 0', 'partial 1', 'completed', 'partial 1', 'completed']);
  });

  it('counts partials the service labels with their image once per image and index, in any order', async () => {
    const of = (image: number, index: number) => sse('image_generation.partial_image', { ...completed(), type: 'image_generation.partial_image', partial_image_index: index, image_index: image, usage: undefined });
    const s = await streaming([of(1, 0), of(0, 0), of(1, 1), of(1, 1), of(2, 0), of(0, 1), sse('image_generation.completed', completed()), sse('image_generation.completed', completed())]);
    const events: ImageStreamEvent[] = [];
    for await (const event of clientOf(s).generateStream({ prompt: 'x', n: 2, partial_images: 2 })) events.push(event);
    expect(events.filter((event) => 'partial_image_index' in event).map((event) => `${String((event as Record<string, unknown>).image_index)}:${(event as { partial_image_index: number }).partial_image_index}`)).toEqual(['1:0', '0:0', '1:1', '0:1']);
  });

  it.each([
    ['-1', -1],
    ['1.5', 1.5],
    ['"0"', '0'],
    ['null', null],
    ['absent', undefined],
  ])('skips a partial whose index is %s, tells it once, and gives the final image', async (_name, index) => {
    const odd = { ...completed(), type: 'image_generation.partial_image', partial_image_index: index, usage: undefined };
    const s = await streaming([sse('image_generation.partial_image', odd), partial(0), sse('image_generation.partial_image', odd), sse('image_generation.completed', completed())]);
    const { logger, told } = warnings();
    const events: ImageStreamEvent[] = [];
    for await (const event of clientOf(s, { logger }).generateStream({ prompt: 'x', partial_images: 2 })) events.push(event);
    expect(handedOn(events)).toEqual(['partial 0', 'completed']);
    expect(told.filter((line) => /without a readable index/.test(line))).toHaveLength(1);
    expect(s.requests).toBe(1);
  });

  it.each([-1, '0'])('skips an untyped event whose index %j cannot be read, never taking it for the final image', async (index) => {
    const odd = { ...completed(), type: undefined, partial_image_index: index, usage: undefined };
    const s = await streaming([`data: ${JSON.stringify(odd)}\n\n`, sse('image_generation.completed', completed(JPEG_B64, { output_format: 'jpeg' }))]);
    const events: ImageStreamEvent[] = [];
    for await (const event of clientOf(s).generateStream({ prompt: 'x', output_format: 'jpeg' })) events.push(event);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'image_generation.completed', b64_json: JPEG_B64 });
  });

  it('hands on no partial when 0 were asked for, and at most 3 per image when the field was not sent', async () => {
    const events = [partial(0), partial(1), partial(2), partial(3), partial(0), sse('image_generation.completed', completed())];
    const none: ImageStreamEvent[] = [];
    for await (const event of clientOf(await streaming(events)).generateStream({ prompt: 'x', partial_images: 0 })) none.push(event);
    expect(handedOn(none)).toEqual(['completed']);
    await server?.close();
    const unset: ImageStreamEvent[] = [];
    for await (const event of clientOf(await streaming(events)).generateStream({ prompt: 'x' })) unset.push(event);
    expect(handedOn(unset)).toEqual(['partial 0', 'partial 1', 'partial 2', 'completed']);
  });

  it('reads an endless stream of partials past the ones asked for only until the request\'s timeout, handing on none past the one asked for', async () => {
    // The timeout's own clock is faked, and moved on once the stream is being skipped through: no test waits on time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    const s = await serve(async (req) => {
      await req.body();
      req.socket.write(SSE_HEAD);
      void pumpBody(req.socket, Infinity, chunk(partial(0).repeat(64)));
    });
    const { logger, told } = warnings();
    const skipping = new Promise<void>((resolve) => {
      const warn = logger!.warn;
      logger!.warn = (obj, msg) => {
        warn(obj, msg);
        resolve();
      };
    });
    const events: ImageStreamEvent[] = [];
    const failure = failureOf((async () => {
      for await (const event of clientOf(s, { logger, timeoutMs: 60_000, idleTimeoutMs: 600_000 }).generateStream({ prompt: 'x', partial_images: 1 })) events.push(event);
    })());
    await skipping;
    vi.advanceTimersByTime(60_000);
    const error = await failure;
    expect(error).toMatchObject({ code: 'timeout', kind: 'total', mayBeBilled: true });
    expect(handedOn(events)).toEqual(['partial 0']);
    expect(told).toHaveLength(1);
    await s.requestConnectionsClosed();
    expect(s.requests).toBe(1);
  });
});

describe('retry-after', () => {
  it.each(['-5', 'abc 12'])('ignores %j and backs off instead', async (value) => {
    const s = await serve(async (req) => {
      await req.body();
      if (s.requests === 1) req.socket.end(head(503, { 'retry-after': value, 'content-type': 'application/json' }, '{"error":{"message":"busy","type":"server_error"}}'));
      else req.socket.end(head(200, { 'content-type': 'application/json' }, resultBody([PNG_B64])));
    });
    const delays: number[] = [];
    await clientOf(s).generate({ prompt: 'x' }, { onRetry: ({ delayMs }) => delays.push(delayMs) });
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThanOrEqual(375);
    expect(delays[0]).toBeLessThanOrEqual(500);
  });

  it('fails at once, naming the wait, when the service asks to wait longer than the timeout leaves', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(503, { 'retry-after': '600', 'content-type': 'application/json' }, '{"error":{"message":"busy","type":"server_error"}}'));
    });
    const started = Date.now();
    const error = await failureOf(clientOf(s, { timeoutMs: 60_000 }).generate({ prompt: 'x' }));
    expect(error).toMatchObject({ code: 'server_error', status: 503 });
    expect(error.message).toMatch(/wait 10 min before trying again/);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(s.requests).toBe(1);
  });

  it('takes a 429’s spent request window (x-ratelimit-remaining-requests 0, its reset 6 min) as the wait it names: no retry when the timeout leaves less', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(429, { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '6m0s', 'content-type': 'application/json' }, '{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}'));
    });
    const error = await failureOf(clientOf(s, { timeoutMs: 60_000 }).generate({ prompt: 'x' }));
    expect(error).toMatchObject({ code: 'rate_limited', retryAfterMs: 360_000, attempts: 1 });
    expect(s.requests).toBe(1);
  });

  it('names a wait under a second, and the time left under a second, in milliseconds, not rounded up to "1 s"', async () => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(429, { 'retry-after-ms': '800', 'content-type': 'application/json' }, '{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}'));
    });
    const error = await failureOf(clientOf(s, { timeoutMs: 500 }).generate({ prompt: 'x' }));
    expect(error).toMatchObject({ code: 'rate_limited' });
    expect(error.message).toMatch(/; the service asked to wait 800 ms before trying again, longer than the \d{1,3} ms left of the request's timeout$/);
    expect(s.requests).toBe(1);
  });

  // The wait is rounded up, the time left down: a wait longer than the time left never reads as short as it.
  it.each([
    { waitMs: 1_500, timeoutMs: 1_100, said: /; the service asked to wait 2 s before trying again, longer than the (1 s|\d{1,3} ms) left of the request's timeout$/ },
    { waitMs: 61_000, timeoutMs: 60_500, said: /; the service asked to wait 1 min 1 s before trying again, longer than the (1 min|59 s) left of the request's timeout$/ },
  ])('says the $timeoutMs ms left of the timeout as shorter than the $waitMs ms wait asked', async ({ waitMs, timeoutMs, said }) => {
    const s = await serve(async (req) => {
      await req.body();
      req.socket.end(head(429, { 'retry-after-ms': String(waitMs), 'content-type': 'application/json' }, '{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}'));
    });
    const error = await failureOf(clientOf(s, { timeoutMs }).generate({ prompt: 'x' }));
    expect(error).toMatchObject({ code: 'rate_limited' });
    expect(error.message).toMatch(said);
    expect(s.requests).toBe(1);
  });
});

describe('a caller signal shared by many requests', () => {
  const env = useEmulator();

  it('keeps no listener on the signal once the requests are over (no MaxListenersExceededWarning)', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      const client = env.client();
      for (let i = 0; i < 15; i++) await client.generate({ prompt: `shared ${i}`, quality: 'low' }, { signal: controller.signal });
      for (let i = 0; i < 3; i++) await client.generateStream({ prompt: `streamed ${i}`, quality: 'low' }, { signal: controller.signal }).finalResult();
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('adds no listener for a stream that is made but never read', () => {
    const controller = new AbortController();
    for (let i = 0; i < 15; i++) env.client().generateStream({ prompt: `unread ${i}` }, { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('still cancels a running request through that signal', async () => {
    // The emulator would answer in a minute: the cancel strikes once it has the request.
    env.emulator.configure({ latencyMs: 60_000 });
    const controller = new AbortController();
    const received = requestReceived(env.emulator);
    const pending = env.client().generate({ prompt: 'x' }, { signal: controller.signal });
    await received;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'aborted' });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
