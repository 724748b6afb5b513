import { describe, expect, it } from 'vitest';
import { SlotSemaphore } from '../../src/core/SlotSemaphore.js';

/** 'pending' if `promise` has not settled before the next turn of the event loop. */
function stateBeforeNextTurn(promise: Promise<unknown>): Promise<string> {
  return Promise.race([
    promise.then(
      () => 'resolved',
      (error: unknown) => `rejected: ${error instanceof Error ? error.message : String(error)}`,
    ),
    new Promise<string>((r) => setImmediate(() => r('pending'))),
  ]);
}

describe('the slot semaphore', () => {
  it('refuses to be made without a slot', () => {
    expect(() => new SlotSemaphore(0)).toThrow(RangeError);
    expect(() => new SlotSemaphore(1.5)).toThrow(RangeError);
  });

  it('grants free slots at once and makes the next caller wait', async () => {
    const semaphore = new SlotSemaphore(2);
    const first = semaphore.take();
    const second = semaphore.take();
    const third = semaphore.take();
    expect(await stateBeforeNextTurn(first)).toBe('resolved');
    expect(await stateBeforeNextTurn(second)).toBe('resolved');
    expect(await stateBeforeNextTurn(third)).toBe('pending');
    expect([semaphore.inUse, semaphore.waiting]).toEqual([2, 1]);
  });

  it('hands each released slot to the longest waiter', async () => {
    const semaphore = new SlotSemaphore(1);
    const release = await semaphore.take();
    const order: string[] = [];
    const waiters = ['a', 'b', 'c'].map((name) =>
      semaphore.take().then((free) => {
        order.push(name);
        free();
      }),
    );
    release();
    await Promise.all(waiters);
    expect(order).toEqual(['a', 'b', 'c']);
    expect(semaphore.inUse).toBe(0);
  });

  it('counts a slot released twice only once', async () => {
    const semaphore = new SlotSemaphore(1);
    const release = await semaphore.take();
    const next = semaphore.take();
    release();
    release();
    await next;
    expect(semaphore.inUse).toBe(1);
    expect(await stateBeforeNextTurn(semaphore.take())).toBe('pending');
  });

  it('takes a caller whose signal aborts out of the line, with the signal reason', async () => {
    const semaphore = new SlotSemaphore(1);
    const release = await semaphore.take();
    const controller = new AbortController();
    const cancelled = semaphore.take(controller.signal);
    const next = semaphore.take();
    controller.abort(new Error('gave up'));
    await expect(cancelled).rejects.toThrow('gave up');
    expect(semaphore.waiting).toBe(1);
    release();
    expect(await stateBeforeNextTurn(next)).toBe('resolved');
  });

  it('rejects every waiter on request while the held slots stay held', async () => {
    const semaphore = new SlotSemaphore(1);
    const release = await semaphore.take();
    const waiters = [semaphore.take(), semaphore.take()];
    semaphore.rejectWaiting(new Error('stopped'));
    for (const waiter of waiters) await expect(waiter).rejects.toThrow('stopped');
    expect([semaphore.inUse, semaphore.waiting]).toEqual([1, 0]);
    release();
    expect(semaphore.inUse).toBe(0);
  });

  it('tells when the last held slot is released', async () => {
    const semaphore = new SlotSemaphore(2);
    await expect(semaphore.whenIdle()).resolves.toBeUndefined();
    const releases = [await semaphore.take(), await semaphore.take()];
    const idle = semaphore.whenIdle();
    releases[0]!();
    expect(await stateBeforeNextTurn(idle)).toBe('pending');
    releases[1]!();
    expect(await stateBeforeNextTurn(idle)).toBe('resolved');
  });
});
