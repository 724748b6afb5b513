/**
 * A fixed number of slots for one process: a counter and a first-in,
 * first-out line of waiters. A free slot is granted with an already resolved
 * promise (no timer, no turn of the event loop); a freed slot goes straight to
 * the first waiter. `ImageLimiter` gates requests in flight with it when the
 * limit is not shared through Redis.
 */
export class SlotSemaphore {
  readonly size: number;
  #inUse = 0;
  /** Waiters in arrival order (a Set keeps insertion order and leaves in O(1) when one gives up). */
  readonly #waiters = new Set<Waiter>();
  #idle: (() => void)[] = [];

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`a semaphore needs at least one slot (got ${size})`);
    this.size = size;
  }

  /** Slots held now. */
  get inUse(): number {
    return this.#inUse;
  }

  /** Callers waiting for a slot. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /**
   * Resolves with the function that gives the slot back (calling it again does
   * nothing): at once when a slot is free and nobody waits, else when every
   * earlier waiter has had one. Rejects with `signal.reason` if `signal` aborts
   * first (the caller leaves the line), or with the error given to `rejectWaiting`.
   */
  take(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason as unknown);
    if (this.#inUse < this.size && this.#waiters.size === 0) {
      this.#inUse++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise<() => void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#releaser());
        },
        fail: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      const onAbort = () => {
        if (this.#waiters.delete(waiter)) reject(signal!.reason as unknown);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(waiter);
    });
  }

  /** Rejects every caller waiting now with `error`; slots held stay held. */
  rejectWaiting(error: unknown): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const waiter of waiters) waiter.fail(error);
  }

  /** Resolves once no slot is held (at once if none is). */
  whenIdle(): Promise<void> {
    if (this.#inUse === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release();
    };
  }

  #release(): void {
    const next = this.#waiters.values().next();
    if (!next.done) {
      // The slot passes to the first waiter without ever being counted free.
      this.#waiters.delete(next.value);
      next.value.grant();
      return;
    }
    this.#inUse--;
    if (this.#inUse === 0 && this.#idle.length) {
      const idle = this.#idle;
      this.#idle = [];
      for (const resolve of idle) resolve();
    }
  }
}

interface Waiter {
  grant: () => void;
  fail: (error: unknown) => void;
}
