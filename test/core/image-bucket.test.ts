import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketShape, decideTake, LocalImageBucket, type BucketShape, type ImageBucket } from '../../src/core/image-bucket.js';
import { RedisImageBucket } from '../../src/core/RedisImageBucket.js';
import { connectRedis } from '../../src/core/redis-connection.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

describe('the rule of the image bucket', () => {
  // 6 a minute: one image every 10 s; 1 s of tolerated delay.
  const shape = bucketShape(6, 1000);

  it('lets a full bucket less the tolerance leave at once, then one image per interval plus the tolerance', () => {
    let tat = Number.NEGATIVE_INFINITY;
    const left: number[] = [];
    for (let now = 0; left.length < 12; ) {
      const d = decideTake(shape, tat, now, 1);
      if (d.waitMs === 0) {
        left.push(now);
        tat = d.tat;
      } else now += 100;
    }
    // Five at once (5.9 images fit), the sixth 1 s later, then every 10 s: the twelfth at 61 s, not 80 s.
    expect(left.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(left[5]).toBe(1000);
    expect(left[11]).toBe(61_000);
  });

  it.each([6, 20, 120])('at %i images a minute, lets twice the bucket leave within a minute and one tolerance', (ipm) => {
    const tiered = bucketShape(ipm, 1000);
    let tat = Number.NEGATIVE_INFINITY;
    let now = 0;
    for (let sent = 0; sent < 2 * ipm; ) {
      const d = decideTake(tiered, tat, now, 1);
      if (d.waitMs === 0) {
        tat = d.tat;
        sent++;
      } else now += d.waitMs;
    }
    // The service allows the last one at 60 s (a full bucket, then its refill): the cost is the tolerance alone, whatever the tier.
    expect(now).toBe(61_000);
  });

  it('says how long to wait, to the millisecond', () => {
    let tat = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < 5; i++) tat = decideTake(shape, tat, 0, 1).tat;
    expect(decideTake(shape, tat, 0, 1).waitMs).toBe(1000);
    expect(decideTake(shape, tat, 400, 1).waitMs).toBe(600);
    expect(decideTake(shape, tat, 0, 2).waitMs).toBe(11_000);
  });

  it('lets a request of the whole bucket leave once the bucket has been full for the tolerance', () => {
    let tat = decideTake(shape, Number.NEGATIVE_INFINITY, 0, 1).tat;
    expect(decideTake(shape, tat, 10_000, 6).waitMs).toBe(1000);
    tat = decideTake(shape, tat, 11_000, 6).tat;
    expect(tat).toBe(71_000);
  });

  it('keeps the requests that leave within the service\'s bucket whatever their delay up to the tolerance', () => {
    // The service's bucket, as the emulator keeps it: continuous refill, capacity 6, counted on arrival.
    const service = serviceBucket(shape);
    let tat = Number.NEGATIVE_INFINITY;
    let delayed = 0;
    for (let now = 0; now < 300_000; now += 50) {
      const weight = 1 + (Math.floor(now / 50) % 3);
      const d = decideTake(shape, tat, now, weight);
      if (d.waitMs > 0) continue;
      tat = d.tat;
      // Alternate the worst delays: one arrives a whole tolerance late, the next at once.
      const delay = delayed++ % 2 === 0 ? shape.toleranceMs : 0;
      service.arrive(now + delay, weight);
    }
    expect(service.refused).toBe(0);
    expect(service.taken).toBeGreaterThan(29);
  });
});

/** The service's own bucket: continuous refill, a request takes its images on arrival (in order of arrival). */
function serviceBucket(shape: BucketShape) {
  const arrivals: { at: number; weight: number }[] = [];
  return {
    arrive(at: number, weight: number) {
      arrivals.push({ at, weight });
    },
    get refused() {
      return this.replay().refused;
    },
    get taken() {
      return this.replay().taken;
    },
    replay() {
      let tokens = shape.capacity;
      let last = 0;
      let refused = 0;
      let taken = 0;
      for (const { at, weight } of [...arrivals].sort((a, b) => a.at - b.at)) {
        tokens = Math.min(shape.capacity, tokens + (at - last) / shape.intervalMs);
        last = at;
        if (tokens + 1e-9 >= weight) {
          tokens -= weight;
          taken += weight;
        } else refused++;
      }
      return { refused, taken };
    },
  };
}

const redis = testRedis();

const DAY_MS = 24 * 60 * 60_000;

/**
 * A bucket of `images` a day: one image comes back every few hours, so no test (30 s at most) runs long enough for the
 * clock to change what it holds. The Redis bucket keeps time on Redis's clock, which no test can stop or move; these
 * cases therefore hold whatever a busy machine makes of the time between two calls. (The rule's numbers to the
 * millisecond are the pure cases above.)
 */
function perDay(images: number, toleranceMs = 0): BucketShape {
  return { capacity: images, intervalMs: DAY_MS / images, toleranceMs };
}

const bucketKinds: [string, (shape: BucketShape) => Promise<ImageBucket>][] = [
  ['in this process', (shape) => Promise.resolve(new LocalImageBucket(shape))],
  ...(redis.skipReason ? [] : [['in Redis', redisBuckets] as [string, (shape: BucketShape) => Promise<ImageBucket>]]),
];

describe.each(bucketKinds)('an image bucket %s', (_name, make) => {
  it('starts full, and a request for more than is left waits without taking anything', async () => {
    const bucket = await make(perDay(60));
    expect(await bucket.available()).toBe(60);
    expect(await bucket.take(4)).toBe(0);
    expect(await bucket.available()).toBe(56);
    const wait = await bucket.take(57);
    expect(wait).toBeGreaterThan(0);
    expect(await bucket.available()).toBe(56);
  });

  it('takes images back from a request that did not leave', async () => {
    const bucket = await make(perDay(10));
    expect(await bucket.take(4)).toBe(0);
    await bucket.giveBack(4);
    expect(await bucket.available()).toBe(10);
  });

  it('is empty after a 429 until the wait is over, however many times it is told', async () => {
    const shape = perDay(60);
    const bucket = await make(shape);
    // The service asks to wait three images' worth of refill.
    const waitMs = 3 * shape.intervalMs;
    await bucket.drain(waitMs);
    await bucket.drain(waitMs);
    expect(await bucket.available()).toBe(-3);
    expect(await bucket.take(1)).toBeGreaterThan(waitMs);
  });

  it('lets a request that asks for headroom leave only while that much more is left, and takes only its own weight', async () => {
    const bucket = await make(perDay(6));
    for (let i = 0; i < 4; i++) expect(await bucket.take(1, 2)).toBe(0);
    expect(await bucket.take(1, 2)).toBeGreaterThan(0);
    expect(await bucket.available()).toBe(2);
    // A caller without headroom takes the last two.
    expect(await bucket.take(1)).toBe(0);
    expect(await bucket.take(1)).toBe(0);
    expect(await bucket.take(1)).toBeGreaterThan(0);
  });

  it('keeps the tolerance out of a burst: five single images of six leave at once, the sixth a tolerance later', async () => {
    const toleranceMs = 10 * 60_000;
    const bucket = await make(perDay(6, toleranceMs));
    for (let i = 0; i < 5; i++) expect(await bucket.take(1)).toBe(0);
    // Not at once, and not an image's refill later (four hours): within the tolerance, less what the burst took.
    const wait = await bucket.take(1);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(toleranceMs);
  });
});

let connection: Redis | undefined;
const prefixes: string[] = [];
async function redisBuckets(shape: BucketShape): Promise<ImageBucket> {
  connection ??= await connectRedis(requireRedisUrl(redis));
  const prefix = uniquePrefix('bucket');
  prefixes.push(prefix);
  return new RedisImageBucket(connection, prefix, shape);
}

describe.skipIf(redis.skipReason)('an image bucket in Redis', () => {
  beforeAll(() => {
    requireRedisUrl(redis);
  });

  it('is one bucket for every connection that shares the prefix', async () => {
    const url = requireRedisUrl(redis);
    const [a, b] = [await connectRedis(url), await connectRedis(url)];
    try {
      const prefix = uniquePrefix('bucket');
      prefixes.push(prefix);
      const shape = perDay(10);
      const [one, two] = [new RedisImageBucket(a, prefix, shape), new RedisImageBucket(b, prefix, shape)];
      expect(await one.take(6)).toBe(0);
      expect(await two.take(4)).toBe(0);
      expect(await one.take(1)).toBeGreaterThan(0);
      expect(await two.available()).toBe(0);
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });
});

afterAll(async () => {
  connection?.disconnect();
  if (!redis.skipReason) for (const prefix of prefixes) await deleteKeys(requireRedisUrl(redis), prefix);
});
