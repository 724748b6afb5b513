import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ACK_WAITS_MS, arrivalOf } from '../../../bots/slack/answer-by.js';
import { createReplayGuard } from '../../../bots/slack/replay-guard.js';
import { CLAIM_WAIT_MS } from '../../../src/internal.js';

/** A verified request's headers, as Bolt's receiver hands them to `extract`. */
function request(signature: string): IncomingMessage {
  return { headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': String(Math.floor(Date.now() / 1000)) } } as unknown as IncomingMessage;
}

describe('the Slack replay guard', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('refuses a request, acknowledged and logged, when the state does not answer its check within the claim wait (a Redis down holds it), instead of holding it', async () => {
    vi.useFakeTimers();
    const errors: string[] = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (_: unknown, msg?: string) => void errors.push(String(msg)) };
    const guard = createReplayGuard({ logger, seen: { claimOnce: () => new Promise<boolean>(() => {}), releaseClaim: () => Promise.resolve() } });
    const context = guard.extract(request('v0=abc'));
    const ack = vi.fn(async () => {});
    const next = vi.fn(async () => {});
    const done = guard.middleware({ context, body: { type: 'event_callback' }, ack, next } as never);
    await vi.advanceTimersByTimeAsync(CLAIM_WAIT_MS);
    await done;
    expect(next).not.toHaveBeenCalled();
    expect(ack).toHaveBeenCalledTimes(1);
    expect(errors).toEqual(['could not check a Slack request against the ones seen lately: refused it']);
  });

  it('waits for its check only for what is left of the waits before the acknowledgement: a request that arrived 1.9 s ago (a slow installation read) is refused 0.1 s later', async () => {
    vi.useFakeTimers();
    const logger = { debug() {}, info() {}, warn() {}, error() {} };
    const guard = createReplayGuard({ logger, seen: { claimOnce: () => new Promise<boolean>(() => {}), releaseClaim: () => Promise.resolve() } });
    const context = { ...arrivalOf(() => Date.now() - (ACK_WAITS_MS - 100)), ...guard.extract(request('v0=abd')) };
    const ack = vi.fn(async () => {});
    const next = vi.fn(async () => {});
    void guard.middleware({ context, body: { type: 'event_callback' }, ack, next } as never);
    await vi.advanceTimersByTimeAsync(99);
    expect(ack).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(ack).toHaveBeenCalledTimes(1);
    expect(next).not.toHaveBeenCalled();
  });
});
