/** The longest a renewal may go unanswered before it counts as failed (a third of the lease when that is shorter). */
export const RENEWAL_ANSWER_MS = 2_000;

/**
 * How long a renewal of a `leaseMs` lease, or a command beside it, may wait for its storage: 2 s, or a third of the
 * lease when that is shorter, so a failure is told before the lease lapses.
 */
export function answerBoundMs(leaseMs: number): number {
  return Math.min(RENEWAL_ANSWER_MS, Math.max(1, Math.floor(leaseMs / 3)));
}

/**
 * Tells a renewal's failures once per streak: `failed` tells the first failure after a renewal passed (or the first of
 * all) to `onError`, `answered` tells the renewal that ends a streak told to `onRecovered`.
 */
function failureStreak(onError: (error: unknown) => void, onRecovered?: () => void): { failed(error: unknown): void; answered(): void } {
  let failing = false;
  return {
    failed(error) {
      if (failing) return;
      failing = true;
      onError(error);
    },
    answered() {
      if (!failing) return;
      failing = false;
      onRecovered?.();
    },
  };
}

/**
 * Calls `renew` every third of `leaseMs` (at least every 50 ms) until the answered function is called: `renewEvery`
 * at that pace. A renewal's bound (2 s, or a third of a shorter lease) is never longer than the pace, so no bound
 * outlasts the next tick: at most one renewal is within its bound at a time.
 */
export function renewEveryThird(leaseMs: number, renew: () => Promise<unknown>, onError: (error: unknown) => void, onRecovered?: () => void): () => void {
  return renewEvery(Math.max(50, Math.floor(leaseMs / 3)), leaseMs, renew, onError, onRecovered);
}

/**
 * Calls `renew` every `everyMs` until the answered function is called: the one renewal loop of every lease (the
 * storage's, the Slack socket's, `RedisLease`'s). A renewal not answered within `answerBoundMs(leaseMs)` (2 s, or a
 * third of the lease when that is shorter) counts as failed, and the next tick sends the next one whatever the last
 * one's answer does: a storage that stops answering without closing its connection (a paused or overloaded Redis) would
 * otherwise hold every later renewal up, and the lease would lapse unreported. What was sent is not taken back, so
 * while two are unanswered no third is sent: a connection that queues its commands replays at most two.
 *
 * A failure (a renewal that rejects, or is not answered in time) goes to `onError` once per streak: the next failure
 * is told after a renewal has passed. The renewal that ends a streak told (one answered, even one answered after its
 * bound: the storage applied it) goes to `onRecovered`. Stopping leaves no timer behind, waits for nothing, and tells nothing of a
 * renewal answered later. The timers never keep the process alive.
 */
export function renewEvery(
  everyMs: number,
  leaseMs: number,
  renew: () => Promise<unknown>,
  onError: (error: unknown) => void,
  onRecovered?: () => void,
): () => void {
  const answerMs = answerBoundMs(leaseMs);
  let stopped = false;
  const streak = failureStreak(onError, onRecovered);
  /** Renewals sent that have not settled (answered, failed, or never). */
  let unanswered = 0;
  /** The bounds of the renewals within theirs. */
  const bounds = new Set<ReturnType<typeof setTimeout>>();

  const fail = (error: unknown) => {
    if (!stopped) streak.failed(error);
  };

  const tick = () => {
    if (unanswered >= 2) return;
    unanswered += 1;
    let sent: Promise<unknown>;
    try {
      sent = renew();
    } catch (error) {
      sent = Promise.reject(error);
    }
    if (stopped) {
      // The renewal stopped the renewing (nothing left to hold): nothing to bound, nothing to tell.
      sent.catch(() => undefined);
      return;
    }
    // Set after the renewal started: a bound of its own at the same time (the caller's) is told first.
    const bound = setTimeout(() => {
      bounds.delete(bound);
      fail(new Error(`the renewal was not answered within ${answerMs} ms`));
    }, answerMs);
    bound.unref?.();
    bounds.add(bound);
    const settled = (ok: boolean, error?: unknown) => {
      unanswered -= 1;
      clearTimeout(bound);
      bounds.delete(bound);
      if (!ok) fail(error);
      else if (!stopped) streak.answered();
    };
    sent.then(
      () => settled(true),
      (error: unknown) => settled(false, error),
    );
  };

  const timer = setInterval(tick, everyMs);
  timer.unref?.();
  return () => {
    stopped = true;
    clearInterval(timer);
    for (const bound of bounds) clearTimeout(bound);
    bounds.clear();
  };
}
