/**
 * The spend ledger's rules as Redis runs them (RedisQuotaStore calls these
 * scripts): the same checks, order and numbers as the rulebook (`rules.ts`)
 * and the document ledger (`ledger-document.ts`), each one atomic step.
 */
import { BREAKER_BUCKET_MS, HOUR_MS } from './breaker.js';
import { cutOffCostUsd } from './charge-rules.js';
import { ACCOUNT_KEY } from './types.js';
import { DAY_MS } from './utc-period.js';

/** Monthly totals are kept this long (this month and the last, whatever the day). */
const MONTH_KEEP_MS = 62 * DAY_MS;
/** The breaker's buckets of a scope are kept a little longer than the 7 days of its trailing average. */
const BREAKER_KEEP_MS = 9 * DAY_MS;

/** Whether the money rule (`cutOffCostUsd`) charges a job its dead process cut off, by what is known of its send. */
const chargedCutOff = (sent: boolean | undefined): boolean => cutOffCostUsd({ usd: 1, sent }) !== undefined;

/*
 * Every script is one atomic step of the ledger, and safe to run twice (ioredis
 * sends a command again when the connection broke before its answer came).
 * A reservation `res:<job>` is a hash; `active:<key>` (one per user key, scope
 * key and the account) lists the reservations not yet ended. `owner:<id>` is a
 * process's lease: a reservation whose owner key is gone belongs to a dead
 * process and is ended by whichever script meets it first, which answers what
 * it ended (`answer`) so the caller reports it.
 *
 * ARGV of every script starts with: key prefix (`<prefix>:quota:`), daily keep ms, now.
 */
const PRELUDE = `
local P, keepMs, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local MONTH_KEEP_MS = ${MONTH_KEEP_MS}
local ACCOUNT = '${ACCOUNT_KEY}'
local FIELDS = {'userKey', 'scopeKey', 'day', 'month', 'nanos', 'owner', 'sent', 'job', 'at'}
-- The reservations of dead processes this script ended: released, settled at their estimate, and what those cost.
local ENDED = {released = {}, settled = {}, nanos = 0}
-- Charged at its estimate or released, as the money rule says (cutOffCostUsd): a job its dead process cut off, by
-- whether it was sent; unknown when its reservation has no owner (an older version wrote it).
local CUT_OFF_CHARGED = {sent = ${chargedCutOff(true)}, queued = ${chargedCutOff(false)}, unknown = ${chargedCutOff(undefined)}}

-- A script's reply, with what it ended of dead processes' reservations: {reply, released, settled, nanos}.
local function answer(reply)
  return {reply, ENDED.released, ENDED.settled, ENDED.nanos}
end

-- One usage record per settled job, in the same step as the charge: never lost, never doubled.
local function record(job, r, nanos, basis, requestId, outcome, images, size, quality)
  local entry = {jobId = job, time = now, day = r[3], month = r[4], userKey = r[1], scopeKey = r[2], nanos = nanos, basis = basis}
  entry.reservedNanos = tonumber(r[5])
  entry.reservedAt = tonumber(r[9])
  if r[8] and r[8] ~= '' then entry.job = r[8] end
  if requestId and requestId ~= '' then entry.requestId = requestId end
  if outcome and outcome ~= '' then entry.outcome = outcome end
  if images and images ~= '' then entry.images = tonumber(images) end
  if size and size ~= '' then entry.size = size end
  if quality and quality ~= '' then entry.quality = quality end
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
  -- The breaker's numbers of the scope: spent per 5 minutes and per hour, at the moment it is charged. Only for the
  -- scopes it watches (breakerApplies: '<platform>:<id>', never the CLI's or n8n's), as the file ledger keeps them.
  if nanos > 0 and string.find(r[2], ':', 1, true) then
    local b = P .. 'brk:' .. r[2]
    redis.call('hincrby', b, 'm' .. math.floor(now / ${BREAKER_BUCKET_MS}), nanos)
    redis.call('hincrby', b, 'h' .. math.floor(now / ${HOUR_MS}), nanos)
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
local function live(job)
  local r = load(job)
  if not r then return nil end
  if r[6] and redis.call('exists', P .. 'owner:' .. r[6]) == 1 then return r end
  forget(job, r)
  if CUT_OFF_CHARGED[not r[6] and 'unknown' or (r[7] == '1' and 'sent' or 'queued')] then
    charge(r, tonumber(r[5]))
    record(job, r, tonumber(r[5]), 'uncertain', nil)
    redis.call('hset', P .. 'uncertain', job, table.concat({r[5], r[3], r[1], r[2], now}, ' '))
    redis.call('pexpire', P .. 'uncertain', keepMs)
    ENDED.settled[#ENDED.settled + 1] = job
    ENDED.nanos = ENDED.nanos + tonumber(r[5])
  else
    ENDED.released[#ENDED.released + 1] = job
  end
  return nil
end

local function members(key)
  local out = {}
  local activeKey = P .. 'active:' .. key
  for _, job in ipairs(redis.call('zrange', activeKey, 0, -1)) do
    local r = live(job)
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
 *       limit in nanos ('' when none: a cold start), and the first and last 5-minute buckets of the last hour. The
 *       script knows no cap or limit of its own: it is handed them.
 * Answers (`answer`) {1} (reserved), or {0, code, used} (for the cooldown: {0, code, last job time}); for the breaker
 * {0, 'scope_paused', used, limit, 1 when this job tripped it}.
 */
export const RESERVE = `${PRELUDE}
local job, userKey, scopeKey, nanos, day, month = ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8], ARGV[9]
local owner, ownerValue, leaseMs = ARGV[10], ARGV[11], tonumber(ARGV[12])
local concurrent, cooldownMs = tonumber(ARGV[13]), tonumber(ARGV[14])
local capsEnd = 17 + tonumber(ARGV[16]) * 4
local breakerOn, breakerLimit = ARGV[capsEnd] == '1', tonumber(ARGV[capsEnd + 1])
local firstBucket, lastBucket = tonumber(ARGV[capsEnd + 2]), tonumber(ARGV[capsEnd + 3])

local existing = load(job)
if existing then
  if existing[1] == userKey and existing[2] == scopeKey and tonumber(existing[5]) == nanos then return answer({1}) end
  return redis.error_reply('DUPLICATE_JOB')
end

local stateKey = P .. 'brk-state:' .. scopeKey
if breakerOn then
  local paused = redis.call('hmget', stateKey, 'pausedAt', 'pausedNanos', 'limitNanos')
  if paused[1] then return answer({0, 'scope_paused', tonumber(paused[2] or '0'), tonumber(paused[3] or '0'), 0}) end
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
  if count >= concurrent then return answer({0, 'user_concurrency', count}) end
end

if cooldownMs and cooldownMs > 0 then
  local last = tonumber(redis.call('get', P .. 'last:' .. userKey))
  if last and now < last + cooldownMs then return answer({0, 'user_cooldown', last}) end
end

for i = 0, tonumber(ARGV[16]) - 1 do
  local at = 17 + i * 4
  local code, key, idx, limit = ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3])
  local u = used(key, listOf(key), idx, idx == 3 and day or month)
  if u + nanos > limit then return answer({0, code, u}) end
end

if breakerOn and breakerLimit then
  local recent = 0
  local fields = {}
  for b = firstBucket, lastBucket do fields[#fields + 1] = 'm' .. b end
  for _, v in ipairs(redis.call('hmget', P .. 'brk:' .. scopeKey, unpack(fields))) do recent = recent + tonumber(v or '0') end
  for _, r in ipairs(listOf(scopeKey)) do if r[2] == scopeKey then recent = recent + tonumber(r[5]) end end
  if recent + nanos > breakerLimit then
    redis.call('hset', stateKey, 'pausedAt', ARGV[3], 'pausedNanos', recent + nanos, 'limitNanos', breakerLimit)
    redis.call('sadd', P .. 'brk-scopes', scopeKey)
    return answer({0, 'scope_paused', recent + nanos, breakerLimit, 1})
  end
end

redis.call('set', P .. 'owner:' .. owner, ownerValue, 'PX', leaseMs)
redis.call('hset', P .. 'res:' .. job, 'userKey', userKey, 'scopeKey', scopeKey, 'nanos', ARGV[7], 'day', day, 'month', month,
  'at', ARGV[3], 'owner', owner, 'sent', '0')
if ARGV[15] ~= '' then redis.call('hset', P .. 'res:' .. job, 'job', ARGV[15]) end
for _, k in ipairs(keysOf({userKey, scopeKey})) do redis.call('zadd', P .. 'active:' .. k, now, job) end
redis.call('set', P .. 'last:' .. userKey, ARGV[3], 'PX', keepMs)
return answer({1})
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
export const MARK_SENT = `${PRELUDE}
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

/** KEYS[1]: the job's reservation. Marks it not sent (a retry waiting): a reconcile releases it. An ended one is left ended. */
export const MARK_UNSENT = `
if redis.call('exists', KEYS[1]) == 0 then return 0 end
redis.call('hset', KEYS[1], 'sent', '0')
return 1
`;

/**
 * ARGV: prelude, job, actualNanos, requestId (or ''), basis, outcome (or ''), images (or ''), then the process's copy
 * (userKey … at, ARGV[10..16]), then the size and quality the service reported (or '', ARGV[17..18]: recorded in place
 * of those asked). Charges the day and month the job was reserved in, and records it: 1. A job whose
 * reservation Redis lost (not listed as ended) is charged and recorded all the same, from the copy: 2. 0 when it had
 * ended before.
 */
export const SETTLE = `${PRELUDE}
local job, nanos = ARGV[4], tonumber(ARGV[5])
local r, lost = load(job), 0
if not r then
  if ARGV[10] == '' or endedBefore(job, ARGV[12]) then return 0 end
  r = {ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14], '', '1', ARGV[15], ARGV[16]}
  lost = 1
end
forget(job, r)
charge(r, nanos)
record(job, r, nanos, ARGV[7], ARGV[6], ARGV[8], ARGV[9], ARGV[17], ARGV[18])
return 1 + lost
`;

/**
 * ARGV: prelude, scope key, who. Resumes a paused scope: its state says who and when, and its last hour's buckets
 * are dropped (it counts from zero). Returns the state before as {pausedAt, pausedNanos, limitNanos}, or {} when it
 * was not paused.
 */
export const RESUME = `${PRELUDE}
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
export const RELEASE = `${PRELUDE}
local r = load(ARGV[4])
if not r then return 0 end
forget(ARGV[4], r)
return 1
`;

/** ARGV: prelude, key, field index (3 day, 4 month), current period. Answers (`answer`) spent plus reserved. */
export const SPENT = `${PRELUDE}
return answer(used(ARGV[4], members(ARGV[4]), tonumber(ARGV[5]), ARGV[6]))
`;

/** ARGV: prelude, day, month, then the keys. Answers (`answer`) per key its day's and month's spent plus reserved, as SPENT each. */
export const SPENT_MANY = `${PRELUDE}
local list, out = members(ACCOUNT), {}
for i = 6, #ARGV do
  out[#out + 1] = used(ARGV[i], list, 3, ARGV[4])
  out[#out + 1] = used(ARGV[i], list, 4, ARGV[5])
end
return answer(out)
`;

/** ARGV: prelude. Ends every reservation of a dead process; answers (`answer`) 0 and what it ended. */
export const RECONCILE = `${PRELUDE}
members(ACCOUNT)
return answer(0)
`;

/**
 * KEYS[1]: the scope's hash of chat admins' caps. ARGV: cap, nanos ('' clears), changedBy, now.
 * Returns the nanos it had before (or nil). Fields: `<cap>` nanos, `<cap>:by`, `<cap>:at`.
 */
export const SET_CAP = `
local old = redis.call('hget', KEYS[1], ARGV[1])
if ARGV[2] == '' then
  redis.call('hdel', KEYS[1], ARGV[1], ARGV[1] .. ':by', ARGV[1] .. ':at')
else
  redis.call('hset', KEYS[1], ARGV[1], ARGV[2], ARGV[1] .. ':by', ARGV[3], ARGV[1] .. ':at', ARGV[4])
end
return old
`;
