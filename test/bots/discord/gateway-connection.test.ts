import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Events } from 'discord.js';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocketServer } from 'ws';
import { gatewayConnection } from '../../../bots/discord/gateway-connection.js';
import { GatewayLease } from '../../../bots/discord/gateway-lease.js';
import { closeRedis, connectRedis } from '../../../src/core/redis-connection.js';
import { withTimeout } from '../../../src/core/with-timeout.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { RecordingLogger } from './harness.js';

const redisSetup = testRedis();

/** The part of discord.js's Client the connection uses, with a login that is READY once `loggingIn` resolves. */
class SlowLoginClient extends EventEmitter {
  readonly rest = { setToken: () => {} };
  #ready = false;
  /** Whether `login` was called. */
  loginStarted = false;
  /** Whether the client was destroyed (taken off the gateway) after its login ended READY. */
  destroyedAfterLogin = false;
  #loginEnded = false;
  constructor(readonly loggingIn: () => Promise<unknown>) {
    super();
  }
  async login(): Promise<string> {
    this.loginStarted = true;
    await this.loggingIn();
    this.#ready = true;
    this.#loginEnded = true;
    this.emit(Events.ClientReady, this);
    return 'token';
  }
  async destroy(): Promise<void> {
    this.#ready = false;
    if (this.#loginEnded) this.destroyedAfterLogin = true;
  }
  isReady(): boolean {
    return this.#ready;
  }
}

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
    // The login ends when the test says so: past the lease's lifetime, however loaded the machine.
    let loggedIn!: () => void;
    const login = new Promise<void>((resolve) => (loggedIn = resolve));
    const client = new SlowLoginClient(() => login);
    const connection = gatewayConnection({ client: client as unknown as Client, token: 'token', loginTimeoutMs: 10_000, lease, logger });
    takenBy = Date.now();
    const started = connection.start();
    await vi.waitFor(() => expect(client.loginStarted).toBe(true));
    await withTimeout(keptPastItsLife, 10_000, 'no renewal past the lease’s first lifetime was confirmed');
    evals.mockRestore();
    const other = new GatewayLease({ ...lease, logger });
    expect(await other.tryAcquire()).toBe(false);
    loggedIn();
    await started;
    expect(connection.online()).toBe(true);
    await connection.leave();
    expect(await other.tryAcquire()).toBe(true);
    await other.release();
  });

  it('does not stay on the gateway when the bot stops while a standby is still logging in', async () => {
    const lease = { redis, key: `${prefix}:lease-2`, ttlMs: 600, renewEveryMs: 200, pollEveryMs: 100 };
    const logger = new RecordingLogger();
    const holder = new GatewayLease({ ...lease, logger });
    expect(await holder.tryAcquire()).toBe(true);
    let loggedIn!: () => void;
    const login = new Promise<void>((resolve) => (loggedIn = resolve));
    const client = new SlowLoginClient(() => login);
    const connection = gatewayConnection({ client: client as unknown as Client, token: 'token', loginTimeoutMs: 5000, lease, logger });
    await connection.start();
    await holder.release();
    // The standby takes the lease at its next poll and logs in; the bot stops meanwhile, then the login ends READY.
    await vi.waitFor(() => expect(client.loginStarted).toBe(true), { timeout: 10_000 });
    await connection.leave();
    loggedIn();
    await vi.waitFor(() => expect(client.destroyedAfterLogin).toBe(true), { timeout: 10_000 });
    expect(client.isReady()).toBe(false);
  });
});

/**
 * A Discord whose gateway says HELLO and takes IDENTIFY but never answers READY (a Discord under load, an outage
 * mid-login): `GET /gateway/bot` and the gateway, as Discord's docs describe them, and nothing else.
 */
async function discordWithoutReady(): Promise<{ apiUrl: string; identified: () => number; close: () => Promise<void> }> {
  const gateway = new WebSocketServer({ noServer: true });
  let identifies = 0;
  gateway.on('connection', (socket) => {
    socket.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 }, s: null, t: null }));
    socket.on('message', (raw) => {
      if ((JSON.parse(String(raw)) as { op?: number }).op === 2) identifies++;
    });
  });
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, shards: 1, session_start_limit: { total: 1000, remaining: 1000, reset_after: 0, max_concurrency: 1 } }));
  });
  server.on('upgrade', (req, socket, head) => gateway.handleUpgrade(req, socket, head, (ws) => gateway.emit('connection', ws, req)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    apiUrl: `http://127.0.0.1:${port}`,
    identified: () => identifies,
    async close() {
      for (const socket of gateway.clients) socket.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the gateway connection, leaving', () => {
  it('leaves when stopped while Discord has not answered its login with READY (discord.js’s destroy then never ends)', async () => {
    const discord = await discordWithoutReady();
    const client = new Client({ intents: [], rest: { api: discord.apiUrl } });
    const token = `${Buffer.from('104567890123456789').toString('base64')}.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB`;
    const logger = new RecordingLogger();
    const connection = gatewayConnection({ client, token, loginTimeoutMs: 60_000, leaveTimeoutMs: 500, logger });
    // Its login would end only with the login timeout, long after this test.
    void connection.start().catch(() => undefined);
    try {
      await vi.waitFor(() => expect(discord.identified()).toBe(1), { timeout: 10_000 });
      // Bounded here so that a leave that never ends fails with its name, not a test timeout.
      await withTimeout(connection.leave(), 10_000, 'leave() never ended');
      expect(logger.entries.some((e) => e.msg === 'discord.js did not say it left the gateway in time; going on without it')).toBe(true);
    } finally {
      await discord.close();
    }
  });
});
