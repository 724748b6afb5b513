import type { Redis } from 'ioredis';
import { renewLeaseKey } from './redis-lease-renewal.js';
import { renewEvery } from './renewal.js';
import { withTimeout } from './with-timeout.js';

/** Drops the key only while this holder has it. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export interface RedisLeaseOptions {
  redis: Redis;
  key: string;
  /** What this process writes into the key: the lease is its own while the key holds it. */
  holder: string;
  /** How long the lease lasts unless renewed. */
  ttlMs: number;
  /** How often the holder renews it; at least twice per lifetime (`renewEveryMs * 2 < ttlMs`). */
  renewEveryMs: number;
  /**
   * Whether a renewal that finds the key gone takes it back (the gateway: after Redis lost its data, the holder keeps
   * its session). Not for a lease that guards steps another holder may have finished meanwhile (the 0.1 upgrade: a key
   * gone may be one a later holder released when done, and the steps of the first must not go on). Default false.
   */
  retakeForgotten?: boolean | undefined;
  /**
   * Told of a renewal that failed or was not answered within `answerBoundMs(ttlMs)` (the lease may still hold), once per
   * streak: the next failure is told after a renewal was confirmed (one answered after its bound too).
   */
  onRenewFailed?: ((error: unknown) => void) | undefined;
  /** Told of the confirmed renewal that ends a streak of failures told. */
  onRenewRecovered?: (() => void) | undefined;
}

/** Deletes `key` if it holds `holder`: what is another's is left as it is. Resolves to whether it was deleted. */
export async function deleteIfHeld(redis: Redis, key: string, holder: string): Promise<boolean> {
  return Number(await redis.eval(RELEASE, 1, key, holder)) === 1;
}

/**
 * A lease in Redis that one process at a time holds: a key set only if absent (`SET NX PX`), renewed by its holder,
 * gone when the holder stops renewing. The one rule that makes it a lease: a holder that cannot confirm it gives it up
 * (`onLost`) one renewal interval before it could lapse, so its holder has stopped before another can take it. A renewal
 * that finds the key gone (Redis restarted empty, or flushed) takes it back for its holder where the lease says so
 * (`retakeForgotten`); when another process took it first, or the lease is not one to take back, that renewal is told
 * so and the holder gives it up (`onLost`).
 */
export class RedisLease {
  readonly #o: RedisLeaseOptions;
  /** Stops the renewals of the `keep` under way (`renewEvery`). */
  #stopRenewing: (() => void) | undefined;
  /** Gives the lease up when no renewal has been confirmed in time (see `keep`). */
  #deadlineTimer: NodeJS.Timeout | undefined;
  /** When the `SET NX` that took the lease was sent: the lease runs from then at the latest. */
  #takenAt: number | undefined;
  /** Which `keep` renews the lease now: bumped by each `keep` and by `letGo`, so a late answer of an earlier one does nothing. */
  #generation = 0;

  constructor(options: RedisLeaseOptions) {
    if (!(options.renewEveryMs > 0 && options.renewEveryMs * 2 < options.ttlMs)) throw new Error(`the lease ${options.key} must be renewed at least twice per lifetime (renewEveryMs * 2 < ttlMs)`);
    this.#o = options;
  }

  get key(): string {
    return this.#o.key;
  }

  /** One try: true when this process now holds the lease (`SET NX PX`), counted from when the try was sent. */
  async take(): Promise<boolean> {
    const { redis, key, holder, ttlMs } = this.#o;
    const sentAt = Date.now();
    const taken = (await redis.set(key, holder, 'PX', ttlMs, 'NX')) === 'OK';
    if (taken) this.#takenAt = sentAt;
    return taken;
  }

  /**
   * Renews the lease every `renewEveryMs` until `letGo()`, `giveBack()` or the next `keep` (which ends this one). `onLost` is called once, and renewing stops,
   * when Redis says another process holds it, or when no renewal has been confirmed for `ttlMs - renewEveryMs`: one
   * renewal interval before the lease can expire, so the holder has stopped before another process can take it.
   *
   * The lease runs `ttlMs` from when Redis got the last renewal it confirmed, which is no earlier than when that renewal
   * was *sent*: the holder counts from the sending, never from the answer (an answer that took almost `renewEveryMs`
   * would otherwise add that much to what the holder believes it has). That count is kept by a timer of its own, not
   * checked only when the next renewal goes out: renewals go out every `renewEveryMs` whatever their answers do (but
   * no third while two are unanswered: `renewEvery`, the one renewal loop), and a renewal whose answer is late or never
   * comes does not delay the moment the holder gives up.
   */
  keep(onLost: (why: string) => void): void {
    // A keep under way ends here: its renewals stop, and its answers still to come do nothing.
    this.letGo();
    const { redis, key, holder, ttlMs, renewEveryMs } = this.#o;
    let confirmedAt = this.#takenAt ?? Date.now();
    this.#takenAt = undefined;
    // `letGo` moved the generation on: this keep's is the one now.
    const generation = this.#generation;
    /** This keep still renews the lease (not let go, lost, or followed by another keep). */
    const current = () => generation === this.#generation;
    const lost = (why: string) => {
      if (!current()) return;
      this.letGo();
      onLost(why);
    };
    const armDeadline = () => {
      if (!current()) return;
      clearTimeout(this.#deadlineTimer);
      this.#deadlineTimer = setTimeout(() => lost('Redis has not confirmed the lease in time'), Math.max(0, confirmedAt + ttlMs - renewEveryMs - Date.now()));
    };
    const renew = async () => {
      const sentAt = Date.now();
      // Extended while this holder has it (a full Redis still does that); with `retakeForgotten`, taken back (`SET NX PX`,
      // in the same script) when the key is gone: a Redis restarted empty (or flushed) has forgotten it, and nobody else
      // holds it then.
      const renewed = await renewLeaseKey(redis, { key, holder, ttlMs, writeWhenGone: this.#o.retakeForgotten });
      // An answer to a keep let go meanwhile does nothing.
      if (!current()) return;
      if (!renewed) return lost('another process holds the lease');
      if (sentAt > confirmedAt) {
        confirmedAt = sentAt;
        armDeadline();
      }
    };
    // The one renewal loop: unanswered within answerBoundMs(ttlMs), a renewal counts as failed (told once per streak);
    // answered later, Redis applied it, and it confirms the lease still.
    this.#stopRenewing = renewEvery(renewEveryMs, ttlMs, renew, (error) => this.#o.onRenewFailed?.(error), () => this.#o.onRenewRecovered?.());
    armDeadline();
  }

  /** Stops renewing (the lease lapses on its own); `onLost` is not called, nor is anything done on a renewal answered later. */
  letGo(): void {
    this.#generation += 1;
    this.#stopRenewing?.();
    clearTimeout(this.#deadlineTimer);
    this.#stopRenewing = undefined;
    this.#deadlineTimer = undefined;
  }

  /** Stops renewing and deletes the lease if it is still this holder's, waiting for Redis `waitMs` at most (rejecting then): a lease not given back lapses on its own. */
  async giveBack(waitMs: number): Promise<void> {
    this.letGo();
    await withTimeout(deleteIfHeld(this.#o.redis, this.#o.key, this.#o.holder), waitMs, 'Redis did not answer');
  }
}
