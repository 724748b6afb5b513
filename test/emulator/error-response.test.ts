import { describe, expect, it } from 'vitest';
import { rateLimitExceeded, tooManyRequestsInFlight } from '../../src/emulator/error-response.js';

/** An answer as it goes on the wire: status, headers and the body's exact text. */
async function wire(response: Response) {
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
}

describe('the emulator’s 429 answers', () => {
  it('says a rate limit was reached, with the limit per minute when there is one, and the wait in both headers', async () => {
    const body = '{"error":{"message":"Rate limit reached for images. Limit 5 images per minute. Please try again in 1.25s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}';
    expect(await wire(rateLimitExceeded(5, 1250))).toEqual({
      status: 429,
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'retry-after': '2', 'retry-after-ms': '1250' },
      body,
    });
    expect((await wire(rateLimitExceeded(undefined, 12_300))).body).toBe(
      '{"error":{"message":"Rate limit reached for images. Please try again in 13s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}',
    );
  });

  it('says too many requests are in flight, with the most answered at once, in the same shape', async () => {
    const body = '{"error":{"message":"Too many requests at once: at most 2 are answered at a time. Please try again in 0.5s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}';
    expect(await wire(tooManyRequestsInFlight(2, 500))).toEqual({
      status: 429,
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'retry-after': '1', 'retry-after-ms': '500' },
      body,
    });
  });
});
