import { describe, expect, it } from 'vitest';
import type { FinalUpdate, JobSpec } from '../../../bots/runner/index.js';
import { DEV_API_KEY } from '../../../src/emulator/index.js';
import { estimatePrice, PRICE_TABLE } from '../../../src/index.js';
import { expectOrderedSequence, recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();
const LOW = PRICE_TABLE['1024x1024'].low;

function job(overrides: Partial<JobSpec> = {}): JobSpec {
  return { kind: 'generate', prompt: 'a windmill at dusk', options: { quality: 'low' }, requester: requester(), ...overrides };
}

function expectFailed(final: FinalUpdate): Extract<FinalUpdate, { type: 'failed' }> {
  if (final.type !== 'failed') throw new Error(`expected failed, got ${final.type}`);
  // A kind sentence: no stack frames, no key, no raw service answer.
  expect(final.message).toMatch(/^[A-Z].*\.$/);
  expect(final.message).not.toMatch(/\n|\bat .+:\d+|Error:/);
  expect(final.message).not.toContain(DEV_API_KEY);
  return final;
}

const userKey = (spec: JobSpec) => `${spec.requester.platform}:${spec.requester.userId}`;

describe('JobRunner charging and failures', () => {
  it('holds the upper-bound estimate while the job runs and settles the real cost when it completes', async () => {
    const { runner, store } = await kit.runner({ partialImages: 0 });
    const spec = job({ options: { quality: 'auto' } });
    const estimate = estimatePrice({ operation: 'generate', size: '1024x1024', quality: 'auto', n: 1 });
    let heldWhileRunning: number | undefined;
    const rec = recordingSink({
      onUpdate: async (update) => {
        if (update.type === 'started') heldWhileRunning = await store.spentToday(userKey(spec), Date.now());
      },
    });

    const final = await (await runner.submit(spec, rec.sink)).done;

    if (final.type !== 'completed') throw new Error(`expected completed, got ${final.type}`);
    expect(estimate.basis).toBe('estimate');
    expect(heldWhileRunning).toBeCloseTo(estimate.totalUsd, 9);
    expect(final.cost.basis).toBe('table');
    expect(final.cost.totalUsd).toBeLessThan(estimate.totalUsd);
    expect(await store.spentToday(userKey(spec), Date.now())).toBeCloseTo(final.cost.totalUsd, 9);
    expect(await store.spentToday(`discord:${spec.requester.scopeId}`, Date.now())).toBeCloseTo(final.cost.totalUsd, 9);
  });

  it('reports a moderation refusal kindly, not worth retrying, and releases the reservation', async () => {
    const { runner, store } = await kit.runner();
    const spec = job({ prompt: 'something forbidden' });
    const rec = recordingSink();

    const final = expectFailed(await (await runner.submit(spec, rec.sink)).done);

    expect(final.code).toBe('moderation_blocked');
    expect(final.retryable).toBe(false);
    expect(final.message).toContain('content policy');
    expectOrderedSequence(rec.received.map((r) => r.update));
    expect(await store.spentToday(userKey(spec), Date.now())).toBe(0);
  });

  it('tells the user to contact the operator when the service account is out of credit', async () => {
    kit.emu.emulator.configure({ quotaExhausted: true });
    const { runner, store } = await kit.runner();
    const spec = job();

    const final = expectFailed(await (await runner.submit(spec, () => {})).done);

    expect(final.code).toBe('quota_exhausted');
    expect(final.retryable).toBe(false);
    expect(final.words).toEqual({ key: 'failure.quota_exhausted' });
    expect(kit.emu.emulator.requests).toHaveLength(1);
    expect(await store.spentToday(userKey(spec), Date.now())).toBe(0);
  });

  it('reports a server error that outlasted the retries as retryable, and releases the reservation', async () => {
    kit.emu.emulator.injectFault('server_error', { count: 2 });
    const { runner, store } = await kit.runner({ clientOptions: { maxRetries: 1 } });
    const spec = job();

    const final = expectFailed(await (await runner.submit(spec, () => {})).done);

    expect(final.code).toBe('server_error');
    expect(final.retryable).toBe(true);
    expect(final.message).toContain('internal error');
    expect(kit.emu.emulator.requests).toHaveLength(2);
    expect(await store.spentToday(userKey(spec), Date.now())).toBe(0);
  });

  it('says the service is overloaded, with the wait it asked for, on a 503', async () => {
    kit.emu.emulator.injectFault('service_unavailable', { retryAfterMs: 45_000 });
    const { runner } = await kit.runner({ clientOptions: { maxRetries: 0 } });

    const final = expectFailed(await (await runner.submit(job(), () => {})).done);

    expect(final.code).toBe('server_error');
    expect(final.words).toMatchObject({ key: 'failure.server_error', values: { kind: 'overloaded', known: 'yes' } });
    expect(final.message).toContain('45 s');
  });

  it('says the service is busy, and for how long, when it rate-limits the job', async () => {
    kit.emu.emulator.injectFault('rate_limited', { retryAfterMs: 20_000 });
    const { runner } = await kit.runner({ clientOptions: { maxRetries: 0 } });

    const final = expectFailed(await (await runner.submit(job(), () => {})).done);

    expect(final.code).toBe('rate_limited');
    expect(final.retryable).toBe(true);
    expect(final.words).toMatchObject({ key: 'failure.rate_limited', values: { known: 'yes' } });
    expect(final.message).toContain('20 s');
  });

  it('never shows the API key when the service refuses it', async () => {
    const { runner, store } = await kit.runner({ clientOptions: { apiKey: 'sk-wrong-secret-key' } });
    const spec = job();

    const final = expectFailed(await (await runner.submit(spec, () => {})).done);

    expect(final.code).toBe('authentication_failed');
    expect(final.message).not.toContain('sk-wrong-secret-key');
    expect(final.message).toContain('operator');
    expect(await store.spentToday(userKey(spec), Date.now())).toBe(0);
  });

  it('keeps the estimate as spent when the stream breaks after the service started the job, since it may be billed', async () => {
    kit.emu.emulator.injectFault('reset_mid_stream');
    const { runner, store } = await kit.runner({ partialImages: 2 });
    const spec = job();

    const final = expectFailed(await (await runner.submit(spec, () => {})).done);

    expect(final.code).toBe('stream_broken');
    expect(final.retryable).toBe(true);
    expect(await store.spentToday(userKey(spec), Date.now())).toBeCloseTo(LOW, 9);
  });

  it('reports an error event inside the stream as a failure of the service and releases the reservation', async () => {
    kit.emu.emulator.injectFault('stream_error_event');
    const { runner, store } = await kit.runner({ partialImages: 2 });
    const spec = job();
    const rec = recordingSink();

    const final = expectFailed(await (await runner.submit(spec, rec.sink)).done);

    expectOrderedSequence(rec.received.map((r) => r.update));
    expect(final.code).toBe('server_error');
    expect(final.words).toMatchObject({ key: 'failure.server_error', values: { kind: 'stream', known: 'no' } });
    expect(await store.spentToday(userKey(spec), Date.now())).toBe(0);
  });

  it('reports an unreachable service as a connection failure worth retrying', async () => {
    const { runner } = await kit.runner({ clientOptions: { baseURL: 'http://127.0.0.1:9', maxRetries: 0 } });

    const final = expectFailed(await (await runner.submit(job(), () => {})).done);

    expect(final.code).toBe('connection_failed');
    expect(final.retryable).toBe(true);
    expect(final.message).not.toContain('127.0.0.1');
  });
});
