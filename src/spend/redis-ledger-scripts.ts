/**
 * The spend ledger's rules as Redis runs them (RedisQuotaStore calls these
 * scripts): the same checks, order and numbers as the rulebook (`rules.ts`)
 * and the document ledger (`ledger-document.ts`), each one atomic step.
 */
import { ACCOUNT_KEY } from './types.js';

/** Monthly totals are kept this long (this month and the last, whatever the day). */
const MONTH_KEEP_MS = 62 * 24 * 60 * 60_000;

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
local FIELDS = {'userKey', 'scopeKey', 'day', 'month', 'nanos', 'owner', 'sent', 'job'}

-- One usage record per settled job, in the same step as the charge: never lost, never doubled.
local function record(job, r, nanos, basis, requestId)
  local entry = {jobId = job, time = now, day = r[3], month = r[4], userKey = r[1], scopeKey = r[2], nanos = nanos, basis = basis}
  entry.reservedNanos = tonumber(r[5])
  if r[8] and r[8] ~= '' then entry.job = r[8] end
  if requestId and requestId ~= '' then entry.requestId = requestId end
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
end

local function forget(job, r)
  redis.call('del', P .. 'res:' .. job)
  for _, k in ipairs(keysOf(r)) do redis.call('zrem', P .. 'active:' .. k, job) end
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
 *       (3: its day, 4: its month), limit in nanos. The script knows no cap of its own: it is handed them.
 * Returns {1} (reserved), or {0, code, used} (for the cooldown: {0, code, last job time}).
 */
export const RESERVE = `${PRELUDE}
local job, userKey, scopeKey, nanos, day, month = ARGV[4], ARGV[5], ARGV[6], tonumber(ARGV[7]), ARGV[8], ARGV[9]
local owner, ownerValue, leaseMs = ARGV[10], ARGV[11], tonumber(ARGV[12])
local concurrent, cooldownMs = tonumber(ARGV[13]), tonumber(ARGV[14])

local existing = load(job)
if existing then
  if existing[1] == userKey and existing[2] == scopeKey and tonumber(existing[5]) == nanos then return {1} end
  return redis.error_reply('DUPLICATE_JOB')
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

redis.call('set', P .. 'owner:' .. owner, ownerValue, 'PX', leaseMs)
redis.call('hset', P .. 'res:' .. job, 'userKey', userKey, 'scopeKey', scopeKey, 'nanos', ARGV[7], 'day', day, 'month', month,
  'at', ARGV[3], 'owner', owner, 'sent', '0')
if ARGV[15] ~= '' then redis.call('hset', P .. 'res:' .. job, 'job', ARGV[15]) end
for _, k in ipairs(keysOf({userKey, scopeKey})) do redis.call('zadd', P .. 'active:' .. k, now, job) end
redis.call('set', P .. 'last:' .. userKey, ARGV[3], 'PX', keepMs)
return {1}
`;

/** ARGV: prelude, job. Returns 1, or 0 when the job has no reservation. */
export const MARK_SENT = `${PRELUDE}
if not load(ARGV[4]) then return 0 end
redis.call('hset', P .. 'res:' .. ARGV[4], 'sent', '1')
return 1
`;

/** ARGV: prelude, job, actualNanos, requestId (or ''), basis. Charges the day and month the job was reserved in, and records it. */
export const SETTLE = `${PRELUDE}
local r = load(ARGV[4])
if not r then return 0 end
forget(ARGV[4], r)
charge(r, tonumber(ARGV[5]))
record(ARGV[4], r, tonumber(ARGV[5]), ARGV[7], ARGV[6])
return 1
`;

/** ARGV: prelude, job. */
export const RELEASE = `${PRELUDE}
local r = load(ARGV[4])
if not r then return 0 end
forget(ARGV[4], r)
return 1
`;

/** ARGV: prelude, key, field index (3 day, 4 month), current period. Spent plus reserved. */
export const SPENT = `${PRELUDE}
return used(ARGV[4], members(ARGV[4]), tonumber(ARGV[5]), ARGV[6])
`;

/** ARGV: prelude. Ends every reservation of a dead process; returns {released, settled}. */
export const RECONCILE = `${PRELUDE}
local ended = {released = {}, settled = {}, nanos = 0}
members(ACCOUNT, ended)
return {ended.released, ended.settled, tostring(ended.nanos)}
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

