export interface WindowDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Until the window resets. */
  resetAfterMs: number;
}

/**
 * Discord-like per-key limit: `limit` requests per `windowMs`, the window
 * starting at a key's first request. What Discord puts in `x-ratelimit-*`.
 */
export class FixedWindowLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  take(key: string, now: number = Date.now()): WindowDecision {
    let window = this.#windows.get(key);
    if (!window || now >= window.start + this.windowMs) {
      window = { start: now, count: 0 };
      this.#windows.set(key, window);
    }
    const resetAfterMs = window.start + this.windowMs - now;
    if (window.count >= this.limit) return { allowed: false, limit: this.limit, remaining: 0, resetAfterMs };
    window.count++;
    return { allowed: true, limit: this.limit, remaining: this.limit - window.count, resetAfterMs };
  }
}
