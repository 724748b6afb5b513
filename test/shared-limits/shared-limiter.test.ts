import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ImageLimiter } from '../../src/core/image-limiter.js';
import { RedisCoordinator } from '../../src/core/RedisCoordinator.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { createImageLimiter, type CreateImageLimiterOptions } from '../../src/core/shared-limiter.js';
import { AbortedError } from '../../src/core/errors.js';
import { RedisQuotaStore } from '../../src/spend/RedisQuotaStore.js';
import { startCuttableLink, type CuttableLink } from '../helpers/shared-limits-proxy.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

const redis = testRedis();

const tick = (ms = 50) => new Promise((r) => setTimeout(r, ms));
function gate() {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`no ${what} within ${timeoutMs} ms`);
    await tick(20);
  }
}

describe.skipIf(redis.skipReason)(`limiters of several processes sharing one Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  let url: string;
  const prefixes: string[] = [];
  const limiters: ImageLimiter[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(() => {
    url = requireRedisUrl(redis);
  });
  afterEach(async () => {
    await Promise.all(limiters.splice(0).map((l) => l.stop()));
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  afterAll(async () => {
    if (url) for (const prefix of prefixes) await deleteKeys(url, prefix);
  });

  /** A fresh account prefix and a factory of limiters that share it (each with its own connections, like a process). */
  function account(options: Omit<CreateImageLimiterOptions, 'redis'> = {}, linkUrl?: string) {
    const prefix = uniquePrefix('limiter');
    prefixes.push(prefix);
    return async (overrides: Omit<CreateImageLimiterOptions, 'redis'> = {}) => {
      const limiter = await createImageLimiter({ ...options, ...overrides, redis: { url: linkUrl ?? url, prefix } });
      limiters.push(limiter);
      return limiter;
    };
  }

  it('never runs more requests at once, across processes, than the account allows', async () => {
    const make = account({ maxConcurrent: 2 });
    const [a, b] = [await make(), await make()];
    let running = 0;
    let peak = 0;
    const g = gate();
    const job = () => async () => {
      running++;
      peak = Math.max(peak, running);
      await g.promise;
      running--;
    };
    const jobs = [a, b, a, b, a, b].map((l) => l.schedule({ weight: 1 }, job()));
    await until('two running requests', () => running === 2);
    // Real time: no event marks a request that does not start, and the limiters share their state through a real Redis.
    await tick(300);
    expect(running).toBe(2);
    g.open();
    await Promise.all(jobs);
    expect(peak).toBe(2);
  });

  it('draws every process\'s images from one bucket, weighted by n, less the tolerated delay', async () => {
    const make = account({ imagesPerMinute: 12, maxConcurrent: 10 });
    const [a, b] = [await make(), await make()];
    // 12 a minute is one image every 5 s; 4 from A and 4 from B fit, then 3 are left: 4 of 12, less 1 s
    // of tolerated delay (a fifth of an image).
    await a.schedule({ weight: 4 }, async () => {});
    await b.schedule({ weight: 4 }, async () => {});
    expect((await a.stats()).imagesAvailable).toBe(3);
    expect((await b.stats()).imagesAvailable).toBe(3);
    let ran = false;
    const controller = new AbortController();
    const third = a.schedule({ weight: 5, signal: controller.signal }, async () => void (ran = true));
    // Real time: no event marks a request that does not start, and the limiters share their state through a real Redis.
    await tick(300);
    expect(ran).toBe(false);
    controller.abort();
    await expect(third).rejects.toBeInstanceOf(AbortedError);
  });

  it('reports positions in the shared queue, counting the requests other processes have waiting', async () => {
    const make = account({ maxConcurrent: 1 });
    const [a, b] = [await make(), await make()];
    const g = gate();
    const first = a.schedule({ weight: 1 }, () => g.promise);
    await until('the first request running', async () => (await a.stats()).running === 1);
    const aheadOfA: number[] = [];
    const secondA = a.schedule({ weight: 1, onQueuePosition: (n) => aheadOfA.push(n) }, async () => {});
    const thirdA = a.schedule({ weight: 1 }, async () => {});
    await until('A\'s position', () => aheadOfA.length > 0);
    const aheadOfB: number[] = [];
    const fromB = b.schedule({ weight: 1, onQueuePosition: (n) => aheadOfB.push(n) }, async () => {});
    await until('B\'s position', () => aheadOfB.length > 0);
    expect(aheadOfA[0]).toBe(0);
    expect(aheadOfB.at(-1)).toBe(2);
    g.open();
    expect(await Promise.all([first, secondA, thirdA, fromB])).toHaveLength(4);
  });

  it('holds every process after a 429 in one of them, until the wait is over', async () => {
    const make = account({ imagesPerMinute: 60, maxConcurrent: 4 });
    const [a, b] = [await make(), await make()];
    await a.pause(1500);
    expect((await b.stats()).pausedForMs).toBeGreaterThan(0);
    let started = false;
    const job = b.schedule({ weight: 1 }, async () => void (started = true));
    // Real time: no event marks a request that does not start, and the limiters share their state through a real Redis.
    await tick(300);
    expect(started).toBe(false);
    await job;
    expect(started).toBe(true);
  });

  it('owes a 429 pause once when two processes pause at the same moment', async () => {
    const make = account({ imagesPerMinute: 60, maxConcurrent: 4 });
    const [a, b] = [await make(), await make()];
    // 60 a minute is one image a second: a 3 s pause leaves the shared bucket 3 images in debt (4 with
    // the tolerated second), not 6 or 7.
    await Promise.all([a.pause(3000), b.pause(3000)]);
    const left = (await a.stats()).imagesAvailable!;
    expect(left).toBeLessThan(0);
    expect(left).toBeGreaterThanOrEqual(-4);
  });

  it('forgets the waiting requests of a process that stopped renewing them', async () => {
    const prefix = uniquePrefix('tickets');
    prefixes.push(prefix);
    const deadConnection = await connectRedis(url);
    const liveConnection = await connectRedis(url);
    const dead = new RedisCoordinator({ redis: deadConnection, prefix, pollMs: 100, ticketTtlMs: 600 });
    const live = new RedisCoordinator({ redis: liveConnection, prefix, pollMs: 100, ticketTtlMs: 600 });
    cleanups.push(async () => {
      await live.close();
      liveConnection.disconnect();
    });
    dead.join(undefined);
    dead.join(undefined);
    await until('the two tickets in Redis', async () => (await live.waiting()) === 2);
    deadConnection.disconnect(); // the process is gone: nothing renews its tickets any more
    const positions: number[] = [];
    live.join((ahead) => positions.push(ahead));
    await until('the first position', () => positions.length > 0);
    expect(positions[0]).toBe(2);
    await until('the dead tickets to vanish', () => positions.at(-1) === 0, 5000);
  });

  describe('when the Redis connection is lost and comes back', () => {
    let link: CuttableLink;
    beforeAll(async () => {
      link = await startCuttableLink(url);
    });
    afterAll(async () => {
      await link?.close();
    });

    it('keeps queued requests waiting and runs each of them exactly once when it is back', async () => {
      const make = account({ imagesPerMinute: 120, maxConcurrent: 1 }, link.url);
      const limiter = await make();
      const runs = new Map<number, number>();
      const g = gate();
      const troubled = new Set<number>();
      const jobs = [0, 1, 2].map((i) =>
        limiter.schedule({ weight: 1, onDatastoreTrouble: () => troubled.add(i) }, async () => {
          runs.set(i, (runs.get(i) ?? 0) + 1);
          if (i === 0) await g.promise;
          return i;
        }),
      );
      await until('the first request running', () => runs.size === 1);
      link.cut();
      g.open();
      // The waiting requests are told the shared queue is unreachable: they were held, not run.
      await until('the waiting requests told of the outage', () => troubled.size === 2);
      expect(runs.size).toBe(1);
      link.restore();
      expect(await Promise.all(jobs)).toEqual([0, 1, 2]);
      expect([...runs.values()]).toEqual([1, 1, 1]);
      // The requests that were waiting were told why (a chat surface passes that on); the running one was not.
      expect([...troubled].sort()).toEqual([1, 2]);
    });

    /** A request running until `g` opens (it then answers 'finished'), once it runs. */
    async function oneRunning(limiter: ImageLimiter) {
      const g = gate();
      let started = false;
      const running = limiter.schedule({ weight: 1 }, async () => {
        started = true;
        await g.promise;
        return 'finished';
      });
      await until('the first request running', () => started);
      return { g, running };
    }
    /** A request that must never run: its promise answers the error it ends with. */
    const queue = (limiter: ImageLimiter) => limiter.schedule({ weight: 1 }, async () => 'never').catch((error: unknown) => error);
    /** Whether `promise` settles before the event loop's next turn: what "at once" means to a caller. */
    async function settlesAtOnce(promise: Promise<unknown>): Promise<boolean> {
      let settled = false;
      void promise.then(() => (settled = true));
      await new Promise((resolve) => setImmediate(resolve));
      return settled;
    }

    it('still stops when Redis stays unreachable: the running request keeps its result, the queued one is cancelled', async () => {
      const make = account({ maxConcurrent: 1 }, link.url);
      const limiter = await make();
      const { g, running } = await oneRunning(limiter);
      const queued = queue(limiter);
      link.cut();
      g.open();
      try {
        await limiter.stop();
        expect(await running).toBe('finished');
        expect(await queued).toBeInstanceOf(AbortedError);
      } finally {
        link.restore();
      }
      // Stopping waits up to 5 s for Redis to come back, and ioredis's reconnect attempts run on a loaded machine too.
    }, 60_000);

    it('still stops when Redis takes requests and never answers, and cancels the queued requests whose answers the broken connection lost', async () => {
      // A link of its own: this one is left dropping.
      const silent = await startCuttableLink(url);
      try {
        const make = account({ maxConcurrent: 1 }, silent.url);
        const limiter = await make();
        const { g, running } = await oneRunning(limiter);
        const queued = queue(limiter);
        // Redis stops answering: what is sent now is in flight for ever (the connection itself stays up) …
        silent.dropRequests();
        const late = queue(limiter);
        await silent.whenDropped(silent.dropped + 1);
        g.open();
        expect(await running).toBe('finished');
        // … until the connection breaks: ioredis keeps what was in flight to send again on a connection that never comes back.
        silent.cut();
        const stopping = limiter.stop();
        // Cancelled at once, not when stopping gives up on Redis.
        expect(await settlesAtOnce(Promise.all([queued, late]))).toBe(true);
        await stopping;
        expect(await queued).toBeInstanceOf(AbortedError);
        expect(await late).toBeInstanceOf(AbortedError);
      } finally {
        await silent.close();
      }
    }, 60_000);

    it('still stops when Redis takes requests and never answers on a connection that stays up', async () => {
      const silent = await startCuttableLink(url);
      try {
        const limiter = await account({ maxConcurrent: 1 }, silent.url)();
        const { g, running } = await oneRunning(limiter);
        silent.dropRequests();
        const queued = queue(limiter);
        g.open();
        expect(await running).toBe('finished');
        // The datastore never records the slot given back; stopping gives up on it once nothing runs here, and cancels
        // the queued request at once.
        const stopping = limiter.stop();
        expect(await settlesAtOnce(queued)).toBe(true);
        await stopping;
        expect(await queued).toBeInstanceOf(AbortedError);
      } finally {
        await silent.close();
      }
    }, 60_000);

    it('keeps the ledger: what is reserved or settled during the outage counts once when it is back', async () => {
      const prefix = uniquePrefix('quota-outage');
      prefixes.push(prefix);
      const store = await RedisQuotaStore.connect({ url: link.url, prefix });
      cleanups.push(() => store.close());
      const now = Date.now();
      const limits = { userDailyUsd: 1 };
      expect(await store.reserve({ jobId: 'before', userKey: 'u', scopeKey: 's', estimateUsd: 0.3, limits, now })).toEqual({ ok: true });
      link.cut();
      const settled = store.settle('before', 0.2);
      const reserved = store.reserve({ jobId: 'during', userKey: 'u', scopeKey: 's', estimateUsd: 0.5, limits, now });
      // The store tried Redis again during the outage, and again: its commands wait for the link.
      const refused = link.refused;
      await link.whenRefused(refused + 2);
      link.restore();
      await settled;
      expect(await reserved).toEqual({ ok: true });
      expect(await store.spentToday('u', now)).toBeCloseTo(0.7, 9);
      expect(await store.reserve({ jobId: 'after', userKey: 'u', scopeKey: 's', estimateUsd: 0.4, limits, now })).toMatchObject({ ok: false, code: 'budget_user_daily' });
    });
  });
});
