import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { SocketReplicas } from '../../../bots/slack/socket-replicas.js';
import { closeRedis, connectRedis } from '../../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';

const redisServer = testRedis();

describe.skipIf(redisServer.skipReason)(`the Socket Mode connections of one Slack bot, in Redis ${redisServer.skipReason ? `(${redisServer.skipReason})` : ''}`, () => {
  const prefix = uniquePrefix('socket-replicas');
  let redis: Redis;
  const joined: SocketReplicas[] = [];
  beforeAll(async () => {
    redis = await connectRedis(requireRedisUrl(redisServer));
  });
  afterEach(async () => {
    for (const replica of joined.splice(0)) await replica.leave();
  });
  afterAll(async () => {
    await closeRedis(redis);
    await deleteKeys(requireRedisUrl(redisServer), prefix);
  });

  /** The test's Redis, whose renewals `renew` answers instead while `instead()` holds. */
  function renewingWith(instead: () => boolean, renew: () => Promise<number>): Redis {
    return new Proxy(redis, {
      get(target, name) {
        if (name === 'pictorSocketRenew' && instead()) return renew;
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  /** Resolves at the next call of `mock` (a logger's method): the sign that Redis answered a renewal. */
  function nextCall(mock: ReturnType<typeof vi.fn>): Promise<void> {
    return new Promise((resolve) => mock.mockImplementationOnce(() => resolve()));
  }

  async function join(bot: string, ttlMs?: number): Promise<SocketReplicas> {
    const replica = new SocketReplicas({ redis, key: `${prefix}:slack:socket-replicas:${bot}`, ttlMs });
    await replica.join();
    joined.push(replica);
    return replica;
  }

  it('sees no other connection for a lone process, and the other one once a second process of the same bot joins', async () => {
    const a = await join('T1:U1');
    expect(await a.othersConnected()).toBe(false);
    const b = await join('T1:U1');
    expect(await a.othersConnected()).toBe(true);
    expect(await b.othersConnected()).toBe(true);
  });

  it('does not count a process of another bot sharing the prefix', async () => {
    const a = await join('T1:U1');
    await join('T2:U2');
    expect(await a.othersConnected()).toBe(false);
  });

  /** Redis's clock in ms, which scores the entries. */
  async function redisNow(): Promise<number> {
    const [seconds, micros] = await redis.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  it('stops counting a process once it leaves, or once its entry has not been renewed for its TTL (a process that died)', async () => {
    const key = `${prefix}:slack:socket-replicas:T3:U3`;
    const a = await join('T3:U3');
    const b = await join('T3:U3');
    await b.leave();
    expect(await a.othersConnected()).toBe(false);

    await redis.zadd(key, (await redisNow()) + 60_000, 'a-live-process');
    expect(await a.othersConnected()).toBe(true);
    await redis.zadd(key, (await redisNow()) - 1, 'a-live-process');
    expect(await a.othersConnected()).toBe(false);
  });

  it('keeps an entry a TTL past the moment Redis applies its renewal, however late that is after the process sent it', async () => {
    // The process's clock a minute behind Redis's: as a renewal that waited a minute for Redis, or a clock set wrong.
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => void vi.useRealTimers());
    vi.setSystemTime((await redisNow()) - 60_000);
    const a = await join('T5:U5');
    const b = await join('T5:U5', 15_000);
    const score = Number(await redis.zscore(`${prefix}:slack:socket-replicas:T5:U5`, b.id));
    expect(score).toBeGreaterThan((await redisNow()) + 14_000);
    expect(await a.othersConnected()).toBe(true);
  });

  it('keeps a live process counted by renewing its entry every third of its TTL', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    onTestFinished(() => void vi.useRealTimers());
    const key = `${prefix}:slack:socket-replicas:T4:U4`;
    const a = await join('T4:U4');
    const b = await join('T4:U4', 300);
    for (let third = 1; third <= 4; third++) {
      // Its entry lapsed; the next third's renewal (answered before a ping sent after it on the same connection) brings it back.
      await redis.zadd(key, (await redisNow()) - 1, b.id);
      expect(await a.othersConnected()).toBe(false);
      await vi.advanceTimersByTimeAsync(100);
      await redis.ping();
      expect(await a.othersConnected()).toBe(true);
    }
  });

  it('sends no third renewal while two are unanswered, even past their bound: the streak is warned once, and its end told once Redis answers', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    let stalled = false;
    const answers: (() => void)[] = [];
    // A Redis that queues renewals and answers none once the process has joined (as a connection without a retry limit while Redis is down).
    const stalling = renewingWith(
      () => stalled,
      () => new Promise<number>((resolve) => answers.push(() => resolve(1))),
    );
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const replica = new SocketReplicas({ redis: stalling, key: `${prefix}:slack:socket-replicas:T6:U6`, ttlMs: 300, logger });
    await replica.join();
    joined.push(replica);
    stalled = true;
    // 60 thirds, each of them far past the renewals' bound (a third of the TTL here).
    await vi.advanceTimersByTimeAsync(100 * 60);
    expect(answers).toHaveLength(2);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledWith({ err: expect.objectContaining({ message: expect.stringContaining('not answered within 100 ms') }) }, expect.stringContaining('could not renew'));

    // Redis answers the queued ones (it applied them): the streak's end is told once, and the next third renews again.
    stalled = false;
    for (const answer of answers) answer();
    await vi.advanceTimersByTimeAsync(0);
    expect(logger.info).toHaveBeenCalledTimes(1);
    expect(logger.info).toHaveBeenCalledWith({}, expect.stringContaining('renewed this process’s entry'));
    const key = `${prefix}:slack:socket-replicas:T6:U6`;
    await redis.zadd(key, (await redisNow()) - 1, replica.id);
    await vi.advanceTimersByTimeAsync(100);
    await redis.ping();
    expect(Number(await redis.zscore(key, replica.id))).toBeGreaterThan(await redisNow());
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });

  it('fails a join Redis does not answer within 2 s, and queues the removal of its entry after that renewal', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    const sent: string[] = [];
    // A Redis that queues the renewal and does not answer it in time; what the replica sends, in order.
    const hanging = new Proxy(redis, {
      get(target, name) {
        if (name === 'pictorSocketRenew') {
          return (_key: string, id: string) => {
            sent.push(`renew ${id}`);
            return new Promise(() => undefined);
          };
        }
        if (name === 'zrem') {
          return (key: string, id: string) => {
            sent.push(`zrem ${id}`);
            return target.zrem(key, id);
          };
        }
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const replica = new SocketReplicas({ redis: hanging, key: `${prefix}:slack:socket-replicas:T8:U8` });
    let joining: unknown = 'pending';
    replica.join().then(
      () => (joining = 'joined'),
      (error: unknown) => (joining = error),
    );
    await vi.advanceTimersByTimeAsync(1_999);
    expect(joining).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(joining).toEqual(expect.objectContaining({ message: expect.stringContaining('Redis did not answer') }));
    expect(sent).toEqual([`renew ${replica.id}`, `zrem ${replica.id}`]);
  });

  it('bounds a renewal by a third of a TTL under 6 s, so its failure is told before the entry lapses', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    let hung = false;
    const hanging = renewingWith(
      () => hung,
      () => new Promise(() => undefined),
    );
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const replica = new SocketReplicas({ redis: hanging, key: `${prefix}:slack:socket-replicas:T9:U9`, ttlMs: 3_000, logger });
    await replica.join();
    joined.push(replica);
    hung = true;
    // Renewed at 0, its entry lapses at 3 s; the renewal sent at 1 s is given up at 2 s.
    await vi.advanceTimersByTimeAsync(2_000);
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });

  it('warns once when its renewals start failing, however many fail in a row, and again after one has passed', async () => {
    // The renewals' bound on the fake clock too: a real Redis that answers slowly does not fail a renewal here.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    let refusing = false;
    // A Redis that refuses renewals while `refusing`.
    const refusingRedis = renewingWith(
      () => refusing,
      () => Promise.reject(new Error('READONLY You can’t write against a read only replica.')),
    );
    const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
    const replica = new SocketReplicas({ redis: refusingRedis, key: `${prefix}:slack:socket-replicas:T7:U7`, ttlMs: 300, logger });
    await replica.join();
    joined.push(replica);
    refusing = true;
    await vi.advanceTimersByTimeAsync(100 * 6);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledWith({ err: expect.objectContaining({ message: expect.stringContaining('READONLY') }) }, expect.stringContaining('could not renew'));

    // The next third's renewal passes: told once Redis answers it.
    refusing = false;
    const renewed = nextCall(logger.info);
    await vi.advanceTimersByTimeAsync(100);
    await renewed;
    expect(logger.info).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    // The very next third's renewal is refused: warned again.
    refusing = true;
    const warnedAgain = nextCall(logger.warn);
    await vi.advanceTimersByTimeAsync(100);
    await warnedAgain;
    expect(logger.warn).toHaveBeenCalledTimes(2);
    expect(logger.warn).toHaveBeenLastCalledWith({ err: expect.objectContaining({ message: expect.stringContaining('READONLY') }) }, expect.stringContaining('could not renew'));
  });
});
