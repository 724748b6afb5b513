import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStateStore } from '../../bots/state/RedisStateStore.js';
import { main } from '../../src/cli/main.js';
import { readRedisConfig } from '../../src/core/redis-config.js';
import { RedisLink, RedisUnavailableError, connectRedis } from '../../src/core/redis-connection.js';
import { createImageLimiter } from '../../src/core/shared-limiter.js';
import { createEmulator, DEV_API_KEY, type Emulator, type EmulatorServer } from '../../src/emulator/index.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import { requireRedisUrl, testRedis } from '../helpers/shared-limits-redis.js';
import { testTempDirSync } from '../helpers/temp-dir.js';
import { startThrowawayRedis, type ThrowawayRedis } from '../setup/redis-server.js';

/**
 * REDIS_URL's database number keeps one account apart from another on the same Redis: every connection a Pictor
 * process opens (commands, subscriber, bottleneck's, the ledger's, the bots' state's) must use it, and a number the
 * server does not have must stop the process before anything is sent — never fall back to database 0.
 */
const redis = testRedis();

let server: ThrowawayRedis;
let emulator: Emulator;
let service: EmulatorServer;
/** Looks at the server from database 0 (the one a failed SELECT would leave a connection in). */
let observer: Redis;

beforeAll(async () => {
  if (redis.skipReason) return;
  requireRedisUrl(redis);
  server = (await startThrowawayRedis('redis-server', 3, ['--databases', '4']))!;
  observer = new Redis(server.url);
  // Not a Pictor emulator as far as the CLI can tell: the job goes through the account's ledger and its caps.
  emulator = createEmulator({ identifyAsEmulator: false });
  service = await emulator.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  observer?.disconnect();
  await emulator?.close();
  await server?.stop();
});

/** Runs `pictor generate` in this process against the emulator, with the Redis URL and an account cap. */
async function generate(redisUrl: string, prefix: string) {
  const out: string[] = [];
  const err: string[] = [];
  const dir = testTempDirSync('pictor-db-');
  const code = await main(
    ['generate', '--prompt', 'a fox in database three', '--quality', 'low', '--out', `${dir}/`],
    {
      XDG_STATE_HOME: testTempDirSync('pictor-state-'),
      PICTOR_BASE_URL: service.url,
      PICTOR_API_KEY: DEV_API_KEY,
      REDIS_URL: redisUrl,
      PICTOR_REDIS_PREFIX: prefix,
      PICTOR_ACCOUNT_DAILY_USD: '5',
    },
    { stdout: (l) => out.push(l), stderr: (l) => err.push(l) },
  );
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Every key of a database. */
async function keysIn(db: number): Promise<string[]> {
  const client = new Redis(`${server.url}/${db}`);
  try {
    return (await client.keys('*')).sort();
  } finally {
    client.disconnect();
  }
}

/** The database of every client connected to the server but the observer, by connection name. */
async function clientDatabases(): Promise<{ name: string; db: string }[]> {
  const list = (await observer.client('LIST')) as string;
  const ownId = String(await observer.client('ID'));
  return list
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => Object.fromEntries(line.trim().split(' ').map((field) => field.split('=', 2) as [string, string])))
    .filter((fields) => fields.id !== ownId)
    .map((fields) => ({ name: fields.name ?? '', db: fields.db ?? '' }));
}

describe.skipIf(redis.skipReason)(`a REDIS_URL naming a database, on a Redis with 4 of them ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  it('with /3, a job keeps every Pictor key in database 3 (the limiter’s and the ledger’s) and none in database 0', async () => {
    await observer.flushall();
    const { code, stderr } = await generate(`${server.url}/3`, 'acct3');
    expect(stderr).not.toMatch(/Redis error/i);
    expect(code).toBe(0);
    const keys = await keysIn(3);
    expect(keys.some((key) => key.startsWith('acct3:quota:'))).toBe(true);
    expect(keys.some((key) => key.startsWith('b_acct3'))).toBe(true);
    expect(await keysIn(0)).toEqual([]);
  });

  it('with /3, every connection a process opens — commands, subscriber, bottleneck’s, the ledger’s, the state’s — is in database 3', async () => {
    await observer.flushall();
    const config = readRedisConfig({ REDIS_URL: `${server.url}/3`, PICTOR_REDIS_PREFIX: 'acct3' })!;
    const link = await RedisLink.open(config);
    const limiter = await createImageLimiter({ imagesPerMinute: 5, maxConcurrent: 2, redis: config, link });
    const ledger = await RedisQuotaStore.connect(config);
    const state = await RedisStateStore.open({ link });
    try {
      await link.subscribe('acct3:probe', () => undefined);
      expect(await limiter.schedule({ weight: 1 }, async () => 'ran')).toBe('ran');
      const clients = await clientDatabases();
      expect(clients.map((c) => c.name)).toEqual(expect.arrayContaining(['pictor:acct3', 'pictor-subscriber:acct3', 'pictor-quota:acct3']));
      expect(clients.filter((c) => c.db !== '3')).toEqual([]);
      expect((await keysIn(3)).length).toBeGreaterThan(0);
      expect(await keysIn(0)).toEqual([]);
    } finally {
      await state.close();
      await limiter.stop();
      await ledger.close();
      await link.close();
    }
  });

  it('with /9, refuses to connect, naming the database and saying the server has fewer', async () => {
    const error = await connectRedis(`${server.url}/9`, { connectTimeoutMs: 3000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error).toMatchObject({ code: 'connection_failed' });
    expect((error as Error).message).toMatch(/REDIS_URL names database 9, but this Redis server has fewer databases \(ERR DB index is out of range\)/);
  });

  it('with /9, names the setting its caller gives instead of REDIS_URL, and tells which database the server lacks', async () => {
    const error = await connectRedis(`${server.url}/9`, { connectTimeoutMs: 3000, setting: 'the Redis URL field' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error).toMatchObject({ code: 'connection_failed', database: 9 });
    expect((error as Error).message).toMatch(/the Redis URL field names database 9, but this Redis server has fewer databases/);
    expect((error as Error).message).not.toContain('REDIS_URL');
    const down = await connectRedis('redis://127.0.0.1:1', { connectTimeoutMs: 3000 }).catch((e: unknown) => e);
    expect(down).toMatchObject({ code: 'connection_failed', database: undefined });
  });

  it('with /9, pictor generate sends nothing and writes nothing to any database', async () => {
    await observer.flushall();
    emulator.reset();
    const { code, stderr } = await generate(`${server.url}/9`, 'acct9');
    expect(code).toBe(1);
    expect(stderr).toContain('REDIS_URL names database 9, but this Redis server has fewer databases');
    expect(emulator.stats().requests).toBe(0);
    for (const db of [0, 1, 2, 3]) expect(await keysIn(db), `database ${db}`).toEqual([]);
  });

  it('with /abc, pictor generate exits 2 naming REDIS_URL before connecting or sending anything', async () => {
    await observer.flushall();
    emulator.reset();
    const before = await clientDatabases();
    const { code, stderr } = await generate(`${server.url}/abc`, 'acctabc');
    expect(code).toBe(2);
    expect(stderr).toContain('REDIS_URL must be a redis:// or rediss:// URL whose path is empty or a database number');
    expect(emulator.stats().requests).toBe(0);
    expect(await clientDatabases()).toEqual(before);
    expect(await keysIn(0)).toEqual([]);
  });
});
