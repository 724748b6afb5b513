import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renewEveryThird } from '../../src/core/renewal.js';

describe('a lease renewed every third of it', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] }));
  afterEach(() => vi.useRealTimers());

  it('renews every third of the lease until it is stopped', async () => {
    const renew = vi.fn(async () => {});
    const stop = renewEveryThird(300, renew, () => {});
    await vi.advanceTimersByTimeAsync(300);
    expect(renew).toHaveBeenCalledTimes(3);
    stop();
    await vi.advanceTimersByTimeAsync(1000);
    expect(renew).toHaveBeenCalledTimes(3);
  });

  it('does not start a renewal again while one has not answered, and goes on once it settles', async () => {
    let answer: () => void = () => {};
    const renew = vi.fn(() => new Promise<void>((resolve) => (answer = resolve)));
    const stop = renewEveryThird(300, renew, () => {});
    await vi.advanceTimersByTimeAsync(1000);
    expect(renew).toHaveBeenCalledTimes(1);
    answer();
    await vi.advanceTimersByTimeAsync(100);
    expect(renew).toHaveBeenCalledTimes(2);
    stop();
  });

  it('hands a renewal that fails to onError and tries again at the next tick', async () => {
    const failure = new Error('Redis went away');
    const renew = vi.fn(() => Promise.reject(failure));
    const onError = vi.fn();
    const stop = renewEveryThird(300, renew, onError);
    await vi.advanceTimersByTimeAsync(200);
    expect(onError.mock.calls).toEqual([[failure], [failure]]);
    stop();
  });

  it('renews at least every 50 ms however short the lease', async () => {
    const renew = vi.fn(async () => {});
    const stop = renewEveryThird(30, renew, () => {});
    await vi.advanceTimersByTimeAsync(100);
    expect(renew).toHaveBeenCalledTimes(2);
    stop();
  });
});
