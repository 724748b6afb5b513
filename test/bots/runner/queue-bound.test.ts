import { describe, expect, it } from 'vitest';
import { isJobRefusedError, JobRefusedError, type JobSpec } from '../../../bots/runner/index.js';
import { positionWorthShowing, QueueBound } from '../../../bots/runner/queue-bound.js';
import { describeFailure } from '../../../bots/runner/describe-failure.js';
import { ImageLimiter } from '../../../src/index.js';
import { recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();

function lowJob(prompt: string): JobSpec {
  return { kind: 'generate', prompt, options: { quality: 'low' }, requester: requester() };
}

describe('the runner with a bound on queued jobs', () => {
  it('refuses a job of a burst at once once as many jobs wait as the bound allows: nothing is reserved or sent for it', async () => {
    kit.emu.emulator.configure({ latencyMs: 300 });
    const limiter = new ImageLimiter({ maxConcurrent: 1 });
    const { runner, store } = await kit.runner({ partialImages: 0, maxQueuedJobs: 2, clientOptions: { limiter } });
    const late = requester();

    const submits = await Promise.allSettled([
      runner.submit(lowJob('one'), recordingSink().sink),
      runner.submit(lowJob('two'), recordingSink().sink),
      runner.submit({ ...lowJob('three'), requester: late }, recordingSink().sink),
    ]);

    expect(submits.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const error = (submits[2] as PromiseRejectedResult).reason as JobRefusedError;
    expect(isJobRefusedError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'queue_full', limit: 2, used: 2 });
    expect(error.message).toBe(
      'The bot is busy: 2 jobs are waiting, the most it queues at once (2), so this one was not started and costs nothing; none has been sent in the last minute, so try again in a few minutes.',
    );
    expect(describeFailure(error)).toMatchObject({ code: 'queue_full', retryable: true });
    for (const s of submits) if (s.status === 'fulfilled') expect((await s.value.done).type).toBe('completed');
    expect(kit.emu.emulator.requests).toHaveLength(2);
    expect(await store.spentToday(`discord:${late.userId}`, Date.now())).toBe(0);
    await limiter.stop();
  });

  it('takes jobs again once the queue has room', async () => {
    const { runner } = await kit.runner({ partialImages: 0, maxQueuedJobs: 1 });
    const first = await runner.submit(lowJob('first'), recordingSink().sink);
    await expect(runner.submit(lowJob('too soon'), recordingSink().sink)).rejects.toMatchObject({ code: 'queue_full' });
    expect((await first.done).type).toBe('completed');
    const next = await runner.submit(lowJob('next'), recordingSink().sink);
    expect((await next.done).type).toBe('completed');
  });

  it('refuses a bound that is not a whole number of jobs, 1 or more', async () => {
    await expect(kit.runner({ maxQueuedJobs: 0 })).rejects.toMatchObject({ code: 'validation_error', param: 'maxQueuedJobs' });
  });
});

describe('QueueBound', () => {
  it('has room below the bound', () => {
    const bound = new QueueBound({ maxQueued: 3, now: () => 0 });
    expect(bound.refusal(2)).toBeUndefined();
    expect(bound.refusal(3)).toBeInstanceOf(JobRefusedError);
  });

  it('names the wait from the pace at which jobs left the queue over the last minute', () => {
    let now = 0;
    const bound = new QueueBound({ maxQueued: 6, now: () => now });
    for (const at of [10_000, 30_000, 50_000]) {
      now = at;
      bound.started();
    }
    now = 60_000;
    // 3 jobs sent in a minute, 6 waiting: about 2 minutes.
    expect(bound.refusal(6)?.message).toMatch(/at the present pace a new job would wait about 2 min, so try again then\.$/);
    now = 105_000;
    // Only the start at 0:50 is still within the minute: 6 minutes.
    expect(bound.refusal(6)?.message).toMatch(/about 6 min,/);
    now = 200_000;
    expect(bound.refusal(6)?.message).toMatch(/none has been sent in the last minute, so try again in a few minutes\.$/);
  });
});

describe('which queue positions are worth showing', () => {
  it('shows the first position, every one near the front, and further back only a fall by a fifth', () => {
    expect(positionWorthShowing(undefined, 500)).toBe(true);
    expect(positionWorthShowing(500, 499)).toBe(false);
    expect(positionWorthShowing(500, 400)).toBe(true);
    expect(positionWorthShowing(12, 9)).toBe(true);
    expect(positionWorthShowing(9, 8)).toBe(true);
    expect(positionWorthShowing(8, 8)).toBe(false);
  });

  it('shows a position that moved back', () => {
    expect(positionWorthShowing(100, 101)).toBe(true);
  });

  it('gives a job behind 1,600 others a few dozen positions, not 1,600', () => {
    let shown: number | undefined;
    let count = 0;
    for (let ahead = 1600; ahead >= 0; ahead--) {
      if (!positionWorthShowing(shown, ahead)) continue;
      shown = ahead;
      count++;
    }
    expect(shown).toBe(0);
    expect(count).toBeLessThan(40);
  });
});
