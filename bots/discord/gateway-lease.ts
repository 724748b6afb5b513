import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { type LoggerLike } from 'pictor';
import { withTimeout, definedOf, RedisLease, deleteIfHeld } from 'pictor/internal';
import type { StopBudget } from '../runner/stop-once.js';

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

/**
 * Which process holds the Discord gateway when several share one Redis: a key
 * set only if absent (`SET NX PX`), renewed by its holder, gone when the holder
 * stops renewing (`RedisLease`). A holder that cannot confirm its lease gives it up
 * (`onLost`) one renew interval before the lease can expire, so two processes are never
 * connected at once while Redis keeps the key; a waiting process takes over within `ttlMs + pollEveryMs`
 * of the holder's death (at once, at the next poll, when it stops cleanly). When Redis forgot the key
 * (restarted empty, flushed), the holder takes it back at its next renewal, or a standby that took it
 * first connects at once and the old holder leaves at that renewal: two sessions for up to `renewEveryMs`,
 * each interaction still run once (its id is claimed in the bots' state before it is answered).
 */
export class GatewayLease {
  readonly holder = randomUUID();
  readonly #o: Required<Omit<GatewayLeaseOptions, 'logger' | 'redis' | 'key' | 'prefix'>> & Pick<GatewayLeaseOptions, 'logger' | 'redis'> & { key: string };
  readonly #lease: RedisLease;
  #stopped = false;
  #wake: (() => void) | undefined;

  constructor(options: GatewayLeaseOptions & { key: string }) {
    const { prefix: _prefix, ...rest } = definedOf(options);
    const o = { ...GATEWAY_LEASE_DEFAULTS, ...rest, key: options.key, redis: options.redis, logger: options.logger };
    this.#o = o;
    this.#lease = new RedisLease({
      ...o,
      holder: this.holder,
      retakeForgotten: true,
      onRenewFailed: (error) => o.logger.warn({ err: messageOf(error) }, 'could not renew the Discord gateway lease'),
    });
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
    return withTimeout(this.#lease.take(), this.#o.renewEveryMs, 'Redis did not answer');
  }

  /**
   * Waits until this process holds the lease; false when `stop()` ended the wait. Redis errors are logged and retried.
   * True when a try under way as `stop()` came took the lease: the caller that stopped gives it back (`release`).
   */
  async acquire(): Promise<boolean> {
    for (;;) {
      if (this.#stopped) return false;
      try {
        if (await this.tryAcquire()) {
          await deleteIfHeld(this.#o.redis, this.#standbyKey, this.holder).catch(() => {});
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
   * Renews the lease every `renewEveryMs` until `release()` or `stop()`; `onLost` is called once, and renewing stops,
   * when Redis says another process holds it or has not confirmed it in time: one renew interval before it can expire,
   * so the holder is off the gateway before another process can take the lease (`RedisLease.keep`). After `stop()` it
   * does nothing, as `acquire()` takes nothing then: a stopped lease is renewed no more (a renewal would take back a
   * lease given back, finding its key gone).
   */
  keep(onLost: (why: string) => void): void {
    if (this.#stopped) return;
    this.#lease.keep(onLost);
  }

  /**
   * Stops renewing and gives the lease up (if still ours) so another process can take it at once. Waits for Redis 2 s at
   * most, and, stopping, never past the stop's deadline (`stop.within`, cut short by one brought forward meanwhile): a
   * lease not given back expires on its own.
   */
  async release(stop?: StopBudget): Promise<void> {
    try {
      const given = this.#lease.giveBack(RELEASE_WAIT_MS);
      if (stop && !(await stop.within(given, Number.POSITIVE_INFINITY))) throw new Error('the stop’s deadline came first');
      await given;
    } catch (error) {
      this.#o.logger.warn({ err: messageOf(error) }, 'could not give up the Discord gateway lease; it expires on its own');
    }
  }

  /**
   * Ends a wait in `acquire()` and stops renewing; a process that stood by says it no longer does, so a holder that
   * drains now does not leave the gateway to nobody. Resolves once Redis took the standby mark back, or did not answer
   * within a renew interval, or, stopping, by the stop's deadline (`stop.within`).
   */
  async stop(stop?: StopBudget): Promise<void> {
    this.#stopped = true;
    this.#lease.letGo();
    this.#wake?.();
    const markTaken = withTimeout(deleteIfHeld(this.#o.redis, this.#standbyKey, this.holder), this.#o.renewEveryMs, 'Redis did not answer').catch(() => {});
    await (stop ? stop.within(markTaken, Number.POSITIVE_INFINITY) : markTaken);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
