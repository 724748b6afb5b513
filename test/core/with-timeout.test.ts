import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitAtMost } from '../../src/core/with-timeout.js';

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
    const timers = vi.spyOn(globalThis, 'setTimeout');
    let ended = false;
    const waiting = waitAtMost(new Promise(() => {}), 1_500).then(() => (ended = true));
    await vi.advanceTimersByTimeAsync(1_499);
    expect(ended).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waiting;
    expect(ended).toBe(true);
    expect((timers.mock.results[0]!.value as NodeJS.Timeout).hasRef()).toBe(false);
  });
});
