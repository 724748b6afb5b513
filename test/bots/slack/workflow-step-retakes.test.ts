import { afterEach, describe, expect, it, vi } from 'vitest';
import { CLAIM_WAIT_MS } from '../../../src/internal.js';
import { Retakes, STEP_RETAKE_MS } from '../../../bots/slack/listeners/workflow-step.js';
import { RecordingLogger } from '../discord/harness.js';

/**
 * The keys of steps failed because the state could not answer, asked for again by the clock (fake timers): the state
 * is a stub whose claims fail until `answers` says otherwise.
 */
const TTL_MS = 15 * 60_000;
const retaken = 'a workflow step failed on our side is taken now: no later delivery runs it';
const mayRunAgain = 'could not take a workflow step failed on our side: this step may run again on another process';

function failingState(answers: (asked: number) => boolean, { ttlMs }: { ttlMs: number | undefined } = { ttlMs: TTL_MS }) {
  let asked = 0;
  const space = {
    claimOnce: () => (answers(++asked) ? Promise.resolve(true) : Promise.reject(new Error('ECONNRESET'))),
    releaseClaim: () => Promise.resolve(),
    definition: { name: 'slack-messages', dir: 'slack-messages', ttlMs, maxValueBytes: 64 },
  };
  return { space, asked: () => asked };
}

const messagesOf = (logger: RecordingLogger) => logger.entries.map((e) => e.msg);

afterEach(() => {
  vi.useRealTimers();
});

describe('a workflow step’s key asked for again after the state could not answer', () => {
  it('is asked for every STEP_RETAKE_MS until the state answers, then taken, logged once', async () => {
    vi.useFakeTimers();
    const logger = new RecordingLogger();
    const { space, asked } = failingState((n) => n >= 3);
    const retakes = new Retakes(space, logger);
    retakes.add('k1', { execution: 'Fx1' });
    await vi.advanceTimersByTimeAsync(STEP_RETAKE_MS - 1);
    expect(asked()).toBe(0);
    await vi.advanceTimersByTimeAsync(2 * STEP_RETAKE_MS + 1);
    expect(asked()).toBe(3);
    expect(messagesOf(logger)).toEqual([retaken]);
    await vi.advanceTimersByTimeAsync(TTL_MS);
    expect(asked()).toBe(3);
    expect(messagesOf(logger)).toEqual([retaken]);
  });

  it('stops at the space’s TTL when the state never answers, saying once that the step may run again elsewhere', async () => {
    vi.useFakeTimers();
    const logger = new RecordingLogger();
    const { space, asked } = failingState(() => false);
    const retakes = new Retakes(space, logger);
    retakes.add('k1', { execution: 'Fx1' });
    await vi.advanceTimersByTimeAsync(TTL_MS);
    expect(messagesOf(logger)).toEqual([mayRunAgain]);
    const before = asked();
    await vi.advanceTimersByTimeAsync(STEP_RETAKE_MS * 3);
    expect(asked()).toBe(before);
    expect(messagesOf(logger)).toEqual([mayRunAgain]);
  });

  it('stops asking when the bot stops, saying once per step that it may run again elsewhere; a step failed after the stop is not asked for', async () => {
    vi.useFakeTimers();
    const logger = new RecordingLogger();
    const { space, asked } = failingState(() => false);
    const retakes = new Retakes(space, logger);
    retakes.add('k1', { execution: 'Fx1' });
    await vi.advanceTimersByTimeAsync(STEP_RETAKE_MS);
    expect(asked()).toBe(1);
    retakes.stop();
    retakes.add('k2', { execution: 'Fx2' });
    await vi.advanceTimersByTimeAsync(STEP_RETAKE_MS * 3);
    expect(asked()).toBe(1);
    expect(messagesOf(logger)).toEqual([mayRunAgain, mayRunAgain]);
  });

  it('asks by the one claim rule: a claim the state does not answer within the claim wait is not sent again, and when it lands having taken the key the step is taken, the key kept', async () => {
    vi.useFakeTimers();
    const logger = new RecordingLogger();
    const tokens: (string | undefined)[] = [];
    let land!: (taken: boolean) => void;
    const released: string[] = [];
    const space = {
      claimOnce: (_key: string, token?: string) => {
        tokens.push(token);
        return new Promise<boolean>((resolve) => (land = resolve));
      },
      releaseClaim: (key: string) => {
        released.push(key);
        return Promise.resolve();
      },
      definition: { name: 'slack-messages', dir: 'slack-messages', ttlMs: TTL_MS, maxValueBytes: 64 },
    };
    const retakes = new Retakes(space, logger);
    retakes.add('k1', { execution: 'Fx1' });
    await vi.advanceTimersByTimeAsync(STEP_RETAKE_MS + CLAIM_WAIT_MS + 3 * STEP_RETAKE_MS);
    // One claim, of its own (a token, so a late one is this step's and nobody else's).
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toEqual(expect.any(String));
    land(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(messagesOf(logger)).toEqual([retaken]);
    expect(released).toEqual([]);
  });

  it('in a space without a TTL (its keys taken for ever), keeps asking past any fixed time until the state answers', async () => {
    vi.useFakeTimers();
    const logger = new RecordingLogger();
    const answerAt = Math.ceil((2 * 60 * 60_000) / STEP_RETAKE_MS);
    const { space, asked } = failingState((n) => n >= answerAt, { ttlMs: undefined });
    const retakes = new Retakes(space, logger);
    retakes.add('k1', { execution: 'Fx1' });
    await vi.advanceTimersByTimeAsync(answerAt * STEP_RETAKE_MS + 1);
    expect(asked()).toBe(answerAt);
    expect(messagesOf(logger)).toEqual([retaken]);
    retakes.stop();
  });
});
