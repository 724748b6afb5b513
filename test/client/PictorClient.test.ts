import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  AbortedError,
  AuthenticationError,
  decodeImages,
  GenerationRequestSchema,
  ImageLimiter,
  isPartialEvent,
  ModerationError,
  parseGenerationRequest,
  PictorClient,
  QuotaExhaustedError,
  ServerError,
  StreamBrokenError,
  TimeoutError,
  ValidationError,
  type ImageStreamEvent,
  type LimiterCoordinator,
} from '../../src/index.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { requestReceived, useEmulator } from '../helpers/emulator.js';
import { describeImage, makeImage } from '../helpers/images.js';
import { advanceUndiciClock } from '../helpers/undici-clock.js';

const env = useEmulator();

describe('generating images', () => {
  it('returns n images of the requested size and format with their cost', async () => {
    const result = await env.client().generate({ prompt: 'a red fox', n: 2, size: '1536x1024', quality: 'low', output_format: 'jpeg' });
    expect(result.data).toHaveLength(2);
    for (const image of decodeImages(result)) {
      expect(await describeImage(image)).toMatchObject({ format: 'jpeg', width: 1536, height: 1024 });
    }
    expect(result.cost).toMatchObject({ basis: 'table', totalUsd: 0.0106, n: 2 });
    expect(result.requestId).toMatch(/^req_/);
  });

  it('sends the spec defaults explicitly and leaves partial_images out unless asked', async () => {
    await env.client().generate({ prompt: 'a lighthouse' });
    const [received] = env.emulator.requests;
    expect(received?.fields).toMatchObject({ model: 'gpt-image-2', n: 1, size: '1024x1024', quality: 'auto', output_format: 'png', stream: false });
    expect(received?.fields).not.toHaveProperty('partial_images');
  });

  it('prices quality auto by the tier the service reports', async () => {
    const result = await env.client().generate({ prompt: 'auto quality' });
    expect(result.quality).not.toBe('auto');
    expect(result.cost.basis).toBe('table');
  });

  it('tolerates a base URL that ends in /v1', async () => {
    const client = new PictorClient({ baseURL: `${env.url}/v1/`, apiKey: DEV_API_KEY });
    expect((await client.generate({ prompt: 'x', quality: 'low' })).data).toHaveLength(1);
    expect(env.emulator.requests[0]?.path).toBe('/v1/images/generations');
  });

  it('refuses bad input before anything is sent', async () => {
    const client = env.client();
    await expect(client.generate({ prompt: 'x', background: 'transparent', output_format: 'jpeg' })).rejects.toMatchObject({
      code: 'validation_error',
      param: 'output_format',
    });
    expect(() => client.generateStream({ prompt: 'x', n: 11 })).toThrow(ValidationError);
    expect(env.emulator.requests).toHaveLength(0);
  });
});

describe('editing images', () => {
  it('sends each image as an image[] part with its real content type', async () => {
    const png = await makeImage('png', 40, 40);
    const webp = await makeImage('webp', 40, 40, { r: 0, g: 0, b: 255 });
    const result = await env.client().edit({
      prompt: 'make it purple',
      image: [
        { data: png, filename: 'a.png' },
        { data: webp, filename: 'b.dat' },
      ],
      quality: 'low',
    });
    expect(result.operation).toBe('edit');
    expect(result.cost.basis).toBe('estimate');
    const parts = env.emulator.requests[0]?.images ?? [];
    expect(parts.map((p) => [p.field, p.contentType])).toEqual([
      ['image[]', 'image/png'],
      ['image[]', 'image/webp'],
    ]);
    expect(await describeImage(decodeImages(result)[0]!)).toMatchObject({ format: 'png', width: 1024, height: 1024 });
  });

  it('streams an edit with image_edit events', async () => {
    const stream = env.client().editStream({ prompt: 'edit', image: [{ data: await makeImage() }], partial_images: 1 });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(['image_edit.partial_image', 'image_edit.completed']);
  });
});

describe('streaming', () => {
  it('yields the partial images asked for, then the completed image with usage', async () => {
    const events: ImageStreamEvent[] = [];
    for await (const event of env.client().generateStream({ prompt: 'a castle', partial_images: 3, size: '1024x1536' })) events.push(event);
    expect(events.map((e) => (isPartialEvent(e) ? `partial ${e.partial_image_index}` : 'completed'))).toEqual([
      'partial 0',
      'partial 1',
      'partial 2',
      'completed',
    ]);
    const last = events.at(-1)!;
    expect(last).toMatchObject({ type: 'image_generation.completed', usage: { total_tokens: expect.any(Number) } });
    expect(await describeImage(Buffer.from(last.b64_json, 'base64'))).toMatchObject({ width: 1024, height: 1536 });
    expect(env.emulator.requests[0]?.fields).toMatchObject({ stream: true, partial_images: 3 });
  });

  it('gives the finished result of a stream with its cost', async () => {
    const result = await env.client().generateStream({ prompt: 'two birds', n: 2, quality: 'medium', partial_images: 1 }).finalResult();
    expect(result.data).toHaveLength(2);
    expect(result.cost).toMatchObject({ basis: 'table', totalUsd: 0.11236 });
  });

  it('aborts the request when the consumer stops reading early, and frees the slot', async () => {
    env.emulator.configure({ latencyMs: 400 });
    const limiter = new ImageLimiter({ maxConcurrent: 1 });
    const client = env.client({ limiter });
    for await (const event of client.generateStream({ prompt: 'slow', partial_images: 3 })) {
      expect(isPartialEvent(event)).toBe(true);
      break;
    }
    // The emulator's server learns the socket closed on its own time: bounded by the test's time, not poll's default second.
    await expect.poll(() => env.emulator.stats().openStreams, { timeout: 15_000 }).toBe(0);
    // The only slot is free again: a second request runs.
    env.emulator.configure({ latencyMs: 0 });
    expect((await client.generate({ prompt: 'next', quality: 'low' })).data).toHaveLength(1);
    await limiter.stop();
  });

  it('streams a request the spec’s parser made as it is, and parses anything else', async () => {
    const parsedByClient: unknown[] = [];
    const original = GenerationRequestSchema.safeParse.bind(GenerationRequestSchema);
    const spy = vi.spyOn(GenerationRequestSchema, 'safeParse').mockImplementation(((input: unknown) => {
      if (new Error().stack!.includes('/src/client/')) parsedByClient.push(input);
      return original(input);
    }) as never);
    try {
      const request = parseGenerationRequest({ prompt: 'parsed once', quality: 'low', stream: true });
      await env.client().generateStream(request).finalResult();
      expect(parsedByClient).toEqual([]);
      await env.client().generateStream({ ...request }).finalResult();
      expect(parsedByClient).toHaveLength(1);
      // A parsed request that is not a streamed one is parsed again, with stream set.
      await env.client().generateStream(parseGenerationRequest({ prompt: 'not streamed', quality: 'low' })).finalResult();
      expect(parsedByClient).toHaveLength(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('can be read only once', async () => {
    const stream = env.client().generateStream({ prompt: 'once' });
    await stream.finalResult();
    await expect(stream.finalResult()).rejects.toThrow(/only once/);
  });

  it('parses a single event of about 30 MB', async () => {
    env.emulator.configure({ padImageBytes: 22 * 1024 * 1024 });
    const result = await env.client().generateStream({ prompt: 'huge', partial_images: 0 }).finalResult();
    const [bytes] = decodeImages(result);
    expect(bytes!.length).toBeGreaterThanOrEqual(22 * 1024 * 1024);
    expect(result.data[0]!.b64_json.length).toBeGreaterThan(29 * 1024 * 1024);
    expect((await describeImage(bytes!)).format).toBe('png');
  });
});

describe('errors', () => {
  it('reports a bad key as authentication_failed without echoing the key', async () => {
    const client = new PictorClient({ baseURL: env.url, apiKey: 'sk-live-very-secret-value' });
    const error = await client.generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ code: 'authentication_failed', status: 401 });
    expect(JSON.stringify(error) + String(error) + (error as Error).stack).not.toContain('very-secret');
  });

  it('never retries a moderation refusal', async () => {
    const error = await env.client().generate({ prompt: 'something forbidden' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModerationError);
    expect(error).toMatchObject({ code: 'moderation_blocked', serviceCode: 'moderation_blocked' });
    expect(env.emulator.requests).toHaveLength(1);
  });

  it('never retries an exhausted quota', async () => {
    env.emulator.configure({ quotaExhausted: true });
    const error = await env.client().generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuotaExhaustedError);
    expect(error).toMatchObject({ code: 'quota_exhausted', status: 429 });
    expect(env.emulator.requests).toHaveLength(1);
  });

  it.each([
    ['every retry was used', 1, 2],
    ['the service asked to wait longer than the time left of the request', 3_600_000, 1],
  ] as const)('says on the error how many times it sent the request when %s', async (_when, retryAfterMs, sends) => {
    env.emulator.injectFault('service_unavailable', { count: 3, retryAfterMs });
    const error = await env.client({ maxRetries: 1 }).generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(env.emulator.requests).toHaveLength(sends);
    expect(error).toMatchObject({ code: 'server_error', attempts: sends });
  });

  // A 500 names no wait: the first retry's own backoff (375–500 ms) outlasts a 370 ms timeout, so it stops at once.
  // The sentences saying so are checked in describe-retry-stop.test.ts.
  it.each([
    ['the service named the wait', 'service_unavailable', 3_600_000, 'service_wait'],
    ['the service named no wait, so the wait was the client’s own backoff', 'server_error', undefined, 'backoff'],
  ] as const)('says on the error why it stopped before its retries ran out when %s', async (_when, fault, retryAfterMs, stoppedFor) => {
    env.emulator.injectFault(fault, { count: 3, retryAfterMs });
    const error = await env.client({ maxRetries: 2, timeoutMs: 370 }).generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(env.emulator.requests).toHaveLength(1);
    expect(error).toMatchObject({ code: 'server_error', attempts: 1, stoppedFor });
  });

  it('leaves stoppedFor unset when every retry was used', async () => {
    env.emulator.injectFault('service_unavailable', { count: 2, retryAfterMs: 1 });
    const error = await env.client({ maxRetries: 1 }).generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'server_error', attempts: 2 });
    expect((error as ServerError).stoppedFor).toBeUndefined();
  });

  it('names the field the service rejected', async () => {
    const response = await fetch(`${env.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEV_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-image-2', prompt: 'x', size: '1x1' }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { param: 'size', type: 'invalid_request_error' } });
  });

  it.each(['server_error', 'service_unavailable', 'rate_limited'] as const)(
    'retries %s, which cannot have been billed, and succeeds',
    async (fault) => {
      env.emulator.injectFault(fault);
      const retries: string[] = [];
      const result = await env.client().generate({ prompt: 'x', quality: 'low' }, { onRetry: ({ error }) => retries.push(error.code) });
      expect(result.data).toHaveLength(1);
      expect(retries).toHaveLength(1);
      expect(env.emulator.requests.length).toBe(2);
    },
  );

  it('never resends a request whose connection was reset after it was sent', async () => {
    env.emulator.injectFault('reset_before_response');
    const error = await env.client().generate({ prompt: 'x', quality: 'low' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'stream_broken', message: expect.stringMatching(/may have been billed/) });
    expect(env.emulator.requests).toHaveLength(1);
  });

  it('gives up after maxRetries and reports the last failure', async () => {
    env.emulator.injectFault('server_error', { count: 5 });
    const error = await env.client({ maxRetries: 1 }).generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(env.emulator.requests).toHaveLength(2);
  });

  it('makes a useful error of an HTML error page', async () => {
    env.emulator.injectFault('html_error');
    const error = await env.client({ maxRetries: 0 }).generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'server_error', status: 502 });
    expect((error as Error).message).not.toMatch(/<html|<body/i);
  });

  it('reports a connection refused as connection_failed after retrying', async () => {
    const client = new PictorClient({ baseURL: 'http://127.0.0.1:9', apiKey: 'k', maxRetries: 1 });
    await expect(client.generate({ prompt: 'x' })).rejects.toMatchObject({ code: 'connection_failed' });
  });

  it.each([
    ['reset_mid_stream', 'stream_broken'],
    ['malformed_event', 'stream_broken'],
  ] as const)('never resends after a stream has started (%s)', async (fault, code) => {
    env.emulator.injectFault(fault);
    const error = await env.client().generateStream({ prompt: 'x', partial_images: 2 }).finalResult().catch((e: unknown) => e);
    expect(error).toMatchObject({ code });
    expect(error).toBeInstanceOf(StreamBrokenError);
    expect(env.emulator.requests).toHaveLength(1);
  });

  it('surfaces an error event inside a stream as an API error', async () => {
    env.emulator.injectFault('stream_error_event');
    const error = await env.client().generateStream({ prompt: 'x', partial_images: 2 }).finalResult().catch((e: unknown) => e);
    expect(error).toHaveProperty('serviceCode');
    // The event's own message, with no status word before it (an error event has no HTTP status).
    expect((error as Error).message).toMatch(/^The server had an error/);
    expect(env.emulator.requests).toHaveLength(1);
  });

  it('ends a stalled stream with an idle timeout', async () => {
    // The emulator sends one partial, then nothing. The idle timeout is undici's, on its own clock, moved on by the
    // whole timeout once that partial is in: no test waits on time.
    env.emulator.injectFault('stalled_stream');
    const stream = env.client({ idleTimeoutMs: 60_000 }).generateStream({ prompt: 'x', partial_images: 2 });
    const error = await (async () => {
      for await (const _event of stream) advanceUndiciClock(60_000);
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'timeout', kind: 'idle' });
  });

  it('ends a request that takes too long with a total timeout', async () => {
    // The timeout's own clock is faked, and moved on by the whole timeout once the emulator has the request (it takes
    // twice that long to answer): no test waits on time.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    env.emulator.configure({ latencyMs: 120_000 });
    const received = requestReceived(env.emulator);
    const failure = env.client({ timeoutMs: 60_000 }).generate({ prompt: 'x' }).catch((e: unknown) => e);
    await received;
    vi.advanceTimersByTime(60_000);
    expect(await failure).toMatchObject({ code: 'timeout', kind: 'total' });
  });

  it('is cancelled by its signal, queued or running', async () => {
    // The emulator would answer in a minute: each cancel strikes on an event (the request reached the emulator, the
    // queue told the other its place), never after a wait.
    env.emulator.configure({ latencyMs: 60_000 });
    const limiter = new ImageLimiter({ maxConcurrent: 1 });
    const client = env.client({ limiter });
    const running = new AbortController();
    const received = requestReceived(env.emulator);
    const first = client.generate({ prompt: 'running' }, { signal: running.signal });
    onTestFinished(async () => {
      running.abort();
      await first.catch(() => {});
      await limiter.stop();
    });
    await received;

    // Held behind the running one (the only slot), and cancelled there: it never reaches the emulator.
    const queued = new AbortController();
    const second = client.generate({ prompt: 'queued' }, { signal: queued.signal, onQueuePosition: () => queued.abort() });
    await expect(second).rejects.toMatchObject({ code: 'aborted', mayBeBilled: false });
    expect(env.emulator.requests).toHaveLength(1);

    running.abort();
    await expect(first).rejects.toMatchObject({ code: 'aborted' });
  });
});

describe('a request that ends before it is sent', () => {
  /** A limiter whose only slot a request holds until the test ends (the emulator answers in a minute). */
  async function busyLimiter() {
    env.emulator.configure({ latencyMs: 60_000 });
    const limiter = new ImageLimiter({ maxConcurrent: 1 });
    const client = env.client({ limiter });
    const holding = new AbortController();
    const received = requestReceived(env.emulator);
    const first = client.generate({ prompt: 'holding the slot' }, { signal: holding.signal });
    onTestFinished(async () => {
      holding.abort();
      await first.catch(() => {});
      await limiter.stop();
    });
    await received;
    return { client, limiter };
  }

  it('says it was not billed when it was cancelled before it started, plain or streamed', async () => {
    const cancelled = AbortSignal.abort();
    const client = env.client();
    await expect(client.generate({ prompt: 'x' }, { signal: cancelled })).rejects.toMatchObject({ code: 'aborted', mayBeBilled: false });
    await expect(client.generateStream({ prompt: 'x' }, { signal: cancelled }).finalResult()).rejects.toMatchObject({ code: 'aborted', mayBeBilled: false });
    expect(env.emulator.requests).toHaveLength(0);
  });

  it('says it was not billed when its stream was cancelled while queued', async () => {
    const { client } = await busyLimiter();
    const stream = client.generateStream({ prompt: 'queued' }, { onQueuePosition: () => stream.abort() });
    await expect(stream.finalResult()).rejects.toMatchObject({ code: 'aborted', mayBeBilled: false });
    expect(env.emulator.requests).toHaveLength(1);
  });

  it('says it was not billed when the limiter was stopped while it was queued', async () => {
    const { client, limiter } = await busyLimiter();
    const queued = client.generate({ prompt: 'queued' }, { onQueuePosition: () => void limiter.stop() });
    await expect(queued).rejects.toMatchObject({ code: 'aborted', mayBeBilled: false });
    expect(env.emulator.requests).toHaveLength(1);
  });

  it('says it was not billed when its beforeSend stopped it with a cancel', async () => {
    const beforeSend = () => Promise.reject(new AbortedError('the caller gave up'));
    await expect(env.client().generate({ prompt: 'x' }, { beforeSend })).rejects.toMatchObject({ code: 'aborted', mayBeBilled: false });
    expect(env.emulator.requests).toHaveLength(0);
  });

  it('says it was not billed when it was cancelled while waiting to retry an answer that billed nothing', async () => {
    env.emulator.injectFault('server_error');
    const controller = new AbortController();
    const job = env.client().generate({ prompt: 'x' }, { signal: controller.signal, onRetry: () => controller.abort() });
    await expect(job).rejects.toMatchObject({ code: 'aborted', mayBeBilled: false });
    expect(env.emulator.requests).toHaveLength(1);
  });

  it('says it was not billed when the shared queue failed it', async () => {
    // A coordinator of the user's own whose datastore is unreachable when the request's turn comes.
    const coordinator: LimiterCoordinator = {
      join: () => () => undefined,
      pauseUntil: async () => undefined,
      pausedUntil: () => Promise.reject(new Error('Connection is closed.')),
      close: async () => undefined,
    };
    const limiter = new ImageLimiter({ coordinator });
    onTestFinished(() => limiter.stop());
    await expect(env.client({ limiter }).generate({ prompt: 'x' })).rejects.toMatchObject({ mayBeBilled: false });
    expect(env.emulator.requests).toHaveLength(0);
  });
});

describe('partial_images fallback', () => {
  it('drops partial_images with a warning when the service rejects it, and still streams', async () => {
    // A service that does not know partial_images answers 400 naming it.
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (_o: object, msg?: string) => void warnings.push(msg ?? '') };
    env.emulator.injectFault('unknown_partial_images' as never);
    const result = await env.client({ logger }).generateStream({ prompt: 'x', partial_images: 2 }).finalResult().catch((e: unknown) => e);
    expect(result).toHaveProperty('data');
    expect(warnings.some((w) => w.includes('partial_images'))).toBe(true);
    expect(env.emulator.requests.at(-1)?.fields).not.toHaveProperty('partial_images');
  });

  it('hands on at most the partials asked for once it resent without the field and the service chose more', async () => {
    env.emulator.configure({ defaultPartialImages: 3 });
    env.emulator.injectFault('unknown_partial_images' as never);
    const types: string[] = [];
    for await (const event of env.client().generateStream({ prompt: 'x', partial_images: 1 })) types.push(event.type);
    expect(env.emulator.requests.at(-1)?.fields).not.toHaveProperty('partial_images');
    expect(types).toEqual(['image_generation.partial_image', 'image_generation.completed']);
  });
});

describe('throttling', () => {
  it('finishes a burst beyond the whole images-per-minute allowance with zero 429s from the service', async () => {
    env.emulator.configure({ imagesPerMinute: 120 });
    const limiter = new ImageLimiter({ imagesPerMinute: 120, maxConcurrent: 8 });
    const client = env.client({ limiter });
    // 126 images in one go: the whole minute's allowance at once, then 6 more that must wait for the refill (2 a
    // second, 3 s; each image past the allowance adds half a second of waiting and checks nothing new).
    const results = await Promise.all(Array.from({ length: 42 }, (_, i) => client.generate({ prompt: `burst ${i % 3}`, n: 3, quality: 'low' })));
    expect(results.flatMap((r) => r.data)).toHaveLength(126);
    expect(env.emulator.stats().rateLimited).toBe(0);
    await limiter.stop();
  });

  it('waits out 429s for every queued request, not just the one that got it', async () => {
    env.emulator.injectFault('rate_limited', { count: 3, retryAfterMs: 300 });
    const limiter = new ImageLimiter({ maxConcurrent: 2 });
    const client = env.client({ limiter });
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => client.generate({ prompt: `wave ${i}`, quality: 'low' })));
    expect(results).toHaveLength(6);
    expect(env.emulator.stats().rateLimited).toBe(3);
    await limiter.stop();
  });
});

describe('a 429 whose pause the shared limiter cannot pass on', () => {
  it('still waits and retries the request, which the service refused unbilled, instead of failing it with the limiter’s error', async () => {
    env.emulator.injectFault('rate_limited', { count: 1, retryAfterMs: 50 });
    // A limiter shared through Redis whose Redis went away: it holds this process, then cannot tell the others.
    class UntoldPause extends ImageLimiter {
      override async pause(ms: number): Promise<void> {
        await super.pause(ms);
        throw new Error('Redis went away');
      }
    }
    const limiter = new UntoldPause();
    const result = await env.client({ limiter }).generate({ prompt: 'a patient heron', quality: 'low' });
    expect(result.data).toHaveLength(1);
    expect(env.emulator.stats().rateLimited).toBe(1);
    await limiter.stop();
  });
});

describe('connections', () => {
  it('keeps working for a service whose connection pool was let go while the process talked to many others', async () => {
    const client = env.client();
    await client.generate({ prompt: 'a kite', quality: 'low' });
    // Requests to more services than the process keeps pools for (ports where nothing listens: each fails at once).
    for (let port = 1; port <= 20; port++) {
      const elsewhere = new PictorClient({ baseURL: `http://127.0.0.1:${port}`, apiKey: DEV_API_KEY, maxRetries: 0 });
      await expect(elsewhere.generate({ prompt: 'a kite', quality: 'low' })).rejects.toMatchObject({ code: 'connection_failed' });
    }
    const result = await client.generate({ prompt: 'a kite', quality: 'low' });
    expect(result.data).toHaveLength(1);
  });
});
