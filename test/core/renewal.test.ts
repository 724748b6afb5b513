import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { answerBoundMs, renewEvery, renewEveryThird } from '../../src/core/renewal.js';

/** A renewal the storage answers only when told to (`answer`, `refuse`), or never. */
function renewalsHeldOpen() {
  const open: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const renew = vi.fn(() => new Promise<void>((resolve, reject) => open.push({ resolve, reject })));
  return { renew, answer: (i: number) => open[i]!.resolve(), refuse: (i: number, error: Error) => open[i]!.reject(error) };
}

const messagesOf = (onError: ReturnType<typeof vi.fn>) => onError.mock.calls.map(([error]) => (error as Error).message);

describe('a lease renewed every third of it', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] }));
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

  it('tells a renewal not answered within 2 s, sends the next at the next tick, and no third while two are unanswered', async () => {
    const { renew, answer } = renewalsHeldOpen();
    const onError = vi.fn();
    const stop = renewEveryThird(9_000, renew, onError);
    await vi.advanceTimersByTimeAsync(3_000 + 1_999);
    expect(onError).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(messagesOf(onError)).toEqual(['the renewal was not answered within 2000 ms']);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(renew).toHaveBeenCalledTimes(2);
    // The second is late too: the same streak, not told again; two unanswered, none sent at the ticks after.
    await vi.advanceTimersByTimeAsync(9_000);
    expect(renew).toHaveBeenCalledTimes(2);
    expect(onError).toHaveBeenCalledTimes(1);
    // The first is answered at last: the streak ends, the next tick sends one, and its failure is told again.
    answer(0);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(renew).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(onError).toHaveBeenCalledTimes(2);
    stop();
  });

  it('bounds the wait by a third of a lease shorter than 6 s', async () => {
    const { renew } = renewalsHeldOpen();
    const onError = vi.fn();
    const stop = renewEveryThird(300, renew, onError);
    await vi.advanceTimersByTimeAsync(200);
    expect(messagesOf(onError)).toEqual(['the renewal was not answered within 100 ms']);
    await vi.advanceTimersByTimeAsync(100);
    expect(renew).toHaveBeenCalledTimes(2);
    stop();
  });

  it('tells a streak of failed renewals once, trying again at each tick, and the next streak after one passes', async () => {
    const failures = [new Error('Redis went away'), new Error('still away'), undefined, new Error('away again')];
    const renew = vi.fn(() => {
      const failure = failures.shift();
      return failure ? Promise.reject(failure) : Promise.resolve();
    });
    const onError = vi.fn();
    const stop = renewEveryThird(300, renew, onError);
    await vi.advanceTimersByTimeAsync(400);
    expect(renew).toHaveBeenCalledTimes(4);
    expect(messagesOf(onError)).toEqual(['Redis went away', 'away again']);
    stop();
  });

  it('tells the renewal that ends a streak of failures once, and none that passes outside a streak', async () => {
    const failures = [undefined, new Error('Redis went away'), new Error('still away'), undefined, undefined, new Error('away again'), undefined];
    const renew = vi.fn(() => {
      const failure = failures.shift();
      return failure ? Promise.reject(failure) : Promise.resolve();
    });
    const onError = vi.fn();
    const onRecovered = vi.fn();
    const stop = renewEveryThird(300, renew, onError, onRecovered);
    await vi.advanceTimersByTimeAsync(100 * 4);
    expect(onError).toHaveBeenCalledTimes(1);
    expect(onRecovered).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(100 * 3);
    expect(renew).toHaveBeenCalledTimes(7);
    expect(onError).toHaveBeenCalledTimes(2);
    expect(onRecovered).toHaveBeenCalledTimes(2);
    stop();
  });

  it('tells a renewal answered after its bound as the end of the streak it began (the storage applied it)', async () => {
    const { renew, answer } = renewalsHeldOpen();
    const onError = vi.fn();
    const onRecovered = vi.fn();
    const stop = renewEveryThird(300, renew, onError, onRecovered);
    await vi.advanceTimersByTimeAsync(200);
    expect(messagesOf(onError)).toEqual(['the renewal was not answered within 100 ms']);
    answer(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(onRecovered).toHaveBeenCalledTimes(1);
    stop();
  });

  it('tells a renewal whose bound ends at the next tick as failed before that tick sends the next, whose answer ends the streak', async () => {
    const told: string[] = [];
    let sent = 0;
    // The first renewal is never answered; the ones after it are answered at once.
    const renew = () => (++sent === 1 ? new Promise<void>(() => {}) : Promise.resolve());
    const stop = renewEveryThird(300, renew, (error) => told.push(`failed: ${(error as Error).message}`), () => told.push('recovered'));
    await vi.advanceTimersByTimeAsync(200);
    expect(told).toEqual(['failed: the renewal was not answered within 100 ms', 'recovered']);
    stop();
  });

  it('tells a bound that ends with a later tick (a bound of two paces) before that tick sends, whatever the order of the timers', async () => {
    const told: string[] = [];
    let sent = 0;
    const renew = () => (++sent === 1 ? new Promise<void>(() => {}) : Promise.resolve());
    // Every 50 ms, a bound of 100 ms: the first renewal (at 50) is out of time at the tick at 150, which sends the third.
    const stop = renewEvery(50, 300, renew, (error) => told.push(`failed: ${(error as Error).message}`), () => told.push('recovered'));
    await vi.advanceTimersByTimeAsync(150);
    expect(told).toEqual(['failed: the renewal was not answered within 100 ms', 'recovered']);
    stop();
  });

  it('bounds an answer by 2 s, or a third of a lease shorter than 6 s', () => {
    expect([answerBoundMs(15_000), answerBoundMs(6_000), answerBoundMs(3_000), answerBoundMs(300), answerBoundMs(1)]).toEqual([2_000, 2_000, 1_000, 100, 1]);
  });

  it('tells a renewal that throws instead of returning a promise as failed', async () => {
    const onError = vi.fn();
    const stop = renewEveryThird(300, () => {
      throw new Error('no connection');
    }, onError);
    await vi.advanceTimersByTimeAsync(100);
    expect(messagesOf(onError)).toEqual(['no connection']);
    stop();
  });

  it('stops at once with a renewal unanswered: no timer left, and nothing told of it after', async () => {
    const { renew, refuse } = renewalsHeldOpen();
    const onError = vi.fn();
    const stop = renewEveryThird(9_000, renew, onError);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(renew).toHaveBeenCalledTimes(1);
    expect(stop()).toBeUndefined();
    expect(vi.getTimerCount()).toBe(0);
    refuse(0, new Error('Redis went away'));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(renew).toHaveBeenCalledTimes(1);
    expect(onError).not.toHaveBeenCalled();
  });

  it('leaves no timer when a renewal stops the renewing itself (nothing left to hold)', async () => {
    const onError = vi.fn();
    const stop: () => void = renewEveryThird(300, () => (stop(), new Promise<void>(() => {})), onError);
    await vi.advanceTimersByTimeAsync(100);
    expect(vi.getTimerCount()).toBe(0);
    expect(onError).not.toHaveBeenCalled();
  });

  it('renews at least every 50 ms however short the lease', async () => {
    const renew = vi.fn(async () => {});
    const stop = renewEveryThird(30, renew, () => {});
    await vi.advanceTimersByTimeAsync(100);
    expect(renew).toHaveBeenCalledTimes(2);
    stop();
  });
});

describe('a lease renewed more often than its bound', () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] }));
  afterEach(() => vi.useRealTimers());

  it('renews at every tick, several renewals within their bounds at once', async () => {
    const { renew, answer } = renewalsHeldOpen();
    const onError = vi.fn();
    const stop = renewEvery(100, 15_000, renew, onError);
    await vi.advanceTimersByTimeAsync(200);
    expect(renew).toHaveBeenCalledTimes(2);
    // Both answered within their 2 s: the next two ticks send again.
    answer(0);
    answer(1);
    await vi.advanceTimersByTimeAsync(200);
    expect(renew).toHaveBeenCalledTimes(4);
    expect(onError).not.toHaveBeenCalled();
    stop();
  });

  it('sends no third while two are unanswered, tells their failure once, and leaves no timer when stopped', async () => {
    const renew = vi.fn(() => new Promise<void>(() => {}));
    const onError = vi.fn();
    const stop = renewEvery(100, 15_000, renew, onError);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(renew).toHaveBeenCalledTimes(2);
    expect(messagesOf(onError)).toEqual(['the renewal was not answered within 2000 ms']);
    stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
