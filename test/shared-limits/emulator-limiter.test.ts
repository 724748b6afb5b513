import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCoreConfig } from '../../src/config.js';
import { connect } from '../../src/connect.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { createEmulator, type EmulatorServer } from '../../src/emulator/index.js';
import { silentLogger } from '../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { testTempDirSync } from '../helpers/temp-dir.js';

/**
 * With one REDIS_URL, jobs on a Pictor emulator have a limiter of their own under `<prefix>:emulator`, as they have a
 * ledger of their own: an emulator job never uses the account's images per minute, never pauses the account on a 429,
 * and its PICTOR_MAX_CONCURRENT never rewrites the account's. Looked at in Redis itself: what the account's keys hold
 * before and after an emulator job, and the emulator's before and after an account job.
 */
const redis = testRedis();
const API_KEY = 'sk-account-limiter-test';

let observer: Redis;
let service: EmulatorServer;

beforeAll(async () => {
  if (redis.skipReason) return;
  observer = await connectRedis(requireRedisUrl(redis));
  // The account's service: not a Pictor emulator as far as Pictor can tell, so its jobs are the account's.
  service = await createEmulator({ identifyAsEmulator: false, apiKeys: [API_KEY] }).listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  observer?.disconnect();
  await service?.close();
});

/**
 * What a job leaves in the limiter and the ledger under `prefix` (the account's) or `<prefix>:emulator`: the names of
 * the keys, the limiter's settings and count of jobs done, the processes it has seen, and the image bucket. A heartbeat
 * still on its way from a process that has closed moves only times, which this leaves out.
 */
async function traces(prefix: string, ledger: 'account' | 'emulator') {
  const under = ledger === 'emulator' ? `${prefix}:emulator` : prefix;
  const names: string[] = [];
  for (const pattern of [`${prefix}:*`, `b_${prefix}:*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await observer.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      names.push(...keys);
    } while (cursor !== '0');
  }
  const ofEmulator = (name: string) => name.startsWith(`${prefix}:emulator:`) || name.startsWith(`b_${prefix}:emulator:`);
  const settings = await observer.hgetall(`b_${under}:slots_settings`);
  return {
    keys: [...new Set(names)].filter((name) => ofEmulator(name) === (ledger === 'emulator')).sort(),
    maxConcurrent: settings.maxConcurrent,
    done: settings.done,
    processes: (await observer.zrange(`b_${under}:slots_client_last_registered`, 0, -1)).sort(),
    bucket: await observer.get(`${under}:images:tat`),
  };
}

/** One job of two images through `connect` (the CLI's and `npm start`'s way to a client), closed after it. */
async function oneJob(env: Record<string, string>): Promise<'account' | 'emulator'> {
  const connection = await connect(readCoreConfig({ PICTOR_DATA_DIR: testTempDirSync('pictor-emu-limiter-'), PICTOR_EMULATOR_LATENCY_MS: '0', ...env }), silentLogger());
  try {
    expect((await connection.client.generate({ prompt: 'a lighthouse', quality: 'low', n: 2 })).data).toHaveLength(2);
    return connection.ledger;
  } finally {
    await connection.close();
  }
}

describe.skipIf(redis.skipReason)("an emulator's limiter, with the account's REDIS_URL", () => {
  it("leaves the account's limiter and ledger as they were, and the account's jobs leave the emulator's", async () => {
    const prefix = uniquePrefix('emulator-limiter');
    try {
      const shared = { REDIS_URL: requireRedisUrl(redis), PICTOR_REDIS_PREFIX: prefix, PICTOR_IMAGES_PER_MINUTE: '60' };
      const account = { ...shared, PICTOR_BASE_URL: service.url, PICTOR_API_KEY: API_KEY, PICTOR_MAX_CONCURRENT: '8' };
      // Embedded emulator (no PICTOR_BASE_URL), with settings of its own.
      const emulator = { ...shared, PICTOR_MAX_CONCURRENT: '1' };

      expect(await oneJob(account)).toBe('account');
      const afterAccount = await traces(prefix, 'account');
      expect(afterAccount).toMatchObject({ maxConcurrent: '8', done: '1', processes: [expect.any(String)], bucket: expect.any(String) });

      expect(await oneJob(emulator)).toBe('emulator');
      expect(await traces(prefix, 'account')).toEqual(afterAccount);
      // The emulator's jobs were paced and counted under its own prefix.
      const afterEmulator = await traces(prefix, 'emulator');
      expect(afterEmulator).toMatchObject({ maxConcurrent: '1', done: '1', processes: [expect.any(String)], bucket: expect.any(String) });

      expect(await oneJob(account)).toBe('account');
      expect(await traces(prefix, 'emulator')).toEqual(afterEmulator);
    } finally {
      await deleteKeys(requireRedisUrl(redis), prefix);
    }
  });
});
