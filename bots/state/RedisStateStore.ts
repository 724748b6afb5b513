import type { Redis } from 'ioredis';
import { withTimeout, type LoggerLike } from '../../src/index.js';
import { checkSpace, encodeValue, MAX_NOTICE_BYTES, newOwnerId, STATE_KEY_PATTERN, type Notice, type PutOptions, type Space, type SpaceDefinition, type StateEntry, type StateStore } from './StateStore.js';

/** Default lease: a dead replica's jobs are taken over within this (plus one sweep interval). */
export const DEFAULT_LEASE_MS = 15_000;

const CLOSE_WAIT_MS = 2_000;

export interface RedisStateStoreOptions {
  /** A connection from `connectRedis`; closed by the caller, after `close()`. */
  redis: Redis;
  /** `PICTOR_REDIS_PREFIX`: keys are `<prefix>:bots:…`. */
  prefix: string;
  /** How long the lease lasts without renewal; renewed every third of it. Default 15 s. */
  leaseMs?: number | undefined;
  owner?: string | undefined;
  logger?: LoggerLike | undefined;
}

/**
 * Takes a held record if its holder is still the one whose lease was seen
 * lapsed: only one process's claim succeeds. KEYS[1] the space's holders hash;
 * ARGV: key, lapsed holder, new holder, the hash's TTL (ms).
 */
const CLAIM = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return 1
end
return 0`;

/**
 * The Redis backend, for any number of processes on one `REDIS_URL`:
 *
 * - `<prefix>:bots:<space>:r:<key>`: a record (JSON, at most the space's
 *   `maxValueBytes`), expiring `ttlMs` after its last write;
 * - `<prefix>:bots:<space>:held`: a hash key → holder of the records whose
 *   jobs are running (one field per unfinished job), expiring `ttlMs` after
 *   its last change;
 * - `<prefix>:bots:lease:<owner>`: this process's lease, renewed every
 *   third of `leaseMs` and given back by `close()`;
 * - `<prefix>:bots:<space>:once:<key>`: a key taken by `claimOnce`, expiring
 *   with the space's `ttlMs`;
 * - the pub/sub channel `<prefix>:bots:notices:<owner>`: notices about the
 *   records this process holds (JSON, at most `MAX_NOTICE_BYTES`), on a
 *   connection of its own opened by the first `onNotice`.
 *
 * A record whose holder's lease is gone is claimed by one process (a Lua
 * compare-and-set on the holders hash).
 */
export class RedisStateStore implements StateStore {
  readonly backend = 'redis';
  readonly owner: string;
  readonly leaseMs: number;
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #logger: LoggerLike | undefined;
  #renewTimer: NodeJS.Timeout | undefined;
  #closed = false;
  #subscriber: Redis | undefined;
  readonly #noticeHandlers = new Map<string, (key: string, notice: Notice) => void>();

  private constructor(options: RedisStateStoreOptions) {
    this.#redis = options.redis;
    this.#prefix = `${options.prefix}:bots`;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.owner = options.owner ?? newOwnerId();
    this.#logger = options.logger;
  }

  /** Takes the lease (Redis must answer now) and keeps renewing it. */
  static async open(options: RedisStateStoreOptions): Promise<RedisStateStore> {
    const store = new RedisStateStore(options);
    await store.#renew();
    let renewing = false;
    store.#renewTimer = setInterval(() => {
      // One renewal at a time: while Redis is away they would only pile up in the connection's queue.
      if (renewing) return;
      renewing = true;
      store
        .#renew()
        .catch((error: unknown) => store.#logger?.warn({ err: error }, 'could not renew this process’s lease on its running jobs'))
        .finally(() => (renewing = false));
    }, Math.max(50, Math.floor(store.leaseMs / 3)));
    store.#renewTimer.unref();
    return store;
  }

  async #renew(): Promise<void> {
    if (this.#closed) return;
    await this.#redis.set(this.#leaseKey(this.owner), '1', 'PX', this.leaseMs);
  }

  #leaseKey(owner: string): string {
    return `${this.#prefix}:lease:${owner}`;
  }

  #noticeChannel(owner: string): string {
    return `${this.#prefix}:notices:${owner}`;
  }

  space<T>(definition: SpaceDefinition): Space<T> {
    checkSpace(definition);
    return new RedisSpace<T>(this.#redis, `${this.#prefix}:${definition.name}`, definition, this.owner, {
      leaseKey: (owner) => this.#leaseKey(owner),
      noticeChannel: (owner) => this.#noticeChannel(owner),
      listen: (handler) => this.#listen(definition.name, handler),
    });
  }

  /** Subscribes (once, on a connection of its own) to this process's channel, and routes each notice to its space's handler. */
  async #listen(space: string, handler: (key: string, notice: Notice) => void): Promise<void> {
    this.#noticeHandlers.set(space, handler);
    if (this.#subscriber) return;
    const subscriber = this.#redis.duplicate();
    this.#subscriber = subscriber;
    // The state connection already says when Redis is lost and back; this one reconnects (and resubscribes) on its own.
    subscriber.on('error', () => undefined);
    subscriber.on('message', (_channel: string, text: string) => {
      if (text.length > MAX_NOTICE_BYTES) return;
      try {
        const { space: to, key, notice } = JSON.parse(text) as { space?: unknown; key?: unknown; notice?: unknown };
        const route = typeof to === 'string' ? this.#noticeHandlers.get(to) : undefined;
        if (!route || typeof key !== 'string' || !STATE_KEY_PATTERN.test(key) || typeof notice !== 'object' || notice === null) return;
        route(key, notice as Notice);
      } catch (error) {
        this.#logger?.warn({ err: error }, 'could not read a notice from another process');
      }
    });
    await subscriber.subscribe(this.#noticeChannel(this.owner));
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.#redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#renewTimer);
    this.#subscriber?.disconnect();
    // Redis may be the one that went away: then the lease simply lapses.
    await withTimeout(this.#redis.del(this.#leaseKey(this.owner)), CLOSE_WAIT_MS, 'lease not given back').catch(() => undefined);
  }
}

interface StoreLinks {
  leaseKey: (owner: string) => string;
  noticeChannel: (owner: string) => string;
  listen: (handler: (key: string, notice: Notice) => void) => Promise<void>;
}

class RedisSpace<T> implements Space<T> {
  readonly #redis: Redis;
  readonly #base: string;
  readonly #owner: string;
  readonly #links: StoreLinks;

  constructor(redis: Redis, base: string, readonly definition: SpaceDefinition, owner: string, links: StoreLinks) {
    this.#redis = redis;
    this.#base = base;
    this.#owner = owner;
    this.#links = links;
  }

  #leaseKey(owner: string): string {
    return this.#links.leaseKey(owner);
  }

  async open(): Promise<void> {
    // Nothing to prepare: keys expire on their own.
  }

  #recordKey(key: string): string {
    return `${this.#base}:r:${key}`;
  }

  get #heldKey(): string {
    return `${this.#base}:held`;
  }

  async get(key: string): Promise<T | undefined> {
    if (!STATE_KEY_PATTERN.test(key)) return undefined;
    const text = await this.#redis.get(this.#recordKey(key));
    if (text === null) return undefined;
    try {
      return JSON.parse(text) as T;
    } catch {
      return undefined;
    }
  }

  async put(key: string, value: T, options: PutOptions = {}): Promise<void> {
    if (!STATE_KEY_PATTERN.test(key)) throw new Error(`not a state key: ${key}`);
    const text = encodeValue(this.definition, value);
    const ttl = this.definition.ttlMs;
    const batch = this.#redis.multi().set(this.#recordKey(key), text, 'PX', ttl);
    if (options.hold === true) batch.hset(this.#heldKey, key, this.#owner).pexpire(this.#heldKey, ttl);
    if (options.hold === false) batch.hdel(this.#heldKey, key);
    await batch.exec();
  }

  async delete(key: string): Promise<void> {
    if (!STATE_KEY_PATTERN.test(key)) return;
    await this.#redis.multi().del(this.#recordKey(key)).hdel(this.#heldKey, key).exec();
  }

  async heldElsewhere(key: string): Promise<boolean> {
    if (!STATE_KEY_PATTERN.test(key)) return false;
    return (await this.#liveHolderElsewhere(key)) !== undefined;
  }

  /** The process holding `key` when it is another one whose lease is alive; undefined otherwise. */
  async #liveHolderElsewhere(key: string): Promise<string | undefined> {
    const holder = await this.#redis.hget(this.#heldKey, key);
    if (holder === null || holder === this.#owner) return undefined;
    return (await this.#redis.exists(this.#leaseKey(holder))) === 1 ? holder : undefined;
  }

  async claimOnce(key: string): Promise<boolean> {
    if (!STATE_KEY_PATTERN.test(key)) return false;
    return (await this.#redis.set(`${this.#base}:once:${key}`, '1', 'PX', this.definition.ttlMs, 'NX')) === 'OK';
  }

  async notifyHolder(key: string, notice: Notice): Promise<boolean> {
    if (!STATE_KEY_PATTERN.test(key)) return false;
    const text = JSON.stringify({ space: this.definition.name, key, notice });
    if (text.length > MAX_NOTICE_BYTES) throw new Error(`a notice of ${text.length} characters is over the bound of ${MAX_NOTICE_BYTES}`);
    const holder = await this.#liveHolderElsewhere(key);
    return holder !== undefined && (await this.#redis.publish(this.#links.noticeChannel(holder), text)) > 0;
  }

  onNotice(handler: (key: string, notice: Notice) => void): Promise<void> {
    return this.#links.listen(handler);
  }

  async claimOrphans(): Promise<StateEntry<T>[]> {
    const held = await this.#redis.hgetall(this.#heldKey);
    const holders = [...new Set(Object.values(held))].filter((holder) => holder !== this.#owner);
    if (!holders.length) return [];
    const alive = await this.#redis.mget(...holders.map((holder) => this.#leaseKey(holder)));
    const lapsed = new Set(holders.filter((_, i) => alive[i] === null));
    const claimed: StateEntry<T>[] = [];
    for (const [key, holder] of Object.entries(held)) {
      if (!lapsed.has(holder)) continue;
      const won = (await this.#redis.eval(CLAIM, 1, this.#heldKey, key, holder, this.#owner, String(this.definition.ttlMs))) === 1;
      if (!won) continue;
      const value = await this.get(key);
      // The record expired meanwhile: nothing left to show, nothing to hold.
      if (value === undefined) await this.#redis.hdel(this.#heldKey, key);
      else claimed.push({ key, value });
    }
    return claimed;
  }
}
