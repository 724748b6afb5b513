import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { renewEveryThird, withTimeout } from 'pictor/internal';

export interface SocketReplicasOptions {
  redis: Redis;
  /** `<PICTOR_REDIS_PREFIX>:slack:socket-replicas:<team>:<bot user>`: one set per bot, so other apps sharing the prefix do not count. */
  key: string;
  /** How long an entry lives unless renewed. Default 15 s; renewed every third of it. */
  ttlMs?: number | undefined;
}

const DEFAULT_TTL_MS = 15_000;
const REDIS_ANSWER_MS = 2_000;

/**
 * Which processes hold a Socket Mode connection of one Slack bot, through Redis:
 * a sorted set of process ids, each scored with the time its entry expires.
 * A replica that starts draining closes its connection only when another one
 * is connected (Slack then hands new events to that one); a lone process keeps
 * its connection and tells new requests it is restarting. Entries of a process
 * that died fall out after the TTL. Bounded: one small member per live process.
 */
export class SocketReplicas {
  readonly id = randomUUID();
  readonly #redis: Redis;
  readonly #key: string;
  readonly #ttlMs: number;
  #stopRenewing: (() => void) | undefined;

  constructor(options: SocketReplicasOptions) {
    this.#redis = options.redis;
    this.#key = options.key;
    this.#ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  }

  /** Counts this process as connected from now on (renewed until `leave`). */
  async join(): Promise<void> {
    await this.#renew();
    this.#stopRenewing = renewEveryThird(this.#ttlMs, () => this.#renew(), () => undefined);
  }

  /** Whether a process other than this one holds a live connection now; false when Redis does not answer in time. */
  async othersConnected(): Promise<boolean> {
    try {
      const now = Date.now();
      const live = await withTimeout(this.#redis.zrangebyscore(this.#key, now, '+inf'), REDIS_ANSWER_MS, 'Redis did not answer');
      return live.some((member) => member !== this.id);
    } catch {
      return false;
    }
  }

  /** No longer counted (its connection is closed, or the process stops). */
  async leave(): Promise<void> {
    this.#stopRenewing?.();
    this.#stopRenewing = undefined;
    await withTimeout(this.#redis.zrem(this.#key, this.id), REDIS_ANSWER_MS, 'Redis did not answer').catch(() => undefined);
  }

  async #renew(): Promise<void> {
    const now = Date.now();
    await this.#redis
      .multi()
      .zremrangebyscore(this.#key, '-inf', now)
      .zadd(this.#key, now + this.#ttlMs, this.id)
      .pexpire(this.#key, this.#ttlMs * 2)
      .exec();
  }
}
