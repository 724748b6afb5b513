import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RedisConfig } from '../core/redis-config.js';
import { closeRedis, connectRedis, type RedisLogger } from '../core/redis-connection.js';
import { isProcessAlive, THIS_HOST } from './file-lock.js';
import { isOverridableCap, OVERRIDABLE_CAPS, ScopeSettingEntrySchema } from './cap-overrides.js';
import { capsAsData, exceedsReservation, fromNanos, periodKey, refusalFromStore, toNanos } from './rules.js';
import { MARK_SENT, RECONCILE, RELEASE, RESERVE, SET_CAP, SETTLE, SPENT } from './redis-ledger-scripts.js';
import type { CapOverrides, LedgerOptions, LegacyBotRecords, OverridableCap, QuotaStore, ReconcileReport, ReserveInput, ReserveResult, ScopeSettingEntry, SettleInfo, UsageQuery, UsageRecord } from './types.js';
import { DEFAULT_USAGE_RETENTION_DAYS, JobDetailsSchema, latestPerJob, matchesQuery, readBasis, usageRecord } from './usage-records.js';

export interface RedisQuotaStoreOptions extends LedgerOptions {
  /** A connected client (see `connectRedis`); `RedisQuotaStore.connect` makes one. */
  redis: Redis;
  /** The account's key prefix (`PICTOR_REDIS_PREFIX`); keys are `<prefix>:quota:…`. Default `pictor`. */
  prefix?: string | undefined;
  /** `close()` also closes `redis`. Default false (true from `connect`). */
  ownsConnection?: boolean | undefined;
}

const DEFAULT_PREFIX = 'pictor';
const DEFAULT_LEASE_MS = 60_000;
const DEFAULT_KEEP_DAYS = 7;
const DAY_MS = 24 * 60 * 60_000;
const HOUR_MS = 60 * 60_000;

/**
 * Erases a user's prompts, keeping every amount. KEYS: the usage stream, a scratch key, the user's active set;
 * ARGV: user key, the prefix of reservation keys. The stream is rebuilt under the same ids only if a record changed.
 */
const FORGET = `
local function scrub(text)
  local ok, job = pcall(cjson.decode, text)
  if not ok or type(job) ~= 'table' or job.prompt == nil then return nil end
  job.prompt = nil
  return cjson.encode(job)
end
for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  local job = redis.call('HGET', ARGV[2] .. id, 'job')
  local clean = job and redis.call('HGET', ARGV[2] .. id, 'userKey') == ARGV[1] and scrub(job)
  if clean then redis.call('HSET', ARGV[2] .. id, 'job', clean) end
end
local entries, changed = redis.call('XRANGE', KEYS[1], '-', '+'), false
for _, entry in ipairs(entries) do
  local ok, record = pcall(cjson.decode, entry[2][2])
  local clean = ok and type(record) == 'table' and record.userKey == ARGV[1] and type(record.job) == 'string' and scrub(record.job)
  if clean then
    record.job = clean
    entry[2][2] = cjson.encode(record)
    changed = true
  end
end
if not changed then return 0 end
redis.call('DEL', KEYS[2])
for _, entry in ipairs(entries) do redis.call('XADD', KEYS[2], entry[1], unpack(entry[2])) end
redis.call('RENAME', KEYS[2], KEYS[1])
return 1`;

type Arg = string | number;
type LedgerClient = Redis & {
  pictorSpendReserve(...args: Arg[]): Promise<[1] | [0, string, number]>;
  pictorSpendMarkSent(...args: Arg[]): Promise<number>;
  pictorSpendSettle(...args: Arg[]): Promise<number>;
  pictorSpendRelease(...args: Arg[]): Promise<number>;
  pictorSpendUsed(...args: Arg[]): Promise<number>;
  pictorSpendReconcile(...args: Arg[]): Promise<[string[], string[], string]>;
  pictorSpendSetCap(...args: Arg[]): Promise<string | null>;
  pictorSpendForget(...args: Arg[]): Promise<number>;
};

const SCRIPTS = {
  pictorSpendReserve: { numberOfKeys: 0, lua: RESERVE },
  pictorSpendMarkSent: { numberOfKeys: 0, lua: MARK_SENT },
  pictorSpendSettle: { numberOfKeys: 0, lua: SETTLE },
  pictorSpendRelease: { numberOfKeys: 0, lua: RELEASE },
  pictorSpendUsed: { numberOfKeys: 0, lua: SPENT },
  pictorSpendReconcile: { numberOfKeys: 0, lua: RECONCILE },
  pictorSpendSetCap: { numberOfKeys: 1, lua: SET_CAP },
  pictorSpendForget: { numberOfKeys: 3, lua: FORGET },
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
  readonly #usageRetentionMs: number;
  /** When this process last trimmed expired usage records (at most once an hour). */
  #usageTrimmedAt = Number.NEGATIVE_INFINITY;
  readonly #owner = `${THIS_HOST}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly #ownerValue = `${THIS_HOST} ${process.pid}`;
  /** Reservations this process made and has not ended. */
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
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#keepMs = Math.max(1, Math.floor(options.keepDays ?? DEFAULT_KEEP_DAYS)) * DAY_MS;
    this.#ownsConnection = options.ownsConnection ?? false;
    this.#onError = options.onError;
    this.#usageRetentionMs = Math.max(1, options.usageRetentionDays ?? DEFAULT_USAGE_RETENTION_DAYS) * DAY_MS;
    for (const [name, definition] of Object.entries(SCRIPTS)) {
      if (!(name in this.#redis)) this.#redis.defineCommand(name, definition);
    }
  }

  async reserve(input: ReserveInput): Promise<ReserveResult> {
    this.#assertOpen();
    const { jobId, userKey, scopeKey, estimateUsd, limits, now } = input;
    const nanos = toNanos('estimateUsd', estimateUsd);
    const cooldownMs = (limits.userCooldownSeconds ?? 0) * 1000;
    const caps = capsAsData(limits, userKey, scopeKey).flatMap((c) => [c.code, c.key, c.period === 'day' ? 3 : 4, c.limitNanos]);
    const concurrent = limits.userConcurrentJobs === undefined ? '' : String(limits.userConcurrentJobs);
    const [day, month, job] = [periodKey('day', now), periodKey('month', now), input.job ? JSON.stringify(input.job) : ''];
    const args = [jobId, userKey, scopeKey, nanos, day, month, this.#owner, this.#ownerValue, this.#leaseMs, concurrent, cooldownMs > 0 ? String(cooldownMs) : '', job];
    const reply = await this.#redis
      .pictorSpendReserve(...this.#prelude(now), ...args, caps.length / 4, ...caps)
      .catch((error: unknown) => {
        if (error instanceof Error && error.message.includes('DUPLICATE_JOB')) throw new Error(`job ${jobId} already has a reservation`);
        throw error;
      });
    if (reply[0] === 1) {
      this.#hold(jobId);
      return { ok: true };
    }
    const [, code, usedOrLast] = reply;
    return refusalFromStore(code, usedOrLast, input);
  }

  async markSent(jobId: string): Promise<void> {
    this.#assertOpen();
    const found = await this.#redis.pictorSpendMarkSent(...this.#prelude(Date.now()), jobId);
    if (found !== 1) throw new Error(`job ${jobId} has no reservation: it must not be sent`);
  }

  async settle(jobId: string, actualUsd: number, info: SettleInfo = {}): Promise<boolean> {
    const nanos = toNanos('actualUsd', actualUsd);
    this.#assertOpen();
    const now = Date.now();
    const settled = await this.#redis.pictorSpendSettle(...this.#prelude(now), jobId, nanos, info.requestId ?? '', info.basis ?? 'table');
    this.#held.delete(jobId);
    if (now - this.#usageTrimmedAt >= HOUR_MS) {
      this.#usageTrimmedAt = now;
      // Approximate (~) trimming is cheap: Redis drops whole nodes of the stream older than the retention.
      await this.#redis.xtrim(this.#usageKey(), 'MINID', '~', String(now - this.#usageRetentionMs)).catch((error: unknown) => this.#onError?.(error));
    }
    return settled === 1;
  }

  /** The usage records of the stream `<prefix>:quota:usage`, oldest first. */
  async usage(query: UsageQuery): Promise<UsageRecord[]> {
    this.#assertOpen();
    // Stream ids are Redis's clock, records the callers' `now`, and a job counts in the day it was reserved (it may be
    // settled days later, by a reconcile): read from a day's margin before `since` to the end, then filter.
    const from = query.since === undefined ? '-' : String(Math.max(0, query.since - DAY_MS));
    const entries = await this.#redis.xrange(this.#usageKey(), from, '+');
    const records: UsageRecord[] = [];
    for (const [, fields] of entries) {
      const record = parseStreamRecord(fields[fields.indexOf('r') + 1]);
      if (record && matchesQuery(record, query)) records.push(record);
    }
    return latestPerJob(records);
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

  /** Rebuilds the usage stream without the user's prompts (same ids, in one step) and scrubs their open reservations. */
  async forgetPrompts(userKey: string): Promise<void> {
    this.#assertOpen();
    const usage = this.#usageKey();
    await this.#redis.pictorSpendForget(usage, `${usage}:rewrite`, this.#key('active', userKey), userKey, `${this.prefix}:quota:res:`);
  }

  /** Older versions' `quota:settings:<scopeKey>` hashes and `quota:seen:<id>` keys, deleted as they are taken. */
  async takeLegacy(): Promise<LegacyBotRecords> {
    this.#assertOpen();
    const taken: LegacyBotRecords = { settings: {}, seen: [] };
    for (const kind of ['settings', 'seen'] as const) {
      const pattern = `${this.prefix}:quota:${kind}:*`;
      let cursor = '0';
      do {
        const [next, keys] = await this.#redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        cursor = next;
        for (const key of keys) {
          const id = key.slice(pattern.length - 1);
          if (kind === 'seen') taken.seen.push(id);
          else taken.settings[id] = Object.fromEntries(Object.entries(await this.#redis.hgetall(key)).flatMap(([name, raw]) => (parseSettingEntry(raw) ? [[name, parseSettingEntry(raw)!]] : [])));
          await this.#redis.del(key);
        }
      } while (cursor !== '0');
    }
    return taken;
  }

  #capsKey(scopeKey: string): string {
    return `${this.prefix}:quota:caps:${scopeKey}`;
  }

  #usageKey(): string {
    return `${this.prefix}:quota:usage`;
  }

  async release(jobId: string): Promise<void> {
    this.#assertOpen();
    await this.#redis.pictorSpendRelease(...this.#prelude(Date.now()), jobId);
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

  /** Renews the lease now (the timer does it every third of `leaseMs`). */
  async renewLease(): Promise<void> {
    await this.#redis.set(this.#key('owner', this.#owner), this.#ownerValue, 'PX', this.#leaseMs);
  }

  #prelude(now: number): Arg[] {
    return [`${this.prefix}:quota:`, this.#keepMs, now];
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
    this.renewLease().catch((error: unknown) => this.#onError?.(error));
  }

  #key(kind: 'owner' | 'active', ...parts: string[]): string {
    return [this.prefix, 'quota', kind, ...parts].join(':');
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('the quota store is closed');
  }
}

/** A stream entry's record (written by the Lua `record`), or undefined when it cannot be read. */
function parseStreamRecord(text: string | undefined): UsageRecord | undefined {
  if (text === undefined) return undefined;
  try {
    type Raw = { jobId: string; time: number; day: string; month?: string; userKey: string; scopeKey: string; nanos: number; reservedNanos?: number; basis: string; requestId?: string; job?: string };
    const raw = JSON.parse(text) as Raw;
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
