import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { withImageWork, imageWorkNow } from '../../src/core/image-work.js';
import { createEmulator } from '../../src/emulator/index.js';
import { formatResetDuration } from '../../src/emulator/rate-limit-headers.js';
import { TokenBucket } from '../../src/emulator/token-bucket.js';
import { edit, errorOf, generate, solidImage } from './emulator-helpers.js';

const body = (fields: Record<string, unknown> = {}) => ({ prompt: 'a small red kite', quality: 'low', ...fields });

describe('rate limiting by images per minute', () => {
  it('answers 429 rate_limit_exceeded with retry headers once the bucket is empty', async () => {
    const emulator = createEmulator({ imagesPerMinute: 3 });
    const first = await generate(emulator, body({ n: 2 }));
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-requests')).toBe('3');
    expect(first.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    // Two of three images taken: full again in 40 s, less the time the request took (seconds on a busy machine).
    const reset = /^(\d+(?:\.\d+)?)s$/.exec(first.headers.get('x-ratelimit-reset-requests') ?? '');
    expect(Number(reset?.[1])).toBeGreaterThan(30);
    expect(Number(reset?.[1])).toBeLessThanOrEqual(40);

    const second = await generate(emulator, body({ n: 2 }));
    expect(second.status).toBe(429);
    expect(await errorOf(second)).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    const retryMs = Number(second.headers.get('retry-after-ms'));
    // One image short, refilled every 20 s: up to 20 s, less the time since the first request.
    expect(retryMs).toBeGreaterThan(10_000);
    expect(retryMs).toBeLessThanOrEqual(20_000);
    expect(Number(second.headers.get('retry-after'))).toBe(Math.ceil(retryMs / 1000));
    expect(second.headers.get('x-ratelimit-remaining-requests')).toBe('1');
    expect(second.headers.get('x-ratelimit-limit-requests')).toBe('3');

    expect((await generate(emulator, body({ n: 1 }))).status).toBe(200);
    expect(emulator.stats().rateLimited).toBe(1);
    await emulator.close();
  });

  it('refills continuously, so a request passes again after the advertised wait', async () => {
    // The bucket's clock is performance.now(): faked, so the advertised wait passes at once (and exactly).
    vi.useFakeTimers({ toFake: ['performance'] });
    onTestFinished(() => void vi.useRealTimers());
    const emulator = createEmulator();
    expect((await generate(emulator, body({ n: 10 }))).status).toBe(200); // renders once, later answers come from the cache
    emulator.configure({ imagesPerMinute: 60 }); // one image per second
    for (let i = 0; i < 6; i++) expect((await generate(emulator, body({ n: 10 }))).status).toBe(200);
    let limited = await generate(emulator, body());
    while (limited.status === 200) limited = await generate(emulator, body());
    expect(limited.status).toBe(429);
    const wait = Number(limited.headers.get('retry-after-ms'));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(1000);
    expect(limited.headers.get('retry-after')).toBe('1');
    vi.advanceTimersByTime(wait - 1);
    expect((await generate(emulator, body())).status).toBe(429);
    vi.advanceTimersByTime(1);
    expect((await generate(emulator, body())).status).toBe(200);
    await emulator.close();
  });

  it('sends the rate-limit headers on every answer, errors included, while a limit is set', async () => {
    const emulator = createEmulator({ imagesPerMinute: 5 });
    const invalid = await generate(emulator, body({ size: 'tiny' }));
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('x-ratelimit-remaining-requests')).toBe('5');
    const notFound = await emulator.fetch('/v1/nothing', { method: 'POST' });
    expect(notFound.headers.get('x-ratelimit-limit-requests')).toBe('5');
    emulator.configure({ imagesPerMinute: undefined });
    const unlimited = await generate(emulator, body());
    expect(unlimited.headers.get('x-ratelimit-limit-requests')).toBeNull();
    await emulator.close();
  });

  it('limits edits and generations from the same bucket', async () => {
    const emulator = createEmulator({ imagesPerMinute: 1 });
    expect((await generate(emulator, body())).status).toBe(200);
    const response = await edit(emulator, [{ bytes: await solidImage('#444444') }], { prompt: 'x', quality: 'low' });
    expect(response.status).toBe(429);
    await emulator.close();
  });

  it('can be turned on at runtime with configure', async () => {
    const emulator = createEmulator();
    expect((await generate(emulator, body({ n: 4 }))).status).toBe(200);
    emulator.configure({ imagesPerMinute: 2 });
    expect((await generate(emulator, body({ n: 2 }))).status).toBe(200);
    expect((await generate(emulator, body())).status).toBe(429);
    await emulator.close();
  });
});

describe('quota and moderation', () => {
  it('answers 429 insufficient_quota without retry headers when the quota is exhausted', async () => {
    const emulator = createEmulator({ quotaExhausted: true });
    const response = await generate(emulator, body());
    expect(response.status).toBe(429);
    expect(await errorOf(response)).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
    expect(response.headers.get('retry-after')).toBeNull();
    emulator.configure({ quotaExhausted: false });
    expect((await generate(emulator, body())).status).toBe(200);
    expect(emulator.stats()).toMatchObject({ quotaRejected: 1, rateLimited: 0 });
    await emulator.close();
  });

  it('answers 400 moderation_blocked for a prompt containing the marker', async () => {
    const emulator = createEmulator();
    const response = await generate(emulator, body({ prompt: 'Something FORBIDDEN here' }));
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ type: 'image_generation_user_error', code: 'moderation_blocked' });
    await emulator.close();
  });

  it('blocks edits by their prompt too, and the marker can be changed or turned off', async () => {
    const emulator = createEmulator({ moderationMarker: 'nope' });
    const png = await solidImage('#444444');
    expect((await edit(emulator, [{ bytes: png }], { prompt: 'say nope', quality: 'low' })).status).toBe(400);
    expect((await generate(emulator, body({ prompt: 'forbidden is fine here' }))).status).toBe(200);
    emulator.configure({ moderationMarker: undefined });
    expect((await generate(emulator, body({ prompt: 'nope' }))).status).toBe(200);
    await emulator.close();
  });
});

describe('token bucket', () => {
  it('holds imagesPerMinute tokens and refills at imagesPerMinute / 60 per second', () => {
    let now = 0;
    const bucket = new TokenBucket(60, () => now);
    expect(bucket.take(60)).toEqual({ ok: true, remaining: 0 });
    const denied = bucket.take(1);
    expect(denied.ok).toBe(false);
    expect(denied.ok ? 0 : denied.retryAfterMs).toBeCloseTo(1000);
    now = 999;
    expect(bucket.take(1).ok).toBe(false);
    now = 1000;
    expect(bucket.take(1)).toEqual({ ok: true, remaining: 0 });
    now = 1_000_000;
    expect(bucket.remaining()).toBe(60);
  });

  it('counts a request larger than the bucket as a full bucket', () => {
    let now = 0;
    const bucket = new TokenBucket(5, () => now);
    expect(bucket.take(10).ok).toBe(true);
    expect(bucket.take(10).ok).toBe(false);
    now = 60_000;
    expect(bucket.take(10).ok).toBe(true);
  });

  it('writes reset durations the way the service does', () => {
    expect(formatResetDuration(0)).toBe('0s');
    expect(formatResetDuration(17)).toBe('17ms');
    expect(formatResetDuration(1000)).toBe('1s');
    expect(formatResetDuration(1500)).toBe('1.5s');
    expect(formatResetDuration(360_000)).toBe('6m0s');
    expect(formatResetDuration(3_723_000)).toBe('1h2m3s');
  });
});

describe('requests in flight', () => {
  it('answers a request beyond maxRequestsInFlight at once with 429 and Retry-After, and takes one again when a slot frees', async () => {
    const emulator = createEmulator({ maxRequestsInFlight: 2, latencyMs: 600_000 });
    onTestFinished(() => emulator.close());
    const callers = [new AbortController(), new AbortController()];
    const held = callers.map((caller) => generate(emulator, body(), { signal: caller.signal }).catch((err: unknown) => err));
    await vi.waitFor(() => expect(emulator.requests.filter((r) => r.parsed)).toHaveLength(2));

    const refused = await generate(emulator, body());
    expect(refused.status).toBe(429);
    expect(await errorOf(refused)).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after-ms'))).toBeGreaterThan(0);

    callers[0]!.abort(new Error('gone'));
    await held[0];
    emulator.configure({ latencyMs: 0 });
    expect((await generate(emulator, body())).status).toBe(200);
    callers[1]!.abort(new Error('gone'));
    await held[1];
  });

  it('gives a stream’s place back when its caller goes away with the body unread (a fetch aborted after its headers)', async () => {
    const emulator = createEmulator({ maxRequestsInFlight: 1, latencyMs: 600_000 });
    onTestFinished(() => emulator.close());
    const caller = new AbortController();
    const open = await generate(emulator, body({ stream: true, partial_images: 0 }), { signal: caller.signal });
    expect(open.status).toBe(200);
    caller.abort(new Error('gone'));
    emulator.configure({ latencyMs: 0 });
    expect((await generate(emulator, body())).status).toBe(200);
  });

  it('answers 32 requests at once unless told otherwise, and refuses a maxRequestsInFlight that is not a whole number of at least 1', () => {
    expect(createEmulator().settings.maxRequestsInFlight).toBe(32);
    expect(() => createEmulator({ maxRequestsInFlight: 0 })).toThrow(/maxRequestsInFlight/);
    expect(() => createEmulator({ maxRequestsInFlight: 1.5 })).toThrow(/maxRequestsInFlight/);
  });
});

describe('image work of a request whose caller goes away', () => {
  async function withBoundFull(): Promise<() => Promise<void>> {
    let letItEnd!: () => void;
    const running = new Promise<void>((resolve) => (letItEnd = resolve));
    const holders = [withImageWork(() => running), withImageWork(() => running)];
    return async () => {
      letItEnd();
      await Promise.all(holders);
    };
  }

  it("takes an edit's waiting image work out of the line", async () => {
    const emulator = createEmulator();
    onTestFinished(() => emulator.close());
    const input = await solidImage('#cc3333');
    const end = await withBoundFull();
    onTestFinished(end);
    const caller = new AbortController();
    const answer = edit(emulator, [{ bytes: input }, { bytes: input }], { prompt: 'a kite' }, { signal: caller.signal }).catch((err: unknown) => err);
    await vi.waitFor(() => expect(imageWorkNow().waiting).toBe(1));

    caller.abort(new Error('the client went away'));
    await vi.waitFor(() => expect(imageWorkNow()).toEqual({ running: 2, waiting: 0 }));
    expect(await answer).toBeInstanceOf(Error);
  });

  it("takes a generation's waiting image work out of the line", async () => {
    const emulator = createEmulator();
    onTestFinished(() => emulator.close());
    const end = await withBoundFull();
    onTestFinished(end);
    const caller = new AbortController();
    const answer = generate(emulator, body({ prompt: 'a kite that waits its turn', n: 2 }), { signal: caller.signal }).catch((err: unknown) => err);
    await vi.waitFor(() => expect(imageWorkNow().waiting).toBe(2));

    caller.abort(new Error('the client went away'));
    await vi.waitFor(() => expect(imageWorkNow()).toEqual({ running: 2, waiting: 0 }));
    expect(await answer).toBeInstanceOf(Error);
  });

  it('still answers another request that was sharing the drawing of one whose caller went away', async () => {
    const emulator = createEmulator();
    onTestFinished(() => emulator.close());
    const end = await withBoundFull();
    // Let go however the test ends: the bound is the process's, shared with the files that run after this one.
    onTestFinished(end);
    const same = body({ prompt: 'two kites asked for at once' });
    const caller = new AbortController();
    const gone = generate(emulator, same, { signal: caller.signal }).catch((err: unknown) => err);
    await vi.waitFor(() => expect(imageWorkNow().waiting).toBe(1));
    const staying = generate(emulator, same);
    // Both read and waiting on the one drawing (the second found it in the cache).
    await vi.waitFor(() => expect(emulator.requests.filter((r) => r.parsed)).toHaveLength(2));
    expect(imageWorkNow().waiting).toBe(1);
    caller.abort(new Error('the client went away'));
    expect(await gone).toBeInstanceOf(Error);

    await end();
    expect((await staying).status).toBe(200);
  });

  it('keeps the shared drawing in its place in the line while another request still wants it, and answers that one', async () => {
    const emulator = createEmulator();
    onTestFinished(() => emulator.close());
    const end = await withBoundFull();
    onTestFinished(end);
    const same = body({ prompt: 'two kites, one of them let go' });
    const caller = new AbortController();
    const gone = generate(emulator, same, { signal: caller.signal }).catch((err: unknown) => err);
    await vi.waitFor(() => expect(imageWorkNow().waiting).toBe(1));
    const staying = generate(emulator, same);
    await vi.waitFor(() => expect(emulator.requests.filter((r) => r.parsed)).toHaveLength(2));

    caller.abort(new Error('the client went away'));
    // Not drawn anew at the back of the line: the drawing never left it.
    expect(imageWorkNow()).toEqual({ running: 2, waiting: 1 });
    expect(await gone).toBeInstanceOf(Error);
    await end();
    expect((await staying).status).toBe(200);
  });

  it('takes a shared drawing out of the line once every request that wanted it went away', async () => {
    const emulator = createEmulator();
    onTestFinished(() => emulator.close());
    const end = await withBoundFull();
    onTestFinished(end);
    const same = body({ prompt: 'two kites, both let go' });
    const callers = [new AbortController(), new AbortController()];
    const first = generate(emulator, same, { signal: callers[0]!.signal }).catch((err: unknown) => err);
    await vi.waitFor(() => expect(imageWorkNow().waiting).toBe(1));
    const second = generate(emulator, same, { signal: callers[1]!.signal }).catch((err: unknown) => err);
    await vi.waitFor(() => expect(emulator.requests.filter((r) => r.parsed)).toHaveLength(2));

    callers[0]!.abort(new Error('the first client went away'));
    expect(await first).toBeInstanceOf(Error);
    callers[1]!.abort(new Error('the second client went away'));
    expect(await second).toBeInstanceOf(Error);
    await vi.waitFor(() => expect(imageWorkNow()).toEqual({ running: 2, waiting: 0 }));
  });
});
