import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { type LoggerLike } from 'pictor';
import { withTimeout, definedOf } from 'pictor/internal';
import { waitWithin } from '../time-left.js';

export interface GatewayLeaseOptions {
  redis: Redis;
  /** The Redis key of the lease. Default `<prefix>:discord:gateway-lease:<application id>` (`gatewayLeaseKey`). */
  key?: string | undefined;
  /** The account's key prefix (`PICTOR_REDIS_PREFIX`), when `key` is not given. Default `pictor`. */
  prefix?: string | undefined;
  /** How long the lease lasts unless renewed. Default 15 s. */
  ttlMs?: number | undefined;
  /** How often the holder renews it. Default 5 s. */
  renewEveryMs?: number | undefined;
  /** How often a waiting process tries to take it. Default 2 s. */
  pollEveryMs?: number | undefined;
  logger: LoggerLike;
}

/** How long giving the lease back waits for Redis at most. */
const RELEASE_WAIT_MS = 2_000;

export const GATEWAY_LEASE_DEFAULTS = { ttlMs: 15_000, renewEveryMs: 5_000, pollEveryMs: 2_000 } as const;

/**
 * One lease per bot: the key names the application the token belongs to (a bot token starts with its user id, which
 * is the application id, in base64), so two bots on one Redis do not wait for each other. Never the token itself.
 */
export function gatewayLeaseKey(token: string, prefix = 'pictor'): string {
  const id = Buffer.from(token.split('.')[0] ?? '', 'base64').toString('utf8');
  return `${prefix}:discord:gateway-lease:${/^\d{17,20}$/.test(id) ? id : createHash('sha256').update(token).digest('hex').slice(0, 16)}`;
}

/** Extends the lease only while this holder has it. */
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
/** Drops the lease only while this holder has it. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/**
 * Which process holds the Discord gateway when several share one Redis: a key
 * set only if absent (`SET NX PX`), renewed by its holder, gone when the holder
 * stops renewing. A holder that cannot confirm its lease gives it up (`onLost`)
 * one renew interval before the lease can expire, so two processes are never
 * connected at once; a waiting process takes over within `ttlMs + pollEveryMs`
 * of the holder's death (at once, at the next poll, when it stops cleanly).
 */
export class GatewayLease {
  readonly holder = randomUUID();
  readonly #o: Required<Omit<GatewayLeaseOptions, 'logger' | 'redis' | 'key' | 'prefix'>> & Pick<GatewayLeaseOptions, 'logger' | 'redis'> & { key: string };
  #renewTimer: NodeJS.Timeout | undefined;
  /** Gives the lease up when no renewal has been confirmed in time (see `keep`). */
  #deadlineTimer: NodeJS.Timeout | undefined;
  /** When the `SET NX` that took the lease was sent: the lease runs from then at the latest. */
  #acquiredAt: number | undefined;
  #stopped = false;
  #wake: (() => void) | undefined;

  constructor(options: GatewayLeaseOptions & { key: string }) {
    const { prefix: _prefix, ...rest } = definedOf(options);
    const o = { ...GATEWAY_LEASE_DEFAULTS, ...rest, key: options.key, redis: options.redis, logger: options.logger };
    if (!(o.renewEveryMs * 2 < o.ttlMs)) throw new Error('the gateway lease must be renewed at least twice per lifetime (renewEveryMs * 2 < ttlMs)');
    this.#o = o;
  }

  /** The longest a waiting process needs to take over from a holder that died. */
  get takeoverWithinMs(): number {
    return this.#o.ttlMs + this.#o.pollEveryMs;
  }

  /** How often a waiting process tries to take the lease. */
  get pollEveryMs(): number {
    return this.#o.pollEveryMs;
  }

  /** Where a waiting process says it waits (its id, expiring soon after its last poll). */
  get #standbyKey(): string {
    return `${this.#o.key}:standby`;
  }

  /** Whether another process polled for the lease lately, so a holder that lets go has a successor. False when Redis does not answer. */
  async standbyWaiting(): Promise<boolean> {
    const { redis, renewEveryMs } = this.#o;
    try {
      const value = await withTimeout(redis.get(this.#standbyKey), renewEveryMs, 'Redis did not answer');
      return value !== null && value !== this.holder;
    } catch {
      return false;
    }
  }

  /** One try: true when this process now holds the lease. */
  async tryAcquire(): Promise<boolean> {
    const { redis, key, ttlMs } = this.#o;
    const sentAt = Date.now();
    const set = await withTimeout(redis.set(key, this.holder, 'PX', ttlMs, 'NX'), this.#o.renewEveryMs, 'Redis did not answer');
    if (set === 'OK') this.#acquiredAt = sentAt;
    return set === 'OK';
  }

  /** Waits until this process holds the lease; false when `stop()` ended the wait. Redis errors are logged and retried. */
  async acquire(): Promise<boolean> {
    for (;;) {
      if (this.#stopped) return false;
      try {
        if (await this.tryAcquire()) {
          await this.#o.redis.eval(RELEASE, 1, this.#standbyKey, this.holder).catch(() => {});
          return true;
        }
        // Stopped while that try was under way: its standby mark was taken back, and is not set again.
        if (this.#stopped) return false;
        await this.#o.redis.set(this.#standbyKey, this.holder, 'PX', this.#o.pollEveryMs * 2 + 1000);
      } catch (error) {
        this.#o.logger.warn({ err: messageOf(error) }, 'could not ask Redis for the Discord gateway lease; trying again');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#o.pollEveryMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }

  /**
   * Renews the lease every `renewEveryMs` until `release()`. `onLost` is called once, and renewing stops, when Redis
   * says another process holds it, or when no renewal has been confirmed for `ttlMs - renewEveryMs`: one renew interval
   * before the lease can expire, so the holder is off the gateway before another process can take the lease.
   *
   * The lease runs `ttlMs` from when Redis got the last renewal it confirmed, which is no earlier than when that renewal
   * was *sent*: the holder counts from the sending, never from the answer (an answer that took almost `renewEveryMs`
   * would otherwise add that much to what the holder believes it has). That count is kept by a timer of its own, not
   * checked only when the next renewal goes out: renewals go out every `renewEveryMs` from the last one sent, whatever
   * their answers do, and a renewal whose answer is late or never comes does not delay the moment the holder gives up.
   */
  keep(onLost: (why: string) => void): void {
    const { redis, key, ttlMs, renewEveryMs } = this.#o;
    let confirmedAt = this.#acquiredAt ?? Date.now();
    this.#acquiredAt = undefined;
    const lost = (why: string) => {
      if (this.#renewTimer === undefined) return;
      this.#clearRenew();
      onLost(why);
    };
    const armDeadline = () => {
      clearTimeout(this.#deadlineTimer);
      this.#deadlineTimer = setTimeout(() => lost('Redis has not confirmed the lease in time'), Math.max(0, confirmedAt + ttlMs - renewEveryMs - Date.now()));
    };
    const renew = async () => {
      const sentAt = Date.now();
      this.#renewTimer = setTimeout(() => void renew(), renewEveryMs);
      try {
        const renewed = await withTimeout(redis.eval(RENEW, 1, key, this.holder, String(ttlMs)), renewEveryMs, 'Redis did not answer');
        if (this.#renewTimer === undefined) return;
        if (Number(renewed) !== 1) return lost('another process holds the lease');
        if (sentAt > confirmedAt) {
          confirmedAt = sentAt;
          armDeadline();
        }
      } catch (error) {
        if (this.#renewTimer !== undefined) this.#o.logger.warn({ err: messageOf(error) }, 'could not renew the Discord gateway lease');
      }
    };
    this.#renewTimer = setTimeout(() => void renew(), renewEveryMs);
    armDeadline();
  }

  /**
   * Stops renewing and gives the lease up (if still ours) so another process can take it at once. Waits for Redis 2 s at
   * most, and never past `until` (a time as `Date.now()`): a lease not given back expires on its own.
   */
  async release({ until }: { until?: number | undefined } = {}): Promise<void> {
    this.#clearRenew();
    try {
      await withTimeout(this.#o.redis.eval(RELEASE, 1, this.#o.key, this.holder), waitWithin(RELEASE_WAIT_MS, until), 'Redis did not answer');
    } catch (error) {
      this.#o.logger.warn({ err: messageOf(error) }, 'could not give up the Discord gateway lease; it expires on its own');
    }
  }

  /**
   * Ends a wait in `acquire()` and stops renewing; a process that stood by says it no longer does, so a holder that
   * drains now does not leave the gateway to nobody. Resolves once Redis took the standby mark back, or did not answer
   * within a renew interval, or by `until` (a time as `Date.now()`).
   */
  async stop({ until }: { until?: number | undefined } = {}): Promise<void> {
    this.#stopped = true;
    this.#clearRenew();
    this.#wake?.();
    await withTimeout(this.#o.redis.eval(RELEASE, 1, this.#standbyKey, this.holder), waitWithin(this.#o.renewEveryMs, until), 'Redis did not answer').catch(() => {});
  }

  #clearRenew(): void {
    if (this.#renewTimer !== undefined) clearTimeout(this.#renewTimer);
    clearTimeout(this.#deadlineTimer);
    this.#renewTimer = undefined;
    this.#deadlineTimer = undefined;
  }
}


function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
