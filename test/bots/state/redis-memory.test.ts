import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBotState } from '../../../bots/state/index.js';
import { RedisLink } from '../../../src/internal.js';
import { requireRedisUrl, testRedis } from '../../helpers/shared-limits-redis.js';
import { startThrowawayRedis } from '../../setup/redis-server.js';
import { RecordingLogger } from '../discord/harness.js';

const redisPresent = testRedis();

describe('the bots’ state on a Redis that may evict', () => {
  it.skipIf(redisPresent.skipReason)('says so at start: the policy that could drop leases and reservations, and a maxmemory too small for what Pictor keeps', async () => {
    requireRedisUrl(redisPresent);
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-evicting-'));
    for (const [settings, warnings] of [
      [['--maxmemory-policy', 'volatile-ttl', '--maxmemory', '32mb'], [/maxmemory-policy volatile-ttl/, /maxmemory leaves too little room/]],
      [['--maxmemory-policy', 'noeviction'], []],
    ] as const) {
      const redis = (await startThrowawayRedis('redis-server', 3, settings))!;
      const link = await RedisLink.open({ url: redis.url, prefix: 'pictor' });
      const logger = new RecordingLogger();
      const state = await openBotState({ dataDir, redis: link, logger });
      try {
        const said = logger.entries.filter((e) => e.level === 'warn').map((e) => e.msg ?? '');
        expect(said).toHaveLength(warnings.length);
        warnings.forEach((pattern, i) => expect(said[i]).toMatch(pattern));
      } finally {
        await state.close();
        await link.close();
        await redis.stop();
      }
    }
    await rm(dataDir, { recursive: true, force: true });
  });
});
