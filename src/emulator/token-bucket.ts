/**
 * A token bucket of images: it holds at most `capacity` tokens and refills
 * continuously at `capacity` per minute. A request takes `n` tokens at once or
 * none at all.
 */
export type TakeResult =
  | { ok: true; remaining: number }
  | { ok: false; remaining: number; retryAfterMs: number };

export class TokenBucket {
  readonly capacity: number;
  readonly #perMs: number;
  readonly #now: () => number;
  #tokens: number;
  #last: number;

  constructor(capacity: number, now: () => number = () => performance.now()) {
    if (!(capacity > 0)) throw new RangeError(`a token bucket needs a capacity above 0, got ${capacity}`);
    this.capacity = capacity;
    this.#perMs = capacity / 60_000;
    this.#now = now;
    this.#tokens = capacity;
    this.#last = now();
  }

  /**
   * Takes `count` tokens if the bucket holds them. A request larger than the
   * whole bucket is counted as a full bucket, so it can still pass once the
   * bucket is full instead of never.
   */
  take(count: number): TakeResult {
    this.#refill();
    const need = Math.min(Math.max(0, count), this.capacity);
    if (this.#tokens + 1e-9 >= need) {
      this.#tokens = Math.max(0, this.#tokens - need);
      return { ok: true, remaining: this.remaining() };
    }
    return { ok: false, remaining: this.remaining(), retryAfterMs: (need - this.#tokens) / this.#perMs };
  }

  /** Whole tokens available now. */
  remaining(): number {
    this.#refill();
    return Math.floor(this.#tokens + 1e-9);
  }

  /** Milliseconds until the bucket is full again. */
  msUntilFull(): number {
    this.#refill();
    return (this.capacity - this.#tokens) / this.#perMs;
  }

  #refill(): void {
    const now = this.#now();
    const elapsed = Math.max(0, now - this.#last);
    this.#last = now;
    this.#tokens = Math.min(this.capacity, this.#tokens + elapsed * this.#perMs);
  }
}
