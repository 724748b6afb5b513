import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { botSpaces, digestKeyOf, openBotState } from '../../../bots/state/index.js';
import { REDIS_RECORD_BYTES, stateBytesBound } from '../../../bots/state/redis-memory.js';
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

describe('what the audit channel keeps of the job ends it posted', () => {
  it.skipIf(redisPresent.skipReason)('takes at most REDIS_RECORD_BYTES a job on Redis, within the count its space binds there too, and is counted in what maxmemory must leave room for', async () => {
    requireRedisUrl(redisPresent);
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-audit-ended-'));
    const redis = (await startThrowawayRedis('redis-server', 3, ['--maxmemory-policy', 'noeviction']))!;
    const link = await RedisLink.open({ url: redis.url, prefix: 'pictor' });
    const state = await openBotState({ dataDir, redis: link, logger: new RecordingLogger() });
    try {
      const spaces = botSpaces();
      expect(stateBytesBound(spaces) - stateBytesBound({ ...spaces, auditEnded: { ...spaces.auditEnded, maxCount: 0 } })).toBe(spaces.auditEnded.maxCount * REDIS_RECORD_BYTES);
      const used = async () => Number(/^used_memory:(\d+)/m.exec(await link.commands.info('memory'))![1]);
      // A space as the audit channel's, bounded at 2 000 records: 3 000 job ends keep 2 000.
      const space = state.store.space<true>({ ...state.spaces.auditEnded, maxCount: 2_000 });
      const before = await used();
      for (let i = 0; i < 3_000; i++) await space.put(digestKeyOf(`ended:discord:G1:job-${i}`), true);
      const after = await used();
      let kept = 0;
      for await (const _ of space.keys()) kept++;
      expect(kept).toBe(2_000);
      expect((after - before) / kept).toBeLessThan(REDIS_RECORD_BYTES);
    } finally {
      await state.close();
      await link.close();
      await redis.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('what docs/shared-limits.md says the bots’ state may keep', () => {
  it('is the bound the spaces add up to: the kept images plus the MiB the page names', async () => {
    const page = await readFile(join(import.meta.dirname, '../../../docs/shared-limits.md'), 'utf8');
    const said = Number(/`PICTOR_KEPT_IMAGES_MB` \(256 MiB by default\) plus (\d+) MiB/.exec(page)?.[1]);
    const spaces = botSpaces();
    expect(said).toBe(Math.round((stateBytesBound(spaces) - spaces.discordImages.maxBytes) / 2 ** 20));
  });
});
