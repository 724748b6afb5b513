import { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { RedisStateStore } from '../../bots/state/RedisStateStore.js';
import { RedisLink } from '../../src/internal.js';
import { requireRedisUrl, testRedis } from '../helpers/shared-limits-redis.js';
import { startThrowawayRedis } from '../setup/redis-server.js';

const redisPresent = testRedis();

describe('the bots’ state lease on a Redis that stops answering', () => {
  it.skipIf(redisPresent.skipReason)(
    'tells once that a renewal went unanswered while Redis is paused (its connection open), and holds the lease again once Redis answers',
    async () => {
      requireRedisUrl(redisPresent);
      // A Redis of the test's own: a paused one would hold up every other test's writes.
      const server = await startThrowawayRedis();
      if (!server) throw new Error('redis-server is needed to pause a Redis under a running store');
      onTestFinished(() => server.stop());
      const link = await RedisLink.open({ url: server.url, prefix: 'paused' });
      const admin = new Redis(server.url);
      onTestFinished(async () => {
        admin.disconnect();
        await link.close();
      });
      const logger = { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() };
      const store = await RedisStateStore.open({ link, leaseMs: 600, logger });
      onTestFinished(() => store.close());
      const lease = store.leaseKey(store.owner);

      // Writes wait, unanswered, for 1.5 s: several thirds of the lease (200 ms) go by, and the lease lapses.
      await admin.call('CLIENT', 'PAUSE', '1500', 'WRITE');
      await vi.waitFor(() => expect(logger.warn).toHaveBeenCalled(), { timeout: 10_000, interval: 20 });
      expect(logger.warn).toHaveBeenCalledWith({ err: expect.objectContaining({ message: 'the renewal was not answered within 200 ms' }) }, 'could not renew this process’s lease on its running jobs');
      await vi.waitFor(async () => expect(await admin.exists(lease)).toBe(0), { timeout: 10_000, interval: 20 });

      // The pause ends: the renewals sent meanwhile are answered and the next ones keep the lease; the streak was told once.
      await vi.waitFor(async () => expect(await admin.pttl(lease)).toBeGreaterThan(0), { timeout: 10_000, interval: 20 });
      expect(logger.warn).toHaveBeenCalledTimes(1);
    },
    30_000,
  );
});
