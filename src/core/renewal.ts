import { withTimeout } from './with-timeout.js';

export interface RenewalOptions {
  /**
   * How long a renewal may go unanswered before its tick counts as failed (`onError`). A connection that queues
   * commands while its storage is down (no retry limit) never settles one: without a bound no renewal would start
   * again and the lease would lapse unreported. The renewal sent is not taken back, so while it stays unanswered the
   * ticks send none (each fails at once): none piles up to be replayed when the storage comes back. Default: no bound.
   */
  answerMs?: number | undefined;
  /** What the errors call the storage (`Redis`). Default: the storage. */
  storage?: string | undefined;
}

/**
 * Calls `renew` every third of `leaseMs` (at least every 50 ms) until the answered function is called, one renewal at
 * a time: while one has not settled (a storage that does not answer queues its commands), the ticks start none, so
 * none piles up. A renewal that fails, or (`answerMs`) is not answered in time, goes to `onError`; the timer never
 * keeps the process alive.
 */
export function renewEveryThird(leaseMs: number, renew: () => Promise<unknown>, onError: (error: unknown) => void, options: RenewalOptions = {}): () => void {
  const { answerMs, storage = 'the storage' } = options;
  /** A renewal sent and not settled yet. */
  let unanswered = false;
  /** A tick waiting for its renewal (or for its bound). */
  let ticking = false;
  const timer = setInterval(() => {
    if (ticking) return;
    if (unanswered) {
      // Only past a bound: the renewal before is late, and this tick's is not sent.
      onError(new Error(`${storage} did not answer the renewal sent more than ${answerMs} ms ago`));
      return;
    }
    ticking = true;
    unanswered = true;
    const sent = renew().finally(() => (unanswered = false));
    (answerMs === undefined ? sent : withTimeout(sent, answerMs, `${storage} did not answer the renewal in time`))
      .then(() => undefined, onError)
      .finally(() => (ticking = false));
  }, Math.max(50, Math.floor(leaseMs / 3)));
  timer.unref();
  return () => clearInterval(timer);
}
