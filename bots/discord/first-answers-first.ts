/**
 * How long work held back behind first answers waits at most: Discord's deadline for a first answer. A first answer
 * still pending after that is too late anyway, and a lost one must not hold the rest for the request's full timeout.
 */
export const FIRST_ANSWER_WAIT_MS = 3000;

/**
 * The first answers (interaction callbacks) this bot has asked for and Discord has not answered yet, in the order they
 * were asked, so the rest of its work can wait its turn. In a burst the process is busy: each job's edit, upload and
 * start costs the event loop time the interactions still waiting for their first answer need within Discord's 3 s.
 * Work that can wait (`behind`) goes after the first answers asked before it, never before; first answers asked later
 * do not hold it, so a steady stream of interactions cannot starve it.
 */
export class FirstAnswersInFlight {
  #asked = 0;
  /** Order numbers of the first answers in flight; a Set keeps them in the order they were asked, so the first is the oldest. */
  readonly #pending = new Set<number>();
  /** Waiting work, in the order it asked: each waits for the first answers numbered below `upTo`. */
  #waiting: { upTo: number; go: () => void }[] = [];

  constructor(private readonly maxWaitMs = FIRST_ANSWER_WAIT_MS) {}

  /** First answers asked and not yet answered. */
  get size(): number {
    return this.#pending.size;
  }

  /** Counts `answer` as a first answer in flight until it settles; returns it as it is. */
  track<T>(answer: Promise<T>): Promise<T> {
    const number = this.#asked++;
    this.#pending.add(number);
    const settled = () => {
      this.#pending.delete(number);
      this.#letGo();
    };
    answer.then(settled, settled);
    return answer;
  }

  /** Resolves once every first answer asked before this call has been answered (at once when none is in flight), or after `maxWaitMs`. */
  behind(): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      // Unref: a first answer still in flight keeps the process up; this fallback alone must not (at most 3 s at a stop).
      const timer = setTimeout(go, this.maxWaitMs).unref();
      function go() {
        clearTimeout(timer);
        resolve();
      }
      this.#waiting.push({ upTo: this.#asked, go });
    });
  }

  #letGo(): void {
    const oldest = this.#pending.values().next();
    const upTo = oldest.done ? Infinity : oldest.value;
    let n = 0;
    while (n < this.#waiting.length && this.#waiting[n]!.upTo <= upTo) this.#waiting[n++]!.go();
    if (n > 0) this.#waiting = this.#waiting.slice(n);
  }
}
