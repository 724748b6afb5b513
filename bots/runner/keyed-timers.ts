/**
 * Runs waiting by key: at most one for each key, run once its wait is over (its timer never keeps the process alive),
 * or at once (`runAll`), or dropped. A run is no longer waiting as it starts.
 */
export class KeyedTimers {
  readonly #waiting = new Map<string, { timer: NodeJS.Timeout; run: () => void }>();

  /** How many runs are waiting. */
  get size(): number {
    return this.#waiting.size;
  }

  /** Whether a run waits under `key`. */
  has(key: string): boolean {
    return this.#waiting.has(key);
  }

  /** `run` after `ms`, under `key`: in place of the run waiting there, if any. */
  set(key: string, ms: number, run: () => void): void {
    this.drop(key);
    const entry = { timer: setTimeout(() => this.#start(key, entry), ms), run };
    entry.timer.unref();
    this.#waiting.set(key, entry);
  }

  /** The run waiting under `key` is dropped, never run. */
  drop(key: string): void {
    const entry = this.#waiting.get(key);
    if (entry) clearTimeout(entry.timer);
    this.#waiting.delete(key);
  }

  /** Every run waiting is dropped, never run. */
  clear(): void {
    for (const key of [...this.#waiting.keys()]) this.drop(key);
  }

  /** Every run waiting runs now. */
  runAll(): void {
    for (const [key, entry] of [...this.#waiting]) {
      clearTimeout(entry.timer);
      this.#start(key, entry);
    }
  }

  #start(key: string, entry: { timer: NodeJS.Timeout; run: () => void }): void {
    if (this.#waiting.get(key) === entry) this.#waiting.delete(key);
    entry.run();
  }
}
