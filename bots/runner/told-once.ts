/** Keys remembered as told by default (past it, the oldest is forgotten, so told again if it is still so). */
export const TOLD_KEYS_MAX = 10_000;

/**
 * What the log was last told of each key (a scope's unreadable settings, its damaged house styles) while it stays
 * so, so a warning is written once — not on every read — and again when it changes. Bounded: past `max` keys the one
 * told longest ago is forgotten.
 */
export class ToldOnce<T> {
  readonly #told = new Map<string, T>();
  readonly #max: number;

  constructor(max = TOLD_KEYS_MAX) {
    this.#max = max;
  }

  /** What was last told of `key`, if it still stands. */
  last(key: string): T | undefined {
    return this.#told.get(key);
  }

  /** Remembers what is told of `key` now; `undefined` (nothing to tell any more) forgets it. */
  remember(key: string, what: T | undefined): void {
    this.#told.delete(key);
    if (what === undefined) return;
    this.#told.set(key, what);
    if (this.#told.size > this.#max) this.#told.delete(this.#told.keys().next().value!);
  }
}
