import type { Redis } from 'ioredis';
import { closeRedis, connectRedis, type RedisConfig, type RedisLogger } from '../../src/index.js';
import type { QuotaStore } from './types.js';
import { nextUtcMidnight, utcDay } from './utc-day.js';

export interface RedisQuotaStoreOptions {
  /** A connected client (see `connectRedis`); `RedisQuotaStore.connect` makes one. */
  redis: Redis;
  /** The account's key prefix (`PICTOR_REDIS_PREFIX`); keys are `<prefix>:quota:…`. Default `pictor`. */
  prefix?: string | undefined;
  /** A reservation stops counting this long after it was made, whatever happens. Default 30 min (as the file store). */
  reservationTtlMs?: number | undefined;
  /**
   * A reservation counts only while the process that made it renews it (every
   * third of this); a process that dies stops renewing, and its reservations
   * stop counting within this time. Default 60 s.
   */
  leaseMs?: number | undefined;
  /** UTC days of spending kept, today included. Default 7. */
  keepDays?: number | undefined;
  /** `close()` also closes `redis`. Default false (true from `connect`). */
  ownsConnection?: boolean | undefined;
  /** Redis errors while renewing reservations (tried again on the next renewal). */
  onError?: ((error: unknown) => void) | undefined;
  /** The clock renewals use; must be the one the runner's `now` comes from. Default `Date.now`. */
  clock?: (() => number) | undefined;
}

type ReserveInput = Parameters<QuotaStore['reserve']>[0];
type ReserveResult = Awaited<ReturnType<QuotaStore['reserve']>>;

const DEFAULT_PREFIX = 'pictor';
const DEFAULT_RESERVATION_TTL_MS = 30 * 60_000;
const DEFAULT_LEASE_MS = 60_000;
const DEFAULT_KEEP_DAYS = 7;
const DAY_MS = 24 * 60 * 60_000;
/** Amounts are kept as whole nano-dollars, so sums are exact and atomic (INCRBY). */
const NANOS_PER_USD = 1e9;

/*
 * Every script is one atomic step of the ledger, and safe to run twice (ioredis
 * sends a command again when the connection broke before its answer came).
 * A reservation `res:<job>` is a hash; `active:<key>` (one per user key and per
 * scope key) orders the reservations that still count by when they stop.
 */

/**
 * KEYS: res, active:user, active:scope, spent:day:user, spent:day:scope, last:user.
 * ARGV: now, job, userKey, scopeKey, nanos, day, leaseMs, ttlMs, keepMs, resKeepMs, resPrefix,
 *       userDailyNanos, scopeDailyNanos, userConcurrentJobs, cooldownMs ('' = no limit).
 * Returns {1} (reserved), or {0, code, a, b}.
 */
const RESERVE = `
local now = tonumber(ARGV[1])
local job, userKey, scopeKey = ARGV[2], ARGV[3], ARGV[4]
local nanos = tonumber(ARGV[5])
local day = ARGV[6]
local leaseMs, ttlMs, keepMs, resKeepMs = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local resPrefix = ARGV[11]
local userDaily, scopeDaily = tonumber(ARGV[12]), tonumber(ARGV[13])
local concurrent, cooldownMs = tonumber(ARGV[14]), tonumber(ARGV[15])

if redis.call('exists', KEYS[1]) == 1 then
  local r = redis.call('hmget', KEYS[1], 'userKey', 'scopeKey', 'nanos')
  if r[1] == userKey and r[2] == scopeKey and tonumber(r[3]) == nanos then return {1} end
  return redis.error_reply('DUPLICATE_JOB')
end
redis.call('zremrangebyscore', KEYS[2], '-inf', now)
redis.call('zremrangebyscore', KEYS[3], '-inf', now)

if concurrent then
  local count, first = 0, nil
  for _, id in ipairs(redis.call('zrange', KEYS[2], 0, -1)) do
    local r = redis.call('hmget', resPrefix .. id, 'userKey', 'at')
    if r[1] == userKey then
      count = count + 1
      local ends = tonumber(r[2]) + ttlMs
      if first == nil or ends < first then first = ends end
    end
  end
  if count >= concurrent then return {0, 'user_concurrency', count, first or now} end
end

if cooldownMs and cooldownMs > 0 then
  local last = tonumber(redis.call('get', KEYS[6]))
  if last and now < last + cooldownMs then return {0, 'user_cooldown', last, 0} end
end

local function usedToday(activeKey, spentKey, key)
  local used = tonumber(redis.call('get', spentKey) or '0')
  for _, id in ipairs(redis.call('zrange', activeKey, 0, -1)) do
    local r = redis.call('hmget', resPrefix .. id, 'userKey', 'scopeKey', 'nanos', 'day')
    if r[4] == day and (r[1] == key or r[2] == key) then used = used + tonumber(r[3]) end
  end
  return used
end
if userDaily then
  local used = usedToday(KEYS[2], KEYS[4], userKey)
  if used + nanos > userDaily then return {0, 'budget_user_daily', used, 0} end
end
if scopeDaily then
  local used = usedToday(KEYS[3], KEYS[5], scopeKey)
  if used + nanos > scopeDaily then return {0, 'budget_scope_daily', used, 0} end
end

local countsUntil = math.min(now + leaseMs, now + ttlMs)
redis.call('hset', KEYS[1], 'userKey', userKey, 'scopeKey', scopeKey, 'nanos', ARGV[5], 'day', day, 'at', ARGV[1])
redis.call('pexpire', KEYS[1], resKeepMs)
for i = 2, 3 do
  redis.call('zadd', KEYS[i], countsUntil, job)
  redis.call('pexpire', KEYS[i], ttlMs)
end
redis.call('set', KEYS[6], ARGV[1], 'PX', keepMs)
return {1}
`;

/**
 * ARGV: now, leaseMs, ttlMs, resPrefix, activePrefix, then job ids.
 * Keeps the given reservations counting; returns the ids that no longer can (settled, released or too old).
 */
const RENEW = `
local now, leaseMs, ttlMs = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local resPrefix, activePrefix = ARGV[4], ARGV[5]
local gone = {}
for i = 6, #ARGV do
  local job = ARGV[i]
  local r = redis.call('hmget', resPrefix .. job, 'userKey', 'scopeKey', 'at')
  local countsUntil = r[1] and math.min(now + leaseMs, tonumber(r[3]) + ttlMs) or now
  if countsUntil > now then
    for k = 1, 2 do
      redis.call('zadd', activePrefix .. r[k], countsUntil, job)
      redis.call('pexpire', activePrefix .. r[k], ttlMs)
    end
  else
    gone[#gone + 1] = job
  end
end
return gone
`;

/** KEYS: res. ARGV: job, actualNanos, activePrefix, spentPrefix, keepMs. Charges the day the job was reserved for. */
const SETTLE = `
local r = redis.call('hmget', KEYS[1], 'userKey', 'scopeKey', 'day')
if not r[1] then return 0 end
redis.call('del', KEYS[1])
redis.call('zrem', ARGV[3] .. r[1], ARGV[1])
redis.call('zrem', ARGV[3] .. r[2], ARGV[1])
local keys = {ARGV[4] .. r[3] .. ':' .. r[1]}
if r[2] ~= r[1] then keys[2] = ARGV[4] .. r[3] .. ':' .. r[2] end
for _, key in ipairs(keys) do
  redis.call('incrby', key, ARGV[2])
  redis.call('pexpire', key, ARGV[5])
end
return 1
`;

/** KEYS: res. ARGV: job, activePrefix. */
const RELEASE = `
local r = redis.call('hmget', KEYS[1], 'userKey', 'scopeKey')
if not r[1] then return 0 end
redis.call('del', KEYS[1])
redis.call('zrem', ARGV[2] .. r[1], ARGV[1])
redis.call('zrem', ARGV[2] .. r[2], ARGV[1])
return 1
`;

/** KEYS: active:key, spent:day:key. ARGV: now, day, key, resPrefix. Spent plus reserved today. */
const SPENT_TODAY = `
local now, day, key, resPrefix = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4]
local used = tonumber(redis.call('get', KEYS[2]) or '0')
for _, id in ipairs(redis.call('zrangebyscore', KEYS[1], '(' .. now, '+inf')) do
  local r = redis.call('hmget', resPrefix .. id, 'userKey', 'scopeKey', 'nanos', 'day')
  if r[4] == day and (r[1] == key or r[2] == key) then used = used + tonumber(r[3]) end
end
return used
`;

type Arg = string | number;
type LedgerClient = Redis & {
  pictorQuotaReserve(...args: Arg[]): Promise<[1] | [0, string, number, number]>;
  pictorQuotaRenew(...args: Arg[]): Promise<string[]>;
  pictorQuotaSettle(...args: Arg[]): Promise<number>;
  pictorQuotaRelease(...args: Arg[]): Promise<number>;
  pictorQuotaSpentToday(...args: Arg[]): Promise<number>;
};

const SCRIPTS = {
  pictorQuotaReserve: { numberOfKeys: 6, lua: RESERVE },
  pictorQuotaRenew: { numberOfKeys: 0, lua: RENEW },
  pictorQuotaSettle: { numberOfKeys: 1, lua: SETTLE },
  pictorQuotaRelease: { numberOfKeys: 1, lua: RELEASE },
  pictorQuotaSpentToday: { numberOfKeys: 2, lua: SPENT_TODAY },
} as const;

/**
 * The QuotaStore shared by every process that uses the same Redis and prefix:
 * each check-and-reserve is one Lua script, so two processes can never both
 * spend the last dollar of a budget. Same rules, order of checks and numbers
 * as the FileQuotaStore. Reservations count while the process that made them
 * renews them (and at most `reservationTtlMs`), so a process that dies does
 * not block anyone for longer than `leaseMs`; a settled job is charged to the
 * day it was reserved for, even if its reservation had stopped counting.
 */
export class RedisQuotaStore implements QuotaStore {
  readonly prefix: string;
  readonly #redis: LedgerClient;
  readonly #ttlMs: number;
  readonly #leaseMs: number;
  readonly #keepMs: number;
  readonly #ownsConnection: boolean;
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #clock: () => number;
  /** Reservations this process made and still renews. */
  readonly #held = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  /** Connects (failing fast with RedisUnavailableError) and returns a store that closes the connection on `close()`. */
  static async connect(
    config: RedisConfig,
    options: Omit<RedisQuotaStoreOptions, 'redis' | 'prefix' | 'ownsConnection'> & { connectTimeoutMs?: number | undefined; logger?: RedisLogger | undefined } = {},
  ): Promise<RedisQuotaStore> {
    const redis = await connectRedis(config.url, { connectTimeoutMs: options.connectTimeoutMs, logger: options.logger, name: `pictor-quota:${config.prefix}` });
    return new RedisQuotaStore({ ...options, redis, prefix: config.prefix, ownsConnection: true });
  }

  constructor(options: RedisQuotaStoreOptions) {
    this.prefix = options.prefix ?? DEFAULT_PREFIX;
    this.#redis = options.redis as LedgerClient;
    this.#ttlMs = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
    this.#leaseMs = Math.min(options.leaseMs ?? DEFAULT_LEASE_MS, this.#ttlMs);
    this.#keepMs = Math.max(1, Math.floor(options.keepDays ?? DEFAULT_KEEP_DAYS)) * DAY_MS;
    this.#ownsConnection = options.ownsConnection ?? false;
    this.#onError = options.onError;
    this.#clock = options.clock ?? Date.now;
    for (const [name, definition] of Object.entries(SCRIPTS)) {
      if (!(name in this.#redis)) this.#redis.defineCommand(name, definition);
    }
  }

  async reserve(input: ReserveInput): Promise<ReserveResult> {
    this.#assertOpen();
    const { jobId, userKey, scopeKey, estimateUsd, limits, now } = input;
    const nanos = toNanos('estimateUsd', estimateUsd);
    const day = utcDay(now);
    const cooldownMs = (limits.userCooldownSeconds ?? 0) * 1000;
    const optional = (value: number | undefined) => (value === undefined ? '' : String(value));
    const reply = await this.#redis.pictorQuotaReserve(
      this.#key('res', jobId),
      this.#key('active', userKey),
      this.#key('active', scopeKey),
      this.#key('spent', day, userKey),
      this.#key('spent', day, scopeKey),
      this.#key('last', userKey),
      now,
      jobId,
      userKey,
      scopeKey,
      nanos,
      day,
      this.#leaseMs,
      this.#ttlMs,
      this.#keepMs,
      this.#ttlMs + 2 * DAY_MS,
      this.#key('res', ''),
      limits.userDailyUsd === undefined ? '' : toNanos('userDailyUsd', limits.userDailyUsd),
      limits.scopeDailyUsd === undefined ? '' : toNanos('scopeDailyUsd', limits.scopeDailyUsd),
      optional(limits.userConcurrentJobs),
      cooldownMs > 0 ? String(cooldownMs) : '',
    ).catch((error: unknown) => {
      if (error instanceof Error && error.message.includes('DUPLICATE_JOB')) throw new Error(`job ${jobId} already has a reservation`);
      throw error;
    });
    if (reply[0] === 1) {
      this.#hold(jobId);
      return { ok: true };
    }
    const [, code, a, b] = reply;
    switch (code) {
      case 'user_concurrency':
        return { ok: false, code, limit: limits.userConcurrentJobs!, used: a, resetsAt: b };
      case 'user_cooldown':
        return { ok: false, code, limit: limits.userCooldownSeconds!, used: (now - a) / 1000, resetsAt: a + cooldownMs };
      case 'budget_user_daily':
        return { ok: false, code, limit: limits.userDailyUsd!, used: fromNanos(a), resetsAt: nextUtcMidnight(now) };
      case 'budget_scope_daily':
        return { ok: false, code, limit: limits.scopeDailyUsd!, used: fromNanos(a), resetsAt: nextUtcMidnight(now) };
      default:
        throw new Error(`the quota ledger answered an unknown refusal ${JSON.stringify(code)}`);
    }
  }

  async settle(jobId: string, actualUsd: number): Promise<void> {
    if (!(Number.isFinite(actualUsd) && actualUsd >= 0)) throw new RangeError(`actualUsd must be a non-negative number, not ${actualUsd}`);
    this.#assertOpen();
    await this.#redis.pictorQuotaSettle(this.#key('res', jobId), jobId, toNanos('actualUsd', actualUsd), this.#key('active', ''), this.#key('spent', ''), this.#keepMs);
    this.#held.delete(jobId);
  }

  async release(jobId: string): Promise<void> {
    this.#assertOpen();
    await this.#redis.pictorQuotaRelease(this.#key('res', jobId), jobId, this.#key('active', ''));
    this.#held.delete(jobId);
  }

  async spentToday(key: string, now: number): Promise<number> {
    this.#assertOpen();
    const day = utcDay(now);
    const nanos = await this.#redis.pictorQuotaSpentToday(this.#key('active', key), this.#key('spent', day, key), now, day, key, this.#key('res', ''));
    return fromNanos(nanos);
  }

  /** Stops renewing (what is still reserved stops counting within `leaseMs`) and closes the connection if it owns it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#held.clear();
    if (this.#ownsConnection) await closeRedis(this.#redis);
  }

  #hold(jobId: string): void {
    this.#held.add(jobId);
    this.#timer ??= setInterval(() => this.#renew(), Math.max(50, Math.floor(this.#leaseMs / 3))).unref();
  }

  #renew(): void {
    if (this.#held.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    this.#redis
      .pictorQuotaRenew(this.#clock(), this.#leaseMs, this.#ttlMs, this.#key('res', ''), this.#key('active', ''), ...this.#held)
      .then((gone) => {
        for (const jobId of gone) this.#held.delete(jobId);
      })
      .catch((error: unknown) => this.#onError?.(error));
  }

  #key(kind: 'res' | 'active' | 'spent' | 'last', ...parts: string[]): string {
    return [this.prefix, 'quota', kind, ...parts].join(':');
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('the quota store is closed');
  }
}

function toNanos(field: string, usd: number): string {
  if (!(Number.isFinite(usd) && usd >= 0)) throw new RangeError(`${field} must be a non-negative number, not ${usd}`);
  return String(Math.round(usd * NANOS_PER_USD));
}

function fromNanos(nanos: number): number {
  return Math.round(nanos) / NANOS_PER_USD;
}
