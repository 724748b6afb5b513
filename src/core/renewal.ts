/**
 * Calls `renew` every third of `leaseMs` (at least every 50 ms) until the answered function is called, one renewal at
 * a time: while one has not settled (a storage that does not answer queues its commands), the ticks start none, so
 * none piles up. A renewal that fails goes to `onError`; the timer never keeps the process alive.
 */
export function renewEveryThird(leaseMs: number, renew: () => Promise<void>, onError: (error: unknown) => void): () => void {
  let renewing = false;
  const timer = setInterval(() => {
    if (renewing) return;
    renewing = true;
    renew()
      .catch(onError)
      .finally(() => (renewing = false));
  }, Math.max(50, Math.floor(leaseMs / 3)));
  timer.unref();
  return () => clearInterval(timer);
}
