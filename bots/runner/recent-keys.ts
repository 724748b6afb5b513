/**
 * Keys this process met lately, each remembered for `ttlMs` (as long as the shared state keeps a key taken: its
 * space's TTL) and never more than the `max` latest (the oldest forgotten first): what a surface checks before it asks
 * the state — Discord's interaction ids taken over HTTP, Slack's messages whose failed claim the member was told of,
 * the workflow steps this process took up.
 */
/** How many keys a surface's recent set keeps at most (the latest), unless it names its own bound. */
export const RECENT_KEYS_MAX = 2000;

/**
 * How long a key taken in a space stays taken: the space's TTL; a space without one keeps its keys for ever. The one
 * answer for a space without a TTL, for every set that remembers its keys and every retry that outlives them.
 */
export function takenForMs(definition: { ttlMs?: number | undefined }): number {
  return definition.ttlMs ?? Number.POSITIVE_INFINITY;
}

export class RecentKeys {
  readonly #seenAt = new Map<string, number>();
  constructor(
    readonly max: number,
    readonly ttlMs: number,
  ) {}

  /** The keys met lately of those taken in `space`: each remembered while the space keeps it taken (`takenForMs`), the `max` latest at most. */
  static for(space: { definition: { ttlMs?: number | undefined } }, max = RECENT_KEYS_MAX): RecentKeys {
    return new RecentKeys(max, takenForMs(space.definition));
  }

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
