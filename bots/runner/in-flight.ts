/**
 * The work a surface's stop waits for: the replies of the jobs it started, the ends its sweep records. Each piece is
 * tracked until it settles (its failure is its owner's to log); `settled` waits until none is left, work tracked while
 * it waits included — a job being started when the stop began is tracked only once the runner took it.
 */
export class InFlight {
  readonly #running = new Set<Promise<void>>();

  /** How many pieces of work are still under way. */
  get size(): number {
    return this.#running.size;
  }

  track(work: Promise<unknown>): void {
    const settled = work.then(
      () => {},
      () => {},
    );
    this.#running.add(settled);
    void settled.finally(() => this.#running.delete(settled));
  }

  /** Resolves once nothing is in flight: what was tracked before, and what is tracked while this waits. A stop bounds it (`StopBudget.within`). */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }
}
