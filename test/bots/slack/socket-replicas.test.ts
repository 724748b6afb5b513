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

  it('stops counting a process once it leaves, or once its entry has not been renewed for its TTL (a process that died)', async () => {
    const a = await join('T3:U3');
    const b = await join('T3:U3');
    await b.leave();
    expect(await a.othersConnected()).toBe(false);

    // The entries' times are the processes' clocks: fake time stands for the TTL passing.
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => void vi.useRealTimers());
    await redis.zadd(`${prefix}:slack:socket-replicas:T3:U3`, Date.now() + 300, 'a-process-that-died');
    expect(await a.othersConnected()).toBe(true);
    vi.advanceTimersByTime(400);
    expect(await a.othersConnected()).toBe(false);
  });

  it('keeps a live process counted by renewing its entry', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    onTestFinished(() => void vi.useRealTimers());
    const a = await join('T4:U4');
    await join('T4:U4', 300);
    // Renewals go out on the test's own connection, so one is answered before a ping that follows it; one at a time, the
    // next third of the TTL starts the next only once it is.
    for (let third = 1; third <= 7; third++) {
      await vi.advanceTimersByTimeAsync(100);
      await redis.ping();
    }
    expect(await a.othersConnected()).toBe(true);
  });
});
