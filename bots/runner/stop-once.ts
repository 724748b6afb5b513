import { checkUntil, waitWithin } from 'pictor/internal';

/** The budget of a stop under way (`stopOnce`): its deadline, which a later call may bring forward, and its waits. */
export interface StopBudget {
  /** The stop's deadline now: the earliest `until` any call gave (a time as `Date.now()`); undefined while none gave one. */
  until(): number | undefined;
  /**
   * Waits for `work` at most `ms`, and never past the stop's deadline — one a later call brings forward cuts a wait
   * already under way. True when `work` ended in time (its error is thrown), false when the wait gave up on it.
   */
  within(work: Promise<unknown>, ms: number): Promise<boolean>;
  /** Calls `listener` each time a later call brings the deadline (`until()`) forward; answers how to stop calling it. */
  onBroughtForward(listener: () => void): () => void;
}

/**
 * A surface's stop, run once however often it is asked: the first call starts it, every call gets its end. Each call's
 * `until` (a time as `Date.now()`; anything else a RangeError, `checkUntil`) bounds the one stop: a later call asking
 * for an earlier end brings the deadline of every wait forward, those under way too (`StopBudget.within`), as
 * `Service.stop`'s one budget implies — whoever asked for the stop by then goes on to close the stores it used. A
 * later `until` never extends it. What the stop runs is the first call's.
 */
export function stopOnce(): (until: number | undefined, run: (budget: StopBudget) => Promise<void>) => Promise<void> {
  let stopping: Promise<void> | undefined;
  let earliest: number | undefined;
  let dueTimer: NodeJS.Timeout | undefined;
  let reached!: () => void;
  const due = new Promise<false>((resolve) => (reached = () => resolve(false)));
  const broughtForward = new Set<() => void>();
  const budget: StopBudget = {
    until: () => earliest,
    onBroughtForward(listener) {
      const own = () => listener();
      broughtForward.add(own);
      return () => broughtForward.delete(own);
    },
    async within(work, ms) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), waitWithin(ms, earliest)).unref()));
      try {
        return await Promise.race([work.then(() => true as const), late, due]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
  return (until, run) => {
    checkUntil(until);
    if (until !== undefined && (earliest === undefined || until < earliest)) {
      earliest = until;
      clearTimeout(dueTimer);
      dueTimer = setTimeout(reached, waitWithin(Number.POSITIVE_INFINITY, until)).unref();
      for (const listener of [...broughtForward]) listener();
    }
    return (stopping ??= run(budget).finally(() => clearTimeout(dueTimer)));
  };
}
