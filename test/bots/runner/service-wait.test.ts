import { afterEach, describe, expect, it } from 'vitest';
import { describeFailure } from '../../../bots/runner/index.js';
import { PictorClient, RateLimitError, ServerError } from '../../../src/index.js';
import { head, misbehavingServer, type MisbehavingServer } from '../../client/misbehaving-server.js';

/**
 * The client (its retries, and `stoppedFor`, which the n8n node words) and the chat bots (which tell a member how long
 * to wait) read the wait the service named from the same headers: an answer naming it only by the reset of its
 * requests limit is a named wait to both.
 */
describe('the wait the service named, as the client and the bots read it', () => {
  let server: MisbehavingServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it.each([
    [429, 'rate_limit_exceeded', 'rate_limited', RateLimitError],
    [503, 'service_unavailable', 'server_error', ServerError],
  ] as const)('is the x-ratelimit-reset-requests of a %i answer that names no retry-after', async (status, serviceCode, code, type) => {
    const body = JSON.stringify({ error: { message: 'wait', type: 'requests', param: null, code: serviceCode } });
    server = await misbehavingServer((req) => {
      req.socket.end(head(status, { 'content-type': 'application/json', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1h0m0s' }, body));
    });
    // An hour's wait outlasts the request's 370 ms: the client stops after the first send, for the service's wait.
    const error = await new PictorClient({ baseURL: server.url, apiKey: 'sk-test', maxRetries: 2, timeoutMs: 370 }).generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(type);
    expect(error).toMatchObject({ code, attempts: 1, stoppedFor: 'service_wait' });
    expect(server.requests).toBe(1);
    if (error instanceof RateLimitError) expect(error.retryAfterMs).toBe(3_600_000);

    const said = describeFailure(error);
    expect(said.code).toBe(code);
    expect(said.words.values).toMatchObject({ known: 'yes' });
  });
});
