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
 * at that pace. A renewal's bound (2 s, or a third of a shorter lease) is never longer than the pace, and one that ends
 * with the next tick is told before that tick sends: at most one renewal is within its bound at a time.
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
 *
 * A bound that ends with a tick (a bound of one pace, or of several) is told by that tick before it sends, not left to
 * race it: a renewal's failure is always told before the next renewal's answer can end the streak.
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
  /** The bounds of the renewals within theirs, each with the tick that sent its renewal. */
  const bounds = new Map<ReturnType<typeof setTimeout>, number>();
  /** Ticks so far: a renewal sent at tick `k` has been out `(ticks - k) * everyMs` at least (an interval runs late, never early). */
  let ticks = 0;

  const fail = (error: unknown) => {
    if (!stopped) streak.failed(error);
  };

  /** A renewal's bound has ended: it counts as failed (told once per streak); its answer may still come, and counts. */
  const outOfTime = (bound: ReturnType<typeof setTimeout>) => {
    clearTimeout(bound);
    bounds.delete(bound);
    fail(new Error(`the renewal was not answered within ${answerMs} ms`));
  };

  const tick = () => {
    ticks += 1;
    // A bound that ends with this tick is told before it sends: its timer is not left to race the tick's (timers due at
    // the same moment run in an order no one promises), so the next renewal's answer always comes after the failure.
    for (const [bound, sentAt] of bounds) if ((ticks - sentAt) * everyMs >= answerMs) outOfTime(bound);
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
    const bound = setTimeout(() => outOfTime(bound), answerMs);
    bound.unref?.();
    bounds.set(bound, ticks);
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
    for (const bound of bounds.keys()) clearTimeout(bound);
    bounds.clear();
  };
}
