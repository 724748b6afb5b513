import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { startService } from '../../bots/main.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { RedisLink } from '../../src/internal.js';
import { buttonsOf, FakeDiscord, type FakeInteraction } from '../fakes/discord/FakeDiscord.js';
import { discordPrivateNote, discordResult, startUpstream, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { requireRedisUrl, testRedis } from '../helpers/shared-limits-redis.js';
import { startThrowawayRedis } from '../setup/redis-server.js';

const defer = useCleanup();
const redisPresent = testRedis();
const MB = 1024 * 1024;
/** What docs/shared-limits.md tells operators to set, on a Redis far too small to keep every image the bots were given. */
const MAXMEMORY_MB = 40;
/**
 * Each edit is given a 1 MB input and makes a ~3 MB output (the noise scaled to 1024×1024), both kept for its buttons:
 * 14 edits bring ~56 MB, three times PICTOR_KEPT_IMAGES_MB (16) and more than the whole Redis (the test checks both).
 */
const EDITS = 14;
/** Bounds against a hang only, not a measure: alone on a busy machine an edit takes about a second, the test ~10 s. */
const HANG_GUARD_MS = { edit: 120_000, test: 600_000 };

describe('two replicas on a small Redis under the documented policy (maxmemory-policy noeviction)', () => {
  it.skipIf(redisPresent.skipReason)(
    'filled with kept images by many edits: one gateway session at a time, every interaction answered once, every job charged once, the oldest images gone first, Redis never full',
    async () => {
      requireRedisUrl(redisPresent);
      const redis = await startThrowawayRedis('redis-server', 3, ['--maxmemory', `${MAXMEMORY_MB}mb`, '--maxmemory-policy', 'noeviction']);
      if (!redis) throw new Error('redis-server is needed');
      defer(() => redis.stop());
      const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000, messageRateLimit: { limit: 1000, windowMs: 1000 } });
      defer(() => discord.close());
      const upstream = await startUpstream(defer, 20, { identifyAsEmulator: false }); // the real service: the account's ledger
      const env = {
        PICTOR_LOG_LEVEL: 'silent',
        PICTOR_BASE_URL: upstream.url,
        PICTOR_API_KEY: DEV_API_KEY,
        PICTOR_PARTIAL_IMAGES: '0',
        PICTOR_USER_CONCURRENT_JOBS: String(EDITS),
        PICTOR_KEPT_IMAGES_MB: '16',
        REDIS_URL: redis.url,
        DISCORD_TOKEN: discord.botToken,
        DISCORD_APPLICATION_ID: discord.applicationId,
        DISCORD_API_BASE_URL: discord.apiBaseUrl,
        DISCORD_ALLOWED_ATTACHMENT_HOSTS: discord.cdnHost,
      };
      for (const name of ['a', 'b']) {
        const service = await startService({ ...env, PICTOR_DATA_DIR: await tempDataDir(defer, `pictor-pressure-${name}-`) }, () => {});
        defer(() => service.stop());
      }
      const link = await RedisLink.open({ url: redis.url, prefix: 'pictor' });
      defer(() => link.close());
      // The fake's sessions are looked at often (a local count); Redis keeps its own peak of used memory (used_memory_peak).
      let sessions = 0;
      const watch = setInterval(() => (sessions = Math.max(sessions, discord.openGatewaySessions)), 20);
      defer(async () => clearInterval(watch));

      // Edits of 1 MB inputs (600×600 noise, which no PNG shrinks), one after the other.
      const edits: FakeInteraction[] = [];
      let given = 0;
      for (let i = 0; i < EDITS; i++) {
        const noise = await sharp(randomBytes(600 * 600 * 3), { raw: { width: 600, height: 600, channels: 3 } }).png().toBuffer();
        edits.push(discord.slashCommand('edit', { prompt: `edit ${i}`, quality: 'low', image1: discord.hostFile({ filename: `in-${i}.png`, bytes: noise }) }));
        const result = await discordResult(discord, edits[i]!, HANG_GUARD_MS.edit);
        given += noise.length + result.attachments.reduce((sum, a) => sum + a.size, 0);
      }
      clearInterval(watch);
      // What the bots were given to keep is more than the Redis holds, and three times what they may keep.
      expect(given).toBeGreaterThan(MAXMEMORY_MB * MB);
      expect(given).toBeGreaterThan(3 * 16 * MB);

      expect(sessions).toBe(1);
      expect(discord.gatewayStats.identifies).toBe(1);
      expect(edits.map((ix) => ix.callbackAttempts)).toEqual(edits.map(() => 1));
      expect(upstream.emulator.requests.filter((r) => r.route === 'edits')).toHaveLength(EDITS);
      const info = await link.commands.info();
      expect(Number(/evicted_keys:(\d+)/.exec(info)?.[1])).toBe(0);
      expect(info).not.toMatch(/errorstat_OOM/);
      const peak = Number(/used_memory_peak:(\d+)/.exec(info)?.[1]);
      expect(peak).toBeGreaterThan(16 * MB); // it did hold a full budget of kept images
      expect(peak).toBeLessThan(MAXMEMORY_MB * MB);
      // Every job charged once, nothing left reserved.
      const usage = await link.commands.xlen('pictor:quota:usage');
      expect(usage).toBe(EDITS);
      expect(await link.commands.zcard('pictor:quota:active:account')).toBe(0);

      // The oldest images went first: the first edit cannot be rerolled ("too old"), the latest can.
      const keyOf = (ix: FakeInteraction) => /^pictor:reroll:(.+)$/.exec(buttonsOf(discord.original(ix)!).find((b) => b.label === 'Reroll')!.custom_id)![1]!;
      expect(await link.commands.exists(`pictor:bots:discord-images:r:${keyOf(edits[0]!)}-in-0`)).toBe(0);
      expect(await link.commands.exists(`pictor:bots:discord-images:r:${keyOf(edits[EDITS - 1]!)}-in-0`)).toBe(1);
      const first = discord.original(edits[0]!)!;
      const old = discord.clickButton(first, buttonsOf(first).find((b) => b.label === 'Reroll')!.custom_id);
      expect((await discordPrivateNote(discord, old, HANG_GUARD_MS.edit)).content).toContain('too old');
      const latest = discord.original(edits[EDITS - 1]!)!;
      await discordResult(discord, discord.clickButton(latest, buttonsOf(latest).find((b) => b.label === 'Reroll')!.custom_id), HANG_GUARD_MS.edit);
      expect(upstream.emulator.requests.filter((r) => r.route === 'edits')).toHaveLength(EDITS + 1);
    },
    HANG_GUARD_MS.test,
  );
});
