import { EventEmitter } from 'node:events';
import { Client, Events, type WebSocketOptions } from 'discord.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { gatewayConnection } from '../../../bots/discord/gateway-connection.js';
import { GatewayLease } from '../../../bots/discord/gateway-lease.js';
import { stopOnce, type StopBudget } from '../../../bots/runner/stop-once.js';
import { closeRedis, connectRedis } from '../../../src/core/redis-connection.js';
import { ValidationError } from '../../../src/core/errors.js';
import { withTimeout } from '../../../src/core/with-timeout.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { FakeDiscord } from '../../fakes/discord/FakeDiscord.js';
import { RecordingLogger } from './harness.js';
import { spyOnInstance } from '../../helpers/instance-spy.js';

const redisSetup = testRedis();

/** The part of discord.js's Client the connection uses, with a login that is READY once `loggingIn` resolves. */
class SlowLoginClient extends EventEmitter {
  #ready = false;
  /** Whether `login` was called. */
  loginStarted = false;
  constructor(readonly loggingIn: () => Promise<unknown>) {
    super();
  }
  async login(): Promise<string> {
    this.loginStarted = true;
    await this.loggingIn();
    this.#ready = true;
    this.emit(Events.ClientReady, this);
    return 'token';
  }
  async destroy(): Promise<void> {
    this.#ready = false;
  }
  isReady(): boolean {
    return this.#ready;
  }
}

/** A client whose destroy ends only when the test says so (discord.js's, closing a socket that answers late). */
class SlowDestroyClient extends SlowLoginClient {
  destroyStarted = false;
  #destroyed!: () => void;
  readonly #destroying = new Promise<void>((resolve) => (this.#destroyed = resolve));
  override async destroy(): Promise<void> {
    this.destroyStarted = true;
    await this.#destroying;
    await super.destroy();
  }
  endDestroy(): void {
    this.#destroyed();
  }
}

/**
 * Waits until Discord has read the close of every gateway connection: leaving ends once the client has sent its close
 * (or discord.js's retry of the login was kept off, after it), and the fake, in this same process, reads that close at
 * its next turn for I/O — on a busy machine, after the check that follows. A client still connected (or connected
 * again) times this out.
 */
async function closedAtDiscord(discord: FakeDiscord): Promise<void> {
  await discord.waitFor(() => discord.openGatewayConnections === 0 || undefined, 'Discord to see the gateway connection closed', 10_000);
}

describe('the gateway connection, logging in', () => {
  it('asks Discord for its identify rate again at the next login when asking failed once, instead of failing every later login', async () => {
    // A stand-in manager drives the throttle directly: this shows what the connection does with a throttle whose making
    // failed, not that real @discordjs/ws (1.2) gets there. There, each login's manager fetches GET /gateway/bot in its
    // connect() and caches the answer until its start limit resets (reset_after ms; 5 s when 0); the throttle is made at the
    // first identify from that cache, so it fetches again — and can fail — only when the cache expired between connect
    // and identify (a reset_after that ran out meanwhile). A connect whose own fetch fails rejects the login before any
    // throttle is made.
    let asked = 0;
    // discord.js's WebSocketManager, as far as the identify throttle uses it: its first GET /gateway/bot fails.
    const manager = {
      fetchGatewayInformation: async () => {
        asked += 1;
        if (asked === 1) throw new Error('Discord answered 502');
        return { session_start_limit: { max_concurrency: 1 } };
      },
    };
    const newClient = (ws: WebSocketOptions) =>
      new SlowLoginClient(async () => {
        const throttler = await ws.buildIdentifyThrottler!(manager as never);
        await throttler.waitForIdentify(0, new AbortController().signal);
      }) as unknown as Client;
    const connection = gatewayConnection({ newClient, token: 'token', loginTimeoutMs: 10_000, logger: new RecordingLogger() });
    await expect(connection.start()).rejects.toThrow('Discord answered 502');
    await connection.start();
    expect(connection.online()).toBe(true);
    expect(asked).toBe(2);
    await connection.leave();
  });

  it.each([
    ['answers its token 401 Unauthorized (discord.js’s TokenInvalid)', (discord: FakeDiscord) => ({ token: `${discord.botToken}-reset` })],
    ['closes its IDENTIFY with 4004 Authentication failed', (discord: FakeDiscord) => (discord.refuseGatewayIdentifies(), { token: discord.botToken })],
  ])('rejects its start with the settings error naming DISCORD_TOKEN when Discord %s, the token never in it, and is off the gateway', async (_, refusing) => {
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    try {
      const { token } = refusing(discord);
      const newClient = (ws: WebSocketOptions) => new Client({ intents: [], ws, rest: { api: discord.apiBaseUrl } });
      const connection = gatewayConnection({ newClient, token, loginTimeoutMs: 10_000, logger: new RecordingLogger() });
      const error = await connection.start().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ code: 'validation_error', param: 'DISCORD_TOKEN' });
      expect((error as Error).message).not.toContain(token);
      expect(connection.online()).toBe(false);
      await closedAtDiscord(discord);
    } finally {
      await discord.close();
    }
  });
});

describe.skipIf(redisSetup.skipReason)('the gateway connection with a lease', () => {
  const prefix = uniquePrefix('discord-gateway-connection');
  let redis: Redis;
  beforeAll(async () => {
    redis = await connectRedis(requireRedisUrl(redisSetup), { name: 'gateway-connection-test' });
  });
  afterAll(async () => {
    await closeRedis(redis);
    await deleteKeys(requireRedisUrl(redisSetup), prefix);
  });

  it('keeps its lease while a login takes longer than the lease lives, so no other process can take it meanwhile', async () => {
    // A short lease, renewed 400 ms apart: a loaded machine's late answers (up to 800 ms) must not make the holder give it up meanwhile.
    const lease = { redis, key: `${prefix}:lease`, ttlMs: 1200, renewEveryMs: 400, pollEveryMs: 250 };
    const logger = new RecordingLogger();
    // Resolves once Redis confirmed (answered 1: the lease was still this process's) a renewal sent after the lease
    // taken at the start would have expired without its renewals.
    let takenBy = Infinity;
    let renewedPastItsLife!: () => void;
    const keptPastItsLife = new Promise<void>((resolve) => (renewedPastItsLife = resolve));
    const evaluate = redis.eval.bind(redis) as (...args: unknown[]) => Promise<unknown>;
    const evals = vi.spyOn(redis, 'eval').mockImplementation((async (...args: unknown[]) => {
      const sentAt = Date.now();
      const answer = await evaluate(...args);
      if (args[2] === lease.key && Number(answer) === 1 && sentAt > takenBy + lease.ttlMs) renewedPastItsLife();
      return answer;
    }) as typeof redis.eval);
    // The lease lives from when the SET NX that took it was sent (as the lease counts it), not from the start call.
    const setKey = redis.set.bind(redis) as (...args: unknown[]) => Promise<unknown>;
    const sets = vi.spyOn(redis, 'set').mockImplementation((async (...args: unknown[]) => {
      const sentAt = Date.now();
      const answer = await setKey(...args);
      if (args[0] === lease.key && args.includes('NX') && answer === 'OK') takenBy = sentAt;
      return answer;
    }) as typeof redis.set);
    // The login ends when the test says so: past the lease's lifetime, however loaded the machine.
    let loggedIn!: () => void;
    const login = new Promise<void>((resolve) => (loggedIn = resolve));
    const client = new SlowLoginClient(() => login);
    const connection = gatewayConnection({ newClient: () => client as unknown as Client, token: 'token', loginTimeoutMs: 10_000, lease, logger });
    const started = connection.start();
    await vi.waitFor(() => expect(client.loginStarted).toBe(true), { timeout: 15_000 });
    await withTimeout(keptPastItsLife, 10_000, 'no renewal past the lease’s first lifetime was confirmed');
    evals.mockRestore();
    sets.mockRestore();
    const other = new GatewayLease({ ...lease, logger });
    expect(await other.tryAcquire()).toBe(false);
    loggedIn();
    await started;
    expect(connection.online()).toBe(true);
    await connection.leave();
    expect(await other.tryAcquire()).toBe(true);
    await other.release();
  });

  it('forgets a 4004 of a login it gave up (its lease lost meanwhile): after a session that worked, a later takeover’s unrelated error is retried, not taken for a refused token', async () => {
    const lease = { redis, key: `${prefix}:lease-5`, ttlMs: 1500, renewEveryMs: 200, pollEveryMs: 100 };
    const logger = new RecordingLogger();
    const onFatal = vi.fn();
    const clients: SlowLoginClient[] = [];
    /** Each login's client, in order: the first sees a 4004 and never ends, the second is READY, the third fails. */
    const logins: ((client: SlowLoginClient) => Promise<unknown>)[] = [
      (client) => (client.emit(Events.ShardDisconnect, { code: 4004, reason: '', wasClean: true }, 0), new Promise(() => {})),
      async () => {},
      async () => Promise.reject(new Error('connect ECONNRESET')),
    ];
    const newClient = () => {
      const login = logins[clients.length] ?? (async () => {});
      const client: SlowLoginClient = new SlowLoginClient(() => login(client));
      clients.push(client);
      return client as unknown as Client;
    };
    const connection = gatewayConnection({ newClient, token: 'token', loginTimeoutMs: 10_000, lease, onFatal, logger });
    /** Another process takes the lease (this one's next renewal finds it lost), then lets it go. */
    const takenAndFreed = async (loginsBefore: number) => {
      await redis.set(lease.key, 'another-process', 'PX', 60_000);
      await vi.waitFor(() => expect(logger.entries.filter((e) => e.msg === 'lost the Discord gateway lease; disconnecting from the gateway')).toHaveLength(loginsBefore), { timeout: 15_000 });
      await redis.del(lease.key);
    };
    try {
      await redis.set(lease.key, 'another-process', 'PX', 60_000);
      await connection.start();
      await redis.del(lease.key);
      await vi.waitFor(() => expect(clients[0]?.loginStarted).toBe(true), { timeout: 15_000 });
      await takenAndFreed(1);
      await vi.waitFor(() => expect(logger.entries.some((e) => e.msg === 'took over the Discord gateway')).toBe(true), { timeout: 15_000 });
      expect(clients).toHaveLength(2);
      await takenAndFreed(2);
      await vi.waitFor(() => expect(logger.entries.some((e) => e.msg === 'could not connect to the Discord gateway after taking the lease; giving it up for now')).toBe(true), { timeout: 15_000 });
      expect(onFatal).not.toHaveBeenCalled();
      expect(connection.online()).toBe(true);
    } finally {
      await connection.leave();
    }
  });

  it('stops renewing its lease as soon as Discord closes its live session for good, so a renewal failing while it leaves the gateway is not a second error', async () => {
    const lease = { redis, key: `${prefix}:lease-6`, ttlMs: 1500, renewEveryMs: 200, pollEveryMs: 100 };
    const logger = new RecordingLogger();
    let fatal!: () => void;
    const stoppedForGood = new Promise<void>((resolve) => (fatal = resolve));
    const onFatal = vi.fn((_error: unknown) => fatal());
    const client = new SlowDestroyClient(async () => {});
    // Fake time, which passes only when the test says, so the renew intervals can be made to pass while discord.js closes.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const connection = gatewayConnection({ newClient: () => client as unknown as Client, token: 'token', loginTimeoutMs: 10_000, lease, onFatal, logger });
    const evals = vi.spyOn(redis, 'eval');
    try {
      await connection.start();
      client.emit(Events.ShardDisconnect, { code: 4004, reason: '', wasClean: true }, 0);
      // The close reported, the destroy has begun.
      expect(client.destroyStarted).toBe(true);
      // While discord.js closes the session (its destroy held), another process takes the lease, and three renew
      // intervals pass: a renewal still sent would find the lease lost.
      await redis.set(lease.key, 'another-process', 'PX', 60_000);
      const sent = evals.mock.results.length;
      await vi.advanceTimersByTimeAsync(3 * lease.renewEveryMs);
      await Promise.allSettled(evals.mock.results.slice(sent).map((result) => result.value as Promise<unknown>));
      await vi.advanceTimersByTimeAsync(0);
      client.endDestroy();
      await stoppedForGood;
      expect(onFatal).toHaveBeenCalledTimes(1);
      expect(onFatal.mock.calls[0]![0]).toMatchObject({ code: 'validation_error', param: 'DISCORD_TOKEN' });
      expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.msg)).toEqual(['Discord no longer accepts the bot token (it closed the gateway session); leaving the gateway: check DISCORD_TOKEN']);
      expect(connection.online()).toBe(false);
    } finally {
      vi.useRealTimers();
      evals.mockRestore();
      client.endDestroy();
      await connection.leave();
      await redis.del(lease.key);
    }
  });

  it('never logs in, and leaves the lease free, when Discord refuses the bot token to a request of the bot’s while its try for the lease is under way', async () => {
    const lease = { redis, key: `${prefix}:lease-refused-while-trying`, ttlMs: 1500, renewEveryMs: 400, pollEveryMs: 100 };
    const logger = new RecordingLogger();
    const onFatal = vi.fn();
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    // The token was reset: Discord would refuse a login with it (and count the attempt).
    discord.refuseBotToken();
    const clients: Client[] = [];
    const newClient = (ws: WebSocketOptions) => {
      const client = new Client({ intents: [], ws, rest: { api: discord.apiBaseUrl } });
      clients.push(client);
      return client;
    };
    const connection = gatewayConnection({ newClient, token: discord.botToken, loginTimeoutMs: 10_000, lease, onFatal, logger });
    // Once `holdTries` is set, the standby's next try for the lease (SET NX) waits to be sent until the test lets it go.
    const setKey = redis.set.bind(redis) as (...args: unknown[]) => Promise<unknown>;
    let holdTries = false;
    let sendHeldTry: (() => Promise<unknown>) | undefined;
    const sets = vi.spyOn(redis, 'set').mockImplementation(((...args: unknown[]) => {
      if (!(holdTries && args[0] === lease.key && args.includes('NX'))) return setKey(...args);
      holdTries = false;
      return new Promise<unknown>((resolve) => {
        sendHeldTry = () => {
          const answer = setKey(...args);
          resolve(answer);
          return answer;
        };
      });
    }) as typeof redis.set);
    try {
      await redis.set(lease.key, 'another-process', 'PX', 60_000);
      await connection.start();
      holdTries = true;
      await vi.waitFor(() => expect(sendHeldTry).toBeDefined(), { timeout: 15_000 });
      // While that try is on its way, the holder gives the lease up and Discord answers a request of the bot's 401.
      await redis.del(lease.key);
      await connection.tokenRefusedOverRest('401 Unauthorized');
      expect(onFatal).toHaveBeenCalledTimes(1);
      // The try reaches Redis after all, and takes the free lease.
      expect(await sendHeldTry!()).toBe('OK');
      // Given back at once, or (the fault) a login begun with the refused token.
      await vi.waitFor(async () => expect((await redis.get(lease.key)) === null || clients.length > 0).toBe(true), { timeout: 15_000 });
      expect(clients).toHaveLength(0);
      expect(discord.requests).toEqual([]);
      expect(discord.gatewayStats.connections).toBe(0);
      expect(await redis.get(lease.key)).toBeNull();
      expect(await redis.get(`${lease.key}:standby`)).toBeNull();
      expect(connection.online()).toBe(false);
      expect(onFatal).toHaveBeenCalledTimes(1);
      // Its one error line says it stood by: it never held the gateway, so it left none.
      expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.obj)).toEqual([{ why: '401 Unauthorized', role: 'standby' }]);
    } finally {
      sets.mockRestore();
      await connection.leave();
      await redis.del(lease.key);
      await discord.close();
    }
  });

  it('gives the lease back at stop only once the disconnect its loss began has ended, so no other process connects while it is still on the gateway', async () => {
    const lease = { redis, key: `${prefix}:lease-3`, ttlMs: 1500, renewEveryMs: 300, pollEveryMs: 200 };
    const logger = new RecordingLogger();
    const client = new SlowDestroyClient(async () => {});
    const connection = gatewayConnection({ newClient: () => client as unknown as Client, token: 'token', loginTimeoutMs: 10_000, leaveTimeoutMs: 1000, lease, logger });
    await connection.start();
    expect(connection.online()).toBe(true);
    // The lease taken by another process (as after a pause of this one): the next renewal finds it lost, and the
    // client's destroy begins and does not end (a socket that closes late).
    await redis.set(lease.key, 'another-process', 'PX', 60_000);
    await vi.waitFor(() => expect(client.destroyStarted).toBe(true), { timeout: 15_000 });
    await redis.del(lease.key);
    // The bot stops meanwhile. Whether the first disconnect had ended (destroyed, or given up on) when the lease was given back:
    const gaveUpWaiting = () => logger.entries.some((e) => e.msg === 'discord.js did not say it left the gateway in time; going on without it');
    let offWhenReleased: boolean | undefined;
    const evaluate = redis.eval.bind(redis) as (...args: unknown[]) => Promise<unknown>;
    const evals = vi.spyOn(redis, 'eval').mockImplementation((async (...args: unknown[]) => {
      if (args[2] === lease.key) offWhenReleased ??= gaveUpWaiting();
      return evaluate(...args);
    }) as typeof redis.eval);
    try {
      await connection.leave();
    } finally {
      evals.mockRestore();
      client.endDestroy();
    }
    expect(offWhenReleased).toBe(true);
  });

  it('keeps no gateway connection open when it loses the lease while its login waits for READY, even once Discord answers it', async () => {
    const lease = { redis, key: `${prefix}:lease-4`, ttlMs: 1500, renewEveryMs: 300, pollEveryMs: 200 };
    const logger = new RecordingLogger();
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    const newClient = (ws: WebSocketOptions) => new Client({ intents: [], ws, rest: { api: discord.apiBaseUrl } });
    const connection = gatewayConnection({ newClient, token: discord.botToken, loginTimeoutMs: 60_000, lease, logger });
    const releaseReady = discord.holdReady();
    try {
      const started = connection.start();
      await discord.waitFor(() => discord.gatewayStats.identifies === 1 || undefined, 'the login to identify', 10_000);
      // The lease taken by another process (as after a pause of this one) while the login waits: the next renewal finds it.
      await redis.set(lease.key, 'another-process', 'PX', 60_000);
      await withTimeout(started, 10_000, 'start() did not end when the lease was lost');
      expect(logger.entries.some((e) => e.msg === 'lost the Discord gateway lease; disconnecting from the gateway')).toBe(true);
      releaseReady();
      // discord.js's shard, destroyed while it waits for READY, tries again about 500 ms later: kept off, or (the fault)
      // on the gateway again.
      await discord.waitFor(
        () => logger.entries.some((e) => e.msg === 'discord.js tried to connect a gateway client that left; kept off') || discord.gatewayStats.identifies > 1 || undefined,
        'discord.js’s own retry of the login',
        15_000,
      );
      await closedAtDiscord(discord);
      expect(discord.gatewayStats.identifies).toBe(1);
      expect(discord.openGatewaySessions).toBe(0);
      expect(discord.openGatewayConnections).toBe(0);
      // Standing by for the lease again: healthy, not on the gateway.
      expect(connection.online()).toBe(true);
      expect(connection.client()?.isReady()).toBe(false);
    } finally {
      releaseReady();
      await connection.leave();
      await redis.del(lease.key);
      await discord.close();
    }
  });

  it('does not stay on the gateway when the bot stops while a standby is still logging in', async () => {
    const lease = { redis, key: `${prefix}:lease-2`, ttlMs: 600, renewEveryMs: 200, pollEveryMs: 100 };
    const logger = new RecordingLogger();
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    try {
      const holder = new GatewayLease({ ...lease, logger });
      expect(await holder.tryAcquire()).toBe(true);
      const clients: Client[] = [];
      const newClient = (ws: WebSocketOptions) => {
        const client = new Client({ intents: [], ws, rest: { api: discord.apiBaseUrl } });
        clients.push(client);
        return client;
      };
      const connection = gatewayConnection({ newClient, token: discord.botToken, loginTimeoutMs: 10_000, lease, logger });
      await connection.start();
      const releaseReady = discord.holdReady();
      await holder.release();
      // The standby takes the lease at its next poll and logs in; the bot stops meanwhile, then the login ends READY.
      await discord.waitFor(() => discord.gatewayStats.identifies === 1 || undefined, 'the standby to identify', 10_000);
      await withTimeout(connection.leave(), 10_000, 'leave() never ended');
      releaseReady();
      // discord.js's shard, destroyed while it waits for READY, tries again about 500 ms later: kept off, or (the fault)
      // on the gateway again.
      await discord.waitFor(
        () => logger.entries.some((e) => e.msg === 'discord.js tried to connect a gateway client that left; kept off') || discord.gatewayStats.identifies > 1 || undefined,
        'discord.js’s own retry of the login',
        15_000,
      );
      await closedAtDiscord(discord);
      expect(discord.gatewayStats.identifies).toBe(1);
      expect(discord.openGatewaySessions).toBe(0);
      expect(discord.openGatewayConnections).toBe(0);
      expect(clients.every((client) => !client.isReady())).toBe(true);
      expect(connection.online()).toBe(false);
    } finally {
      await discord.close();
    }
  });

  it('waits for the disconnect whole when a stop with an early until comes after a hand-over at drain began the leave: off the gateway when the stop resolves', async () => {
    const lease = { redis, key: `${prefix}:lease-handover`, ttlMs: 5000, renewEveryMs: 1000, pollEveryMs: 100 };
    const logger = new RecordingLogger();
    const client = new SlowDestroyClient(async () => {});
    let destroyed = false;
    const destroy = client.destroy.bind(client);
    client.destroy = async () => {
      await destroy();
      destroyed = true;
    };
    const connection = gatewayConnection({ newClient: () => client as unknown as Client, token: 'token', loginTimeoutMs: 10_000, leaveTimeoutMs: 60_000, lease, logger });
    await connection.start();
    // Another process stands by: the hand-over at drain leaves the gateway to it, and discord.js's close takes its time.
    const standby = new GatewayLease({ ...lease, logger });
    const tookOver = standby.acquire();
    try {
      void connection.handOver();
      await vi.waitFor(() => expect(client.destroyStarted).toBe(true), { timeout: 15_000 });
      // Then the stop, whose until comes while the close is still under way.
      let budget!: StopBudget;
      const stopped = stopOnce()(Date.now() + 100, (stop) => connection.leave((budget = stop)));
      let stoppedYet = false;
      void stopped.then(() => (stoppedYet = true));
      expect(await budget.within(new Promise(() => {}), Number.POSITIVE_INFINITY)).toBe(false);
      await new Promise((resolve) => setImmediate(resolve));
      expect(stoppedYet).toBe(false);
      client.endDestroy();
      await withTimeout(stopped, 5000, 'the stop did not end once the bot was off the gateway');
      expect(destroyed).toBe(true);
      expect(await withTimeout(tookOver, 5000, 'the standby did not take the lease')).toBe(true);
    } finally {
      client.endDestroy();
      await standby.stop();
      await standby.release();
    }
  });

  it('leaves once when asked twice (a leased bot leaves before its replies’ grace and again after it): the lease is stopped and given back once', async () => {
    const lease = { redis, key: `${prefix}:lease-once`, ttlMs: 5000, renewEveryMs: 1000, pollEveryMs: 250 };
    try {
      const client = new SlowLoginClient(async () => {});
      const connection = gatewayConnection({ newClient: () => client as unknown as Client, token: 'token', loginTimeoutMs: 10_000, lease, logger: new RecordingLogger() });
      await connection.start();
      expect(connection.online()).toBe(true);
      // This connection's lease, by the holder it wrote: no other file's lease is counted.
      const holder = await redis.get(lease.key);
      expect(holder).toEqual(expect.any(String));
      const mine = (gatewayLease: GatewayLease) => gatewayLease.holder === holder;
      const release = spyOnInstance(GatewayLease.prototype, 'release', mine);
      const stop = spyOnInstance(GatewayLease.prototype, 'stop', mine);
      const first = connection.leave();
      const second = connection.leave();
      expect(second).toBe(first);
      await second;
      await connection.leave();
      expect(release).toHaveBeenCalledTimes(1);
      expect(stop).toHaveBeenCalledTimes(1);
      expect(await redis.get(lease.key)).toBeNull();
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe('the gateway connection, leaving', () => {
  it('leaves when stopped while Discord has not answered its login with READY (discord.js’s destroy then never ends), and discord.js’s own retry of that login never reaches Discord', async () => {
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    const logger = new RecordingLogger();
    const newClient = (ws: WebSocketOptions) => new Client({ intents: [], ws, rest: { api: discord.apiBaseUrl } });
    const connection = gatewayConnection({ newClient, token: discord.botToken, loginTimeoutMs: 60_000, leaveTimeoutMs: 5000, logger });
    const releaseReady = discord.holdReady();
    // Its login would end only with the login timeout, long after this test.
    const started = connection.start();
    try {
      await discord.waitFor(() => discord.gatewayStats.identifies === 1 || undefined, 'the login to identify', 10_000);
      // Bounded here so that a leave that never ends fails with its name, not a test timeout.
      await withTimeout(connection.leave(), 10_000, 'leave() never ended');
      expect(logger.entries.some((e) => e.msg === 'discord.js did not say it left the gateway in time; going on without it')).toBe(false);
      // The login ends with the leave (not at its timeout).
      await withTimeout(started, 1000, 'start() went on after leave()');
      releaseReady();
      await discord.waitFor(
        () => logger.entries.some((e) => e.msg === 'discord.js tried to connect a gateway client that left; kept off') || discord.gatewayStats.identifies > 1 || undefined,
        'discord.js’s own retry of the login',
        15_000,
      );
      expect(discord.gatewayStats.connections).toBe(1);
      expect(discord.openGatewayConnections).toBe(0);
    } finally {
      await discord.close();
    }
  });
});
