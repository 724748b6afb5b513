import type { Redis } from 'ioredis';
import { type LoggerLike } from 'pictor';
import { withTimeout, type BucketShape, RedisImageBucket } from 'pictor/internal';

export interface SharedWriteBucketsOptions {
  /** A connection from `connectRedis`; closed by its opener. */
  redis: Redis;
  /** `PICTOR_REDIS_PREFIX`: buckets are `<prefix>:slack:<name>:tat`. */
  prefix: string;
  logger: LoggerLike;
  /** Longest wait for Redis's answer before the write is decided in this process. Default 500 ms. */
  answerMs?: number | undefined;
}

const DEFAULT_ANSWER_MS = 500;

/**
 * The buckets the Slack bot's replicas share through Redis: each workspace's
 * `chat.update` budget and each channel's pace, kept by the rule of the image
 * bucket (`RedisImageBucket`, GCRA on Redis's clock) with weight 1. A bucket's
 * key expires once the bucket is full again, so an idle workspace or channel
 * leaves nothing behind.
 *
 * Never blocks a write on Redis: while the connection is down, or when Redis
 * does not answer within `answerMs`, `take` answers undefined and the caller
 * decides in this process alone (its own budget); that is logged once, and
 * once again when Redis answers again.
 */
export class SharedWriteBuckets {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #logger: LoggerLike;
  readonly #answerMs: number;
  #down = false;

  constructor(options: SharedWriteBucketsOptions) {
    this.#redis = options.redis;
    this.#prefix = `${options.prefix}:slack`;
    this.#logger = options.logger;
    this.#answerMs = options.answerMs ?? DEFAULT_ANSWER_MS;
  }

  /**
   * Takes one unit of bucket `name` if it may go now with `headroom` more left after it: 0. Otherwise how many ms to
   * wait, taking nothing. Undefined when Redis cannot answer now: decide locally.
   */
  async take(name: string, shape: BucketShape, headroom = 0): Promise<number | undefined> {
    return this.#ask(() => this.#bucket(name, shape).take(1, headroom));
  }

  /** Gives back a unit taken for a write that then wrote nothing. */
  async giveBack(name: string, shape: BucketShape): Promise<void> {
    await this.#ask(() => this.#bucket(name, shape).giveBack(1).then(() => 0));
  }

  #bucket(name: string, shape: BucketShape): RedisImageBucket {
    return new RedisImageBucket(this.#redis, this.#prefix, shape, name);
  }

  async #ask(call: () => Promise<number>): Promise<number | undefined> {
    // Not connected: a command would wait in ioredis's queue for the connection; nothing is sent.
    if (this.#redis.status !== 'ready') {
      this.#trouble(`Redis connection ${this.#redis.status}`);
      return undefined;
    }
    const pending = call();
    try {
      const answer = await withTimeout(pending, this.#answerMs, `Redis did not answer within ${this.#answerMs} ms`);
      if (this.#down) {
        this.#down = false;
        this.#logger.info({}, 'the Slack write budgets shared through Redis answer again: the replicas pace their writes together');
      }
      return answer;
    } catch (error) {
      this.#trouble(error instanceof Error ? error.message : String(error));
      return undefined;
    }
  }

  #trouble(reason: string): void {
    if (this.#down) return;
    this.#down = true;
    this.#logger.warn({ reason }, 'the Slack write budgets shared through Redis cannot be reached: each replica paces its writes with its own budget until they can');
  }
}
