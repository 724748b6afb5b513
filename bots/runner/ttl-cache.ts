export interface TtlCacheOptions {
  /** How long a key's answer is kept from when it was asked. 0: never kept (every call asks again). */
  ttlMs: number;
  now?: (() => number) | undefined;
  /** Keys kept at once; past it, the one asked longest ago (read or answered from here) goes first. Default 1000. */
  maxKeys?: number | undefined;
}

/**
 * One answer per key, kept `ttlMs` from when it was asked: what the runner reads of each server/workspace on every
 * job (its settings, its caps and role budgets, its house styles) without reading the store each time. The promise
 * is kept, so callers asking while a read is under way share it. A read that fails (the promise rejects) is not kept:
 * the next call reads again. `delete` forgets a key at once, so a change made in this process applies to its next job;
 * other processes see it within `ttlMs`.
 */
export class TtlCache<T> {
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #maxKeys: number;
  readonly #entries = new Map<string, { at: number; value: Promise<T> }>();

  constructor(options: TtlCacheOptions) {
    this.#ttlMs = options.ttlMs;
    this.#now = options.now ?? Date.now;
    this.#maxKeys = options.maxKeys ?? 1000;
  }

  /** The key's answer asked within `ttlMs`, else `load`'s (kept unless it rejects). */
  get(key: string, load: () => Promise<T>): Promise<T> {
    const now = this.#now();
    const kept = this.#entries.get(key);
    if (kept && now - kept.at < this.#ttlMs) {
      // Asked again: now the last to go past `maxKeys` (its `ttlMs` still runs from when it was read).
      this.#entries.delete(key);
      this.#entries.set(key, kept);
      return kept.value;
    }
    const value = load();
    this.#entries.delete(key);
    this.#entries.set(key, { at: now, value });
    value.catch(() => this.#entries.get(key)?.value === value && this.#entries.delete(key));
    if (this.#entries.size > this.#maxKeys) this.#entries.delete(this.#entries.keys().next().value!);
    return value;
  }

  /** Forgets the key's answer: the next `get` reads again. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Keys kept now. */
  get size(): number {
    return this.#entries.size;
  }
}
