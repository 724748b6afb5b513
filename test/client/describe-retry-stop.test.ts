import { describe, expect, it } from 'vitest';
import { ServerError } from '../../src/index.js';
import { useEmulator } from '../helpers/emulator.js';

const env = useEmulator();

/** What the client's error says when it stopped before its retries ran out: whose wait outlasted the request's time. */
describe('the words of a request the client stopped sending again before its retries ran out', () => {
  // A 500 names no wait: the first retry's own backoff (375–500 ms) outlasts a 370 ms timeout, so it stops at once.
  it.each([
    ['the service named the wait', 'service_unavailable', 3_600_000, /; the service asked to wait 1 h before trying again, longer than the .+ left of the request's timeout$/],
    ['the service named no wait, so the wait was the client’s own backoff', 'server_error', undefined, /; the service named no wait, and the client's own wait before trying again, \d+ ms, is longer than the \d+ ms left of the request's timeout$/],
  ] as const)('says whose wait it was when %s', async (_when, fault, retryAfterMs, said) => {
    env.emulator.injectFault(fault, { count: 3, retryAfterMs });
    const error = await env.client({ maxRetries: 2, timeoutMs: 370 }).generate({ prompt: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect((error as ServerError).message).toMatch(said);
  });
});
