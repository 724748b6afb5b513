/**
 * Keys this process met lately, each remembered for `ttlMs` (as long as the shared state keeps a key taken: its
 * space's TTL) and never more than the `max` latest (the oldest forgotten first): what a surface checks before it asks
 * the state — Discord's interaction ids taken over HTTP, Slack's messages whose failed claim the member was told of,
 * the workflow steps this process took up.
 */
export class RecentKeys {
  readonly #seenAt = new Map<string, number>();
  constructor(
    readonly max: number,
    readonly ttlMs: number,
  ) {}

  /** True the first time `key` comes within `ttlMs` (it is then remembered); false while it is remembered. */
  first(key: string, now = Date.now()): boolean {
    for (const [old, at] of this.#seenAt) {
      if (now - at < this.ttlMs && this.#seenAt.size < this.max) break;
      this.#seenAt.delete(old);
    }
    if (this.#seenAt.has(key)) return false;
    this.#seenAt.set(key, now);
    return true;
  }

  /** Forgets `key` (its claim failed): the next `first` of it answers true. */
  drop(key: string): void {
    this.#seenAt.delete(key);
  }
}
