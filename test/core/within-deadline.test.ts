import { afterEach, describe, expect, it, vi } from 'vitest';
import { withinDeadline } from '../../src/core/with-timeout.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('withinDeadline', () => {
  it('answers the work’s value, or its rejection, when it comes before the deadline', async () => {
    const endsAt = Date.now() + 60_000;
    await expect(withinDeadline(endsAt, Promise.resolve('read'), 'the store')).resolves.toBe('read');
    await expect(withinDeadline(endsAt, async () => 'asked', 'the store')).resolves.toBe('asked');
    await expect(withinDeadline(endsAt, Promise.reject(new Error('refused')), 'the store')).rejects.toThrow('refused');
  });

  it('tells the work how long is left, and rejects once the deadline comes without its answer', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const told: number[] = [];
    const waiting = withinDeadline(1_002_500, (leftMs) => (told.push(leftMs), new Promise<never>(() => {})), 'the store');
    let outcome: unknown;
    waiting.catch((error: unknown) => (outcome = error));
    expect(told).toEqual([2_500]);
    await vi.advanceTimersByTimeAsync(2_499);
    expect(outcome).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(outcome).toBeInstanceOf(Error);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not ask at all once the deadline has come', async () => {
    const ask = vi.fn(async () => 'asked');
    await expect(withinDeadline(Date.now(), ask, 'the store')).rejects.toBeInstanceOf(Error);
    expect(ask).not.toHaveBeenCalled();
  });

  it('handles the later rejection of work already under way when no time was left for it: nothing is left unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let fail!: (error: Error) => void;
      const underWay = new Promise<string>((_, reject) => (fail = reject));
      await expect(withinDeadline(Date.now() - 1, underWay, 'the store')).rejects.toBeInstanceOf(Error);
      // Its rejection is nobody's: no handler of this test's own is on it, only the one withinDeadline put there.
      fail(new Error('late'));
      // Node reports a rejection nobody handled once the microtasks of the turn have run: one turn of the loop later.
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('counts the time left on the clock it is given', async () => {
    vi.useFakeTimers({ now: 0 });
    const told: number[] = [];
    const clock = () => 9_000;
    await expect(withinDeadline(10_000, async (leftMs) => (told.push(leftMs), 'asked'), 'the store', clock)).resolves.toBe('asked');
    expect(told).toEqual([1_000]);
    await expect(withinDeadline(10_000, async () => 'asked', 'the store', () => 10_000)).rejects.toBeInstanceOf(Error);
  });
});
