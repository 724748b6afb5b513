import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import { ValidationError } from '../../src/core/errors.js';
import { readRedisConfig } from '../../src/core/redis-config.js';
import { RedisLink, RedisUnavailableError, checkRedis, connectRedis, type RedisLogger } from '../../src/core/redis-connection.js';
import { redactRedisUrl } from '../../src/core/redis-url.js';
import { createImageLimiter } from '../../src/core/shared-limiter.js';
import { givingUpInAChild } from '../helpers/left-holding.js';
import { closedPort } from '../helpers/shared-limits-proxy.js';
import { requireRedisUrl, testRedis } from '../helpers/shared-limits-redis.js';
import { silentServer } from '../helpers/silent-server.js';
import { startThrowawayRedis } from '../setup/redis-server.js';

const redis = testRedis();
const SECRET = 'hunter2-s3cret';

/** Everything an error could show: message, own fields, cause, and how it prints. */
function everythingShown(error: unknown): string {
  return [String(error), JSON.stringify(error), inspect(error, { depth: 5 })].join('\n');
}

describe('reading the Redis settings', () => {
  it('means "no Redis" when REDIS_URL is unset or blank', () => {
    expect(readRedisConfig({})).toBeUndefined();
    expect(readRedisConfig({ REDIS_URL: '  ' })).toBeUndefined();
  });

  it('takes the URL and the account prefix, with pictor as the default prefix', () => {
    expect(readRedisConfig({ REDIS_URL: 'redis://127.0.0.1:6379/2' })).toEqual({ url: 'redis://127.0.0.1:6379/2', prefix: 'pictor' });
    expect(readRedisConfig({ REDIS_URL: 'rediss://cache.example:6380', PICTOR_REDIS_PREFIX: 'acme:team-1' })).toEqual({
      url: 'rediss://cache.example:6380',
      prefix: 'acme:team-1',
    });
  });

  it('refuses a URL that is not redis:// or rediss://, naming the variable and never echoing the password', () => {
    for (const bad of [`http://:${SECRET}@cache:6379`, `not a url ${SECRET}`, 'redis://']) {
      const error = (() => {
        try {
          readRedisConfig({ REDIS_URL: bad });
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ code: 'validation_error', param: 'REDIS_URL' });
      expect(everythingShown(error)).not.toContain(SECRET);
    }
  });

  it('takes a URL whose path is empty or a database number', () => {
    for (const good of ['redis://cache:6379', 'redis://cache:6379/', 'redis://cache:6379/0', 'rediss://cache:6380/15', 'redis://cache/3?db=3']) {
      expect(readRedisConfig({ REDIS_URL: good })?.url).toBe(good);
    }
  });

  it('refuses a path or a db query that is not a database number (the Redis client would select NaN, or 3 for 3abc), naming REDIS_URL and never echoing the password', () => {
    for (const path of ['/abc', '/3abc', '/3/', '/-1', '/1.5', '/%33', '/3/x', '/?db=abc', '/?db=-2']) {
      const url = `redis://:${SECRET}@cache:6379${path}`;
      const error = (() => {
        try {
          readRedisConfig({ REDIS_URL: url });
        } catch (e) {
          return e;
        }
      })();
      expect(error, path).toBeInstanceOf(ValidationError);
      expect(error, path).toMatchObject({ code: 'validation_error', param: 'REDIS_URL' });
      expect((error as Error).message, path).toBe(
        'REDIS_URL must be a redis:// or rediss:// URL whose path is empty or a database number (e.g. redis://127.0.0.1:6379/2)',
      );
      expect(everythingShown(error), path).not.toContain(SECRET);
    }
  });

  it('refuses a prefix with spaces or braces, and a prefix without a URL', () => {
    expect(() => readRedisConfig({ REDIS_URL: 'redis://h', PICTOR_REDIS_PREFIX: 'my team' })).toThrow(
      expect.objectContaining({ code: 'validation_error', param: 'PICTOR_REDIS_PREFIX' }),
    );
    expect(() => readRedisConfig({ REDIS_URL: 'redis://h', PICTOR_REDIS_PREFIX: '{x}' })).toThrow(ValidationError);
    expect(() => readRedisConfig({ PICTOR_REDIS_PREFIX: 'acme' })).toThrow(expect.objectContaining({ param: 'PICTOR_REDIS_PREFIX' }));
  });

  it('hides the password of a URL shown in logs', () => {
    expect(redactRedisUrl(`redis://default:${SECRET}@cache:6379/0`)).toBe('redis://***:***@cache:6379/0');
    expect(redactRedisUrl(`redis://:${SECRET}@cache:6379`)).toBe('redis://:***@cache:6379');
    expect(redactRedisUrl('redis://cache:6379')).toBe('redis://cache:6379');
  });
});

describe('starting without a reachable Redis', () => {
  it('fails fast with RedisUnavailableError, whose message names the server but not the password', async () => {
    const url = `redis://:${SECRET}@127.0.0.1:${await closedPort()}`;
    const error = await connectRedis(url, { connectTimeoutMs: 2000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect(error).toMatchObject({ name: 'RedisUnavailableError', code: 'connection_failed' });
    expect((error as RedisUnavailableError).url).toContain('127.0.0.1');
    expect((error as Error).message).toContain('127.0.0.1');
    expect(everythingShown(error)).not.toContain(SECRET);
  });

  it('never shows a password given in the URL query, which the Redis client accepts too', async () => {
    const url = `redis://127.0.0.1:${await closedPort()}/?password=${SECRET}`;
    const error = await connectRedis(url, { connectTimeoutMs: 2000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect((error as Error).message).toContain('?password=***');
    expect(everythingShown(error)).not.toContain(SECRET);
  });

  it('refuses a URL given to it directly whose database is not a number with the ValidationError of the settings, naming the setting, before connecting', async () => {
    const port = await closedPort();
    for (const path of ['/abc', '/3abc', '?db=x', '/?db=-2']) {
      const error = await connectRedis(`redis://:${SECRET}@127.0.0.1:${port}${path}`, { connectTimeoutMs: 2000, setting: 'the Redis URL field' }).catch((e: unknown) => e);
      expect(error, path).toBeInstanceOf(ValidationError);
      expect(error, path).toMatchObject({ code: 'validation_error', param: 'the Redis URL field' });
      expect((error as Error).message, path).toBe('the Redis URL field must be a redis:// or rediss:// URL whose path is empty or a database number (e.g. redis://127.0.0.1:6379/2)');
      expect(everythingShown(error), path).not.toContain(SECRET);
    }
    await expect(connectRedis(`redis://127.0.0.1:${port}/abc`, { connectTimeoutMs: 2000 })).rejects.toMatchObject({ code: 'validation_error', param: 'REDIS_URL' });
  });

  it('lets the process end once it has given up on a Redis that takes the connection and never answers: nothing of the attempt holds it', async () => {
    const redis = await silentServer();
    const connection = JSON.stringify(fileURLToPath(new URL('../../src/core/redis-connection.ts', import.meta.url)));
    // The Redis client waits 2 s by default for a socket it ends to close, on a timer that holds the process: right after
    // the error no timer of the attempt that long is left, and the process ends by itself (the test waits for it).
    const { ended } = givingUpInAChild(`
      const { connectRedis } = await import(${connection});
      const error = await connectRedis('redis://127.0.0.1:${redis.port}', { connectTimeoutMs: 200 }).then(() => undefined, (e) => e);
      return { code: error?.code };
    `);
    const { code, stderr, said, holding, left } = await ended;
    expect(stderr).toBe('');
    expect(said).toEqual({ code: 'connection_failed' });
    expect(holding, left).toEqual([]);
    expect(code).toBe(0);
    expect(redis.connections()).toBeGreaterThan(0);
  });

  it('keeps the reason readable when the password is a single letter, hiding it only as a word', async () => {
    const port = await closedPort();
    const error = await connectRedis(`redis://127.0.0.1:${port}/?password=e`, { connectTimeoutMs: 2000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect((error as Error).message).toContain(`?password=***: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('ends the Redis client\'s own reason with one period, not two', () => {
    const error = new RedisUnavailableError('redis://cache:6379', 'WRONGPASS invalid username-password pair or user is disabled.');
    expect(error.message).toContain('or user is disabled. Start Redis');
    expect(error.message).not.toContain('..');
  });

  it('refuses to make a shared limiter or a shared quota store', async () => {
    const config = { url: `redis://127.0.0.1:${await closedPort()}`, prefix: 'pictor' };
    await expect(createImageLimiter({ imagesPerMinute: 5, redis: config, connectTimeoutMs: 2000 })).rejects.toBeInstanceOf(RedisUnavailableError);
    await expect(RedisQuotaStore.connect(config, { connectTimeoutMs: 2000 })).rejects.toBeInstanceOf(RedisUnavailableError);
  });

  it('makes a limiter for this process alone when there is no Redis config', async () => {
    const limiter = await createImageLimiter({ imagesPerMinute: 5, maxConcurrent: 2 });
    try {
      expect((await limiter.stats()).imagesAvailable).toBe(5);
      expect(await limiter.schedule({ weight: 2 }, async () => 'ran')).toBe('ran');
    } finally {
      await limiter.stop();
    }
  });
});

describe.skipIf(redis.skipReason)(`starting with a real Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  it('passes the start-up check', async () => {
    await expect(checkRedis(requireRedisUrl(redis))).resolves.toBeUndefined();
  });

  it('refuses credentials Redis rejects, without showing the password anywhere', async () => {
    const url = new URL(requireRedisUrl(redis));
    url.username = 'pictor-no-such-user';
    url.password = SECRET;
    const error = await connectRedis(url.toString(), { connectTimeoutMs: 3000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect((error as Error).message).toMatch(/WRONGPASS|NOAUTH|auth/i);
    expect((error as Error).message).not.toContain('..');
    expect(everythingShown(error)).not.toContain(SECRET);
  });

  it('refuses a password in the URL query that Redis rejects, without showing it anywhere', async () => {
    const url = new URL(requireRedisUrl(redis));
    url.search = `?username=pictor-no-such-user&password=${SECRET}`;
    const error = await connectRedis(url.toString(), { connectTimeoutMs: 3000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    expect((error as Error).message).toMatch(/WRONGPASS|NOAUTH|auth/i);
    expect(everythingShown(error)).not.toContain(SECRET);
  });
});

/** The warnings a logger was given, as their messages. */
function warningsLogger(): RedisLogger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, info: () => undefined, warn: (_obj, msg) => warnings.push(msg ?? '') };
}

describe.skipIf(redis.skipReason)(`opening the shared Redis link on a Redis that may evict ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  it('warns once, naming the policy, when Redis is set to evict keys, and says nothing under noeviction', async () => {
    requireRedisUrl(redis);
    for (const [policy, warned] of [
      ['allkeys-lru', [/^Redis is set to evict keys .*maxmemory-policy allkeys-lru.*Set maxmemory-policy noeviction/]],
      ['noeviction', []],
    ] as const) {
      const server = (await startThrowawayRedis('redis-server', 3, ['--maxmemory-policy', policy]))!;
      const logger = warningsLogger();
      const link = await RedisLink.open({ url: server.url, prefix: 'pictor' }, { logger });
      try {
        expect(logger.warnings, policy).toHaveLength(warned.length);
        warned.forEach((pattern, i) => expect(logger.warnings[i]).toMatch(pattern));
      } finally {
        await link.close();
        await server.stop();
      }
    }
  });

  it('warns from a process without a bot too: the shared limiter opening its own link says so', async () => {
    requireRedisUrl(redis);
    const server = (await startThrowawayRedis('redis-server', 3, ['--maxmemory-policy', 'volatile-lru']))!;
    const logger = warningsLogger();
    const limiter = await createImageLimiter({ redis: { url: server.url, prefix: 'pictor' }, logger });
    try {
      expect(logger.warnings).toEqual([expect.stringMatching(/maxmemory-policy volatile-lru/)]);
    } finally {
      await limiter.stop();
      await server.stop();
    }
  });
});
