import { afterEach, describe, expect, it, vi } from 'vitest';
import { sleep } from '../../src/internal.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('sleep, the one wait of the core and the bots', () => {
  it('resolves once its time has passed, not sooner', async () => {
    vi.useFakeTimers();
    let done = false;
    const waited = sleep(1000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await waited;
    expect(done).toBe(true);
  });

  it('rejects with its signal’s reason as soon as the signal aborts, and leaves no timer behind', async () => {
    vi.useFakeTimers();
    const stop = new AbortController();
    const waited = sleep(60_000, stop.signal);
    stop.abort(new Error('stopping'));
    await expect(waited).rejects.toThrow('stopping');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects at once for a signal already aborted, and resolves at once for no time at all', async () => {
    const stopped = AbortSignal.abort(new Error('stopped'));
    await expect(sleep(1000, stopped)).rejects.toThrow('stopped');
    await expect(sleep(0)).resolves.toBeUndefined();
  });
});
