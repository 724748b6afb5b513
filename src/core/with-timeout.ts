/** Rejects with `new Error(message)` if `promise` has not settled within `ms` (the timer never keeps the process alive). */
export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), ms);
    timer.unref?.();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/**
 * Waits for `promise` to settle, fulfilled or not, or `ms`, whichever comes first; never rejects (the caller only
 * needs the wait bounded, not the outcome), and the timer never keeps the process alive.
 */
export function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}

/** `work`'s outcome, or a rejection with the signal's reason as soon as `signal` aborts (`work` itself is left to the caller). */
export function untilSignalled<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** What `within` answers when its wait ran out first. */
export const LATE: unique symbol = Symbol('late');

/**
 * `work`'s value, or `LATE` once `ms` have passed without it: "answer within `ms` or give up", for a read or a write
 * that may stall (Redis unreachable, a slow disk). The work goes on: what it ends with later is the caller's to handle
 * (a rejection before the wait ran out rejects this). The timer never keeps the process alive.
 */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | typeof LATE> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), ms);
    timer.unref?.();
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `work`'s outcome, waited for only until `endsAt` (ms, as `now()`): the one rule of "wait only for the time left
 * before a deadline". Once the deadline has come, it rejects at once and `work` is not asked at all (given as a
 * promise, it is already under way: its rejection is handled, its outcome the caller's); a wait that runs out first
 * rejects too (`withTimeout`). Each rejection names `who` when given. `work` given as a function is told the ms left,
 * so a wait of its own can end with this one.
 */
export function withinDeadline<T>(endsAt: number, work: Promise<T> | ((leftMs: number) => Promise<T>), who?: string, now: () => number = Date.now): Promise<T> {
  const leftMs = endsAt - now();
  if (leftMs <= 0) {
    if (typeof work !== 'function') work.catch(() => undefined);
    return Promise.reject(new Error(who === undefined ? 'no time was left before the deadline' : `no time was left to ask ${who} before the deadline`));
  }
  let asked: Promise<T>;
  try {
    asked = typeof work === 'function' ? work(leftMs) : work;
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  return withTimeout(asked, leftMs, who === undefined ? 'no answer came before the deadline' : `${who} did not answer before the deadline`);
}
