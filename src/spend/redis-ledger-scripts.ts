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

/**
 * `decodeJson(text)`: the JSON text's value, or nil when it is none. JavaScript writes half a surrogate pair (a
 * prompt cut in the middle of an emoji) as an escape (`\ud800`) that Redis's cjson refuses, while JavaScript reads
 * it: such a text is read again with each half alone as U+FFFD (and a whole pair as its character), so a script
 * takes a job's details, prompt included, as RedisQuotaStore's look through the stream does. This version sends
 * well-formed text (`encodeJob`); older versions' entries and reservations may still hold such halves. The second
 * read is one pass from left to right, each escape read once, so a prompt of backslashes costs its length, never
 * its square: Redis answers no one while a script runs.
 */
const DECODE_JSON = `
local function decodeJson(text)
  local ok, value = pcall(cjson.decode, text)
  if ok then return value end
  local BACKSLASH, REPLACEMENT = string.char(92), string.char(0xEF, 0xBF, 0xBD)
  local parts, from, at = {}, 1, 1
  while true do
    local slash = string.find(text, BACKSLASH, at, true)
    if not slash then break end
    local high = string.match(text, '^u([dD][89a-fA-F]%x%x)', slash + 1)
    if high then
      parts[#parts + 1] = string.sub(text, from, slash - 1)
      local low = tonumber(high, 16) < 0xDC00 and string.sub(text, slash + 6, slash + 7) == BACKSLASH .. 'u'
        and string.match(text, '^[dD][c-fC-F]%x%x', slash + 8)
      if low then
        local c = 0x10000 + (tonumber(high, 16) - 0xD800) * 0x400 + tonumber(low, 16) - 0xDC00
        parts[#parts + 1] = string.char(0xF0 + math.floor(c / 0x40000), 0x80 + math.floor(c / 0x1000) % 0x40, 0x80 + math.floor(c / 0x40) % 0x40, 0x80 + c % 0x40)
        from = slash + 12
      else
        parts[#parts + 1] = REPLACEMENT
        from = slash + 6
      end
      at = from
    else
      -- Any other escape (an escaped backslash among them) is kept as written: the next one starts after it.
      at = slash + 2
    end
  end
  parts[#parts + 1] = string.sub(text, from)
  ok, value = pcall(cjson.decode, table.concat(parts))
  if ok then return value end
end
`;

/*
 * Every script is one atomic step of the ledger, and safe to run twice (ioredis
 * sends a command again when the connection broke before its answer came).
 * A reservation `res:<job>` is a hash; `active:<key>` (one per user key, scope
 * key and the account) lists the reservations not yet ended. `owner:<id>` is a
 * process's lease: a reservation whose owner key is gone belongs to a dead
 * process and is ended by whichever script meets it first, which answers what
 * it ended (`answer`) so the caller reports it.
 *
 * ARGV of every script starts with: key prefix (`<prefix>:quota:`), daily keep ms, now, the usage records' retention ms.
 */
const PRELUDE = `
local P, keepMs, now, usageKeepMs = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
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
${DECODE_JSON}
-- A record's prompt, kept beside the usage stream (never inside it): in the member's hash \`prompts:<userKey>\` by the
-- entry's id, indexed by time in \`prompts-at:<userKey>\`. The stream's trim (RedisQuotaStore) drops each with its
-- record; an idle member's keys expire with the retention. Forget deletes the two keys. Each write also drops up to
-- 100 of the member's prompts older than the retention (by the entry ids' clock): those whose records something else
-- dropped (an older version's trim, during a rolling upgrade) go all the same.
local function keepPrompt(userKey, id, prompt)
  local texts, at = P .. 'prompts:' .. userKey, P .. 'prompts-at:' .. userKey
  local expired = redis.call('zrangebyscore', at, '-inf', '(' .. (tonumber(string.match(id, '^%d+')) - usageKeepMs), 'LIMIT', 0, 100)
  if #expired > 0 then
    redis.call('hdel', texts, unpack(expired))
    redis.call('zrem', at, unpack(expired))
  end
  redis.call('hset', texts, id, prompt)
  redis.call('zadd', at, string.match(id, '^%d+'), id)
  redis.call('pexpire', texts, usageKeepMs)
  redis.call('pexpire', at, usageKeepMs)
end

-- One usage record per settled job, in the same step as the charge: never lost, never doubled. Its prompt, when one
-- is kept, goes beside the stream (\`keepPrompt\`); the entry says it has one (\`prompted\`).
local function record(job, r, nanos, basis, requestId, outcome, images, size, quality)
  local entry = {jobId = job, time = now, day = r[3], month = r[4], userKey = r[1], scopeKey = r[2], nanos = nanos, basis = basis}
  entry.reservedNanos = tonumber(r[5])
  entry.reservedAt = tonumber(r[9])
  local prompt
  if r[8] and r[8] ~= '' then
    entry.job = r[8]
    local details = decodeJson(r[8])
    if type(details) == 'table' and type(details.prompt) == 'string' then
      prompt = details.prompt
      details.prompt = nil
      entry.job = cjson.encode(details)
      entry.prompted = 1
    end
  end
  if requestId and requestId ~= '' then entry.requestId = requestId end
  if outcome and outcome ~= '' then entry.outcome = outcome end
  if images and images ~= '' then entry.images = tonumber(images) end
  if size and size ~= '' then entry.size = size end
  if quality and quality ~= '' then entry.quality = quality end
  local id = redis.call('xadd', P .. 'usage', '*', 'r', cjson.encode(entry))
  if prompt then keepPrompt(r[1], id, prompt) end
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
local job, userKey, scopeKey, nanos, day, month = ARGV[5], ARGV[6], ARGV[7], tonumber(ARGV[8]), ARGV[9], ARGV[10]
local owner, ownerValue, leaseMs = ARGV[11], ARGV[12], tonumber(ARGV[13])
local concurrent, cooldownMs = tonumber(ARGV[14]), tonumber(ARGV[15])
local capsEnd = 18 + tonumber(ARGV[17]) * 4
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

for i = 0, tonumber(ARGV[17]) - 1 do
  local at = 18 + i * 4
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
redis.call('hset', P .. 'res:' .. job, 'userKey', userKey, 'scopeKey', scopeKey, 'nanos', ARGV[8], 'day', day, 'month', month,
  'at', ARGV[3], 'owner', owner, 'sent', '0')
if ARGV[16] ~= '' then redis.call('hset', P .. 'res:' .. job, 'job', ARGV[16]) end
for _, k in ipairs(keysOf({userKey, scopeKey})) do redis.call('zadd', P .. 'active:' .. k, now, job) end
redis.call('set', P .. 'last:' .. userKey, ARGV[3], 'PX', keepMs)
return answer({1})
`;

/*
 * "The process's copy" below is the reservation as the process that made it keeps it, seven ARGV: userKey, scopeKey,
 * day, month, nanos, job details (JSON or ''), reserved at. All '' when the process has no copy (it did not make it).
 */

/**
 * ARGV: prelude, job, then the process's copy (userKey … at, ARGV[6..12]), owner, ownerValue, leaseMs. Returns 1; 2
 * when the reservation was lost by Redis and has been put back from the copy (sent); 0 when the job has ended (or
 * there is no copy): it must not be sent.
 */
export const MARK_SENT = `${PRELUDE}
local job = ARGV[5]
if load(job) then
  redis.call('hset', P .. 'res:' .. job, 'sent', '1')
  return 1
end
if ARGV[6] == '' or endedBefore(job, ARGV[8]) then return 0 end
redis.call('set', P .. 'owner:' .. ARGV[13], ARGV[14], 'PX', tonumber(ARGV[15]))
redis.call('hset', P .. 'res:' .. job, 'userKey', ARGV[6], 'scopeKey', ARGV[7], 'nanos', ARGV[10], 'day', ARGV[8], 'month', ARGV[9],
  'at', ARGV[12], 'owner', ARGV[13], 'sent', '1')
if ARGV[11] ~= '' then redis.call('hset', P .. 'res:' .. job, 'job', ARGV[11]) end
for _, k in ipairs(keysOf({ARGV[6], ARGV[7]})) do redis.call('zadd', P .. 'active:' .. k, now, job) end
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
 * (userKey … at, ARGV[11..17]), then the size and quality the service reported (or '', ARGV[18..19]: recorded in place
 * of those asked). Charges the day and month the job was reserved in, and records it: 1. A job whose
 * reservation Redis lost (not listed as ended) is charged and recorded all the same, from the copy: 2. 0 when it had
 * ended before.
 */
export const SETTLE = `${PRELUDE}
local job, nanos = ARGV[5], tonumber(ARGV[6])
local r, lost = load(job), 0
if not r then
  if ARGV[11] == '' or endedBefore(job, ARGV[13]) then return 0 end
  r = {ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[15], '', '1', ARGV[16], ARGV[17]}
  lost = 1
end
forget(job, r)
charge(r, nanos)
record(job, r, nanos, ARGV[8], ARGV[7], ARGV[9], ARGV[10], ARGV[18], ARGV[19])
return 1 + lost
`;

/**
 * ARGV: prelude, scope key, who. Resumes a paused scope: its state says who and when, and its last hour's buckets
 * are dropped (it counts from zero). Returns the state before as {pausedAt, pausedNanos, limitNanos}, or {} when it
 * was not paused.
 */
export const RESUME = `${PRELUDE}
local stateKey = P .. 'brk-state:' .. ARGV[5]
local before = redis.call('hmget', stateKey, 'pausedAt', 'pausedNanos', 'limitNanos', 'resumedAt', 'resumedBy')
if not before[1] then return {} end
redis.call('hdel', stateKey, 'pausedAt', 'pausedNanos', 'limitNanos')
redis.call('hset', stateKey, 'resumedAt', ARGV[3], 'resumedBy', ARGV[6])
local b = P .. 'brk:' .. ARGV[5]
for _, field in ipairs(redis.call('hkeys', b)) do
  if string.sub(field, 1, 1) == 'm' then redis.call('hdel', b, field) end
end
return {before[1], before[2] or '0', before[3] or '0', before[4] or '', before[5] or ''}
`;

/** ARGV: prelude, job. */
export const RELEASE = `${PRELUDE}
local r = load(ARGV[5])
if not r then return 0 end
forget(ARGV[5], r)
return 1
`;

/** ARGV: prelude, key, field index (3 day, 4 month), current period. Answers (`answer`) spent plus reserved. */
export const SPENT = `${PRELUDE}
return answer(used(ARGV[5], members(ARGV[5]), tonumber(ARGV[6]), ARGV[7]))
`;

/** ARGV: prelude, day, month, then the keys. Answers (`answer`) per key its day's and month's spent plus reserved, as SPENT each. */
export const SPENT_MANY = `${PRELUDE}
local list, out = members(ACCOUNT), {}
for i = 7, #ARGV do
  out[#out + 1] = used(ARGV[i], list, 3, ARGV[5])
  out[#out + 1] = used(ARGV[i], list, 4, ARGV[6])
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

/*
 * Forgetting a member's prompts. A prompt is kept beside the usage stream (`keepPrompt`), so forgetting is deleting the
 * member's two prompt keys. Versions before kept prompts inside the stream's entries, and one still running (a replica
 * mid-restart, an older n8n package) may write such an entry at any time. So the stream is looked through in batches
 * (RedisQuotaStore, `XRANGE … COUNT`, never one long script) up to its end, at the start, with the hourly trim and
 * before each forget: `usage:looked` is the last entry looked through, `usage:legacy-members` the members found with a
 * prompt inside an entry. Forget reads only the entries after `usage:looked` (written since the last look); a member
 * listed, or found there, has the stream rebuilt without those prompts, as versions before did.
 */

/**
 * ARGV: key prefix, the `usage:looked` the batch started after ('' for none), the batch's last entry id, then the
 * members with a prompt inside one of its entries. Lists them and moves `usage:looked` on, unless another process
 * moved it meanwhile (then 0: that one looks on). The first look deletes the marks of the version before, which
 * looked once (`usage:layout`, `usage:legacy`, `usage:legacy-scanned`, `usage:legacy-cleared`). Returns 1.
 */
export const LOOKED_THROUGH = `
local P = ARGV[1]
if (redis.call('get', P .. 'usage:looked') or '') ~= ARGV[2] then return 0 end
for i = 4, #ARGV do redis.call('sadd', P .. 'usage:legacy-members', ARGV[i]) end
redis.call('set', P .. 'usage:looked', ARGV[3])
if ARGV[2] == '' then redis.call('del', P .. 'usage:layout', P .. 'usage:legacy', P .. 'usage:legacy-scanned', P .. 'usage:legacy-cleared') end
return 1
`;

/**
 * ARGV: key prefix, user key, the most entries after the last look it reads. Erases the member's prompts, keeping every amount: in its open reservations, its prompt
 * keys, and (when the member is listed, or has a prompt inside an entry written since the last look) inside the
 * stream's entries, by rebuilding the stream under the same ids. More entries than that after the last look
 * (`usage:looked`) and it changes nothing and returns -1: the caller looks through them first. When anything was erased the stream's rewrite count goes up: a reader that keeps records (the
 * console) reads them all again (\`usageSince\`), so the prompts leave its memory too. Returns 1 when anything was
 * erased, else 0.
 */
export const FORGET = `
local P, user, most = ARGV[1], ARGV[2], tonumber(ARGV[3])
local erased = false
${DECODE_JSON}
-- A job's details without their prompt, or nil without one: a prompt is a string, as the look through the stream
-- takes it (RedisQuotaStore's memberWithPrompt); anything else (a number, a table, JSON null) is left as written.
local function scrub(text)
  local job = decodeJson(text)
  if type(job) ~= 'table' or type(job.prompt) ~= 'string' then return nil end
  job.prompt = nil
  return cjson.encode(job)
end
-- The entry's record without the member's prompt inside it, or nil when it holds none of theirs.
local function scrubbed(entry)
  local record = decodeJson(entry[2][2])
  local clean = type(record) == 'table' and record.userKey == user and type(record.job) == 'string' and scrub(record.job)
  if not clean then return nil end
  record.job = clean
  return cjson.encode(record)
end
local stream = P .. 'usage'
local listed = redis.call('sismember', P .. 'usage:legacy-members', user) == 1
local tail = {}
if not listed then
  local looked = redis.call('get', P .. 'usage:looked')
  tail = redis.call('xrange', stream, looked and '(' .. looked or '-', '+', 'COUNT', most + 1)
  if #tail > most then return -1 end
end
for _, id in ipairs(redis.call('zrange', P .. 'active:' .. user, 0, -1)) do
  local job = redis.call('hget', P .. 'res:' .. id, 'job')
  local clean = job and redis.call('hget', P .. 'res:' .. id, 'userKey') == user and scrub(job)
  if clean then
    redis.call('hset', P .. 'res:' .. id, 'job', clean)
    erased = true
  end
end
if redis.call('del', P .. 'prompts:' .. user, P .. 'prompts-at:' .. user) > 0 then erased = true end

for _, entry in ipairs(tail) do
  if scrubbed(entry) then listed = true; break end
end
if listed then
  local entries, changed = redis.call('xrange', stream, '-', '+'), false
  for _, entry in ipairs(entries) do
    local clean = scrubbed(entry)
    if clean then
      entry[2][2] = clean
      changed = true
    end
  end
  if changed then
    local scratch = stream .. ':rewrite'
    redis.call('del', scratch)
    for _, entry in ipairs(entries) do redis.call('xadd', scratch, entry[1], unpack(entry[2])) end
    redis.call('rename', scratch, stream)
    erased = true
  end
  redis.call('srem', P .. 'usage:legacy-members', user)
end
if not erased then return 0 end
redis.call('incr', P .. 'usage:rewrites')
return 1
`;
