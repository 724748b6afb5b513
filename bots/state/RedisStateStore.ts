import type { Redis } from 'ioredis';
import { type LoggerLike } from 'pictor';
import { deleteIfHeld, renewEveryThird, renewLeaseKey, safeJson, waitWithin, withTimeout, type RedisLink } from 'pictor/internal';
import { BaseSpace, checkSpace, decodeValue, MAX_NOTICE_BYTES, newOwnerId, STATE_KEY_PATTERN } from './StateStore.js';
import type { Change, Found, Notice, Space, SpaceDefinition, StateEntry, StateStore } from './StateStore.js';

/** Default lease: a dead replica's jobs are taken over within this (plus one sweep interval). */
const DEFAULT_LEASE_MS = 15_000;
const CLOSE_WAIT_MS = 2_000;
/** How often `update` tries again when other processes keep writing the record meanwhile. */
const UPDATE_ATTEMPTS = 50;

export interface RedisStateStoreOptions {
  /** The process's link to Redis (closed by its opener, after `close()`); keys are `<prefix>:bots:…`. */
  link: RedisLink;
  /** How long the lease lasts without renewal; renewed every third of it. Default 15 s. */
  leaseMs?: number | undefined;
  logger?: LoggerLike | undefined;
}

/** Drops a key from its space's bounds: the index (KEYS[3]) and the sizes with their total (KEYS[4]). */
const FORGET = `local function forget(k)
  local size = tonumber(redis.call('HGET', KEYS[4], k) or '0')
  if size > 0 then
    redis.call('HDEL', KEYS[4], k)
    redis.call('HINCRBY', KEYS[4], '*', 0 - size)
  end
  redis.call('ZREM', KEYS[3], k)
end`;

/**
 * Writes or deletes (empty value) one record, keeping its holder and its space's bounds, in one step.
 * KEYS: record, holders hash, index (zset: key → last write, µs), sizes (hash: key → bytes, `*` → total), the writer's
 * lease. ARGV: key, value, TTL ms (''), hold ('1', '0', ''), owner, expected ('' any, 'n' none, 'v:<value>'), max count
 * (''), max bytes (''), the prefix of record keys, the lease's ms ('' when closing). A held write puts back its writer's
 * lease when Redis lost it (flushed, restarted empty): a writer is alive, and no sweep may take its job meanwhile.
 * Returns 0 when the record was not as expected.
 */
const PUT = `
redis.replicate_commands()
local key, value, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
if ARGV[6] ~= '' then
  local current = redis.call('GET', KEYS[1])
  if ARGV[6] == 'n' then
    if current then return 0 end
  elseif current ~= string.sub(ARGV[6], 3) then return 0 end
end
if value == '' then
  redis.call('DEL', KEYS[1])
  redis.call('HDEL', KEYS[2], key)
else
  if ttl then redis.call('SET', KEYS[1], value, 'PX', ttl) else redis.call('SET', KEYS[1], value) end
  if ARGV[4] == '1' then
    redis.call('HSET', KEYS[2], key, ARGV[5])
    if ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
    if ARGV[10] ~= '' then redis.call('SET', KEYS[5], '1', 'PX', ARGV[10], 'NX') end
  elseif ARGV[4] == '0' then redis.call('HDEL', KEYS[2], key) end
end
local maxCount, maxBytes = tonumber(ARGV[7]), tonumber(ARGV[8])
if not (maxCount or maxBytes) then return 1 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
${FORGET}
forget(key)
if value ~= '' then
  redis.call('ZADD', KEYS[3], string.format('%d', now), key)
  redis.call('HSET', KEYS[4], key, #value)
  redis.call('HINCRBY', KEYS[4], '*', #value)
end
if ttl then
  for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. string.format('%d', now - ttl * 1000))) do forget(k) end
end
while (maxCount and redis.call('ZCARD', KEYS[3]) > maxCount) or (maxBytes and tonumber(redis.call('HGET', KEYS[4], '*') or '0') > maxBytes) do
  local oldest = redis.call('ZRANGE', KEYS[3], 0, 0)[1]
  if not oldest or oldest == key then break end
  forget(oldest)
  redis.call('DEL', ARGV[9] .. oldest)
  redis.call('HDEL', KEYS[2], oldest)
end
if ttl then
  redis.call('PEXPIRE', KEYS[3], ttl)
  redis.call('PEXPIRE', KEYS[4], ttl)
end
return 1`;

/**
 * Drops a record found gone from its space's bounds, if it is still gone (KEYS as `PUT`'s, ARGV[1] its key). Run only
 * after a plain read missed, so reads stay reads (a Redis at its `maxmemory` refuses a script that writes).
 */
const GONE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
${FORGET}
forget(ARGV[1])
return 1`;

/** Takes a held record if its holder is still the one whose lease was seen lapsed. KEYS[1] holders; ARGV: key, lapsed holder, new holder. */
const CLAIM = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  return 1
end
return 0`;

type StateClient = Redis & {
  pictorStatePut(...args: (string | number | Buffer)[]): Promise<number>;
  pictorStateClaim(...args: string[]): Promise<number>;
  pictorStateGone(...args: string[]): Promise<number>;
};

/** The Redis backend for any number of processes (keys `<prefix>:bots:…`: docs/shared-limits.md); every write is one Lua step. */
export class RedisStateStore implements StateStore {
  readonly owner: string;
  readonly leaseMs: number;
  readonly #link: RedisLink;
  readonly #redis: StateClient;
  readonly #prefix: string;
  readonly #logger: LoggerLike | undefined;
  #stopRenewing: (() => void) | undefined;
  #closed = false;
  #listening: Promise<void> | undefined;
  readonly #noticeHandlers = new Map<string, (key: string, notice: Notice) => void>();

  private constructor(options: RedisStateStoreOptions) {
    this.#link = options.link;
    this.#redis = options.link.commands as StateClient;
    this.#prefix = `${options.link.config.prefix}:bots`;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.owner = newOwnerId();
    this.#logger = options.logger;
    if (!this.#redis.pictorStatePut) this.#redis.defineCommand('pictorStatePut', { numberOfKeys: 5, lua: PUT });
    if (!this.#redis.pictorStateClaim) this.#redis.defineCommand('pictorStateClaim', { numberOfKeys: 1, lua: CLAIM });
    if (!this.#redis.pictorStateGone) this.#redis.defineCommand('pictorStateGone', { numberOfKeys: 4, lua: GONE });
  }

  /** Takes the lease (Redis must answer now) and keeps renewing it. */
  static async open(options: RedisStateStoreOptions): Promise<RedisStateStore> {
    const store = new RedisStateStore(options);
    await store.#renew();
    store.#stopRenewing = renewEveryThird(
      store.leaseMs,
      () => store.#renew(),
      (error) => store.#logger?.warn({ err: error }, 'could not renew this process’s lease on its running jobs'),
    );
    return store;
  }

  async #renew(): Promise<void> {
    // Extended while it is there (a full Redis still does that), written only when gone.
    if (!this.#closed) await renewLeaseKey(this.#redis, { key: this.leaseKey(this.owner), holder: '1', ttlMs: this.leaseMs, writeWhenGone: true });
  }

  /** `close` began (`StateStore.closing`): a write no longer puts the lease back. */
  get closing(): boolean {
    return this.#closed;
  }

  leaseKey(owner: string): string {
    return `${this.#prefix}:lease:${owner}`;
  }

  noticeChannel(owner: string): string {
    return `${this.#prefix}:notices:${owner}`;
  }

  space<T>(definition: SpaceDefinition): Space<T> {
    checkSpace(definition);
    return new RedisSpace<T>(this.#redis, `${this.#prefix}:${definition.name}`, definition, this);
  }

  /** Subscribes once (again after a failure) to this process's channel, routing each notice to its space's handler. */
  listen(space: string, handler: (key: string, notice: Notice) => void): Promise<void> {
    this.#noticeHandlers.set(space, handler);
    if (this.#listening) return this.#listening;
    const listening = this.#link
      .subscribe(this.noticeChannel(this.owner), (text) => {
        if (text.length > MAX_NOTICE_BYTES) return;
        const { space: to, key, notice } = safeJson<{ space?: unknown; key?: unknown; notice?: unknown }>(text) ?? {};
        const route = typeof to === 'string' ? this.#noticeHandlers.get(to) : undefined;
        if (route && typeof key === 'string' && STATE_KEY_PATTERN.test(key) && typeof notice === 'object' && notice !== null) route(key, notice as Notice);
      })
      .catch((error: unknown) => {
        if (this.#listening === listening) this.#listening = undefined;
        throw error;
      });
    this.#listening = listening;
    return listening;
  }

  async removeLeftovers(): Promise<void> {} // Every write is one step: nothing is left half written.

  async close({ until }: { until?: number | undefined } = {}): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopRenewing?.();
    // Redis may be the one that went away: then the lease simply lapses.
    if (this.#listening) await withTimeout(this.#link.unsubscribe(this.noticeChannel(this.owner)), waitWithin(CLOSE_WAIT_MS, until), 'not unsubscribed').catch(() => undefined);
    await withTimeout(this.#redis.del(this.leaseKey(this.owner)), waitWithin(CLOSE_WAIT_MS, until), 'lease not given back').catch(() => undefined);
  }
}

class RedisSpace<T> extends BaseSpace<T> {
  constructor(
    readonly redis: StateClient,
    readonly base: string,
    definition: SpaceDefinition,
    readonly store: RedisStateStore,
  ) {
    super(definition, store.owner);
  }

  #record(key: string): string {
    return `${this.base}:r:${key}`;
  }

  get #held(): string {
    return `${this.base}:held`;
  }

  /** The keys `PUT` and `GONE` take for the record. */
  #keys(key: string): string[] {
    return [this.#record(key), this.#held, `${this.base}:index`, `${this.base}:sizes`];
  }

  /** `text`: the value as kept, '' to delete; `expected` as `PUT`'s ARGV. */
  protected async putRecord(key: string, text: string | Buffer, hold: boolean | undefined, expected = ''): Promise<boolean> {
    const { ttlMs, maxCount, maxBytes } = this.definition;
    const keys = this.#keys(key);
    const args = [key, text, ttlMs ?? '', hold === undefined ? '' : hold ? '1' : '0', this.store.owner, expected, maxCount ?? '', maxBytes ?? '', this.#record(''), this.store.closing ? '' : this.store.leaseMs];
    return (await this.redis.pictorStatePut(...keys, this.store.leaseKey(this.store.owner), ...args)) === 1;
  }

  #raw(key: string): Promise<string | Buffer | null> {
    return this.definition.binary ? this.redis.getBuffer(this.#record(key)) : this.redis.get(this.#record(key));
  }

  #decode(raw: string | Buffer | null | undefined): Found<T> {
    return raw === null || raw === undefined ? undefined : (decodeValue(this.definition, raw) as Found<T>);
  }

  protected async readRecord(key: string): Promise<Found<T>> {
    const raw = await this.#raw(key);
    if (raw === null) await this.#gone(key);
    return this.#decode(raw);
  }

  protected async hasRecord(key: string): Promise<boolean> {
    if ((await this.redis.exists(this.#record(key))) === 1) return true;
    await this.#gone(key);
    return false;
  }

  /** After a read missed: a failure only leaves that for the next miss. */
  async #gone(key: string): Promise<void> {
    await this.redis.pictorStateGone(...this.#keys(key), key).catch(() => undefined);
  }

  protected async changeRecord(key: string, step: (found: Found<T>) => Change): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const text = (await this.#raw(key)) as string | null;
      const change = step(this.#decode(text));
      // Written only if nobody else wrote the record since it was read; else read again and change that.
      if (!change || (await this.putRecord(key, change.kept ?? '', change.hold, text === null ? 'n' : `v:${text}`))) return;
      if (attempt >= UPDATE_ATTEMPTS) throw new Error(`the ${this.definition.name} record ${key} kept changing; not updated`);
      // Others are writing it: let them finish (a little longer each time, never all at once again).
      await new Promise((resolve) => setTimeout(resolve, Math.random() * attempt * 2));
    }
  }

  protected async deleteRecord(key: string): Promise<void> {
    await this.putRecord(key, '', false);
  }

  protected async *records(): AsyncIterable<[string, Found<T>]> {
    for await (const [key, raw] of this.#texts()) yield [key, this.#decode(raw)];
  }

  /** Each record's value as kept (a binary space's bytes), one SCAN batch at a time. */
  async *#texts(): AsyncIterable<[string, string | undefined]> {
    for await (const keys of this.#keyBatches()) {
      const records = keys.map((k) => this.#record(k));
      const values: (string | Buffer | null)[] = !keys.length ? [] : this.definition.binary ? await this.redis.mgetBuffer(...records) : await this.redis.mget(...records);
      for (const [i, key] of keys.entries()) yield [key, (values[i] ?? undefined) as string | undefined];
    }
  }

  protected async deleteTexts(doomed: (text: string) => boolean): Promise<number> {
    let deleted = 0;
    // Deleted only while it is still this text: one written anew meanwhile stays.
    for await (const [key, text] of this.#texts()) if (text !== undefined && doomed(text) && (await this.putRecord(key, '', false, `v:${text}`))) deleted++;
    return deleted;
  }

  async *keys(): AsyncIterable<string> {
    for await (const keys of this.#keyBatches()) yield* keys;
  }

  /** The keys of the records kept, one SCAN batch at a time. */
  async *#keyBatches(): AsyncIterable<string[]> {
    const prefix = this.#record('');
    for await (const found of this.redis.scanStream({ match: `${prefix}*`, count: 500 })) {
      yield (found as string[]).map((k) => k.slice(prefix.length)).filter((k) => STATE_KEY_PATTERN.test(k));
    }
  }

  protected holderOf(key: string): Promise<string | null> {
    return this.redis.hget(this.#held, key);
  }

  protected override async holderElsewhere(key: string): Promise<string | undefined> {
    const holder = await this.redis.hget(this.#held, key);
    if (holder === null || holder === this.store.owner) return undefined;
    return (await this.redis.exists(this.store.leaseKey(holder))) === 1 ? holder : undefined;
  }

  #once(key: string): string {
    return `${this.base}:once:${key}`;
  }

  /** SET NX of the token: a key an older version took holds '1', and counts as taken all the same until its TTL. */
  protected override async takeOnce(key: string, token: string): Promise<boolean> {
    const once = this.#once(key);
    const ttlMs = this.definition.ttlMs;
    return (await (ttlMs === undefined ? this.redis.set(once, token, 'NX') : this.redis.set(once, token, 'PX', ttlMs, 'NX'))) === 'OK';
  }

  protected override async giveBackOnce(key: string, token: string): Promise<void> {
    // Only while it still keeps this token: a claim lapsed and taken by another stays theirs.
    await deleteIfHeld(this.redis, this.#once(key), token);
  }

  override async notifyHolder(key: string, notice: Notice): Promise<boolean> {
    if (!STATE_KEY_PATTERN.test(key)) return false;
    const text = JSON.stringify({ space: this.definition.name, key, notice });
    if (text.length > MAX_NOTICE_BYTES) throw new Error(`a notice of ${text.length} characters is over the bound of ${MAX_NOTICE_BYTES}`);
    const holder = await this.holderElsewhere(key);
    return holder !== undefined && (await this.redis.publish(this.store.noticeChannel(holder), text)) > 0;
  }

  override onNotice(handler: (key: string, notice: Notice) => void): Promise<void> {
    return this.store.listen(this.definition.name, handler);
  }

  protected async takeOrphans(): Promise<StateEntry<T>[]> {
    const held = await this.redis.hgetall(this.#held);
    const holders = [...new Set(Object.values(held))].filter((holder) => holder !== this.store.owner);
    if (!holders.length) return [];
    const alive = await this.redis.mget(...holders.map((holder) => this.store.leaseKey(holder)));
    const lapsed = new Set(holders.filter((_, i) => alive[i] === null));
    const claimed: StateEntry<T>[] = [];
    for (const [key, holder] of Object.entries(held)) {
      if (!lapsed.has(holder) || (await this.redis.pictorStateClaim(this.#held, key, holder, this.store.owner)) !== 1) continue;
      const value = await this.get(key);
      // The record expired meanwhile: nothing left to show, nothing to hold.
      if (value === undefined) await this.redis.hdel(this.#held, key);
      else claimed.push({ key, value });
    }
    return claimed;
  }
}
