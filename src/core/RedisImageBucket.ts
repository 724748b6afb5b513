import type { Redis } from 'ioredis';
import { imagesAvailable, type BucketShape, type ImageBucket } from './image-bucket.js';

/**
 * The rule of `decideTake`, `drainedTat` and `LocalImageBucket.giveBack`
 * (image-bucket.ts) run atomically in Redis on Redis's own clock, so processes
 * on machines whose clocks differ share one bucket. KEYS[1] holds the bucket's
 * `tat` (ms, Redis time); it expires once the bucket would be full again, which
 * reads as "full" (no key). ARGV: operation (take, give, drain, peek), weight or
 * ms, capacity, interval ms, tolerance ms, headroom (take). Answers [wait ms, tat, now] as strings.
 * test/core/image-bucket.test.ts runs the same cases against this and the local bucket.
 */
const BUCKET_SCRIPT = `
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local op = ARGV[1]
local arg = tonumber(ARGV[2])
local capacity = tonumber(ARGV[3])
local interval = tonumber(ARGV[4])
local tolerance = tonumber(ARGV[5])
local headroom = tonumber(ARGV[6] or '0')
local stored = redis.call('get', KEYS[1])
local tat = stored and tonumber(stored) or (now - capacity * interval - tolerance)
local wait = 0
if op == 'take' then
  local w = math.min(math.max(1, arg), capacity)
  local h = math.min(math.max(0, headroom), capacity - w)
  local excess = tat - now - ((capacity - w - h) * interval - tolerance)
  if excess > 0 then
    wait = math.ceil(excess)
  else
    tat = math.max(tat, now) + w * interval
  end
elseif op == 'give' then
  tat = tat - math.min(math.max(1, arg), capacity) * interval
elseif op == 'drain' then
  tat = math.max(tat, now + arg + capacity * interval)
end
if op ~= 'peek' and wait == 0 then
  local ttl = math.ceil(tat - now + tolerance)
  if ttl > 0 then
    redis.call('set', KEYS[1], string.format('%.3f', tat), 'PX', ttl)
  else
    redis.call('del', KEYS[1])
  end
end
return { tostring(wait), string.format('%.3f', tat), string.format('%.3f', now) }
`;

type Scripts = Redis & {
  pictorImageBucket(key: string, op: string, arg: number, capacity: number, intervalMs: number, toleranceMs: number, headroom: number): Promise<[string, string, string]>;
};

/** The bucket of every process that shares one Redis and prefix. Uses the connection it is given; never closes it. */
export class RedisImageBucket implements ImageBucket {
  readonly #redis: Scripts;
  readonly #key: string;

  constructor(
    redis: Redis,
    /** The account's key prefix: the bucket is `<prefix>:<name>:tat`. */
    prefix: string,
    readonly shape: BucketShape,
    /** Which bucket under the prefix. Default `images` (the account's images per minute). */
    name = 'images',
  ) {
    this.#redis = redis as Scripts;
    this.#key = `${prefix}:${name}:tat`;
    if (!this.#redis.pictorImageBucket) this.#redis.defineCommand('pictorImageBucket', { numberOfKeys: 1, lua: BUCKET_SCRIPT });
  }

  async take(weight: number, headroom = 0): Promise<number> {
    return Number((await this.#call('take', weight, headroom))[0]);
  }

  async giveBack(weight: number): Promise<void> {
    await this.#call('give', weight);
  }

  async drain(ms: number): Promise<void> {
    await this.#call('drain', Math.max(0, Math.ceil(ms)));
  }

  async available(): Promise<number> {
    const [, tat, now] = await this.#call('peek', 0);
    return imagesAvailable(this.shape, Number(tat), Number(now));
  }

  #call(op: 'take' | 'give' | 'drain' | 'peek', arg: number, headroom = 0): Promise<[string, string, string]> {
    const { capacity, intervalMs, toleranceMs } = this.shape;
    return this.#redis.pictorImageBucket(this.#key, op, arg, capacity, intervalMs, toleranceMs, headroom);
  }
}
