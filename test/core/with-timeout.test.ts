import { afterEach, describe, expect, it, vi } from 'vitest';
import { LATE, waitAtMost, within } from '../../src/core/with-timeout.js';

/** The real timer, as the files after this one (sharing its worker) need it. */
const realSetTimeout = globalThis.setTimeout;

afterEach(() => {
  vi.useRealTimers();
});

describe('waitAtMost', () => {
  it('ends when the promise settles, fulfilled or rejected, and never rejects', async () => {
    await expect(waitAtMost(Promise.resolve('done'), 60_000)).resolves.toBeUndefined();
    await expect(waitAtMost(Promise.reject(new Error('refused')), 60_000)).resolves.toBeUndefined();
  });

  it('ends after its time when the promise never settles, and its timer does not hold the process', async () => {
    vi.useFakeTimers();
    // A spy on the fake clock's setTimeout, let go of before the clock is (afterEach) and through vi.restoreAllMocks,
    // not mockRestore: vitest restores every spy ever made again after the file (mockRestore does not forget it), which
    // would put the gone clock's setTimeout back, one that never fires, for the next files of the worker.
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      let ended = false;
      const waiting = waitAtMost(new Promise(() => {}), 1_500).then(() => (ended = true));
      await vi.advanceTimersByTimeAsync(1_499);
      expect(ended).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await waiting;
      expect(ended).toBe(true);
      expect((timers.mock.results[0]!.value as NodeJS.Timeout).hasRef()).toBe(false);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('leaves the real setTimeout behind once its spies are restored, as vitest does before the next file of the worker', () => {
    // The previous test's way, on its own: a spy on the fake clock's setTimeout, let go of through vi.restoreAllMocks
    // before the clock is; then the restore vitest runs after the file.
    vi.useFakeTimers();
    vi.spyOn(globalThis, 'setTimeout');
    vi.restoreAllMocks();
    vi.useRealTimers();
    vi.restoreAllMocks();
    const left = globalThis.setTimeout;
    globalThis.setTimeout = realSetTimeout;
    expect(left).toBe(realSetTimeout);
  });
});

describe('within', () => {
  it('answers the work\'s value when it comes in time, and its rejection', async () => {
    await expect(within(Promise.resolve('read'), 60_000)).resolves.toBe('read');
    await expect(within(Promise.reject(new Error('refused')), 60_000)).rejects.toThrow('refused');
  });

  it('answers LATE once its time has passed without the work, and its timer does not hold the process', async () => {
    vi.useFakeTimers();
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      let answer: unknown;
      const waiting = within(new Promise(() => {}), 1_500).then((value) => (answer = value));
      await vi.advanceTimersByTimeAsync(1_499);
      expect(answer).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      await waiting;
      expect(answer).toBe(LATE);
      expect((timers.mock.results[0]!.value as NodeJS.Timeout).hasRef()).toBe(false);
    } finally {
      vi.restoreAllMocks();
    }
  });
});
