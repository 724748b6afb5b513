import type { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { RedisLease } from '../../src/core/redis-lease.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { answerBoundMs } from '../../src/core/renewal.js';
import { onFakeClock } from '../helpers/fake-clock.js';
import { startCuttableLink } from '../helpers/shared-limits-proxy.js';
import { useCleanup } from '../helpers/service-fakes.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const defer = useCleanup();
const redisSetup = testRedis();
const TTL_MS = 3_000;
const RENEW_EVERY_MS = 1_000;

/** A connection to the test's Redis and a key of this test's own. */
async function redisAndKey(url = requireRedisUrl(redisSetup)): Promise<{ redis: Redis; key: string }> {
  const redis = await connectRedis(url, { name: 'redis-lease-test' });
  const prefix = uniquePrefix('redis-lease');
  defer(async () => {
    redis.disconnect();
    await deleteKeys(requireRedisUrl(redisSetup), prefix);
  });
  return { redis, key: `${prefix}:lease` };
}

function leaseOf(redis: Redis, key: string, holder: string, retakeForgotten?: boolean): RedisLease {
  return new RedisLease({ redis, key, holder, ttlMs: TTL_MS, renewEveryMs: RENEW_EVERY_MS, retakeForgotten });
}

/** What the renewals of `redis` answer, renewal by renewal: Redis's own answer, or a failure, or "renewed" late (on the fake clock). */
function renewalsAnswer(redis: Redis, answers: ('redis' | 'fail' | { lateMs: number })[]): ReturnType<typeof vi.spyOn> {
  const evalByRedis = redis.eval.bind(redis) as (...args: unknown[]) => Promise<unknown>;
  let n = 0;
  return vi.spyOn(redis, 'eval').mockImplementation((async (...args: unknown[]) => {
    const answer = answers[n++] ?? 'redis';
    if (answer === 'fail') throw new Error('Redis is loading');
    if (answer === 'redis') return evalByRedis(...args);
    await new Promise((resolve) => setTimeout(resolve, answer.lateMs));
    return 1;
  }) as never);
}

describe('RedisLease', () => {
  it('refuses a renewal interval that does not renew the lease at least twice per lifetime', () => {
    const redis = {} as Redis;
    expect(() => new RedisLease({ redis, key: 'k', holder: 'a', ttlMs: 1_000, renewEveryMs: 500 })).toThrow(/at least twice per lifetime/);
    expect(() => new RedisLease({ redis, key: 'k', holder: 'a', ttlMs: 1_000, renewEveryMs: 0 })).toThrow(/at least twice per lifetime/);
  });
});

describe.skipIf(redisSetup.skipReason)('RedisLease on a real Redis', () => {
  it('is taken by one holder at a time, for its lifetime', async () => {
    const { redis, key } = await redisAndKey();
    expect(await leaseOf(redis, key, 'a').take()).toBe(true);
    expect(await leaseOf(redis, key, 'b').take()).toBe(false);
    expect(await redis.get(key)).toBe('a');
    const left = await redis.pttl(key);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(TTL_MS);
  });

  it('is given back only while this holder has it: a giving back by another, or after another took it, leaves it as it is', async () => {
    const { redis, key } = await redisAndKey();
    const a = leaseOf(redis, key, 'a');
    expect(await a.take()).toBe(true);
    await leaseOf(redis, key, 'b').giveBack(1_000);
    expect(await redis.get(key)).toBe('a');
    await a.giveBack(1_000);
    expect(await redis.exists(key)).toBe(0);

    expect(await a.take()).toBe(true);
    await redis.set(key, 'c', 'PX', 60_000);
    await a.giveBack(1_000);
    expect(await redis.get(key)).toBe('c');
  });

  it('is lost at the first renewal once another holds it (Redis says so), without extending the other’s', async () => {
    const { redis, key } = await redisAndKey();
    const a = leaseOf(redis, key, 'a');
    expect(await a.take()).toBe(true);
    await redis.set(key, 'b', 'PX', 60_000);
    const evals = vi.spyOn(redis, 'eval');
    await onFakeClock(async () => {
      const keptAt = Date.now();
      const lost: { why: string; at: number }[] = [];
      a.keep((why) => lost.push({ why, at: Date.now() }));
      await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS);
      expect(evals).toHaveBeenCalledTimes(1);
      await evals.mock.results[0]!.value;
      await vi.advanceTimersByTimeAsync(0);
      expect(lost).toEqual([{ why: 'another process holds the lease', at: keptAt + RENEW_EVERY_MS }]);
      // Renewing stopped: no second renewal, and onLost is not called again.
      await vi.advanceTimersByTimeAsync(3 * TTL_MS);
      expect(evals).toHaveBeenCalledTimes(1);
      expect(lost).toHaveLength(1);
    });
    expect(await redis.get(key)).toBe('b');
    expect(await redis.pttl(key)).toBeGreaterThan(TTL_MS);
  });

  it('takes itself back at its next renewal when Redis forgot it (restarted empty, or flushed), and is not lost; a holder that finds another there first is', async () => {
    const { redis, key } = await redisAndKey();
    const a = leaseOf(redis, key, 'a', true);
    expect(await a.take()).toBe(true);
    const evals = vi.spyOn(redis, 'eval');
    await onFakeClock(async () => {
      const lost: string[] = [];
      a.keep((why) => lost.push(why));
      // What an empty restart does to this key: gone before the next renewal.
      await redis.del(key);
      await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS);
      expect(evals).toHaveBeenCalledTimes(1);
      expect(Number(await evals.mock.results[0]!.value)).toBe(1);
      expect(await redis.get(key)).toBe('a');
      const left = await redis.pttl(key);
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(TTL_MS);
      // Gone again, and another process took it first: the next renewal is told so, and the lease is lost.
      await redis.del(key);
      expect(await leaseOf(redis, key, 'b').take()).toBe(true);
      await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS);
      expect(evals).toHaveBeenCalledTimes(2);
      await evals.mock.results[1]!.value;
      await vi.advanceTimersByTimeAsync(0);
      expect(lost).toEqual(['another process holds the lease']);
      a.letGo();
    });
    expect(await redis.get(key)).toBe('b');
  });

  it('is lost, not taken back, when its key is gone and it is not a lease to take back (a later holder may have finished and released it)', async () => {
    const { redis, key } = await redisAndKey();
    const a = leaseOf(redis, key, 'a');
    expect(await a.take()).toBe(true);
    const evals = vi.spyOn(redis, 'eval');
    await onFakeClock(async () => {
      const lost: string[] = [];
      a.keep((why) => lost.push(why));
      await redis.del(key);
      await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS);
      expect(evals).toHaveBeenCalledTimes(1);
      await evals.mock.results[0]!.value;
      await vi.advanceTimersByTimeAsync(0);
      expect(lost).toEqual(['another process holds the lease']);
      a.letGo();
    });
    expect(await redis.get(key)).toBeNull();
  });

  it('tells its renewals’ failures once per streak, and the renewal that ends one: a renewal counts as failed when not answered within answerBoundMs of the lease', async () => {
    const { redis, key } = await redisAndKey();
    const told: string[] = [];
    // A long lease: renewals may fail for a while before it is given up.
    const ttlMs = 12 * RENEW_EVERY_MS;
    const a = new RedisLease({ redis, key, holder: 'a', ttlMs, renewEveryMs: RENEW_EVERY_MS, onRenewFailed: (error) => told.push(`failed: ${(error as Error).message}`), onRenewRecovered: () => told.push('recovered') });
    expect(await a.take()).toBe(true);
    // Answered later than the renewal interval, within the bound (2 s): not a failure.
    const lateMs = Math.floor((RENEW_EVERY_MS + answerBoundMs(ttlMs)) / 2);
    // One renewal at a time fails (overlapping ones settle out of order); one unanswered within the bound fails too, a
    // streak of its own after a confirmed renewal, which its late answer ends (the next renewal's answer lands later).
    const answers = [{ lateMs }, 'redis', 'fail', 'fail', 'redis', 'fail', 'redis', { lateMs: answerBoundMs(ttlMs) + 500 }, 'redis', { lateMs }, 'redis', 'redis'] as const;
    const evals = renewalsAnswer(redis, [...answers]);
    await onFakeClock(async () => {
      const lost: string[] = [];
      a.keep((why) => lost.push(why));
      for (const [n, answer] of answers.entries()) {
        await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS);
        expect(evals).toHaveBeenCalledTimes(n + 1);
        // Redis's own answers come on the real clock: each is had before the next renewal.
        if (answer === 'redis') await evals.mock.results[n]!.value;
        await vi.advanceTimersByTimeAsync(0);
      }
      expect(told).toEqual(['failed: Redis is loading', 'recovered', 'failed: Redis is loading', 'recovered', `failed: the renewal was not answered within ${answerBoundMs(ttlMs)} ms`, 'recovered']);
      a.letGo();
      expect(lost).toEqual([]);
    });
  });

  it('sends no third renewal while two are unanswered (a connection that queues its commands replays at most two), and renews on once one is answered', async () => {
    const { redis, key } = await redisAndKey();
    // A long lease: it is not given up while the renewals wait.
    const a = new RedisLease({ redis, key, holder: 'a', ttlMs: 12 * RENEW_EVERY_MS, renewEveryMs: RENEW_EVERY_MS });
    expect(await a.take()).toBe(true);
    const held: ((answer: number) => void)[] = [];
    const evals = vi.spyOn(redis, 'eval').mockImplementation((() => new Promise((resolve) => held.push(resolve))) as never);
    await onFakeClock(async () => {
      const lost: string[] = [];
      a.keep((why) => lost.push(why));
      await vi.advanceTimersByTimeAsync(5 * RENEW_EVERY_MS);
      expect(evals).toHaveBeenCalledTimes(2);
      held[0]!(1);
      await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS);
      expect(evals).toHaveBeenCalledTimes(3);
      expect(lost).toEqual([]);
      a.letGo();
    });
  });

  it('ignores a late answer of a renewal sent before it was let go: taken and kept again, the new keep renews on and only its own onLost is called', async () => {
    const { redis, key } = await redisAndKey();
    const a = leaseOf(redis, key, 'a');
    expect(await a.take()).toBe(true);
    // The first renewal is held unanswered; when it answers, it says another holds the lease.
    let answerFirst!: (answer: number) => void;
    const evalByRedis = redis.eval.bind(redis) as (...args: unknown[]) => Promise<unknown>;
    const evals = vi.spyOn(redis, 'eval').mockImplementationOnce((() => new Promise((resolve) => (answerFirst = resolve))) as never);
    evals.mockImplementation(((...args: unknown[]) => evalByRedis(...args)) as never);
    await onFakeClock(async () => {
      const lost: string[] = [];
      a.keep((why) => lost.push(`first: ${why}`));
      await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS);
      expect(evals).toHaveBeenCalledTimes(1);
      a.letGo();
      await redis.del(key);
      expect(await a.take()).toBe(true);
      a.keep((why) => lost.push(`second: ${why}`));
      answerFirst(0);
      await vi.advanceTimersByTimeAsync(0);
      expect(lost).toEqual([]);
      // The second keep renews on, every interval, confirmed: it keeps the lease well past its lifetime.
      for (let n = 2; n <= 5; n++) {
        await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS);
        expect(evals).toHaveBeenCalledTimes(n);
        expect(await evals.mock.results[n - 1]!.value).toBe(1);
        await vi.advanceTimersByTimeAsync(0);
      }
      expect(lost).toEqual([]);
      a.letGo();
    });
    expect(await redis.get(key)).toBe('a');
  });

  it('renews once per interval when kept a second time without being let go, and stops renewing for good at letGo', async () => {
    const { redis, key } = await redisAndKey();
    const a = leaseOf(redis, key, 'a');
    expect(await a.take()).toBe(true);
    const evals = vi.spyOn(redis, 'eval');
    await onFakeClock(async () => {
      const lost: string[] = [];
      a.keep((why) => lost.push(`first: ${why}`));
      await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS / 2);
      a.keep((why) => lost.push(`second: ${why}`));
      for (let n = 1; n <= 4; n++) {
        await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS);
        expect(evals).toHaveBeenCalledTimes(n);
        expect(await evals.mock.results[n - 1]!.value).toBe(1);
        await vi.advanceTimersByTimeAsync(0);
      }
      a.letGo();
      await vi.advanceTimersByTimeAsync(3 * TTL_MS);
      expect(evals).toHaveBeenCalledTimes(4);
      expect(lost).toEqual([]);
    });
  });

  it('is given up one renewal interval before it could lapse when Redis has not confirmed it, counted from when the last confirmed renewal was sent', async () => {
    const url = requireRedisUrl(redisSetup);
    const link = await startCuttableLink(url);
    defer(() => link.close());
    const { redis, key } = await redisAndKey(link.url);
    const a = leaseOf(redis, key, 'a');
    expect(await a.take()).toBe(true);
    const sentAt: number[] = [];
    const evalByA = redis.eval.bind(redis) as (...args: unknown[]) => Promise<unknown>;
    const evals = vi.spyOn(redis, 'eval').mockImplementation(((...args: unknown[]) => (sentAt.push(Date.now()), evalByA(...args))) as never);
    await onFakeClock(async () => {
      const lost: { why: string; at: number }[] = [];
      a.keep((why) => lost.push({ why, at: Date.now() }));
      // The first renewal is confirmed.
      await vi.advanceTimersByTimeAsync(RENEW_EVERY_MS);
      expect(await evals.mock.results[0]!.value).toBe(1);
      // Then Redis gets nothing more: renewals go out and are never answered.
      link.dropRequests();
      while (lost.length === 0 && Date.now() < sentAt[0]! + 3 * TTL_MS) await vi.advanceTimersByTimeAsync(100);
      expect(lost).toEqual([{ why: 'Redis has not confirmed the lease in time', at: sentAt[0]! + TTL_MS - RENEW_EVERY_MS }]);
      expect(sentAt.length).toBeGreaterThan(1);
      // Renewing stopped with it.
      const sent = sentAt.length;
      await vi.advanceTimersByTimeAsync(3 * TTL_MS);
      expect(sentAt).toHaveLength(sent);
      expect(lost).toHaveLength(1);
    });
  });
});
