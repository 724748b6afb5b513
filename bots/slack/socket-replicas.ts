import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { LoggerLike } from 'pictor';
import { answerBoundMs, renewEveryThird, withTimeout } from 'pictor/internal';

export interface SocketReplicasOptions {
  redis: Redis;
  /** `<PICTOR_REDIS_PREFIX>:slack:socket-replicas:<team>:<bot user>`: one set per bot, so other apps sharing the prefix do not count. */
  key: string;
  /** How long an entry lives unless renewed. Default 15 s; renewed every third of it. */
  ttlMs?: number | undefined;
  /** Told when renewals start failing (once per streak: they run every third of the TTL) and when one passes again. */
  logger?: LoggerLike | undefined;
}

const DEFAULT_TTL_MS = 15_000;

/** Redis's clock in ms, read inside a script: every time in the set is Redis's, never a process's. */
const NOW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

/**
 * Drops the lapsed entries and scores this one a TTL past the moment Redis applies the renewal (not when the process
 * sent it: a slow answer must not shorten it). KEYS[1] the set; ARGV: the process's id, TTL ms. It writes after
 * TIME, so it replicates its commands, not itself (Redis before 5 refuses a write after TIME otherwise).
 */
const RENEW = `
redis.replicate_commands()${NOW}
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now))
redis.call('ZADD', KEYS[1], string.format('%d', now + ttl), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return 1`;

/** The processes whose entry has not lapsed by Redis's clock. KEYS[1] the set. */
const LIVE = `${NOW}
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. string.format('%d', now), '+inf')`;

type ReplicasClient = Redis & {
  pictorSocketRenew(key: string, id: string, ttlMs: number): Promise<number>;
  pictorSocketLive(key: string): Promise<string[]>;
};

/**
 * Which processes hold a Socket Mode connection of one Slack bot, through Redis:
 * a sorted set of process ids, each scored with the time its entry expires, by Redis's clock (a slow answer or
 * a process's clock set differently does not move it).
 * A replica that starts draining closes its connection only when another one
 * is connected (Slack then hands new events to that one); a lone process keeps
 * its connection and tells new requests it is restarting. Entries of a process
 * that died fall out after the TTL. Bounded: one small member per live process.
 */
export class SocketReplicas {
  readonly id = randomUUID();
  readonly #redis: ReplicasClient;
  readonly #key: string;
  readonly #ttlMs: number;
  readonly #logger: LoggerLike | undefined;
  /** How long a command waits for Redis: the renewals' bound (2 s, a third of a shorter TTL). */
  readonly #answerMs: number;
  #stopRenewing: (() => void) | undefined;

  constructor(options: SocketReplicasOptions) {
    this.#redis = options.redis as ReplicasClient;
    if (!this.#redis.pictorSocketRenew) this.#redis.defineCommand('pictorSocketRenew', { numberOfKeys: 1, lua: RENEW });
    if (!this.#redis.pictorSocketLive) this.#redis.defineCommand('pictorSocketLive', { numberOfKeys: 1, lua: LIVE });
    this.#key = options.key;
    this.#ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.#answerMs = answerBoundMs(this.#ttlMs);
    this.#logger = options.logger;
  }

  /**
   * Counts this process as connected from now on (renewed until `leave`); fails when Redis does not answer within
   * 2 s (a third of the TTL when that is shorter). A failed join queues the removal of its entry, which Redis runs
   * after the renewal should that one still arrive late.
   */
  async join(): Promise<void> {
    try {
      await withTimeout(this.#renew(), this.#answerMs, 'Redis did not answer the renewal in time');
    } catch (error) {
      this.#redis.zrem(this.#key, this.id).catch(() => undefined);
      throw error;
    }
    // Bounded there (each renewal's bound ends by the next tick, at most two unanswered), and warned once per streak of failures.
    this.#stopRenewing = renewEveryThird(
      this.#ttlMs,
      () => this.#renew(),
      (error) => this.#logger?.warn({ err: error }, 'could not renew this process’s entry among the Slack bot’s Socket Mode connections: once it lapses, a draining replica does not hand its events over to this one (warned once until a renewal passes)'),
      () => this.#logger?.info({}, 'renewed this process’s entry among the Slack bot’s Socket Mode connections again'),
    );
  }

  /** Whether a process other than this one holds a live connection now; false when Redis does not answer in time. */
  async othersConnected(): Promise<boolean> {
    try {
      const live = await withTimeout(this.#redis.pictorSocketLive(this.#key), this.#answerMs, 'Redis did not answer');
      return live.some((member) => member !== this.id);
    } catch {
      return false;
    }
  }

  /** No longer counted (its connection is closed, or the process stops). */
  async leave(): Promise<void> {
    this.#stopRenewing?.();
    this.#stopRenewing = undefined;
    await withTimeout(this.#redis.zrem(this.#key, this.id), this.#answerMs, 'Redis did not answer').catch(() => undefined);
  }

  /** One renewal of this process's entry. */
  #renew(): Promise<number> {
    return this.#redis.pictorSocketRenew(this.#key, this.id, this.#ttlMs);
  }
}
