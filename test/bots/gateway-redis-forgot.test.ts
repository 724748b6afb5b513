// Two Discord gateway replicas on one Redis that forgets everything (FLUSHALL: what an empty restart leaves).
import { describe, expect, it } from 'vitest';
import { startService } from '../../bots/main.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { FakeDiscord, type FakeInteraction } from '../fakes/discord/FakeDiscord.js';
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
  it('keep one gateway session at a time, answer each interaction once, and send each job to the service once', async () => {
    const redis = await startThrowawayRedis('redis-server', 3, ['--maxmemory-policy', 'noeviction']);
    if (!redis) return expect.fail('redis-server is needed');
    defer(() => redis.stop());
    const discord = await FakeDiscord.start({ messageRateLimit: { limit: 1000, windowMs: 1000 } });
    defer(() => discord.close());
    const upstream = await startUpstream(defer, 20, { identifyAsEmulator: false });
    const env = {
      PICTOR_LOG_LEVEL: 'info', PICTOR_BASE_URL: upstream.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_PARTIAL_IMAGES: '0',
      PICTOR_USER_CONCURRENT_JOBS: '100', PICTOR_USER_COOLDOWN_SECONDS: '0', PICTOR_MAX_CONCURRENT: '20', PICTOR_IMAGES_PER_MINUTE: '1000', REDIS_URL: redis.url,
      DISCORD_TOKEN: discord.botToken, DISCORD_APPLICATION_ID: discord.applicationId, DISCORD_API_BASE_URL: discord.apiBaseUrl,
    };
    const logs: string[] = [];
    for (const name of ['a', 'b']) {
      const service = await startService({ ...env, PICTOR_DATA_DIR: await tempDataDir(defer, `pictor-forgot-${name}-`) }, (line) => logs.push(line));
      defer(() => service.stop());
    }
    const all: FakeInteraction[] = [];
    const prompts: string[] = [];
    const imagine = (prompt: string) => {
      const ix = discord.slashCommand('imagine', { prompt, quality: 'low' });
      all.push(ix);
      prompts.push(prompt);
      return ix;
    };
    await discordResult(discord, imagine('before'), 30_000);
    const identifiedBefore = discord.gatewayStats.identifies;

    const flusher = await connectRedis(redis.url, { name: 'flusher' });
    defer(async () => flusher.disconnect());
    const leaseKey = (await flusher.keys('*:discord:gateway-lease:*')).find((key) => !key.endsWith(':kept') && !key.endsWith(':standby'))!;
    const holderBefore = await flusher.get(leaseKey);
    await flusher.flushall();
    // The lease set again: by its holder's renewal (taken back), or by the standby's poll (which then waits before it connects).
    let holderAfter: string | null = null;
    await waitUntil(() => holderAfter !== null, 'the lease to be taken again', 30_000, async () => (holderAfter = await flusher.get(leaseKey)));
    const standbyTookIt = holderAfter !== holderBefore;
    const during = Array.from({ length: 5 }, (_, i) => imagine(`during ${i}`));
    await Promise.all(during.map((ix) => discordResult(discord, ix, 30_000)));
    if (standbyTookIt) {
      // The old holder learns at its next renewal; the standby connects after its wait.
      await discord.waitFor(() => discord.gatewayStats.identifies > identifiedBefore || undefined, 'the standby to connect', 60_000);
    }
    const after = Array.from({ length: 5 }, (_, i) => imagine(`after ${i}`));
    await Promise.all(after.map((ix) => discordResult(discord, ix, 30_000)));

    expect(discord.gatewayStats.mostOpenSessions).toBe(1);
    expect(all.map((ix) => ix.callbackAttempts)).toEqual(all.map(() => 1));
    const sent = upstream.emulator.requests.map((request) => String(request.fields?.prompt));
    expect([...sent].sort()).toEqual([...prompts].sort());
  }, 120_000);
});
