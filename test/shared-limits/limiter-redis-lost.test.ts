import { describe, expect, it, onTestFinished } from 'vitest';
import { PictorClient } from '../../src/index.js';
import { createImageLimiter } from '../../src/internal.js';
import { createEmulator, DEV_API_KEY } from '../../src/emulator/index.js';
import { requireRedisUrl, testRedis } from '../helpers/shared-limits-redis.js';
import { startThrowawayRedis } from '../setup/redis-server.js';

const redisPresent = testRedis();

describe('a request waiting in the shared limiter when its Redis cannot be reached', () => {
  it.skipIf(redisPresent.skipReason)(
    'ends, when the limiter stops, with limiter_unavailable (never sent, nothing billed), not as a cancel',
    async () => {
      requireRedisUrl(redisPresent);
      // A Redis of the test's own: it is stopped under the waiting request.
      const server = await startThrowawayRedis();
      if (!server) throw new Error('redis-server is needed to stop a Redis under a waiting request');
      onTestFinished(() => server.stop());
      const emulator = createEmulator({ latencyMs: 300 });
      const http = await emulator.listen({ port: 0 });
      onTestFinished(() => http.close());
      const limiter = await createImageLimiter({ maxConcurrent: 1, redis: { url: server.url, prefix: 'lost' } });
      onTestFinished(() => limiter.stop());
      const client = new PictorClient({ baseURL: http.url, apiKey: DEV_API_KEY, limiter });

      let started = false;
      const first = client.generate({ prompt: 'first', quality: 'low' }, { onStart: () => (started = true) });
      await expect.poll(() => started, { timeout: 10_000 }).toBe(true);
      let troubled = false;
      const second = client.generate({ prompt: 'second', quality: 'low' }, { onQueueTrouble: () => (troubled = true) });
      const ending = second.then(
        () => undefined,
        (error: unknown) => error,
      );

      await server.stop();
      await expect.poll(() => troubled, { timeout: 10_000 }).toBe(true);
      await first.catch(() => undefined);
      await limiter.stop();

      const error = (await ending) as { code?: string; message?: string } | undefined;
      expect(error?.code).toBe('limiter_unavailable');
      expect(error?.message).toMatch(/REDIS_URL/);
      expect(emulator.stats().imagesGenerated).toBeLessThanOrEqual(1);
    },
    30_000,
  );
});
