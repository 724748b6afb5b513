import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCoreConfig } from '../../src/config.js';
import { connect } from '../../src/connect.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { createEmulator, type EmulatorServer } from '../../src/emulator/index.js';
import { silentLogger } from '../../src/internal.js';
import { deleteKeys, dumpKey, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { testTempDirSync } from '../helpers/temp-dir.js';

/**
 * With one REDIS_URL, jobs on a Pictor emulator have a limiter of their own under `<prefix>:emulator`, as they have a
 * ledger of their own: an emulator job never uses the account's images per minute, never pauses the account on a 429,
 * and its PICTOR_MAX_CONCURRENT never rewrites the account's. Looked at in Redis itself: every key of the account before
 * and after an emulator job, and every key of the emulator before and after an account job.
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

/** Every key under `prefix` (ours and bottleneck's), with its value, split into the emulator's and the account's. */
async function keysUnder(prefix: string): Promise<{ account: Record<string, unknown>; emulator: Record<string, unknown> }> {
  const found = new Set<string>();
  for (const pattern of [`${prefix}:*`, `b_${prefix}:*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await observer.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      for (const key of keys) found.add(key);
    } while (cursor !== '0');
  }
  const account: Record<string, unknown> = {};
  const emulator: Record<string, unknown> = {};
  for (const key of [...found].sort()) {
    const ofEmulator = key.startsWith(`${prefix}:emulator:`) || key.startsWith(`b_${prefix}:emulator:`);
    (ofEmulator ? emulator : account)[key] = await dumpKey(observer, key);
  }
  return { account, emulator };
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
  it("leaves every key of the account's limiter and ledger as it was, and the account's job leaves the emulator's", async () => {
    const prefix = uniquePrefix('emulator-limiter');
    try {
      const shared = { REDIS_URL: requireRedisUrl(redis), PICTOR_REDIS_PREFIX: prefix, PICTOR_IMAGES_PER_MINUTE: '60' };
      const account = { ...shared, PICTOR_BASE_URL: service.url, PICTOR_API_KEY: API_KEY, PICTOR_MAX_CONCURRENT: '8' };
      // Embedded emulator (no PICTOR_BASE_URL), with settings of its own.
      const emulator = { ...shared, PICTOR_MAX_CONCURRENT: '1' };

      expect(await oneJob(account)).toBe('account');
      const afterAccount = await keysUnder(prefix);
      expect(afterAccount.account[`b_${prefix}:slots_settings`]).toMatchObject({ maxConcurrent: '8' });
      expect(afterAccount.account[`${prefix}:images:tat`]).toBeDefined();

      expect(await oneJob(emulator)).toBe('emulator');
      const afterEmulator = await keysUnder(prefix);
      expect(afterEmulator.account).toEqual(afterAccount.account);
      // The emulator's jobs were paced and counted under its own prefix.
      expect(afterEmulator.emulator[`b_${prefix}:emulator:slots_settings`]).toMatchObject({ maxConcurrent: '1' });
      expect(afterEmulator.emulator[`${prefix}:emulator:images:tat`]).toBeDefined();

      expect(await oneJob(account)).toBe('account');
      expect((await keysUnder(prefix)).emulator).toEqual(afterEmulator.emulator);
    } finally {
      await deleteKeys(requireRedisUrl(redis), prefix);
    }
  });
});
