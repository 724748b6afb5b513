/**
 * The images-per-minute bucket on the client's side, kept on the service's
 * own clock: the service refills its bucket continuously (one image every
 * 60000/ipm ms, up to ipm), so the client does the same instead of refilling
 * in whole-image steps, and keeps its safety margin in time, not in images.
 *
 * The rule is the generic cell rate algorithm (GCRA): one number, the
 * theoretical arrival time `tat` — when the bucket would be full again if
 * nothing else were taken. A request of `weight` images may leave at `now` when
 *
 *     tat − now ≤ (capacity − weight) × interval − tolerance
 *
 * and then `tat` becomes `max(tat, now) + weight × interval`. `tolerance` is
 * the delay a request may take to reach the service after it leaves (a cold
 * connection, a busy machine, several processes): requests that leave
 * conforming to the bucket less `tolerance` still arrive conforming to the
 * service's full bucket, however their delays (up to `tolerance`) fall. What it
 * costs is `tolerance` of waiting once per burst — a fraction of an image — and
 * nothing in the steady rate, which is the account's whole limit.
 *
 * A request may also ask for `headroom`: it leaves only if `headroom` more
 * units would still be left after it (it waits for
 * `tat − now ≤ (capacity − weight − headroom) × interval − tolerance`) but
 * takes only its own `weight`. That is how a less urgent caller leaves the
 * last units to more urgent ones it cannot see (other processes).
 *
 * The rule knows nothing of images: the Slack bot paces its `chat.update`
 * calls (Slack's Tier 3, per workspace) and its writes to a channel with the
 * same buckets, weight 1 (bots/slack/ChannelWriter.ts).
 *
 * The same rule runs in Redis for processes that share one limiter
 * (`RedisImageBucket`); test/core/image-bucket.test.ts runs the same cases
 * against both.
 */

/** The numbers a bucket is made of. */
export interface BucketShape {
  /** Images the bucket holds when full: the account's images per minute. */
  capacity: number;
  /** Milliseconds between two refilled images: 60000 / capacity. */
  intervalMs: number;
  /** Milliseconds of delay tolerated between a request leaving and the service counting it. */
  toleranceMs: number;
}

/** How long a request may take to reach the service, by default, without risking a 429. */
export const DEFAULT_TOLERANCE_MS = 1000;

export function bucketShape(imagesPerMinute: number, toleranceMs: number = DEFAULT_TOLERANCE_MS): BucketShape {
  return { capacity: imagesPerMinute, intervalMs: 60_000 / imagesPerMinute, toleranceMs: Math.max(0, toleranceMs) };
}

/**
 * Whether `weight` images may leave at `now` with `headroom` more still left after them: `waitMs` 0 and the new `tat`
 * when they may, else how long until they may. The headroom is at most what the bucket holds besides the weight.
 */
export function decideTake(shape: BucketShape, tat: number, now: number, weight: number, headroom = 0): { waitMs: number; tat: number } {
  const w = Math.min(Math.max(1, weight), shape.capacity);
  const h = Math.min(Math.max(0, headroom), shape.capacity - w);
  const excess = tat - now - ((shape.capacity - w - h) * shape.intervalMs - shape.toleranceMs);
  if (excess > 0) return { waitMs: Math.ceil(excess), tat };
  return { waitMs: 0, tat: Math.max(tat, now) + w * shape.intervalMs };
}

/** Images that could leave at `now` (negative while a 429 pause is owed, at most `capacity`). */
export function imagesAvailable(shape: BucketShape, tat: number, now: number): number {
  return Math.min(shape.capacity, Math.floor(shape.capacity - (tat - now + shape.toleranceMs) / shape.intervalMs + 1e-9));
}

/** The `tat` after the service said "wait `ms`": the bucket is empty until then, so the queue does not burst afterwards. */
export function drainedTat(shape: BucketShape, tat: number, now: number, ms: number): number {
  return Math.max(tat, now + ms + shape.capacity * shape.intervalMs);
}

/** Where a bucket's `tat` lives: in this process, or in Redis for every process of the account. */
export interface ImageBucket {
  readonly shape: BucketShape;
  /**
   * Takes `weight` images if they may leave now (with `headroom` more still left after them, default 0) and answers 0;
   * otherwise takes nothing and answers how many ms to wait.
   */
  take(weight: number, headroom?: number): Promise<number>;
  /** Gives back images taken by a request that then did not leave (cancelled). */
  giveBack(weight: number): Promise<void>;
  /** Empties the bucket until `ms` from now (the service answered 429 with a wait). */
  drain(ms: number): Promise<void>;
  /** Images that could leave now. */
  available(): Promise<number>;
}

/** A bucket for the requests of this process alone. It starts full. */
export class LocalImageBucket implements ImageBucket {
  #tat = Number.NEGATIVE_INFINITY;

  constructor(
    readonly shape: BucketShape,
    private readonly now: () => number = Date.now,
  ) {}

  take(weight: number, headroom = 0): Promise<number> {
    const decision = decideTake(this.shape, this.#tat, this.now(), weight, headroom);
    this.#tat = decision.tat;
    return Promise.resolve(decision.waitMs);
  }

  giveBack(weight: number): Promise<void> {
    this.#tat -= Math.min(Math.max(1, weight), this.shape.capacity) * this.shape.intervalMs;
    return Promise.resolve();
  }

  drain(ms: number): Promise<void> {
    this.#tat = drainedTat(this.shape, this.#tat, this.now(), ms);
    return Promise.resolve();
  }

  available(): Promise<number> {
    return Promise.resolve(imagesAvailable(this.shape, this.#tat, this.now()));
  }
}
