import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RedisConfig } from '../core/redis-config.js';
import { closeRedis, connectRedis, type RedisLogger } from '../core/redis-connection.js';
import { withTimeout } from '../core/with-timeout.js';
import { isProcessAlive, THIS_HOST } from './file-lock.js';
import { isOverridableCap, OVERRIDABLE_CAPS, ScopeSettingEntrySchema } from './cap-overrides.js';
import { BREAKER_BUCKET_MS, BREAKER_WINDOW_MS, breakerLimit, historyHours, recentBucket } from './breaker.js';
import { REFUSAL_KEEP_DAYS } from './ledger-document.js';
import { breakerWatches, capsAsData, exceedsReservation, fromNanos, periodKey, refusalFromStore, toNanos } from './rules.js';
import {
  ACCOUNT_KEY,
  type ActiveJob,
  type BreakerState,
  type CapOverrides,
  type LostReservation,
  type LedgerStorage,
  type OverridableCap,
  type QuotaStore,
  type ReconcileReport,
  type RefusalCounts,
  type ReserveInput,
  type ReserveResult,
  type ScopeSettingEntries,
  type ScopeSettingEntry,
  type SettleInfo,
  type SpendRefusal,
  type UsageFeed,
  type UsageQuery,
  type UsageRecord,
} from './types.js';
import { utcDay } from './utc-period.js';
import { DEFAULT_USAGE_RETENTION_DAYS, JobDetailsSchema, latestPerJob, matchesQuery, readBasis, usageRecord } from './usage-records.js';

export interface RedisQuotaStoreOptions {
  /** A connected client (see `connectRedis`); `RedisQuotaStore.connect` makes one. */
  redis: Redis;
  /** The account's key prefix (`PICTOR_REDIS_PREFIX`); keys are `<prefix>:quota:…`. Default `pictor`. */
  prefix?: string | undefined;
  /**
   * The process's lease: renewed every third of this while it holds
   * reservations. When it lapses (the process died), its reservations are
   * settled at their estimate if sent, released if not. Default 60 s.
   */
  leaseMs?: number | undefined;
  /** UTC days of daily spending kept, today included. Default 7 (monthly totals: 62 days). */
  keepDays?: number | undefined;
  /** `close()` also closes `redis`. Default false (true from `connect`). */
  ownsConnection?: boolean | undefined;
  /** Redis errors while renewing the lease (tried again on the next renewal). */
  onError?: ((error: unknown) => void) | undefined;
  /** Told of each reservation Redis had lost (restarted empty, flushed), put back before its job was sent or charged at its settle. */
  onReservationLost?: ((lost: LostReservation) => void) | undefined;
  /** Days usage records are kept in the stream `<prefix>:quota:usage` (`PICTOR_USAGE_RETENTION_DAYS`). Default 400. */
  usageRetentionDays?: number | undefined;
  /** The clock settles, releases and lease renewals use (the callers' `now` comes from the same one). Default `Date.now`. */
  clock?: (() => number) | undefined;
}

const DEFAULT_PREFIX = 'pictor';
const DEFAULT_LEASE_MS = 60_000;
const DEFAULT_KEEP_DAYS = 7;
const DAY_MS = 24 * 60 * 60_000;
const HOUR_MS = 60 * 60_000;
const MONTH_KEEP_MS = 62 * DAY_MS;
/** The breaker's buckets of a scope are kept a little longer than the 7 days of its trailing average. */
const BREAKER_KEEP_MS = 9 * DAY_MS;

/*
 * Every script is one atomic step of the ledger, and safe to run twice (ioredis
 * sends a command again when the connection broke before its answer came).
 * A reservation `res:<job>` is a hash; `active:<key>` (one per user key, scope
 * key and the account) lists the reservations not yet ended. `owner:<id>` is a
 * process's lease: a reservation whose owner key is gone belongs to a dead
 * process and is ended by whichever script meets it first.
 *
 * ARGV of every script starts with: key prefix (`<prefix>:quota:`), daily keep ms, now.
 */
const PRELUDE = `
local P, keepMs, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local MONTH_KEEP_MS = ${MONTH_KEEP_MS}
local ACCOUNT = '${ACCOUNT_KEY}'
local FIELDS = {'userKey', 'scopeKey', 'day', 'month', 'nanos', 'owner', 'sent', 'job', 'at'}

-- One usage record per settled job, in the same step as the charge: never lost, never doubled.
local function record(job, r, nanos, basis, requestId, outcome, images)
  local entry = {jobId = job, time = now, day = r[3], month = r[4], userKey = r[1], scopeKey = r[2], nanos = nanos, basis = basis}
  entry.reservedNanos = tonumber(r[5])
  entry.reservedAt = tonumber(r[9])
  if r[8] and r[8] ~= '' then entry.job = r[8] end
  if requestId and requestId ~= '' then entry.requestId = requestId end
  if outcome and outcome ~= '' then entry.outcome = outcome end
  if images and images ~= '' then entry.images = tonumber(images) end
  redis.call('xadd', P .. 'usage', '*', 'r', cjson.encode(entry))
end

local function keysOf(r)
  local keys, seen = {}, {}
  for _, k in ipairs({r[1], r[2], ACCOUNT}) do
    if not seen[k] then seen[k] = true; keys[#keys + 1] = k end
  end
  return keys
end

local function charge(r, nanos)
  for _, k in ipairs(keysOf(r)) do
    local d = P .. 'spent:' .. r[3] .. ':' .. k
    redis.call('incrby', d, nanos)
    redis.call('pexpire', d, keepMs)
    local m = P .. 'spent:' .. r[4] .. ':' .. k
    redis.call('incrby', m, nanos)
    redis.call('pexpire', m, MONTH_KEEP_MS)
  end
  -- The breaker's numbers of the scope: spent per 5 minutes and per hour, at the moment it is charged.
  if nanos > 0 then
    local b = P .. 'brk:' .. r[2]
    redis.call('hincrby', b, 'm' .. math.floor(now / ${BREAKER_BUCKET_MS}), nanos)
    redis.call('hincrby', b, 'h' .. math.floor(now / ${60 * 60_000}), nanos)
    redis.call('pexpire', b, ${BREAKER_KEEP_MS})
  end
end

-- Every job ended (settled, released, or ended with its dead process), in a set per day it was reserved in, kept as
-- long as that day's spending: a settle or markSent that finds no reservation tells "ended before" (listed) from
-- "lost by Redis" (restarted empty, flushed, evicted: not listed).
local function forget(job, r)
  redis.call('del', P .. 'res:' .. job)
  for _, k in ipairs(keysOf(r)) do redis.call('zrem', P .. 'active:' .. k, job) end
  local ended = P .. 'ended:' .. r[3]
  redis.call('sadd', ended, job)
  redis.call('pexpire', ended, keepMs)
end

local function endedBefore(job, day)
  return redis.call('sismember', P .. 'ended:' .. day, job) == 1 or redis.call('hexists', P .. 'uncertain', job) == 1
end

local function load(job)
  local r = redis.call('hmget', P .. 'res:' .. job, unpack(FIELDS))
  if not r[1] then return nil end
  if not r[4] then r[4] = string.sub(r[3], 1, 7) end
  return r
end

-- The reservation if it still counts; ends it first when its process is dead.
local function live(job, ended)
  local r = load(job)
  if not r then return nil end
  if r[6] and redis.call('exists', P .. 'owner:' .. r[6]) == 1 then return r end
  forget(job, r)
  -- No owner: written by an older version, whether it was sent is unknown; charge it (the safe side of a cap).
  if r[7] == '1' or not r[6] then
    charge(r, tonumber(r[5]))
    record(job, r, tonumber(r[5]), 'uncertain', nil)
    redis.call('hset', P .. 'uncertain', job, table.concat({r[5], r[3], r[1], r[2], now}, ' '))
    redis.call('pexpire', P .. 'uncertain', keepMs)
    if ended then ended.settled[#ended.settled + 1] = job; ended.nanos = ended.nanos + tonumber(r[5]) end
  elseif ended then
    ended.released[#ended.released + 1] = job
  end
  return nil
end

local function members(key, ended)
  local out = {}
  local activeKey = P .. 'active:' .. key
  for _, job in ipairs(redis.call('zrange', activeKey, 0, -1)) do
    local r = live(job, ended)
    if r then out[#out + 1] = r else redis.call('zrem', activeKey, job) end
  end
  return out
end

local function used(key, list, idx, current)
  local total = tonumber(redis.call('get', P .. 'spent:' .. current .. ':' .. key) or '0')
  for _, r in ipairs(list) do
    if r[idx] == current and (key == ACCOUNT or r[1] == key or r[2] == key) then total = total + tonumber(r[5]) end
  end
  return total
end
`;

/**
 * ARGV: prelude, then job, userKey, scopeKey, nanos, day, month, owner, ownerValue, leaseMs, concurrent, cooldownMs,
 *       job details (JSON or ''), the number of caps, then per cap in the rulebook's order: code, key, field index
 *       (3: its day, 4: its month), limit in nanos; then the breaker: '1' when it watches the scope (else ''), its
 *       limit in nanos ('' when none: a cold start), and the first and last 5-minute buckets of the last hour; then
 *       '1' for a dry run (`check`: answer only, write nothing). The script knows no cap or limit of its own: it is
 *       handed them.
 * Returns {1} (reserved), or {0, code, used} (for the cooldown: {0, code, last job time}); for the breaker
 * {0, 'scope_paused', used, limit, 1 when this job tripped it}.
 */
const RESERVE = `${PRELUDE}
local job, userKey, scopeKey, nanos, day, month = ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8], ARGV[9]
local owner, ownerValue, leaseMs = ARGV[10], ARGV[11], tonumber(ARGV[12])
local concurrent, cooldownMs = tonumber(ARGV[13]), tonumber(ARGV[14])
local capsEnd = 17 + tonumber(ARGV[16]) * 4
local breakerOn, breakerLimit = ARGV[capsEnd] == '1', tonumber(ARGV[capsEnd + 1])
local firstBucket, lastBucket = tonumber(ARGV[capsEnd + 2]), tonumber(ARGV[capsEnd + 3])
local dry = ARGV[capsEnd + 4] == '1'

local existing = not dry and load(job)
if existing then
  if existing[1] == userKey and existing[2] == scopeKey and tonumber(existing[5]) == nanos then return {1} end
  return redis.error_reply('DUPLICATE_JOB')
end

local stateKey = P .. 'brk-state:' .. scopeKey
if breakerOn then
  local paused = redis.call('hmget', stateKey, 'pausedAt', 'pausedNanos', 'limitNanos')
  if paused[1] then return {0, 'scope_paused', tonumber(paused[2] or '0'), tonumber(paused[3] or '0'), 0} end
end

local lists = {}
local function listOf(key)
  if not lists[key] then lists[key] = members(key) end
  return lists[key]
end
listOf(userKey); listOf(scopeKey); listOf(ACCOUNT)

if concurrent then
  local count = 0
  for _, r in ipairs(listOf(userKey)) do if r[1] == userKey then count = count + 1 end end
  if count >= concurrent then return {0, 'user_concurrency', count} end
end

if cooldownMs and cooldownMs > 0 then
  local last = tonumber(redis.call('get', P .. 'last:' .. userKey))
  if last and now < last + cooldownMs then return {0, 'user_cooldown', last} end
end

for i = 0, tonumber(ARGV[16]) - 1 do
  local at = 17 + i * 4
  local code, key, idx, limit = ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3])
  local u = used(key, listOf(key), idx, idx == 3 and day or month)
  if u + nanos > limit then return {0, code, u} end
end

if breakerOn and breakerLimit then
  local recent = 0
  local fields = {}
  for b = firstBucket, lastBucket do fields[#fields + 1] = 'm' .. b end
  for _, v in ipairs(redis.call('hmget', P .. 'brk:' .. scopeKey, unpack(fields))) do recent = recent + tonumber(v or '0') end
  for _, r in ipairs(listOf(scopeKey)) do if r[2] == scopeKey then recent = recent + tonumber(r[5]) end end
  if recent + nanos > breakerLimit then
    if dry then return {0, 'scope_paused', recent + nanos, breakerLimit, 0} end
    redis.call('hset', stateKey, 'pausedAt', ARGV[3], 'pausedNanos', recent + nanos, 'limitNanos', breakerLimit)
    redis.call('sadd', P .. 'brk-scopes', scopeKey)
    return {0, 'scope_paused', recent + nanos, breakerLimit, 1}
  end
end

if dry then return {1} end
redis.call('set', P .. 'owner:' .. owner, ownerValue, 'PX', leaseMs)
redis.call('hset', P .. 'res:' .. job, 'userKey', userKey, 'scopeKey', scopeKey, 'nanos', ARGV[7], 'day', day, 'month', month,
  'at', ARGV[3], 'owner', owner, 'sent', '0')
if ARGV[15] ~= '' then redis.call('hset', P .. 'res:' .. job, 'job', ARGV[15]) end
for _, k in ipairs(keysOf({userKey, scopeKey})) do redis.call('zadd', P .. 'active:' .. k, now, job) end
redis.call('set', P .. 'last:' .. userKey, ARGV[3], 'PX', keepMs)
return {1}
`;

/*
 * "The process's copy" below is the reservation as the process that made it keeps it, seven ARGV: userKey, scopeKey,
 * day, month, nanos, job details (JSON or ''), reserved at. All '' when the process has no copy (it did not make it).
 */

/**
 * ARGV: prelude, job, then the process's copy (userKey … at, ARGV[5..11]), owner, ownerValue, leaseMs. Returns 1; 2
 * when the reservation was lost by Redis and has been put back from the copy (sent); 0 when the job has ended (or
 * there is no copy): it must not be sent.
 */
const MARK_SENT = `${PRELUDE}
local job = ARGV[4]
if load(job) then
  redis.call('hset', P .. 'res:' .. job, 'sent', '1')
  return 1
end
if ARGV[5] == '' or endedBefore(job, ARGV[7]) then return 0 end
redis.call('set', P .. 'owner:' .. ARGV[12], ARGV[13], 'PX', tonumber(ARGV[14]))
redis.call('hset', P .. 'res:' .. job, 'userKey', ARGV[5], 'scopeKey', ARGV[6], 'nanos', ARGV[9], 'day', ARGV[7], 'month', ARGV[8],
  'at', ARGV[11], 'owner', ARGV[12], 'sent', '1')
if ARGV[10] ~= '' then redis.call('hset', P .. 'res:' .. job, 'job', ARGV[10]) end
for _, k in ipairs(keysOf({ARGV[5], ARGV[6]})) do redis.call('zadd', P .. 'active:' .. k, now, job) end
return 2
`;

/**
 * ARGV: prelude, job, actualNanos, requestId (or ''), basis, outcome (or ''), images (or ''), then the process's copy
 * (userKey … at, ARGV[10..16]). Charges the day and month the job was reserved in, and records it: 1. A job whose
 * reservation Redis lost (not listed as ended) is charged and recorded all the same, from the copy: 2. 0 when it had
 * ended before.
 */
const SETTLE = `${PRELUDE}
local job, nanos = ARGV[4], tonumber(ARGV[5])
local r, lost = load(job), 0
if not r then
  if ARGV[10] == '' or endedBefore(job, ARGV[12]) then return 0 end
  r = {ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14], '', '1', ARGV[15], ARGV[16]}
  lost = 1
end
forget(job, r)
charge(r, nanos)
record(job, r, nanos, ARGV[7], ARGV[6], ARGV[8], ARGV[9])
return 1 + lost
`;

/**
 * ARGV: prelude, scope key, who. Resumes a paused scope: its state says who and when, and its last hour's buckets
 * are dropped (it counts from zero). Returns the state before as {pausedAt, pausedNanos, limitNanos}, or {} when it
 * was not paused.
 */
const RESUME = `${PRELUDE}
local stateKey = P .. 'brk-state:' .. ARGV[4]
local before = redis.call('hmget', stateKey, 'pausedAt', 'pausedNanos', 'limitNanos', 'resumedAt', 'resumedBy')
if not before[1] then return {} end
redis.call('hdel', stateKey, 'pausedAt', 'pausedNanos', 'limitNanos')
redis.call('hset', stateKey, 'resumedAt', ARGV[3], 'resumedBy', ARGV[5])
local b = P .. 'brk:' .. ARGV[4]
for _, field in ipairs(redis.call('hkeys', b)) do
  if string.sub(field, 1, 1) == 'm' then redis.call('hdel', b, field) end
end
return {before[1], before[2] or '0', before[3] or '0', before[4] or '', before[5] or ''}
`;

/** ARGV: prelude, job. */
const RELEASE = `${PRELUDE}
local r = load(ARGV[4])
if not r then return 0 end
forget(ARGV[4], r)
return 1
`;

/** ARGV: prelude, key, field index (3 day, 4 month), current period. Spent plus reserved. */
const SPENT = `${PRELUDE}
return used(ARGV[4], members(ARGV[4]), tonumber(ARGV[5]), ARGV[6])
`;

/** ARGV: prelude. Ends every reservation of a dead process; returns {released, settled}. */
const RECONCILE = `${PRELUDE}
local ended = {released = {}, settled = {}, nanos = 0}
members(ACCOUNT, ended)
return {ended.released, ended.settled, tostring(ended.nanos)}
`;

/**
 * KEYS[1]: the scope's hash of chat admins' caps. ARGV: cap, nanos ('' clears), changedBy, now.
 * Returns the nanos it had before (or nil). Fields: `<cap>` nanos, `<cap>:by`, `<cap>:at`.
 */
const SET_CAP = `
local old = redis.call('hget', KEYS[1], ARGV[1])
if ARGV[2] == '' then
  redis.call('hdel', KEYS[1], ARGV[1], ARGV[1] .. ':by', ARGV[1] .. ':at')
else
  redis.call('hset', KEYS[1], ARGV[1], ARGV[2], ARGV[1] .. ':by', ARGV[3], ARGV[1] .. ':at', ARGV[4])
end
return old
`;

type Arg = string | number;
type LedgerClient = Redis & {
  pictorSpendReserve(...args: Arg[]): Promise<[1] | [0, string, number]>;
  pictorSpendMarkSent(...args: Arg[]): Promise<number>;
  pictorSpendSettle(...args: Arg[]): Promise<number>;
  pictorSpendRelease(...args: Arg[]): Promise<number>;
  pictorSpendUsed(...args: Arg[]): Promise<number>;
  pictorSpendReconcile(...args: Arg[]): Promise<[string[], string[], string]>;
  pictorSpendSetCap(...args: Arg[]): Promise<string | null>;
  pictorSpendResume(...args: Arg[]): Promise<string[]>;
};

const SCRIPTS = {
  pictorSpendReserve: { numberOfKeys: 0, lua: RESERVE },
  pictorSpendMarkSent: { numberOfKeys: 0, lua: MARK_SENT },
  pictorSpendSettle: { numberOfKeys: 0, lua: SETTLE },
  pictorSpendRelease: { numberOfKeys: 0, lua: RELEASE },
  pictorSpendUsed: { numberOfKeys: 0, lua: SPENT },
  pictorSpendReconcile: { numberOfKeys: 0, lua: RECONCILE },
  pictorSpendSetCap: { numberOfKeys: 1, lua: SET_CAP },
  pictorSpendResume: { numberOfKeys: 0, lua: RESUME },
} as const;

/**
 * The QuotaStore shared by every process that uses the same Redis and prefix:
 * each check-and-reserve is one Lua script, so two processes can never both
 * spend the last dollar of a cap. Same rules, order of checks and numbers as
 * the FileQuotaStore. A reservation counts as long as the process that made it
 * keeps its lease (`owner:<id>`); once the lease lapses, the reservation is
 * settled at its estimate if its request was sent, released if not.
 *
 * Scripts name keys they compute from the prefix, so the store needs a single
 * Redis (or a cluster slot per prefix), as the shared limiter does.
 */
export class RedisQuotaStore implements QuotaStore {
  readonly prefix: string;
  readonly #redis: LedgerClient;
  readonly #leaseMs: number;
  readonly #keepMs: number;
  readonly #ownsConnection: boolean;
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #onReservationLost: ((lost: LostReservation) => void) | undefined;
  readonly #usageRetentionMs: number;
  /** When this process last trimmed expired usage records (at most once an hour). */
  #usageTrimmedAt = Number.NEGATIVE_INFINITY;
  readonly #owner = `${THIS_HOST}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly #ownerValue = `${THIS_HOST} ${process.pid}`;
  /**
   * Reservations this process made and has not ended, with a copy of each: a reservation Redis loses (a restart
   * without persistence, a flush) is put back from it before its job is sent, or charged from it at its settle.
   */
  readonly #held = new Map<string, HeldReservation>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #clock: () => number;
  /** Each scope's trailing spend for the breaker, by the hour it was read in (past hours never change). */
  readonly #history = new Map<string, { to: number; usd: number }>();

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
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#keepMs = Math.max(1, Math.floor(options.keepDays ?? DEFAULT_KEEP_DAYS)) * DAY_MS;
    this.#ownsConnection = options.ownsConnection ?? false;
    this.#onError = options.onError;
    this.#onReservationLost = options.onReservationLost;
    this.#usageRetentionMs = Math.max(1, options.usageRetentionDays ?? DEFAULT_USAGE_RETENTION_DAYS) * DAY_MS;
    this.#clock = options.clock ?? Date.now;
    for (const [name, definition] of Object.entries(SCRIPTS)) {
      if (!(name in this.#redis)) this.#redis.defineCommand(name, definition);
    }
  }

  /** The prefix, and the connection (shared with whoever keeps records beside the ledger: the console's alerts). */
  get storage(): LedgerStorage {
    return { kind: 'redis', redis: this.#redis, prefix: this.prefix };
  }

  async reserve(input: ReserveInput): Promise<ReserveResult> {
    return this.#reserve(input, false);
  }

  async check(input: Omit<ReserveInput, 'jobId' | 'job'>): Promise<SpendRefusal | undefined> {
    const answer = await this.#reserve({ ...input, jobId: '' }, true);
    return answer.ok ? undefined : answer;
  }

  async #reserve(input: ReserveInput, dry: boolean): Promise<ReserveResult> {
    this.#assertOpen();
    const { jobId, userKey, scopeKey, estimateUsd, limits, now } = input;
    const nanos = toNanos('estimateUsd', estimateUsd);
    const cooldownMs = (limits.userCooldownSeconds ?? 0) * 1000;
    const caps = capsAsData(limits, userKey, scopeKey).flatMap((c) => [c.code, c.key, c.period === 'day' ? 3 : 4, c.limitNanos]);
    const watched = breakerWatches(limits, scopeKey);
    const limit = watched ? breakerLimit(await this.#historyOf(scopeKey, now), limits.breaker!) : undefined;
    const reply = await this.#redis
      .pictorSpendReserve(
        ...this.#prelude(now),
        jobId,
        userKey,
        scopeKey,
        nanos,
        periodKey('day', now),
        periodKey('month', now),
        this.#owner,
        this.#ownerValue,
        this.#leaseMs,
        limits.userConcurrentJobs === undefined ? '' : String(limits.userConcurrentJobs),
        cooldownMs > 0 ? String(cooldownMs) : '',
        input.job ? JSON.stringify(input.job) : '',
        caps.length / 4,
        ...caps,
        watched ? '1' : '',
        limit === undefined ? '' : toNanos('breaker limit', limit),
        recentBucket(now - BREAKER_WINDOW_MS),
        recentBucket(now),
        dry ? '1' : '',
      )
      .catch((error: unknown) => {
        if (error instanceof Error && error.message.includes('DUPLICATE_JOB')) throw new Error(`job ${jobId} already has a reservation`);
        throw error;
      });
    if (reply[0] === 1) {
      if (!dry) this.#hold(jobId, { userKey, scopeKey, nanos, day: periodKey('day', now), month: periodKey('month', now), job: input.job ? JSON.stringify(input.job) : '', at: now });
      return { ok: true };
    }
    const [, code, usedOrLast, limitNanos, tripped] = reply as [0, string, number, number?, number?];
    return refusalFromStore(code, usedOrLast, input, { limitNanos: limitNanos ?? 0, tripped: tripped === 1 && !dry });
  }

  /** A scope's settled spend in the 7 days of the breaker's trailing average (whole past hours: read once an hour). */
  async #historyOf(scopeKey: string, now: number): Promise<number> {
    const { from, to } = historyHours(now);
    const cached = this.#history.get(scopeKey);
    if (cached?.to === to) return cached.usd;
    const fields: string[] = [];
    for (let hour = from; hour < to; hour++) fields.push(`h${hour}`);
    const values = await this.#redis.hmget(`${this.prefix}:quota:brk:${scopeKey}`, ...fields);
    const usd = fromNanos(values.reduce((sum, v) => sum + Number(v ?? 0), 0));
    if (this.#history.size > 10_000) this.#history.clear();
    this.#history.set(scopeKey, { to, usd });
    return usd;
  }

  async markSent(jobId: string): Promise<void> {
    this.#assertOpen();
    const copy = this.#held.get(jobId);
    const found = await this.#redis.pictorSpendMarkSent(...this.#prelude(this.#clock()), jobId, ...copyArgs(copy), this.#owner, this.#ownerValue, this.#leaseMs);
    if (found === 0) throw new Error(`job ${jobId} has no reservation: it must not be sent`);
    if (found === 2 && copy) this.#onReservationLost?.({ jobId, userKey: copy.userKey, scopeKey: copy.scopeKey, day: copy.day, foundAt: 'send', chargedUsd: undefined });
  }

  async settle(jobId: string, actualUsd: number, info: SettleInfo = {}): Promise<boolean> {
    const nanos = toNanos('actualUsd', actualUsd);
    this.#assertOpen();
    const now = this.#clock();
    const copy = this.#held.get(jobId);
    const settled = await this.#redis.pictorSpendSettle(
      ...this.#prelude(now),
      jobId,
      nanos,
      info.requestId ?? '',
      info.basis ?? 'table',
      info.outcome ?? '',
      info.images === undefined ? '' : info.images,
      ...copyArgs(copy),
    );
    this.#held.delete(jobId);
    if (settled === 2 && copy) this.#onReservationLost?.({ jobId, userKey: copy.userKey, scopeKey: copy.scopeKey, day: copy.day, foundAt: 'settle', chargedUsd: fromNanos(nanos) });
    if (now - this.#usageTrimmedAt >= HOUR_MS) {
      this.#usageTrimmedAt = now;
      // Approximate (~) trimming is cheap: Redis drops whole nodes of the stream older than the retention.
      await this.#redis.xtrim(this.#usageKey(), 'MINID', '~', String(now - this.#usageRetentionMs)).catch((error: unknown) => this.#onError?.(error));
    }
    return settled >= 1;
  }

  /** The usage records of the stream `<prefix>:quota:usage`, oldest first. */
  async usage(query: UsageQuery): Promise<UsageRecord[]> {
    this.#assertOpen();
    // Stream ids are Redis's clock, records the callers' `now`, and a job counts in the day it was reserved (it may be
    // settled days later, by a reconcile): read from a day's margin before `since` to the end, then filter.
    const from = query.since === undefined ? '-' : String(Math.max(0, query.since - DAY_MS));
    const to = '+';
    const entries = await this.#redis.xrange(this.#usageKey(), from, to);
    const records: UsageRecord[] = [];
    for (const [, fields] of entries) {
      const record = parseStreamRecord(fields[fields.indexOf('r') + 1]);
      if (record && matchesQuery(record, query)) records.push(record);
    }
    return latestPerJob(records);
  }

  /** `SET <prefix>:quota:seen:<id> NX PX`: one key per id, gone when it no longer matters. */
  async firstSight(id: string, until: number, now: number): Promise<boolean> {
    this.#assertOpen();
    const answer = await this.#redis.set(`${this.prefix}:quota:seen:${id}`, '1', 'PX', Math.max(1, Math.ceil(until - now)), 'NX');
    return answer === 'OK';
  }

  /** The hash `<prefix>:quota:caps:<scopeKey>`: what chat admins set for that scope. */
  async capOverrides(scopeKey: string): Promise<CapOverrides> {
    this.#assertOpen();
    const fields = await this.#redis.hgetall(this.#capsKey(scopeKey));
    const overrides: CapOverrides = {};
    for (const cap of OVERRIDABLE_CAPS) {
      const nanos = fields[cap];
      if (nanos === undefined || !/^\d+$/.test(nanos)) continue;
      overrides[cap] = { usd: fromNanos(Number(nanos)), by: fields[`${cap}:by`] ?? '', at: Number(fields[`${cap}:at`] ?? 0) };
    }
    return overrides;
  }

  async setCapOverride(scopeKey: string, cap: OverridableCap, usd: number | undefined, changedBy: string, now: number): Promise<{ previousUsd: number | undefined }> {
    this.#assertOpen();
    if (!isOverridableCap(cap)) throw new RangeError(`${String(cap)} cannot be changed from chat`);
    const nanos = usd === undefined ? '' : toNanos('usd', usd);
    const previous = await this.#redis.pictorSpendSetCap(this.#capsKey(scopeKey), cap, nanos, changedBy, now);
    return { previousUsd: previous === null || previous === undefined ? undefined : fromNanos(Number(previous)) };
  }

  /** The hash `<prefix>:quota:settings:<scopeKey>`: one field per setting, `{ value, by, at }` as JSON. A damaged field is left out (its default applies). */
  async scopeSettings(scopeKey: string): Promise<ScopeSettingEntries> {
    this.#assertOpen();
    const fields = await this.#redis.hgetall(this.#settingsKey(scopeKey));
    const settings: ScopeSettingEntries = {};
    for (const [name, raw] of Object.entries(fields)) {
      const entry = parseSettingEntry(raw);
      if (entry) settings[name] = entry;
    }
    return settings;
  }

  async setScopeSetting(scopeKey: string, name: string, value: unknown, changedBy: string, now: number): Promise<{ previous: unknown }> {
    this.#assertOpen();
    const key = this.#settingsKey(scopeKey);
    const transaction = this.#redis.multi().hget(key, name);
    if (value === undefined) transaction.hdel(key, name);
    else transaction.hset(key, name, JSON.stringify({ value, by: changedBy, at: now }));
    const replies = await transaction.exec();
    const [error, before] = replies?.[0] ?? [new Error('the Redis transaction was discarded'), null];
    if (error) throw error;
    return { previous: typeof before === 'string' ? parseSettingEntry(before)?.value : undefined };
  }

  /** Every hash `<prefix>:quota:caps:<scope key>` (found with SCAN). */
  async allCapOverrides(): Promise<Record<string, CapOverrides>> {
    this.#assertOpen();
    const all: Record<string, CapOverrides> = {};
    const head = `${this.prefix}:quota:caps:`;
    for (const key of await this.#scan(`${head}*`)) {
      const overrides = await this.capOverrides(key.slice(head.length));
      if (Object.keys(overrides).length > 0) all[key.slice(head.length)] = overrides;
    }
    return all;
  }

  /** The members of `active:account` (every reservation counts for the account) and their hashes, in one round trip. */
  async activeJobs(): Promise<ActiveJob[]> {
    this.#assertOpen();
    const jobIds = await this.#redis.zrange(`${this.prefix}:quota:active:${ACCOUNT_KEY}`, 0, -1);
    if (jobIds.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const jobId of jobIds) pipeline.hmget(`${this.prefix}:quota:res:${jobId}`, 'userKey', 'scopeKey', 'nanos', 'at', 'sent', 'owner', 'job');
    const replies = (await pipeline.exec()) ?? [];
    const jobs: ActiveJob[] = [];
    jobIds.forEach((jobId, i) => {
      const [error, fields] = replies[i] ?? [];
      const [userKey, scopeKey, nanos, at, sent, owner, job] = (error ? [] : (fields as (string | null)[])) ?? [];
      if (!userKey || !scopeKey) return;
      const details = job ? JobDetailsSchema.safeParse(safeJson(job)).data : undefined;
      jobs.push({ jobId, userKey, scopeKey, usd: fromNanos(Number(nanos ?? 0)), at: Number(at ?? 0), sent: sent === '1', owner: owner ?? '', ...(details && { job: details }) });
    });
    return jobs.sort((a, b) => a.at - b.at || a.jobId.localeCompare(b.jobId));
  }

  /** The stream entries after the cursor's id (`(id` excludes it). A stream made anew (its last id below the cursor) is read again whole. */
  async usageSince(cursor: string | undefined): Promise<UsageFeed> {
    this.#assertOpen();
    const key = this.#usageKey();
    let reset = false;
    let from = cursor === undefined || cursor === '0-0' ? '-' : `(${cursor}`;
    if (cursor !== undefined && cursor !== '0-0') {
      const [last] = await this.#redis.xrevrange(key, '+', '-', 'COUNT', 1);
      if (!last || compareStreamIds(last[0], cursor) < 0) {
        reset = true;
        from = '-';
      }
    }
    const entries = await this.#redis.xrange(key, from, '+');
    const records: UsageRecord[] = [];
    for (const [, fields] of entries) {
      const record = parseStreamRecord(fields[fields.indexOf('r') + 1]);
      if (record) records.push(record);
    }
    const next = entries.length > 0 ? entries[entries.length - 1]![0] : reset ? '0-0' : (cursor ?? '0-0');
    return { records, cursor: next, reset };
  }

  /** The hash `<prefix>:quota:refusals:<day>`: code → count, kept 92 days. */
  async countRefusals(counts: Readonly<Record<string, number>>, now: number): Promise<void> {
    this.#assertOpen();
    const entries = Object.entries(counts).filter(([, n]) => n > 0);
    if (entries.length === 0) return;
    const key = `${this.prefix}:quota:refusals:${utcDay(now)}`;
    const transaction = this.#redis.multi();
    for (const [code, n] of entries) transaction.hincrby(key, code, n);
    transaction.pexpire(key, REFUSAL_KEEP_DAYS * DAY_MS);
    await transaction.exec();
  }

  async refusals(sinceDay: string): Promise<RefusalCounts> {
    this.#assertOpen();
    const days: string[] = [];
    const today = utcDay(this.#clock());
    for (let t = Date.parse(`${sinceDay}T00:00:00Z`); utcDay(t) <= today && days.length <= REFUSAL_KEEP_DAYS; t += DAY_MS) days.push(utcDay(t));
    const pipeline = this.#redis.pipeline();
    for (const day of days) pipeline.hgetall(`${this.prefix}:quota:refusals:${day}`);
    const replies = (await pipeline.exec()) ?? [];
    const counts: RefusalCounts = {};
    days.forEach((day, i) => {
      const fields = (replies[i]?.[1] ?? {}) as Record<string, string>;
      if (Object.keys(fields).length > 0) counts[day] = Object.fromEntries(Object.entries(fields).map(([code, n]) => [code, Number(n)]));
    });
    return counts;
  }

  /** The scopes of the set `<prefix>:quota:brk-scopes`, each with its hash `brk-state:<scope>`. */
  async breakerStates(): Promise<Record<string, BreakerState>> {
    this.#assertOpen();
    const scopes = await this.#redis.smembers(`${this.prefix}:quota:brk-scopes`);
    const states: Record<string, BreakerState> = {};
    for (const scopeKey of scopes) {
      const fields = await this.#redis.hgetall(`${this.prefix}:quota:brk-state:${scopeKey}`);
      const state = breakerStateOf(fields.pausedAt, fields.pausedNanos, fields.limitNanos, fields.resumedAt, fields.resumedBy);
      if (state.pausedAt !== undefined || state.resumedAt !== undefined) states[scopeKey] = state;
    }
    return states;
  }

  async resumeScope(scopeKey: string, by: string, now: number): Promise<BreakerState | undefined> {
    this.#assertOpen();
    const before = await this.#redis.pictorSpendResume(...this.#prelude(now), scopeKey, by);
    if (before.length === 0) return undefined;
    return breakerStateOf(before[0], before[1], before[2], before[3] || undefined, before[4] || undefined);
  }

  async #scan(pattern: string): Promise<string[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, found] = await this.#redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
    return [...new Set(keys)];
  }

  #settingsKey(scopeKey: string): string {
    return `${this.prefix}:quota:settings:${scopeKey}`;
  }

  #capsKey(scopeKey: string): string {
    return `${this.prefix}:quota:caps:${scopeKey}`;
  }

  #usageKey(): string {
    return `${this.prefix}:quota:usage`;
  }

  async release(jobId: string): Promise<void> {
    this.#assertOpen();
    await this.#redis.pictorSpendRelease(...this.#prelude(this.#clock()), jobId);
    this.#held.delete(jobId);
  }

  async spentToday(key: string, now: number): Promise<number> {
    this.#assertOpen();
    return fromNanos(await this.#redis.pictorSpendUsed(...this.#prelude(now), key, 3, periodKey('day', now)));
  }

  async spentThisMonth(key: string, now: number): Promise<number> {
    this.#assertOpen();
    return fromNanos(await this.#redis.pictorSpendUsed(...this.#prelude(now), key, 4, periodKey('month', now)));
  }

  /**
   * Ends the reservations of dead processes. A process of this machine whose
   * pid is gone (killed, crashed) is dead at once; others when their lease lapses.
   */
  async reconcile(now: number): Promise<ReconcileReport> {
    this.#assertOpen();
    const pattern = `${this.prefix}:quota:owner:${THIS_HOST}:*`;
    let cursor = '0';
    do {
      const [next, keys] = await this.#redis.scan(cursor, 'MATCH', pattern, 'COUNT', 200);
      cursor = next;
      for (const key of keys) {
        const pid = Number(key.slice(pattern.length - 1).split(':')[0]);
        if (!key.endsWith(this.#owner) && !isProcessAlive(pid)) await this.#redis.del(key);
      }
    } while (cursor !== '0');
    const [released, settledAtEstimate, nanos] = await this.#redis.pictorSpendReconcile(...this.#prelude(now));
    return { released, settledAtEstimate, chargedUsd: fromNanos(Number(nanos)) };
  }

  /** Stops renewing the lease (what is still reserved is ended within `leaseMs`) and closes the connection if it owns it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#held.clear();
    if (this.#ownsConnection) await closeRedis(this.#redis);
  }

  /** True when Redis answers a PING within `timeoutMs` (what `/healthz` asks); never throws. */
  async ping(timeoutMs = 2_000): Promise<boolean> {
    if (this.#closed) return false;
    return withTimeout(this.#redis.ping(), timeoutMs, 'Redis did not answer PING').then(
      (answer) => answer === 'PONG',
      () => false,
    );
  }

  /** Renews the lease now (the timer does it every third of `leaseMs`). */
  async renewLease(): Promise<void> {
    await this.#redis.set(this.#key('owner', this.#owner), this.#ownerValue, 'PX', this.#leaseMs);
  }

  #prelude(now: number): Arg[] {
    return [`${this.prefix}:quota:`, this.#keepMs, now];
  }

  #hold(jobId: string, copy: HeldReservation): void {
    this.#held.set(jobId, copy);
    this.#timer ??= setInterval(() => this.#renew(), Math.max(50, Math.floor(this.#leaseMs / 3))).unref();
  }

  #renew(): void {
    if (this.#held.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    this.renewLease().catch((error: unknown) => this.#onError?.(error));
  }

  #key(kind: 'owner', ...parts: string[]): string {
    return [this.prefix, 'quota', kind, ...parts].join(':');
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('the quota store is closed');
  }
}

/** What this process keeps of a reservation it made (see `#held`). */
interface HeldReservation {
  userKey: string;
  scopeKey: string;
  nanos: number;
  day: string;
  month: string;
  /** The job's details as JSON, or ''. */
  job: string;
  at: number;
}

/** The copy as the scripts take it (userKey, scopeKey, day, month, nanos, job, at), or as many '' without one. */
function copyArgs(copy: HeldReservation | undefined): Arg[] {
  if (!copy) return ['', '', '', '', '', '', ''];
  return [copy.userKey, copy.scopeKey, copy.day, copy.month, copy.nanos, copy.job, copy.at];
}

/** Orders two stream ids (`<ms>-<seq>`). */
function compareStreamIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The breaker's state from its stored fields (nanos for amounts). */
function breakerStateOf(
  pausedAt: string | null | undefined,
  pausedNanos: string | null | undefined,
  limitNanos: string | null | undefined,
  resumedAt: string | null | undefined,
  resumedBy: string | null | undefined,
): BreakerState {
  return {
    ...(pausedAt && { pausedAt: Number(pausedAt), pausedUsd: fromNanos(Number(pausedNanos ?? 0)), limitUsd: fromNanos(Number(limitNanos ?? 0)) }),
    ...(resumedAt && { resumedAt: Number(resumedAt), resumedBy: resumedBy ?? '' }),
  };
}

/** A stream entry's record (written by the Lua `record`), or undefined when it cannot be read. */
function parseStreamRecord(text: string | undefined): UsageRecord | undefined {
  if (text === undefined) return undefined;
  try {
    const raw = JSON.parse(text) as {
      jobId: string;
      time: number;
      day: string;
      month?: string;
      userKey: string;
      scopeKey: string;
      nanos: number;
      reservedNanos?: number;
      basis: string;
      requestId?: string;
      job?: string;
      outcome?: UsageRecord['outcome'];
      reservedAt?: number;
      images?: number;
    };
    const job = raw.job === undefined ? undefined : JobDetailsSchema.safeParse(JSON.parse(raw.job)).data;
    return usageRecord({
      ...raw,
      month: raw.month ?? raw.day.slice(0, 7),
      basis: readBasis(raw.basis, raw.month !== undefined),
      job,
      costUsd: fromNanos(raw.nanos),
      // Records keep what was reserved; whether the charge exceeded it is the ledger's one rule (older records kept it only then).
      reservedUsd: raw.reservedNanos !== undefined && exceedsReservation({ usd: fromNanos(raw.reservedNanos) }, fromNanos(raw.nanos)) ? fromNanos(raw.reservedNanos) : undefined,
    });
  } catch {
    return undefined;
  }
}

function parseSettingEntry(raw: string): ScopeSettingEntry | undefined {
  try {
    const parsed = ScopeSettingEntrySchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
