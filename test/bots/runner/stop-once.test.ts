import { afterEach, describe, expect, it, vi } from 'vitest';
import { stopOnce } from '../../../bots/runner/stop-once.js';

describe('a stop run once', () => {
  afterEach(() => void vi.useRealTimers());

  it('runs the first call’s stop once, however often it is asked: every call gets its end', async () => {
    const stop = stopOnce();
    const run = vi.fn(async () => {});
    const calls = [stop(undefined, run), stop(Date.now() + 1_000, run), stop(undefined, async () => {})];
    await Promise.all(calls);
    expect(run).toHaveBeenCalledOnce();
    expect(new Set(calls).size).toBe(1);
  });

  it('brings every wait forward to a later call’s earlier until, a wait under way too', async () => {
    vi.useFakeTimers({ now: 0 });
    const stop = stopOnce();
    const never = new Promise<void>(() => {});
    const waited: boolean[] = [];
    const stopped = stop(undefined, async (budget) => {
      waited.push(await budget.within(never, 10_000));
      // The deadline has come: a later wait gives up at once.
      waited.push(await budget.within(never, 10_000));
    });
    await vi.advanceTimersByTimeAsync(100);
    void stop(500, async () => {});
    await vi.advanceTimersByTimeAsync(400);
    await stopped;
    expect(Date.now()).toBe(500);
    expect(waited).toEqual([false, false]);
  });

  it('never extends its deadline for a later until, and waits for what ends in time', async () => {
    vi.useFakeTimers({ now: 0 });
    const stop = stopOnce();
    let deadline: number | undefined;
    const ended: boolean[] = [];
    const stopped = stop(300, async (budget) => {
      ended.push(await budget.within(new Promise((resolve) => setTimeout(resolve, 100)), 10_000));
      deadline = budget.until();
      ended.push(await budget.within(new Promise(() => {}), 10_000));
    });
    void stop(5_000, async () => {});
    await vi.advanceTimersByTimeAsync(300);
    await stopped;
    expect({ deadline, ended, at: Date.now() }).toEqual({ deadline: 300, ended: [true, false], at: 300 });
  });

  it('passes on the error of what it waited for', async () => {
    const stop = stopOnce();
    await expect(stop(undefined, (budget) => budget.within(Promise.reject(new Error('closed badly')), 1_000).then(() => {}))).rejects.toThrow('closed badly');
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY])('refuses an until of %s before anything stops', (until) => {
    const run = vi.fn(async () => {});
    expect(() => stopOnce()(until, run)).toThrow(RangeError);
    expect(run).not.toHaveBeenCalled();
  });
});
