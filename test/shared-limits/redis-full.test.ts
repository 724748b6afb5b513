import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Redis } from 'ioredis';
import { RedisLease } from '../../src/core/redis-lease.js';
import { RedisStateStore } from '../../bots/state/RedisStateStore.js';
import { RedisLink } from '../../src/internal.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import { RecordingLogger } from '../bots/discord/harness.js';
import { requireRedisUrl, testRedis } from '../helpers/shared-limits-redis.js';
import { startThrowawayRedis, type ThrowawayRedis } from '../setup/redis-server.js';

const redisPresent = testRedis();
const ROOM = '64mb';
/** Longer than any wait here: a lease that is still there at its end was renewed, not merely not yet expired. */
const LEASE_MS = 60_000;
/** What a lease has left when the test makes it nearly lapsed (Redis answers `PEXPIRE` even when full). */
const NEARLY_LAPSED_MS = 2_000;

// A Redis of this file's own: it is made full (`CONFIG SET maxmemory`), which the shared test Redis must never be.
describe.skipIf(redisPresent.skipReason)('a Redis full under the documented policy (maxmemory-policy noeviction)', () => {
  let redis: ThrowawayRedis;
  let link: RedisLink;
  let observer: Redis;

  beforeAll(async () => {
    requireRedisUrl(redisPresent);
    redis = (await startThrowawayRedis('redis-server', 3, ['--maxmemory', ROOM, '--maxmemory-policy', 'noeviction']))!;
    link = await RedisLink.open({ url: redis.url, prefix: 'pictor' });
    observer = link.commands.duplicate();
  });
  afterAll(async () => {
    observer?.disconnect();
    await link?.close();
    await redis?.stop();
  });

  /** Makes Redis full (used memory above maxmemory): a `SET` is refused then. */
  async function fill(): Promise<void> {
    await observer.config('SET', 'maxmemory', '1');
    await expect(observer.set('probe', '1')).rejects.toThrow(/OOM command not allowed/);
  }
  async function giveRoom(): Promise<void> {
    await observer.config('SET', 'maxmemory', ROOM);
  }

  it('the bots’ state keeps its lease on its running jobs: renewed while full, and still there when Redis has room again', async () => {
    const logger = new RecordingLogger();
    // Renewed every third of the lease: a renewal comes every second.
    const state = await RedisStateStore.open({ link, leaseMs: 3_000, logger });
    try {
      const lease = state.leaseKey(state.owner);
      await fill();
      // The lease would outlive a renewal that was refused: it is back to at most its lifetime only once one was done.
      await observer.pexpire(lease, LEASE_MS);
      await vi.waitFor(async () => expect(await observer.pttl(lease)).toBeLessThanOrEqual(3_000), { timeout: 10_000, interval: 50 });
      // Nearly lapsed while full: the next renewal gives it its whole lifetime again.
      await observer.pexpire(lease, NEARLY_LAPSED_MS);
      await vi.waitFor(async () => expect(await observer.pttl(lease)).toBeGreaterThan(NEARLY_LAPSED_MS), { timeout: 10_000, interval: 50 });
      await giveRoom();
      expect(await observer.get(lease)).toBe('1');
      expect(logger.entries.filter((e) => e.level === 'warn').map((e) => e.msg)).toEqual([]);
    } finally {
      await giveRoom();
      await state.close();
    }
  });

  it('the gateway’s lease stays its holder’s: renewed while full, never given up, and still there when Redis has room again', async () => {
    const key = 'pictor:discord:gateway-lease:full';
    const lease = new RedisLease({ redis: link.commands, key, holder: 'a', ttlMs: 3_000, renewEveryMs: 1_000, retakeForgotten: true });
    const lost: string[] = [];
    expect(await lease.take()).toBe(true);
    lease.keep((why) => lost.push(why));
    try {
      await fill();
      await observer.pexpire(key, LEASE_MS);
      await vi.waitFor(async () => expect(await observer.pttl(key)).toBeLessThanOrEqual(3_000), { timeout: 10_000, interval: 50 });
      await observer.pexpire(key, NEARLY_LAPSED_MS);
      await vi.waitFor(async () => expect(await observer.pttl(key)).toBeGreaterThan(NEARLY_LAPSED_MS), { timeout: 10_000, interval: 50 });
      await giveRoom();
      expect(await observer.get(key)).toBe('a');
      expect(lost).toEqual([]);
    } finally {
      await giveRoom();
      await lease.giveBack(5_000);
    }
  });

  it('the spend ledger keeps its owner lease (its open reservations stay its own): renewed while full, and still there when Redis has room again', async () => {
    const store = new RedisQuotaStore({ redis: link.commands, prefix: 'pictor-full', leaseMs: LEASE_MS });
    try {
      await store.renewLease();
      const [owner] = await observer.keys('pictor-full:quota:owner:*');
      if (!owner) throw new Error('the ledger wrote no owner lease');
      const value = await observer.get(owner);
      await fill();
      await observer.pexpire(owner, NEARLY_LAPSED_MS);
      await store.renewLease();
      expect(await observer.pttl(owner)).toBeGreaterThan(LEASE_MS - 10_000);
      await giveRoom();
      expect(await observer.get(owner)).toBe(value);
    } finally {
      await giveRoom();
      await store.close();
    }
  });
});
