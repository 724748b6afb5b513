// Two Discord gateway replicas on one Redis that forgets everything (FLUSHALL: what an empty restart leaves).
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { GATEWAY_LEASE_DEFAULTS } from '../../bots/discord/gateway-lease.js';
import { startService } from '../../bots/main.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { FakeDiscord, buttonsOf, type FakeInteraction } from '../fakes/discord/FakeDiscord.js';
import { discordResult, startUpstream, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { spyOnInstance } from '../helpers/instance-spy.js';
import { startThrowawayRedis } from '../setup/redis-server.js';

const defer = useCleanup();
/** Interactions not yet answered to their end at a time: a burst a 2-core machine answers within Discord's 3 s. */
const IN_FLIGHT = 4;

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
    // The old holder's renewals from the flush on (both replicas run in this process): how many sessions were open as
    // each was sent and as Redis answered it.
    const renewals: { openWhenSent: number; answer?: unknown; openWhenAnswered?: number }[] = [];
    const evalOf = Redis.prototype.eval;
    await flusher.flushall();
    // Only the clients of this test's Redis: those of the two replicas.
    const port = Number(new URL(redis.url).port);
    const evals = spyOnInstance(Redis.prototype, 'eval', (client) => client.options.port === port).mockImplementation(function (this: Redis, ...args: unknown[]) {
      const answer = (evalOf as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      if (args[2] === leaseKey && args[3] === holderBefore) {
        const renewal: (typeof renewals)[number] = { openWhenSent: discord.openGatewaySessions };
        renewals.push(renewal);
        // Settled before the holder reads the answer: the sessions as Redis answered, before the holder acts on it.
        answer.then((value) => Object.assign(renewal, { answer: value, openWhenAnswered: discord.openGatewaySessions }), () => {});
      }
      return answer;
    } as unknown as Redis['eval']);
    defer(async () => void evals.mockRestore());

    // Interactions from the flush until the old holder has left, and a few more: one more each time an earlier one is
    // answered to its end (a few at a time: what a small machine runs within Discord's 3 s), and one as soon as the
    // second session is open, so one reaches both sessions.
    const finished = (ix: FakeInteraction) => {
      const message = discord.original(ix);
      return message !== undefined && buttonsOf(message).some((b) => /^pictor:(reroll|retry):/.test(b.custom_id));
    };
    let sentWhileTwoOpen = 0;
    let sentAfterOverlap = 0;
    for (let i = 0; sentAfterOverlap < 3 && i < 100; i += 1) {
      const overlapped = discord.gatewayStats.overlaps > 0;
      if (discord.openGatewaySessions >= 2) sentWhileTwoOpen += 1;
      else if (overlapped) sentAfterOverlap += 1;
      imagine(`through the flush ${i}`);
      await discord.waitFor(
        () => all.filter((ix) => !finished(ix)).length < IN_FLIGHT || (sentWhileTwoOpen === 0 && discord.openGatewaySessions >= 2),
        'an interaction to be answered to its end, or the second session',
        60_000,
      );
    }
    const stats = discord.gatewayStats;
    // Each one answered once, to its end: its result, or (a job Redis forgot while it ran) "stopped", with Retry.
    await discord.waitFor(() => all.every(finished), 'every interaction to be answered to its end', 60_000);

    expect(await flusher.get(leaseKey)).not.toBe(holderBefore);
    expect(stats.overlaps).toBe(1);
    expect(stats.mostOpenSessions).toBe(2);
    expect(sentWhileTwoOpen).toBeGreaterThan(0);
    // Two sessions for one renewal at most: the old holder's first renewal after the flush, sent while both were open,
    // found the lease taken and ended its session; it made no other.
    expect(renewals).toEqual([{ openWhenSent: 2, answer: 0, openWhenAnswered: 2 }]);
    expect(stats.emptied).toBe(0);
    expect(undelivered).toEqual([]);
    expect(all.map((ix) => ix.callbackAttempts)).toEqual(all.map(() => 1));
    const sent = upstream.emulator.requests.map((request) => String(request.fields?.prompt));
    expect([...sent].sort()).toEqual([...prompts].sort());
  }, 120_000);
});
