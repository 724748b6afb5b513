import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RedisCoordinator } from '../../src/core/RedisCoordinator.js';

/** A connection that only says when it is lost (`close`) and back (`ready`), as ioredis does. */
function connection(): Redis & EventEmitter {
  return Object.assign(new EventEmitter(), { defineCommand: () => undefined }) as unknown as Redis & EventEmitter;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('RedisCoordinator.onUnreachableFor', () => {
  it('calls once the connection has been lost that long without a break, and not while it answers', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const redis = connection();
    const coordinator = new RedisCoordinator({ redis, prefix: 'p' });
    const listener = vi.fn();
    const stop = coordinator.onUnreachableFor(5000, listener);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(listener).not.toHaveBeenCalled();
    redis.emit('close');
    await vi.advanceTimersByTimeAsync(3000);
    // Back before the 5 s: the count starts again at the next loss.
    redis.emit('ready');
    redis.emit('close');
    await vi.advanceTimersByTimeAsync(4990);
    // Reconnect attempts that fail close it again: still the same outage.
    redis.emit('close');
    expect(listener).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(10);
    expect(listener).toHaveBeenCalledTimes(1);
    stop();
    expect(redis.listenerCount('close')).toBe(1);
    expect(redis.listenerCount('ready')).toBe(1);
  });

  it('never calls once stopped while the connection is lost, and leaves no timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const redis = connection();
    const coordinator = new RedisCoordinator({ redis, prefix: 'p' });
    const listener = vi.fn();
    const stop = coordinator.onUnreachableFor(5000, listener);
    redis.emit('close');
    await vi.advanceTimersByTimeAsync(1000);
    stop();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(listener).not.toHaveBeenCalled();
  });

  it('counts the time the connection was already lost', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const redis = connection();
    const coordinator = new RedisCoordinator({ redis, prefix: 'p' });
    redis.emit('close');
    await vi.advanceTimersByTimeAsync(4000);
    const listener = vi.fn();
    coordinator.onUnreachableFor(5000, listener);
    await vi.advanceTimersByTimeAsync(999);
    expect(listener).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(listener).toHaveBeenCalledTimes(1);
  });
});
