// Two Discord gateway replicas on one Redis that forgets everything (FLUSHALL: what an empty restart leaves).
import { describe, expect, it } from 'vitest';
import { GATEWAY_LEASE_DEFAULTS } from '../../bots/discord/gateway-lease.js';
import { startService } from '../../bots/main.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { FakeDiscord, buttonsOf, type FakeInteraction } from '../fakes/discord/FakeDiscord.js';
import { discordResult, startUpstream, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { startThrowawayRedis } from '../setup/redis-server.js';

const defer = useCleanup();

/** Waits until `check` holds, `look` (a question to Redis) answered before each check. */
async function waitUntil(check: () => boolean, what: string, timeoutMs: number, look: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (await look(); !check(); await look()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('two gateway replicas when Redis forgets the lease (restarted empty, flushed)', () => {
  it('answer every interaction sent through the flush once, send each job to the service once, and overlap for one renewal at most, never leaving the gateway empty', async () => {
    const redis = await startThrowawayRedis('redis-server', 3, ['--maxmemory-policy', 'noeviction']);
    if (!redis) return expect.fail('redis-server is needed');
    defer(() => redis.stop());
    const discord = await FakeDiscord.start({ messageRateLimit: { limit: 1000, windowMs: 1000 } });
    defer(() => discord.close());
    const upstream = await startUpstream(defer, 20, { identifyAsEmulator: false });
    const env = {
      PICTOR_LOG_LEVEL: 'info', PICTOR_BASE_URL: upstream.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_PARTIAL_IMAGES: '0',
      PICTOR_USER_CONCURRENT_JOBS: '1000', PICTOR_USER_COOLDOWN_SECONDS: '0', PICTOR_MAX_CONCURRENT: '20', PICTOR_IMAGES_PER_MINUTE: '10000', REDIS_URL: redis.url,
      DISCORD_TOKEN: discord.botToken, DISCORD_APPLICATION_ID: discord.applicationId, DISCORD_API_BASE_URL: discord.apiBaseUrl,
    };
    const logs: string[] = [];
    for (const name of ['a', 'b']) {
      const service = await startService({ ...env, PICTOR_DATA_DIR: await tempDataDir(defer, `pictor-forgot-${name}-`) }, (line) => logs.push(line));
      defer(() => service.stop());
    }
    const all: FakeInteraction[] = [];
    const prompts: string[] = [];
    const undelivered: string[] = [];
    const imagine = (prompt: string) => {
      try {
        const ix = discord.slashCommand('imagine', { prompt, quality: 'low' });
        all.push(ix);
        prompts.push(prompt);
      } catch {
        undelivered.push(prompt); // nobody connected to the gateway: Discord tells the member the interaction failed
      }
    };
    imagine('before');
    await discordResult(discord, all[0]!, 30_000);

    const flusher = await connectRedis(redis.url, { name: 'flusher' });
    defer(async () => flusher.disconnect());
    const leaseKey = (await flusher.keys('*:discord:gateway-lease:*')).find((key) => !key.endsWith(':standby'))!;
    const holderBefore = await flusher.get(leaseKey);
    // Flushed just after the holder renewed, with the standby polling: the standby takes the missing key before the
    // holder's next renewal (the case where two sessions meet; a holder that renews first simply keeps the lease).
    let standby: string | null = null;
    await waitUntil(() => standby !== null, 'the standby to poll', 30_000, async () => (standby = await flusher.get(`${leaseKey}:standby`)));
    let ttl = 0;
    await waitUntil(() => ttl > GATEWAY_LEASE_DEFAULTS.ttlMs - 300, 'the holder to renew', 30_000, async () => (ttl = await flusher.pttl(leaseKey)));
    await flusher.flushall();

    // An interaction every ~100 ms from the flush until the old holder has left, and a second more.
    const deadline = Date.now() + 30_000;
    let sentAfterOverlap = 0;
    for (let i = 0; sentAfterOverlap < 10 && Date.now() < deadline; i += 1) {
      imagine(`through the flush ${i}`);
      if (discord.gatewayStats.overlaps > 0 && discord.openGatewaySessions === 1) sentAfterOverlap += 1;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const stats = discord.gatewayStats;
    // Each one answered once, to its end: its result, or (a job Redis forgot while it ran) "stopped", with Retry.
    await discord.waitFor(() => all.every((ix) => {
      const message = discord.original(ix);
      return message && buttonsOf(message).some((b) => /^pictor:(reroll|retry):/.test(b.custom_id));
    }), 'every interaction to be answered to its end', 60_000);

    expect(await flusher.get(leaseKey)).not.toBe(holderBefore);
    expect(stats.overlaps).toBe(1);
    expect(stats.mostOpenSessions).toBe(2);
    expect(stats.longestOverlapMs).toBeLessThanOrEqual(GATEWAY_LEASE_DEFAULTS.renewEveryMs);
    expect(stats.emptied).toBe(0);
    expect(undelivered).toEqual([]);
    expect(all.map((ix) => ix.callbackAttempts)).toEqual(all.map(() => 1));
    const sent = upstream.emulator.requests.map((request) => String(request.fields?.prompt));
    expect([...sent].sort()).toEqual([...prompts].sort());
  }, 120_000);
});
