import { openBotState } from '../../../bots/state/index.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GatewayLease, gatewayLeaseKey } from '../../../bots/discord/gateway-lease.js';
import { startDiscordBot, type DiscordBot } from '../../../bots/discord/index.js';
import { FileQuotaStore, JobRunner } from '../../../bots/runner/index.js';
import { stopOnce } from '../../../bots/runner/stop-once.js';
import { closeRedis, connectRedis } from '../../../src/core/redis-connection.js';
import { withTimeout } from '../../../src/core/with-timeout.js';
import { DEV_API_KEY, createEmulator, type Emulator } from '../../../src/emulator/index.js';
import { PictorClient, ValidationError } from '../../../src/index.js';
import { FakeDiscord, buttonsOf, type FakeInteraction } from '../../fakes/discord/FakeDiscord.js';
import { startCuttableLink } from '../../helpers/shared-limits-proxy.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { RecordingLogger } from './harness.js';

const redisSetup = testRedis();

// Real timers again after every test of every describe here, however it ended: one that times out on fake time never
// reaches its own `finally`, and the next test (with its beforeEach, and `startReplica`, which picks its lease by
// whether time is faked) would start on the fake time it left.
afterEach(() => {
  vi.useRealTimers();
});

describe('gatewayLeaseKey', () => {
  it('names the bot’s application, read from the token, so two bots on one Redis each have a lease', () => {
    const token = `${Buffer.from('104567890123456789').toString('base64')}.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB`;
    expect(gatewayLeaseKey(token)).toBe('pictor:discord:gateway-lease:104567890123456789');
    expect(gatewayLeaseKey(token, 'acme')).toBe('acme:discord:gateway-lease:104567890123456789');
  });

  it('falls back to a digest of a token that does not start with an id, never the token itself', () => {
    const key = gatewayLeaseKey('not-a-discord-token-but-long-enough');
    expect(key).toMatch(/^pictor:discord:gateway-lease:[0-9a-f]{16}$/);
    expect(key).not.toContain('not-a-discord');
  });
});

describe('GatewayLease', () => {
  it('counts a renewal from when it was sent, so a holder whose Redis answers slowly gives the lease up before it can expire', async () => {
    const ttlMs = 1000;
    let firstRenewalSentAt: number | undefined;
    // The first renewal is answered after 380 ms, later ones never.
    const redis = {
      eval: () => {
        if (firstRenewalSentAt !== undefined) return new Promise(() => {});
        firstRenewalSentAt = Date.now();
        return new Promise((resolve) => setTimeout(() => resolve(1), 380));
      },
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    try {
      const lease = new GatewayLease({ redis: redis as unknown as Redis, key: 'lease', ttlMs, renewEveryMs: 400, pollEveryMs: 100, logger: new RecordingLogger() });
      let lostAt: number | undefined;
      lease.keep(() => (lostAt = Date.now()));
      const startedAt = Date.now();
      while (lostAt === undefined && Date.now() < startedAt + 10 * ttlMs) await vi.advanceTimersByTimeAsync(10);
      lease.stop();
      expect(firstRenewalSentAt).toBeDefined();
      expect(lostAt).toBeLessThan(firstRenewalSentAt! + ttlMs);
    } finally {
      vi.useRealTimers();
    }
  });

  it.skipIf(redisSetup.skipReason)('renews nothing once stopped: a keep after stop and release sets no timer and never takes the lease given back again', async () => {
    const url = requireRedisUrl(redisSetup);
    const key = `${uniquePrefix('gateway-lease-stopped')}:lease`;
    const redis = await connectRedis(url, { name: 'lease-stopped' });
    const { ttlMs, renewEveryMs } = { ttlMs: 1500, renewEveryMs: 400 };
    const lease = new GatewayLease({ redis, key, ttlMs, renewEveryMs, pollEveryMs: 200, logger: new RecordingLogger() });
    try {
      expect(await lease.tryAcquire()).toBe(true);
      // Leaving, as the connection leaves: renewals stopped, the lease given back, its key gone.
      await lease.stop();
      await lease.release();
      expect(await redis.exists(key)).toBe(0);
      // A renewal would write the key again: the gateway's lease takes back one it finds gone.
      const evals = vi.spyOn(redis, 'eval');
      const lost = vi.fn();
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
      lease.keep(lost);
      expect(vi.getTimerCount()).toBe(0);
      await vi.advanceTimersByTimeAsync(ttlMs * 3);
      vi.useRealTimers();
      await Promise.allSettled(evals.mock.results.map((result) => result.value as unknown));
      expect(evals).not.toHaveBeenCalled();
      expect(lost).not.toHaveBeenCalled();
      expect(await redis.exists(key)).toBe(0);
    } finally {
      vi.useRealTimers();
      redis.disconnect();
      await deleteKeys(url, key.replace(/:lease$/, ''));
    }
  });
});

describe('GatewayLease leaving, its Redis gone', () => {
  it('stops standing by and gives the lease back by the stop’s until, not after its own bounds (a renew interval, then 2 s)', async () => {
    // Every command waits: ioredis queues them while Redis is gone.
    const redis = { eval: () => new Promise(() => {}) };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    try {
      const lease = new GatewayLease({ redis: redis as unknown as Redis, key: 'lease', ttlMs: 15_000, renewEveryMs: 5000, pollEveryMs: 2000, logger: new RecordingLogger() });
      const until = Date.now() + 300;
      let leftAt: number | undefined;
      void stopOnce()(until, async (budget) => {
        await lease.stop(budget);
        await lease.release(budget);
        leftAt = Date.now();
      });
      await vi.runAllTimersAsync();
      expect(leftAt).toBe(until);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('GatewayLease standing by', () => {
  it('stops standing by for good when stopped while a try for the lease is under way, so a holder draining next does not leave the gateway to nobody', async () => {
    // A Redis of one process's view: the lease held by another; the answer to this process's try held back.
    const keys = new Map<string, string>([['lease', 'another process']]);
    let answerTry: (() => void) | undefined;
    const redis = {
      set: (key: string, value: string, _px: string, _ms: number, nx?: string) => {
        if (nx) return new Promise((resolve) => (answerTry = () => resolve(keys.has(key) ? null : (keys.set(key, value), 'OK'))));
        keys.set(key, value);
        return Promise.resolve('OK');
      },
      // RELEASE: deletes the key if this process's.
      eval: (_script: string, _keys: number, key: string, holder: string) => Promise.resolve(keys.get(key) === holder && keys.delete(key) ? 1 : 0),
    };
    const lease = new GatewayLease({ redis: redis as unknown as Redis, key: 'lease', ttlMs: 1500, renewEveryMs: 400, pollEveryMs: 200, logger: new RecordingLogger() });
    const acquiring = lease.acquire();
    expect(answerTry).toBeDefined();
    await lease.stop();
    answerTry!();
    expect(await acquiring).toBe(false);
    expect([...keys.keys()]).toEqual(['lease']);
  });
});

describe.skipIf(redisSetup.skipReason)('GatewayLease against a Redis whose answers come late (a holding proxy, fake time)', () => {
  it('gives the lease up one renew interval before it can expire, even when every renewal is answered just under that interval after it was sent', async () => {
    const url = requireRedisUrl(redisSetup);
    const key = `${uniquePrefix('gateway-lease-timing')}:lease`;
    const link = await startCuttableLink(url);
    const redis = await connectRedis(link.url, { name: 'lease-timing' });
    const lease = new GatewayLease({ redis, key, ttlMs: 15_000, renewEveryMs: 5_000, pollEveryMs: 2_000, logger: new RecordingLogger() });
    expect(await lease.tryAcquire()).toBe(true);
    const evals = vi.spyOn(redis, 'eval');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    try {
      let lostAt: number | undefined;
      link.holdAnswers();
      lease.keep(() => (lostAt = Date.now()));
      /** Lets fake time pass until the next renewal leaves, then waits for it to reach Redis: when Redis renewed the lease. */
      const nextRenewalAtRedis = async (): Promise<number> => {
        const sent = evals.mock.calls.length;
        const forwarded = link.forwardedAt.length;
        while (evals.mock.calls.length === sent && lostAt === undefined) await vi.advanceTimersByTimeAsync(100);
        await link.whenForwarded(forwarded + 1);
        return link.forwardedAt[forwarded]!;
      };

      // Three renewals, each answered 4.9 s after Redis got it: every one confirmed in time, so the lease is kept.
      let lastAtRedis = 0;
      for (let i = 0; i < 3; i++) {
        lastAtRedis = await nextRenewalAtRedis();
        await link.whenAnswerHeld();
        await vi.advanceTimersByTimeAsync(4_900);
        link.releaseAnswers();
        link.holdAnswers();
        await evals.mock.results.at(-1)!.value;
        await vi.advanceTimersByTimeAsync(0);
      }
      expect(lostAt).toBeUndefined();

      // Then nothing reaches Redis any more: the lease lapses 15 s after it last got a renewal, and another process may
      // take it then. The holder must be off before, with a renew interval to spare, however late the answers were.
      link.dropRequests();
      while (lostAt === undefined && Date.now() < lastAtRedis + 30_000) await vi.advanceTimersByTimeAsync(100);
      expect(lostAt).toBeDefined();
      expect(lostAt! - lastAtRedis).toBeLessThanOrEqual(15_000 - 5_000 + 100);
    } finally {
      vi.useRealTimers();
      lease.stop();
      link.releaseAnswers();
      redis.disconnect();
      await link.close();
      await deleteKeys(url, key.replace(/:lease$/, ''));
    }
  });
});

const LEASE = { ttlMs: 1500, renewEveryMs: 400, pollEveryMs: 200 };
/**
 * The lease of replicas whose renewals are on fake time (`leaseTimeFaked`; `startReplica` gives it to a replica started
 * then): it lives in Redis's real time longer than such a test, so a lease found gone was given back, not lapsed while
 * no renewal was made to pass.
 */
const FAKED_LEASE = { ...LEASE, ttlMs: 60_000 };
/** Discord's identify rate limit: `max_concurrency` identifies per 5 s (1 for a bot not in large-bot sharding). */
const IDENTIFY_WINDOW_MS = 5000;

/** One bot process: its own Redis connection, runner, ledger and data folder, on the shared fake Discord. */
interface Replica {
  name: string;
  bot: DiscordBot;
  runner: JobRunner;
  redis: Redis;
  logger: RecordingLogger;
  /** The lease it holds or stands by for: `FAKED_LEASE` when it started on fake time. */
  lease: typeof LEASE;
  /** What the bot said it can no longer run for (`onFatal`), in order. */
  fatal: ValidationError[];
  /** Dies as a killed process does: off Redis and the gateway for good at once, the lease not given up. */
  crash(): Promise<void>;
  close(): Promise<void>;
}

describe.skipIf(redisSetup.skipReason)('the gateway lease: one process on the gateway at a time, another takes over', () => {
  let discord: FakeDiscord;
  let emulator: Emulator;
  let emulatorUrl: string;
  let closeEmulator: () => Promise<void>;
  let key: string;
  let url: string;
  const replicas: Replica[] = [];

  beforeEach(async () => {
    url = requireRedisUrl(redisSetup);
    key = `${uniquePrefix('discord-gateway-lease')}:lease`;
    discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000, messageRateLimit: { limit: 30, windowMs: 5000 } });
    emulator = createEmulator({ latencyMs: 20 });
    const server = await emulator.listen({ port: 0 });
    emulatorUrl = server.url;
    closeEmulator = server.close;
  });

  afterEach(async () => {
    // Before the replicas close (this runs before the file's own afterEach): what they wait on runs on real time.
    vi.useRealTimers();
    // A replica that does not close fails here with its name, not as the hook's timeout.
    for (const replica of replicas.splice(0)) await withTimeout(replica.close(), 20_000, `replica ${replica.name} did not close within 20 s`);
    await discord.close();
    await closeEmulator();
    await emulator.close();
    await deleteKeys(url, key.replace(/:lease$/, ''));
  });

  /** A replica started on fake time (`leaseTimeFaked`) holds `FAKED_LEASE` unless told another lease; else `LEASE`. */
  async function startReplica(name: string, lease = vi.isFakeTimers() ? FAKED_LEASE : LEASE): Promise<Replica> {
    const redis = await connectRedis(url, { name });
    const dataDir = await mkdtemp(join(tmpdir(), `pictor-lease-${name}-`));
    const store = new FileQuotaStore({ dir: dataDir });
    const logger = new RecordingLogger();
    const runner = new JobRunner({
      client: new PictorClient({ baseURL: emulatorUrl, apiKey: DEV_API_KEY, maxRetries: 0 }),
      store,
      limits: {},
      partialImages: 0,
      minUpdateIntervalMs: 5,
      logger,
    });
    const state = await openBotState({ dataDir, ledger: store, logger });
    const fatal: ValidationError[] = [];
    const bot = await startDiscordBot({
      token: discord.botToken,
      apiBaseUrl: discord.apiBaseUrl,
      runner,
      state,
      logger,
      stopGraceMs: 2000,
      gatewayLease: { redis, key, ...lease },
      onFatal: (error) => fatal.push(error),
    });
    let closed = false;
    let crashed = false;
    const replica: Replica = {
      name,
      bot,
      runner,
      redis,
      logger,
      lease,
      fatal,
      async crash() {
        crashed = true;
        redis.disconnect();
        await runner.shutdown({ graceMs: 0 });
        // Off the gateway for good, as a killed process is (a client only destroyed mid-login comes back through
        // discord.js's own retry); Redis is cut first, so the lease is not given back but lapses.
        await bot.stop({ graceMs: 0 });
      },
      async close() {
        if (closed) return;
        closed = true;
        await runner.shutdown({ graceMs: 500 });
        if (!crashed) await bot.stop();
        await state.close();
        await store.close();
        await closeRedis(redis).catch(() => {});
        await rm(dataDir, { recursive: true, force: true });
      },
    };
    replicas.push(replica);
    return replica;
  }

  /** Runs /imagine and waits for its final image. */
  async function imagine(prompt: string): Promise<FakeInteraction> {
    const ix = discord.slashCommand('imagine', { prompt });
    await discord.waitFor(() => {
      const m = discord.original(ix);
      return m && buttonsOf(m).some((b) => b.label === 'Reroll') ? m : undefined;
    }, `the final reply of "${prompt}"`);
    return ix;
  }

  const handledBy = (replica: Replica) => replica.logger.entries.filter((e) => e.msg === 'job completed').length;
  /** The jobs `replica` ran, once its runner logged the last of the `count` expected (it may log after the final reply lands). */
  const completedOn = async (replica: Replica, count: number) => {
    await discord.waitFor(() => handledBy(replica) >= count || undefined, `"job completed" logged ${count} time(s)`);
    return handledBy(replica);
  };

  it('connects only the first process; the second stands by, healthy, and sees no interaction', async () => {
    const a = await startReplica('a');
    const b = await startReplica('b');
    expect(discord.gatewayStats.identifies).toBe(1);
    expect(discord.openGatewaySessions).toBe(1);
    expect(a.bot.online()).toBe(true);
    expect(b.bot.online()).toBe(true);
    expect(b.logger.entries.some((e) => e.msg === 'another process holds the Discord gateway; standing by')).toBe(true);

    const ix = await imagine('one process answers');
    expect(ix.callbackAttempts).toBe(1);
    expect(emulatorGenerations()).toBe(1);
    expect(await completedOn(a, 1)).toBe(1);
    expect(handledBy(b)).toBe(0);
  });

  it('takes over once the lease of a holder that died without a word lapses, and answers each interaction once', async () => {
    // A lease that outlives the test unless made to lapse: how long the crash takes does not decide what is checked.
    const lasting = { ...LEASE, ttlMs: 60_000 };
    const a = await startReplica('a', lasting);
    const b = await startReplica('b', lasting);
    await imagine('before the crash');
    const holder = await b.redis.get(key);

    // The holder dies: off the gateway, no more renewals, the lease not given back — Redis drops it within its
    // lifetime. The standby stays off the gateway while it is there: seen once it has polled since the crash — its
    // SET NX answered null (the lease is held) and the poll ended standing by (its next SET, the standby's mark).
    await a.crash();
    const sets = vi.spyOn(b.redis, 'set');
    const polledSince = () => {
      const held = sets.mock.calls.findIndex((args, i) => args.includes('NX') && sets.mock.settledResults[i]?.type === 'fulfilled' && sets.mock.settledResults[i].value === null);
      return held >= 0 && sets.mock.calls.length > held + 1;
    };
    await discord.waitFor(polledSince, 'the standby to find the lease held since the crash');
    sets.mockRestore();
    expect(discord.gatewayStats.identifies).toBe(1);
    expect(b.logger.entries.some((e) => e.msg === 'took over the Discord gateway')).toBe(false);
    expect(await b.redis.get(key)).toBe(holder);
    const left = await b.redis.pttl(key);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(lasting.ttlMs);
    // Its lifetime runs out (made to here, rather than waited for): the standby takes the lease at its next poll.
    await b.redis.pexpire(key, 1);
    await discord.waitFor(() => discord.gatewayStats.identifies === 2, 'the standby to connect', 10_000);
    await discord.waitFor(() => b.logger.entries.some((e) => e.msg === 'took over the Discord gateway'), 'the standby to say it took over');
    expect(await b.redis.get(key)).not.toBe(holder);
    expect(discord.openGatewaySessions).toBe(1);

    const after = await imagine('after the crash');
    expect(after.callbackAttempts).toBe(1);
    expect(emulatorGenerations()).toBe(2);
    expect(await completedOn(b, 1)).toBe(1);
    expect(discord.requests.filter((r) => r.code === 40060)).toEqual([]);
  });

  it('disconnects a holder that cannot reach Redis before its lease expires, so the two are never connected at once', async () => {
    const a = await startReplica('a');
    const b = await startReplica('b');
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, discord.openGatewaySessions)), 5);
    try {
      a.redis.disconnect(); // still on the gateway, but its renewals fail
      await discord.waitFor(() => discord.gatewayStats.identifies === 2, 'the standby to connect', 10_000);
      // Watched until the new holder has served a whole job, so the old one had every chance to come back meanwhile.
      expect((await imagine('served by the new holder')).callbackAttempts).toBe(1);
    } finally {
      clearInterval(watch);
    }
    expect(most).toBe(1);
    expect(a.logger.entries.find((e) => e.msg === 'lost the Discord gateway lease; disconnecting from the gateway')?.obj).toEqual({ why: 'Redis has not confirmed the lease in time' });
    expect(b.logger.entries.filter((e) => e.msg === 'job completed')).toHaveLength(1);
  });

  it('stops a standby whose takeover Discord refuses the token of (4004, a token reset since), as the first process stops: DISCORD_TOKEN named, the token never shown, the lease given back, no retry', async () => {
    leaseTimeFaked();
    const a = await startReplica('a');
    const b = await startReplica('b');
    // The token is reset in the Developer Portal: the holder's session goes on, every new IDENTIFY is closed with 4004.
    discord.refuseGatewayIdentifies();
    await a.close();
    await pollsPassUntilItTries(b);
    await discord.waitFor(() => b.fatal.length > 0 || undefined, 'the standby to say it can no longer run', 20_000);
    // One refused IDENTIFY, and none after: the lease is free, and a standby still trying would take it at its next
    // poll (its SET NX, seen as it is sent) and identify again. Its polls and a wait between two takeovers, made to pass.
    await noRetryAfterRefusal(b, 1);
    expect(b.fatal).toHaveLength(1);
    expect(b.fatal[0]).toBeInstanceOf(ValidationError);
    expect(b.fatal[0]!.param).toBe('DISCORD_TOKEN');
    // The very sentence a refused token at start exits 2 with.
    expect(b.fatal[0]!.message).toBe('Discord did not accept the bot token (gateway close 4004 Authentication failed); check DISCORD_TOKEN (copy it again, or Bot → Reset Token in the Developer Portal)');
    expect(b.logger.entries.filter((e) => e.level === 'error').map((e) => [e.msg, e.obj])).toEqual([
      ['Discord did not accept the bot token when taking over the gateway; standing by no more: check DISCORD_TOKEN', { why: 'gateway close 4004 Authentication failed', role: 'taking over' }],
    ]);
    expect(JSON.stringify(b.logger.entries)).not.toContain(discord.botToken);
    // Not healthy, no longer standing by (a holder draining next does not count on it), the lease free for a process with the new token.
    expect(b.bot.online()).toBe(false);
    expect(await b.redis.get(key)).toBeNull();
    expect(await b.redis.get(`${key}:standby`)).toBeNull();
    expect(discord.gatewayStats.identifies).toBe(1);
  });

  it('stops a standby whose takeover login Discord’s REST answers 401 (the token reset since) with the one error line of a takeover, not of leaving a gateway it never joined: DISCORD_TOKEN named, the lease given back, no retry', async () => {
    leaseTimeFaked();
    const a = await startReplica('a');
    const b = await startReplica('b');
    // The token is reset in the Developer Portal: REST refuses it from now on, while the holder stays connected.
    discord.refuseBotToken();
    await a.close();
    await pollsPassUntilItTries(b);
    await discord.waitFor(() => b.fatal.length > 0 || undefined, 'the standby to say it can no longer run', 20_000);
    // Refused at its login's first request (GET /gateway/bot): it never identified, and tries no more.
    await noRetryAfterRefusal(b, 0);
    expect(b.fatal).toHaveLength(1);
    expect(b.fatal[0]).toMatchObject({ code: 'validation_error', param: 'DISCORD_TOKEN' });
    expect(b.logger.entries.filter((e) => e.level === 'error' && e.msg !== 'discord.js reported an error').map((e) => e.obj)).toEqual([{ why: '401 Unauthorized', role: 'taking over' }]);
    expect(JSON.stringify(b.logger.entries)).not.toContain(discord.botToken);
    expect(b.bot.online()).toBe(false);
    expect(await b.redis.get(key)).toBeNull();
    expect(await b.redis.get(`${key}:standby`)).toBeNull();
    expect(discord.gatewayStats.identifies).toBe(1);
  });

  it('stops a holder whose live session Discord closes with 4004 (the token reset while it runs), as a refused token at start stops it: off the gateway, the lease given back, DISCORD_TOKEN named once, no retry', async () => {
    leaseTimeFaked();
    const a = await startReplica('a');
    await discord.waitFor(() => discord.openGatewaySessions === 1 || undefined, 'the holder to connect');
    discord.resetGatewayToken();
    await discord.waitFor(() => a.fatal.length > 0 || undefined, 'the holder to say it can no longer run', 20_000);
    await noRetryAfterRefusal(a, 0); // the live session was closed: nothing identified since
    expect(a.fatal).toHaveLength(1);
    expect(a.fatal[0]).toBeInstanceOf(ValidationError);
    expect(a.fatal[0]!.param).toBe('DISCORD_TOKEN');
    expect(a.fatal[0]!.message).toBe('Discord did not accept the bot token (gateway close 4004 Authentication failed); check DISCORD_TOKEN (copy it again, or Bot → Reset Token in the Developer Portal)');
    expect(a.logger.entries.filter((e) => e.level === 'error').map((e) => [e.msg, e.obj])).toEqual([
      ['Discord no longer accepts the bot token (it closed the gateway session); leaving the gateway: check DISCORD_TOKEN', { why: 'gateway close 4004 Authentication failed', role: 'holder' }],
    ]);
    expect(JSON.stringify(a.logger.entries)).not.toContain(discord.botToken);
    // Not healthy, off the gateway, the lease free at once for a process with the new token (not left to lapse).
    expect(a.bot.online()).toBe(false);
    expect(discord.openGatewayConnections).toBe(0);
    expect(await a.redis.get(key)).toBeNull();
    expect(await a.redis.get(`${key}:standby`)).toBeNull();
  });

  it('stops a holder whose live session Discord closes with a code discord.js never recovers from (4014 Disallowed intents): off the gateway, the lease given back, the intents named, not the token, no retry', async () => {
    leaseTimeFaked();
    const a = await startReplica('a');
    await discord.waitFor(() => discord.openGatewaySessions === 1 || undefined, 'the holder to connect');
    discord.closeGatewaySessions(4014, 'Disallowed intent(s).');
    await discord.waitFor(() => a.fatal.length > 0 || undefined, 'the holder to say it can no longer run', 20_000);
    await noRetryAfterRefusal(a, 0);
    expect(a.fatal).toHaveLength(1);
    expect(a.fatal[0]).toBeInstanceOf(ValidationError);
    expect(a.fatal[0]!.param).toBe('intents');
    expect(a.fatal[0]!.message).toBe('Discord closed the gateway session for good (4014 Disallowed intents): the bot asked for a privileged intent it is not allowed; enable it in the Developer Portal (Bot → Privileged Gateway Intents)');
    expect(a.logger.entries.filter((e) => e.level === 'error' && e.msg !== 'discord.js reported an error').map((e) => [e.msg, e.obj])).toEqual([
      ['Discord closed the gateway session for good; leaving the gateway', { why: a.fatal[0]!.message, role: 'holder' }],
    ]);
    expect(a.bot.online()).toBe(false);
    expect(discord.openGatewayConnections).toBe(0);
    expect(await a.redis.get(key)).toBeNull();
  });

  it('stops a holder whose request with the bot token Discord’s REST answers 401 (the token reset, its live session not closed): off the gateway, the lease given back, DISCORD_TOKEN named once', async () => {
    const a = await startReplica('a');
    const ix = discord.slashCommand('imagine', { prompt: 'its result goes out with the bot token' });
    // The job's reply edits are held at Discord while its interaction token expires, so its result goes to the channel
    // with the bot token, which was reset meanwhile.
    const letThrough = discord.holdWebhookCalls(ix);
    await discord.waitFor(() => discord.webhookCallsHeld > 0 || undefined, 'the job’s first reply edit');
    discord.expireToken(ix.token);
    discord.refuseBotToken();
    letThrough();
    await discord.waitFor(() => a.fatal.length > 0 || undefined, 'the holder to say it can no longer run', 20_000);
    expect(discord.requests.filter((r) => r.status === 401 && r.rawPath.endsWith(`/channels/${discord.channelId}/messages`))).toHaveLength(1);
    expect(a.fatal).toHaveLength(1);
    expect(a.fatal[0]).toBeInstanceOf(ValidationError);
    expect(a.fatal[0]).toMatchObject({ code: 'validation_error', param: 'DISCORD_TOKEN' });
    expect(a.logger.entries.filter((e) => e.msg?.includes('DISCORD_TOKEN')).map((e) => [e.msg, e.obj])).toEqual([
      ['Discord refused a request made with the bot token; leaving the gateway: check DISCORD_TOKEN', { why: '401 Unauthorized', role: 'holder' }],
    ]);
    expect(JSON.stringify(a.logger.entries)).not.toContain(discord.botToken);
    // Not healthy, the lease free at once for a process with the new token (not left to lapse), off the gateway.
    expect(a.bot.online()).toBe(false);
    expect(await a.redis.get(key)).toBeNull();
    expect(await a.redis.get(`${key}:standby`)).toBeNull();
    await discord.waitFor(() => discord.openGatewayConnections === 0 || undefined, 'the holder to leave the gateway', 5000);
  });

  it('hands over at once on a clean stop', async () => {
    const a = await startReplica('a');
    const b = await startReplica('b');
    const tries = vi.spyOn(b.redis, 'set');
    await a.close();
    const triesBefore = tries.mock.calls.length;
    await discord.waitFor(() => discord.gatewayStats.identifies === 2, 'the standby to connect', 10_000);
    // At once: the standby's first try after the stop took the lease it gave back (no wait for it to lapse).
    const firstTry = tries.mock.calls.findIndex((args, i) => i >= triesBefore && args.includes('NX'));
    expect(firstTry).toBeGreaterThanOrEqual(0);
    expect(await tries.mock.results[firstTry]!.value).toBe('OK');
    tries.mockRestore();
    expect((await imagine('after the hand-over')).callbackAttempts).toBe(1);
  });

  it('at drain start stays on the gateway while nobody stands by (new commands are told it restarts), and leaves it to a standby as soon as one waits', async () => {
    const a = await startReplica('a');
    const drained = a.runner.drain(10_000);
    await a.bot.handOver();
    expect(discord.openGatewaySessions).toBe(1);
    const refused = discord.slashCommand('imagine', { prompt: 'while alone and draining' });
    await discord.waitFor(() => (/restarting/.test(discord.original(refused)?.content ?? '') ? true : undefined), 'the refusal of a new job');

    // The holder's looks for a standby from now on, and what each found.
    const looks = vi.spyOn(a.redis, 'get');
    const b = await startReplica('b');
    await discord.waitFor(() => discord.gatewayStats.identifies === 2 || undefined, 'the standby to connect', 10_000);
    // As soon as one waits: the holder left at its first look that found the standby's mark, and looked no more.
    const found = await Promise.all(looks.mock.calls.map(async ([k], i) => (k === `${key}:standby` ? await looks.mock.results[i]!.value : null)));
    looks.mockRestore();
    expect(found.filter((value) => value !== null)).toHaveLength(1);
    expect(found.at(-1)).not.toBeNull();
    expect(a.logger.entries.some((e) => e.msg === 'another process stands by for the Discord gateway; leaving it to that one')).toBe(true);
    expect((await imagine('after the hand-over')).callbackAttempts).toBe(1);
    expect(await completedOn(b, 1)).toBe(1);
    expect(await drained).toBe(0);
  });

  it('stops standing by once a standby drains, so it never takes the gateway only to refuse every command', async () => {
    const a = await startReplica('a');
    const b = await startReplica('b');
    // The standby's tries for the lease (SET NX), on a clock of the test's from here: a poll that does not happen has no
    // event, so the time for three of them is made to pass.
    const tries = vi.spyOn(b.redis, 'set');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const drained = b.runner.drain(10_000);
      await b.bot.handOver();
      const triesAtHandOver = tries.mock.calls.length;
      await a.close();
      await vi.advanceTimersByTimeAsync(3 * LEASE.pollEveryMs);
      expect(tries.mock.calls.slice(triesAtHandOver).filter((args) => args.includes('NX'))).toEqual([]);
      expect(discord.gatewayStats.identifies).toBe(1);
      expect(discord.openGatewaySessions).toBe(0);
      expect(await drained).toBe(0);
    } finally {
      vi.useRealTimers();
      tries.mockRestore();
    }
  });

  it('stays on the gateway when the only standby stopped standing by just before the holder drains', async () => {
    const a = await startReplica('a');
    const b = await startReplica('b');
    // The standby has polled: its standby mark is in Redis.
    await vi.waitFor(async () => expect(await a.redis.get(`${key}:standby`)).toBeTruthy(), { timeout: 10_000 });
    // Both drain at once (a scale-down): the standby first, then the holder while the standby's last poll is recent.
    const drainedB = b.runner.drain(10_000);
    await b.bot.handOver();
    const drainedA = a.runner.drain(10_000);
    await a.bot.handOver();
    expect(discord.openGatewaySessions).toBe(1);
    expect(a.logger.entries.some((e) => e.msg === 'another process stands by for the Discord gateway; leaving it to that one')).toBe(false);
    expect(await drainedA).toBe(0);
    expect(await drainedB).toBe(0);
  });

  it('disconnects a holder whose lease another process took (Redis says so), before that one connects; taking it back, it is on the gateway again, answers, and leaves it when stopped', async () => {
    const a = await startReplica('a');
    await discord.waitFor(() => discord.openGatewaySessions === 1, 'the holder to connect');
    // As if the lease had expired during a pause of this process and another took it.
    await a.redis.set(key, 'another-process', 'PX', 60_000);
    await discord.waitFor(() => discord.openGatewaySessions === 0, 'the holder to disconnect', 5000);
    expect(a.logger.entries.some((e) => e.msg === 'lost the Discord gateway lease; disconnecting from the gateway')).toBe(true);
    expect(a.bot.online()).toBe(true); // standing by again
    await a.redis.del(key);
    // discord.js waits 5 s between two identifies of one process, so this takes longer than a takeover by another process.
    await discord.waitFor(() => a.logger.entries.some((e) => e.msg === 'took over the Discord gateway'), 'the holder to take the lease back and be READY', 15_000);
    expect(discord.gatewayStats.identifies).toBe(2);
    // The identify throttle is the process's, not the login's: the second login waited out Discord's 5 s identify window
    // after the first (measured where Discord counts it; a moment less when the first IDENTIFY took longer on its way).
    const [first, second] = discord.identifyTimes;
    expect(second! - first!).toBeGreaterThanOrEqual(IDENTIFY_WINDOW_MS - 100);
    expect(discord.openGatewaySessions).toBe(1);
    expect((await imagine('after taking the lease back')).callbackAttempts).toBe(1);
    expect(await completedOn(a, 1)).toBe(1);

    await a.close();
    expect(discord.openGatewaySessions).toBe(0);
    expect(discord.openGatewayConnections).toBe(0);
  });

  it('posts the paid image of a job whose process lost the lease meanwhile in the channel when its interaction token has expired (50027): the bot’s REST outlives the login’s client', async () => {
    const a = await startReplica('a');
    const ix = discord.slashCommand('imagine', { prompt: 'outlives its login' });
    // The job's reply edits are held at Discord while the process loses its lease and its client leaves the gateway.
    const letThrough = discord.holdWebhookCalls(ix);
    await discord.waitFor(() => discord.webhookCallsHeld > 0 || undefined, 'the job’s first reply edit');
    await a.redis.set(key, 'another-process', 'PX', 60_000);
    await discord.waitFor(() => discord.openGatewayConnections === 0 || undefined, 'the holder to leave the gateway', 5000);
    discord.expireToken(ix.token);
    letThrough();
    const posted = await discord.waitFor(() => discord.channelMessages().find((m) => m.interactionId === undefined && m.attachments.length === 1), 'the result in the channel', 15_000);
    expect(posted.content.startsWith(`<@${discord.user.id}> 🖌️ **outlives its login**`)).toBe(true);
    expect(discord.requests.filter((r) => r.token === ix.token && r.code === 50027).length).toBeGreaterThan(0);
    expect(emulatorGenerations()).toBe(1);
    expect(await completedOn(a, 1)).toBe(1);
    // A 401 to an interaction's own token (its webhook) says nothing of the bot token: the bot goes on.
    expect(a.fatal).toEqual([]);
  });

  it('leaves no gateway connection open when stopped while taking over (its login waiting for READY), even once Discord answers it', async () => {
    const a = await startReplica('a');
    const b = await startReplica('b');
    const releaseReady = discord.holdReady();
    await a.close();
    await discord.waitFor(() => discord.gatewayStats.identifies === 2 || undefined, 'the standby to identify', 10_000);
    const connectionsSoFar = discord.gatewayStats.connections;
    await b.close();
    releaseReady();
    // discord.js's shard, destroyed while it waits for READY, tries again about 500 ms later: that try is kept off, or
    // (the fault) reaches the gateway and identifies.
    await discord.waitFor(
      () => b.logger.entries.some((e) => e.msg === 'discord.js tried to connect a gateway client that left; kept off') || discord.gatewayStats.identifies > 2 || undefined,
      'discord.js’s own retry of the login',
      15_000,
    );
    expect(discord.gatewayStats.connections).toBe(connectionsSoFar);
    expect(discord.openGatewaySessions).toBe(0);
    expect(discord.openGatewayConnections).toBe(0);
  });

  /**
   * Fake time from before the replicas start, so the lease's renewals and polls are on it; it passes only when the test
   * makes it (`pollsPassUntilItTries`, `noRetryAfterRefusal`). Replicas started from then on hold `FAKED_LEASE`.
   */
  function leaseTimeFaked(): void {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
  }

  /**
   * Makes a standby's polls pass, one at a time, until `replica` tries for the lease (its SET NX, seen as it is sent),
   * and no further: what follows (its login, its renewals) runs with no time made to pass.
   */
  async function pollsPassUntilItTries(replica: Replica): Promise<void> {
    const sets = vi.spyOn(replica.redis, 'set');
    try {
      for (let polls = 0; !sets.mock.calls.some((args) => args.includes('NX')); polls++) {
        if (polls === 50) throw new Error(`replica ${replica.name} did not try for the lease in 50 polls`);
        await vi.advanceTimersByTimeAsync(FAKED_LEASE.pollEveryMs);
        // Its Redis answers in between (a poll under way when the time passed).
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      sets.mockRestore();
    }
  }

  /**
   * After `replica` said it can no longer run (its token refused, its session closed for good): nothing more reaches Discord's gateway or the lease, and it says so no
   * more, while its lease polls, renewals and the wait between two takeovers are made to pass (fake time): no try for
   * the lease (SET NX, seen as sent), no renewal (EVAL), no new gateway connection or refused IDENTIFY beyond `refused`.
   */
  async function noRetryAfterRefusal(replica: Replica, refused: number): Promise<void> {
    const { connections, refusedIdentifies } = discord.gatewayStats;
    expect(refusedIdentifies).toBe(refused);
    // The lease's timers (its renewals, its polls, the wait between two takeovers) were made on fake time, or passing it
    // fires none; and its lease outlives the test in Redis, or one found gone may have lapsed, not been given back.
    expect(vi.isFakeTimers()).toBe(true);
    expect(replica.lease).toEqual(FAKED_LEASE);
    const sets = vi.spyOn(replica.redis, 'set');
    const evals = vi.spyOn(replica.redis, 'eval');
    try {
      await vi.advanceTimersByTimeAsync(3 * (FAKED_LEASE.ttlMs + FAKED_LEASE.pollEveryMs));
      expect(sets.mock.calls.filter((args) => args.includes('NX'))).toEqual([]);
      expect(evals).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
      sets.mockRestore();
      evals.mockRestore();
    }
    expect(discord.gatewayStats.connections).toBe(connections);
    expect(discord.gatewayStats.refusedIdentifies).toBe(refusedIdentifies);
  }

  function emulatorGenerations(): number {
    return emulator.requests.filter((r) => r.route === 'generations').length;
  }
});
