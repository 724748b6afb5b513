import { once } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ImageLimiter } from '../../src/core/image-limiter.js';
import { pingRedis, RedisLink, type RedisLogger } from '../../src/core/redis-connection.js';
import { createImageLimiter, sharedLimiterWorks } from '../../src/core/shared-limiter.js';
import { startThrowawayRedis, type ThrowawayRedis } from '../setup/redis-server.js';
import { requireRedisUrl, testRedis } from '../helpers/shared-limits-redis.js';

const redisPresent = testRedis();
const PREFIX = 'pictor-test:empty-restart';
/** Bottleneck's settings of the slots limiter (its `b_<id>_settings` hash; the id is `<prefix>:slots`). */
const SLOTS_SETTINGS = `b_${PREFIX}:slots_settings`;

class RecordingLogger implements RedisLogger {
  readonly reasons: string[] = [];
  info(): void {}
  warn(obj: object): void {
    const reason = (obj as { reason?: unknown }).reason;
    if (typeof reason === 'string') this.reasons.push(reason);
  }
}

function gate() {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Resolves once `link`'s command connection is ready again after its Redis went away. */
async function reconnected(link: RedisLink): Promise<void> {
  if (link.commands.status !== 'ready') await once(link.commands, 'ready');
}

describe.skipIf(redisPresent.skipReason)(`a shared limiter whose Redis restarts empty ${redisPresent.skipReason ? `(${redisPresent.skipReason})` : ''}`, () => {
  const cleanups: (() => Promise<void>)[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    process.off('unhandledRejection', onUnhandled);
    unhandled.length = 0;
  });

  /** A Redis of the test's own (nothing persisted, so a restart empties it) and a process's limiter on it. */
  async function aLimiterOnItsOwnRedis(options: { maxConcurrent?: number; imagesPerMinute?: number } = {}) {
    requireRedisUrl(redisPresent);
    const redis: ThrowawayRedis | undefined = await startThrowawayRedis();
    if (!redis) throw new Error('this test needs redis-server on PATH (see .ci/run)');
    cleanups.push(() => redis.stop());
    const aProcess = async () => {
      const logger = new RecordingLogger();
      const link = await RedisLink.open({ url: redis.url, prefix: PREFIX });
      cleanups.push(() => link.close());
      const limiter = await createImageLimiter({ ...options, redis: { url: redis.url, prefix: PREFIX }, link, logger });
      cleanups.push(() => limiter.stop());
      return { limiter, link, logger };
    };
    return { redis, aProcess };
  }

  it('runs a request queued after the restart, with the account\'s concurrency back in Redis, and leaves nothing unhandled', async () => {
    process.on('unhandledRejection', onUnhandled);
    const { redis, aProcess } = await aLimiterOnItsOwnRedis({ maxConcurrent: 1, imagesPerMinute: 60 });
    const [a, b] = [await aProcess(), await aProcess()];
    const heldAcross = gate();
    const inFlight = a.limiter.schedule({ weight: 1 }, () => heldAcross.promise);
    await vi.waitFor(async () => expect((await a.limiter.stats()).running).toBe(1), { timeout: 15_000, interval: 20 });

    await redis.restart();
    await reconnected(a.link);
    expect(await a.link.commands.exists(SLOTS_SETTINGS)).toBe(0);

    // The one slot is free again: the request in flight at the restart is no longer counted (docs/shared-limits.md).
    let ran = false;
    const after = a.limiter.schedule({ weight: 1 }, async () => void (ran = true));
    await vi.waitFor(() => expect(ran).toBe(true), { timeout: 15_000, interval: 50 });
    await after;
    heldAcross.open();
    await inFlight;

    // Rebuilt with this account's numbers: one request at a time, across both processes.
    expect(await a.link.commands.hget(SLOTS_SETTINGS, 'maxConcurrent')).toBe('1');
    await reconnected(b.link);
    let running = 0;
    let peak = 0;
    const held = gate();
    const job = () => async () => {
      running++;
      peak = Math.max(peak, running);
      await held.promise;
      running--;
    };
    const jobs = [a, b, a, b].map((p) => p.limiter.schedule({ weight: 1 }, job()));
    await vi.waitFor(() => expect(running).toBe(1), { timeout: 15_000, interval: 20 });
    // Bottleneck's rebuilt state counts the one running request against the one allowed.
    expect(await a.link.commands.hmget(SLOTS_SETTINGS, 'running', 'maxConcurrent')).toEqual(['1', '1']);
    held.open();
    await Promise.all(jobs);
    expect(peak).toBe(1);

    expect(unhandled).toEqual([]);
    expect([...a.logger.reasons, ...b.logger.reasons].filter((r) => /SETTINGS_KEY_NOT_FOUND|UNKNOWN_CLIENT/.test(r))).toEqual([]);
  });

  it('answers the readiness check truthfully: false while Redis refuses the limiter\'s scripts though it answers PING, true once it takes them, and true after an empty restart, which it rebuilds', async () => {
    const { redis, aProcess } = await aLimiterOnItsOwnRedis({ maxConcurrent: 2 });
    const { limiter, link } = await aProcess();
    expect(await sharedLimiterWorks(limiter)).toBe(true);

    // Full (noeviction, as docs/shared-limits.md asks): PING answers, the limiter's scripts are refused.
    const admin = link.commands.duplicate();
    cleanups.push(async () => void admin.disconnect());
    await admin.config('SET', 'maxmemory', '1');
    expect(await pingRedis(link.commands)).toBe(true);
    expect(await sharedLimiterWorks(limiter)).toBe(false);
    await admin.config('SET', 'maxmemory', '0');
    expect(await sharedLimiterWorks(limiter)).toBe(true);

    // Restarted empty: the check rebuilds the limiter's state, as the next request would.
    await redis.restart();
    await reconnected(link);
    expect(await sharedLimiterWorks(limiter)).toBe(true);
    expect(await link.commands.hget(SLOTS_SETTINGS, 'maxConcurrent')).toBe('2');
  });

  it('says true for a limiter of one process alone', async () => {
    const limiter: ImageLimiter = await createImageLimiter({ maxConcurrent: 1 });
    cleanups.push(() => limiter.stop());
    expect(await sharedLimiterWorks(limiter)).toBe(true);
  });
});
