import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PictorImage } from '../../nodes/nodes/PictorImage/PictorImage.node.js';
import { limiterFor, throttleId, type ThrottleKey } from '../../nodes/nodes/PictorImage/limiter-registry.js';
import { toNodeError } from '../../nodes/nodes/PictorImage/node-errors.js';
import { RedisUnavailableError, connectRedis } from '../../src/core/redis-connection.js';
import { createEmulator, DEV_API_KEY, type Emulator, type EmulatorServer } from '../../src/emulator/index.js';
import type { LedgerKind } from '../../src/spend/open-store.js';
import { waitUntil } from '../helpers/runner-harness.js';
import { startCuttableLink } from '../helpers/shared-limits-proxy.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { startCountingProxy } from './counting-proxy.js';
import { createHarness, type HarnessOptions } from './execute-harness.js';
import { startN8nProcess, type ExecutionOutcome, type N8nProcess } from './n8n-process.js';
import { NodeApiError, NodeHelpers, NodeOperationError, type INodeExecutionData, type INodeParameters } from './n8n-workflow.js';

/**
 * The Pictor API credential's Redis URL and Key Prefix: with them, executions
 * in different n8n processes (queue-mode workers) share one limiter per
 * account. This process runs the node from its sources; a forked child runs
 * the built package as n8n loads it, with its own limiter registry.
 */
const redis = testRedis();
const SECRET = 'hunter2-redis-secret';
/** The node an error is made for, as n8n hands it to `execute()`. */
const NODE = { id: 'pictor-node', name: 'Pictor Image', type: 'CUSTOM.pictorImage', typeVersion: 1, position: [0, 0] as [number, number], parameters: {} };

let emulator: Emulator;
let server: EmulatorServer;

beforeAll(async () => {
  emulator = createEmulator();
  server = await emulator.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await emulator?.close();
});
beforeEach(() => {
  emulator.configure({ latencyMs: 0, imagesPerMinute: undefined });
  emulator.reset();
});

const node = new PictorImage();

function run(parameters: INodeParameters, options: Partial<Omit<HarnessOptions, 'parameters' | 'nodeType' | 'n8n'>> & { items?: INodeExecutionData[] }) {
  return createHarness({ n8n: { NodeHelpers, NodeOperationError }, nodeType: node, parameters, items: [{ json: {} }], ...options }).run();
}

async function failure(parameters: INodeParameters, options: Parameters<typeof run>[1]) {
  const error: unknown = await run(parameters, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof NodeOperationError) && !(error instanceof NodeApiError)) throw new Error(`expected an n8n node error, got ${String(error)}`);
  return error;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

describe('the limiter registry with a Redis URL', () => {
  const key: ThrottleKey = {
    baseURL: 'http://127.0.0.1:4010',
    apiKey: DEV_API_KEY,
    imagesPerMinute: 30,
    maxConcurrent: 2,
    redis: { url: `redis://pictor:${SECRET}@redis.internal:6379/2`, prefix: 'account-a' },
  };

  it('keeps one limiter per Redis URL and prefix, named by hashes that hold neither the URL nor its password', () => {
    const id = throttleId(key);
    expect(id).not.toContain(SECRET);
    expect(id).not.toContain('redis.internal');
    expect(id).not.toContain('account-a');
    expect(id).not.toBe(throttleId({ ...key, redis: undefined }));
    expect(id).not.toBe(throttleId({ ...key, redis: { ...key.redis!, prefix: 'account-b' } }));
    expect(id).not.toBe(throttleId({ ...key, redis: { ...key.redis!, url: 'redis://127.0.0.1:6379/2' } }));
    expect(id).toBe(throttleId({ ...key, baseURL: 'http://127.0.0.1:4010/v1/' }));
    expect(id).toBe(throttleId({ ...key, ledger: 'account' }));
    expect(id).not.toBe(throttleId({ ...key, ledger: 'emulator' }));
  });
});

describe('a Pictor API credential whose Redis cannot be used', () => {
  it('fails the item with a NodeOperationError that names the Redis URL without its user name and password, and sends nothing', async () => {
    const port = await closedPort();
    const credentials = { apiKey: DEV_API_KEY, baseUrl: server.url, redisUrl: `redis://pictor:${SECRET}@127.0.0.1:${port}/0`, redisPrefix: 'pictor' };
    const error = await failure({ operation: 'generate', prompt: 'a shared fox' }, { credentials });
    expect(error).toBeInstanceOf(NodeOperationError);
    expect(error.message).toBe(`cannot reach Redis at redis://***:***@127.0.0.1:${port}/0 — check the Redis URL of the Pictor API credential`);
    expect(error.context).toMatchObject({ itemIndex: 0, code: 'connection_failed' });
    expect(error.description).toMatch(/^Cause: connect ECONNREFUSED 127\.0\.0\.1:\d+\. /);
    expect(error.description).toMatch(/empty it to limit this n8n process on its own/);
    expect(`${JSON.stringify(error)} ${error.description} ${error.stack}`).not.toContain(SECRET);
    expect(emulator.stats().requests).toBe(0);
  });

  it("gives the core's own reason as the Cause, whatever words the reason holds", () => {
    // A proxy in front of Redis may answer in words of its own, even the advice the core's message adds after the reason.
    const reason = 'ERR proxy: no backend. Start Redis on the backend host first';
    const error = toNodeError(NODE, new RedisUnavailableError(`redis://pictor:${SECRET}@127.0.0.1:6390/0`, reason), 3);
    expect(error.message).toBe('cannot reach Redis at redis://***:***@127.0.0.1:6390/0 — check the Redis URL of the Pictor API credential');
    expect(error.description).toMatch(/^Cause: ERR proxy: no backend\. Start Redis on the backend host first\. The node shares/);
    expect(error.context).toMatchObject({ itemIndex: 3, code: 'connection_failed' });
    expect(`${error.message} ${error.description}`).not.toContain(SECRET);
  });

  it('with Continue On Fail, puts the Redis error on every item with its own index', async () => {
    const port = await closedPort();
    const credentials = { apiKey: DEV_API_KEY, baseUrl: server.url, redisUrl: `redis://:${SECRET}@127.0.0.1:${port}`, redisPrefix: 'pictor' };
    const [out] = await run({ operation: 'generate', prompt: 'a shared fox' }, { credentials, continueOnFail: true, items: [{ json: {} }, { json: {} }] });
    expect(out!.map((item) => [item.pairedItem, item.json.code])).toEqual([
      [{ item: 0 }, 'connection_failed'],
      [{ item: 1 }, 'connection_failed'],
    ]);
    expect(out![1]!.json.error).toMatch(/^cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:\d+ — check the Redis URL/);
    expect(JSON.stringify(out)).not.toContain(SECRET);
    expect(emulator.stats().requests).toBe(0);
  });

  it('refuses a Redis URL that is not redis:// or rediss:// before connecting, without echoing it', async () => {
    const credentials = { apiKey: DEV_API_KEY, baseUrl: server.url, redisUrl: `http://pictor:${SECRET}@127.0.0.1:6379` };
    const error = await failure({ operation: 'generate', prompt: 'a shared fox' }, { credentials });
    expect(error.message).toMatch(/^Pictor API credential: the Redis URL is not a redis:\/\/ or rediss:\/\/ address/);
    expect(error.context.itemIndex).toBe(0);
    expect(JSON.stringify(error)).not.toContain(SECRET);
    expect(emulator.stats().requests).toBe(0);
  });

  it('refuses a Redis URL whose path is not a database number before connecting, naming the field, and runs no item', async () => {
    const credentials = { apiKey: DEV_API_KEY, baseUrl: server.url, redisUrl: `redis://:${SECRET}@127.0.0.1:6379/abc`, accountDailyUsd: '5' };
    const [out] = await run({ operation: 'generate', prompt: 'a shared fox' }, { credentials, continueOnFail: true });
    expect(out!.map((item) => [item.json.code, item.json.error])).toEqual([
      ['validation_error', expect.stringMatching(/^Pictor API credential: the Redis URL is not a redis:\/\/ or rediss:\/\/ address whose path is empty or a database number/)],
    ]);
    const error = await failure({ operation: 'generate', prompt: 'a shared fox' }, { credentials });
    expect(error.context).toMatchObject({ itemIndex: 0, code: 'validation_error', parameter: 'redisUrl' });
    expect(JSON.stringify(out) + JSON.stringify(error)).not.toContain(SECRET);
    expect(emulator.stats().requests).toBe(0);
  });

  it('refuses a Redis Key Prefix with spaces, naming the field', async () => {
    const credentials = { apiKey: DEV_API_KEY, baseUrl: server.url, redisUrl: 'redis://127.0.0.1:6379', redisPrefix: 'my account' };
    const error = await failure({ operation: 'generate', prompt: 'a shared fox' }, { credentials });
    expect(error.message).toMatch(/^Pictor API credential: the Redis Key Prefix "my account" is not valid/);
    expect(emulator.stats().requests).toBe(0);
  });

  it('limits this process on its own when the Redis URL is empty, whatever the prefix', async () => {
    const credentials = { apiKey: DEV_API_KEY, baseUrl: server.url, redisUrl: '', redisPrefix: 'not used' };
    const [out] = await run({ operation: 'generate', prompt: 'a local fox' }, { credentials });
    expect(out).toHaveLength(1);
    expect(emulator.stats().imagesGenerated).toBe(1);
  });
});

describe.skipIf(redis.skipReason)(`a Pictor API credential whose Redis has no such database ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  it('fails the item with validation_error naming redisUrl, saying the server has fewer databases, and sends nothing (never database 0)', async () => {
    const credentials = { apiKey: DEV_API_KEY, baseUrl: server.url, redisUrl: `${requireRedisUrl(redis)}/99999`, redisPrefix: uniquePrefix('n8n-db'), accountDailyUsd: '5' };
    const [out] = await run({ operation: 'generate', prompt: 'a shared fox' }, { credentials, continueOnFail: true });
    expect(out!.map((item) => [item.json.code, item.json.field])).toEqual([['validation_error', 'redisUrl']]);
    const error = await failure({ operation: 'generate', prompt: 'a shared fox' }, { credentials });
    expect(error.context).toMatchObject({ itemIndex: 0, code: 'validation_error', parameter: 'redisUrl' });
    expect(error.message).toMatch(/^Pictor API credential: the Redis URL names database 99999, but that Redis server has fewer databases \(ERR DB index is out of range\)/);
    // n8n users have no environment variable to fix.
    expect(JSON.stringify(out) + error.message + String(error.description)).not.toContain('REDIS_URL');
    expect(emulator.stats().requests).toBe(0);
  });
});

describe.skipIf(redis.skipReason)(`executions of two n8n processes sharing one Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  const nodesDir = resolve(import.meta.dirname, '../../nodes');
  const bundleDir = join(nodesDir, 'node_modules', '.cache', `redis-test-${process.pid}`);
  const prefixes: string[] = [];
  /** The keys of the limiters this process made, stopped at the end (their Redis connections closed). */
  const made: ThrottleKey[] = [];
  let url: string;
  let other: N8nProcess | undefined;

  beforeAll(async () => {
    url = requireRedisUrl(redis);
    await promisify(execFile)(process.execPath, [join(nodesDir, 'scripts', 'build.mjs'), '--outdir', bundleDir]);
    other = await startN8nProcess({ bundleDir, nodesDir });
  }, 60_000);
  afterAll(async () => {
    await other?.stop();
    for (const key of made) await (await limiterFor(key)).stop();
    if (url) for (const prefix of prefixes) await deleteKeys(url, prefix);
    await rm(bundleDir, { recursive: true, force: true });
  });

  /** A credential of a fresh account: its own Redis prefix. */
  function account(baseUrl: string, redisUrl = url) {
    const prefix = uniquePrefix('n8n');
    prefixes.push(prefix);
    return { apiKey: DEV_API_KEY, baseUrl, redisUrl, redisPrefix: prefix };
  }

  /** Keeps the key of a limiter an execution made, to stop it at the end; `ledger`: the service is a Pictor emulator (this file's is). */
  function remember(credentials: ReturnType<typeof account>, imagesPerMinute: number | undefined, maxConcurrent: number, ledger: LedgerKind = 'emulator') {
    made.push({
      baseURL: credentials.baseUrl,
      apiKey: credentials.apiKey,
      imagesPerMinute,
      maxConcurrent,
      redis: { url: credentials.redisUrl, prefix: credentials.redisPrefix },
      ledger,
    });
  }

  /** The names of every key under `prefix` (ours and bottleneck's), the emulator's apart from the account's. */
  async function keyNames(prefix: string): Promise<{ account: string[]; emulator: string[] }> {
    const redisClient = await connectRedis(url);
    try {
      // The ledger's look through its usage stream marks where it got to (`usage:looked`) in the background, whenever it
      // ends: not a key a job writes, so left out of what each job is checked to have written.
      const names = [...(await redisClient.keys(`${prefix}:*`)), ...(await redisClient.keys(`b_${prefix}:*`))].filter((name) => !name.endsWith(':quota:usage:looked')).sort();
      const ofEmulator = (name: string) => name.startsWith(`${prefix}:emulator:`) || name.startsWith(`b_${prefix}:emulator:`);
      return { account: names.filter((name) => !ofEmulator(name)), emulator: names.filter(ofEmulator) };
    } finally {
      redisClient.disconnect();
    }
  }

  const succeeded = (outcome: ExecutionOutcome) => {
    if (!outcome.ok) throw new Error(`the other process's execution failed: ${outcome.error.message}`);
    return outcome.items;
  };

  it('never run more requests at once than Max Concurrent Requests, counted across both processes', async () => {
    emulator.configure({ latencyMs: 500 });
    const proxy = await startCountingProxy(server.url);
    try {
      const credentials = account(proxy.url);
      remember(credentials, undefined, 2);
      const parameters = (prompt: string): INodeParameters => ({ operation: 'generate', prompt, options: { maxConcurrent: 2 } });
      // One execution each first, so both processes hold their shared limiter before the race.
      await run(parameters('warm-up here'), { credentials });
      succeeded(await other!.execute({ parameters: parameters('warm-up there'), items: 1, credentials }));

      const items = Array.from({ length: 6 }, () => ({ json: {} }));
      // The other process's first request is held in flight until a request of this process arrives: the two overlap
      // however late a busy machine runs either (its other requests take the second slot meanwhile, so this process's
      // first one comes at the latest once they are done).
      proxy.holdNext('from the other process', 'from this process');
      const thereDone = other!.execute({ parameters: parameters('from the other process'), items: 9, credentials });
      await waitUntil(() => proxy.events.some((e) => e.kind === 'start' && e.prompt === 'from the other process'), "the other process's first request is sent", 30_000);
      const here = await run(parameters('from this process'), { credentials, items });
      const there = await thereDone;
      expect(here[0]).toHaveLength(6);
      expect(succeeded(there)).toHaveLength(9);
      expect(proxy.peak()).toBe(2);

      // The executions really overlapped: at some moment each process had a request in flight.
      const inFlight = new Map<string, number>();
      let together = false;
      for (const event of proxy.events) {
        inFlight.set(event.prompt, (inFlight.get(event.prompt) ?? 0) + (event.kind === 'start' ? 1 : -1));
        if ((inFlight.get('from this process') ?? 0) > 0 && (inFlight.get('from the other process') ?? 0) > 0) together = true;
      }
      expect(together).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it('keep the images of both processes within Images per Minute, so the service never answers 429', async () => {
    // 30 a minute: the service's bucket holds 30 and refills one every 2 s. Each process asks for 16 images
    // (4 items of 4), which its own limiter alone would send at once: 32 together, more than the bucket.
    emulator.configure({ imagesPerMinute: 30, latencyMs: 50 });
    emulator.reset();
    const credentials = account(server.url);
    remember(credentials, 30, 4);
    const parameters: INodeParameters = { operation: 'generate', prompt: 'a paced fox', n: 4, quality: 'low', options: { imagesPerMinute: 30, maxConcurrent: 4 } };
    const items = Array.from({ length: 4 }, () => ({ json: {} }));
    const [here, there] = await Promise.all([
      run(parameters, { credentials, items }),
      other!.execute({ parameters, items: 4, credentials }, 45_000),
    ]);
    expect(here[0]).toHaveLength(16);
    expect(succeeded(there)).toHaveLength(16);
    expect(succeeded(there).every((item) => item.binary.includes('data'))).toBe(true);
    expect(emulator.stats()).toMatchObject({ imagesGenerated: 32, rateLimited: 0 });
  }, 45_000);

  it("pace a Pictor emulator's jobs under the emulator's prefix, never with the account's limiter, and the account's jobs never with the emulator's", async () => {
    const service = await createEmulator({ identifyAsEmulator: false, apiKeys: ['sk-n8n-account'] }).listen({ port: 0, host: '127.0.0.1' });
    try {
      const onEmulator = account(server.url);
      const onService = { ...onEmulator, apiKey: 'sk-n8n-account', baseUrl: service.url };
      // One image a minute: a bucket's `tat` key expires once the bucket is full again (a minute and the tolerance after
      // its image, two seconds at 60 a minute), so the keys named below are still there however long the account's
      // job takes on a busy machine; and a job paced with the other's bucket would wait that minute.
      const parameters: INodeParameters = { operation: 'generate', prompt: 'a fox', quality: 'low', options: { imagesPerMinute: 1, maxConcurrent: 3 } };

      expect((await run(parameters, { credentials: onEmulator }))[0]).toHaveLength(1);
      remember(onEmulator, 1, 3, 'emulator');
      const afterEmulator = await keyNames(onEmulator.redisPrefix);
      expect(afterEmulator.account).toEqual([]);
      expect(afterEmulator.emulator).toContain(`b_${onEmulator.redisPrefix}:emulator:slots_settings`);
      expect(afterEmulator.emulator).toContain(`${onEmulator.redisPrefix}:emulator:images:tat`);

      expect((await run(parameters, { credentials: onService }))[0]).toHaveLength(1);
      remember(onService, 1, 3, 'account');
      const afterAccount = await keyNames(onEmulator.redisPrefix);
      expect(afterAccount.emulator).toEqual(afterEmulator.emulator);
      expect(afterAccount.account).toContain(`b_${onEmulator.redisPrefix}:slots_settings`);
      expect(afterAccount.account).toContain(`${onEmulator.redisPrefix}:images:tat`);
    } finally {
      await service.close();
    }
  });

  it('connect again on the next execution after Redis could not be reached', async () => {
    const link = await startCuttableLink(url);
    try {
      const credentials = account(server.url, link.url);
      link.cut();
      const error = await failure({ operation: 'generate', prompt: 'no redis yet' }, { credentials });
      expect(error.context).toMatchObject({ itemIndex: 0, code: 'connection_failed' });
      expect(emulator.stats().requests).toBe(0);

      link.restore();
      const [out] = await run({ operation: 'generate', prompt: 'redis is back' }, { credentials });
      remember(credentials, undefined, 4);
      expect(out).toHaveLength(1);
      expect(emulator.stats().imagesGenerated).toBe(1);
      // Stopped while the link is up, so its connections close cleanly.
      await (await limiterFor(made.pop()!)).stop();
    } finally {
      await link.close();
    }
  });
});
