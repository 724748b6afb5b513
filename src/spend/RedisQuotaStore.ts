import type { Redis } from 'ioredis';
import type { RedisConfig } from '../core/redis-config.js';
import { closeRedis, connectRedis, type RedisLogger } from '../core/redis-connection.js';
import { renewLeaseKey } from '../core/redis-lease-renewal.js';
import { isProcessAlive, THIS_HOST } from './file-lock.js';
import { keptLedgerKeys, quotaKey } from './ledger-files.js';
import { capOverrideNanos, OVERRIDABLE_CAPS, ScopeSettingEntrySchema } from './cap-overrides.js';
import { BREAKER_WINDOW_MS, breakerLimit, historyHours, HOUR_MS, recentBucket } from './breaker.js';
import { firstRefusalDay, inReservationOrder, REFUSAL_KEEP_DAYS, settledBasis, type Reservation } from './ledger-document.js';
import { breakerWatches, capsAsData, exceedsReservation, fromNanos, periodKey, refusalFromStore, toNanos } from './rules.js';
import { setTimeout as delay } from 'node:timers/promises';
import { FORGET, LOOKED_THROUGH, MARK_SENT, MARK_UNSENT, RECONCILE, RELEASE, RESERVE, RESUME, SET_CAP, SETTLE, SPENT, SPENT_MANY } from './redis-ledger-scripts.js';
import { safeJson } from '../core/safe-json.js';
import { LedgerLookFailedError } from './errors.js';
import { StoreProcess } from './store-process.js';
import type { ActiveJob, BreakerState, CapOverrides, LedgerOptions, LedgerStorage, LegacyBotRecords, LegacyLeft, OverridableCap } from './types.js';
import type { QuotaStore, ReconcileReport, RefusalCounts, ReserveInput, ReserveResult, SettleInfo, UsageFeed, UsageQuery, UsageRecord } from './types.js';
import { DAY_MS, utcDay, utcDayBefore } from './utc-period.js';
import { JobDetailsSchema, readBasis, usageMatching, usageRecord } from './usage-records.js';

export interface RedisQuotaStoreOptions extends LedgerOptions {
  /** A connected client (see `connectRedis`); `RedisQuotaStore.connect` makes one. */
  redis: Redis;
  /** The account's key prefix (`PICTOR_REDIS_PREFIX`); keys are `<prefix>:quota:…`. Default `pictor`. */
  prefix?: string | undefined;
}

type Arg = string | number;
/** What a script that may meet dead processes' reservations answers (`answer`): its reply, then what it ended of them. */
type Ended<R> = [reply: R, released: string[], settledAtEstimate: string[], nanos: number];
/** A script for `defineCommand`, with what it answers (`reply`, a type only). */
const script = <R>(numberOfKeys: number, lua: string): { numberOfKeys: number; lua: string; reply?: R } => ({ numberOfKeys, lua });

const SCRIPTS = {
  pictorSpendReserve: script<Ended<[1] | [0, string, number]>>(0, RESERVE),
  pictorSpendMarkSent: script<number>(0, MARK_SENT),
  pictorSpendMarkUnsent: script<number>(1, MARK_UNSENT),
  pictorSpendSettle: script<number>(0, SETTLE),
  pictorSpendRelease: script<number>(0, RELEASE),
  pictorSpendUsed: script<Ended<number>>(0, SPENT),
  pictorSpendUsedMany: script<Ended<number[]>>(0, SPENT_MANY),
  pictorSpendReconcile: script<Ended<0>>(0, RECONCILE),
  pictorSpendSetCap: script<string | null>(1, SET_CAP),
  pictorSpendResume: script<string[]>(0, RESUME),
  pictorSpendForget: script<number>(0, FORGET),
  pictorSpendLookedThrough: script<number>(0, LOOKED_THROUGH),
};
type LedgerClient = Redis & { [Name in keyof typeof SCRIPTS]: (...args: Arg[]) => Promise<Exclude<(typeof SCRIPTS)[Name]['reply'], undefined>> };

/**
 * The QuotaStore shared by every process that uses the same Redis and prefix: each step of the ledger is one Lua
 * script (`redis-ledger-scripts.ts`, keys in docs/shared-limits.md), so two processes can never both spend the last
 * dollar of a cap. Scripts name keys they compute from the prefix, so the store needs a single Redis (or a cluster
 * slot per prefix), as the shared limiter does.
 */
export class RedisQuotaStore implements QuotaStore {
  readonly prefix: string;
  readonly #client: LedgerClient;
  /** Set by `connect` only: `close()` closes the connection it made. */
  #ownsConnection = false;
  readonly #process: StoreProcess<HeldReservation>;
  /** The hour (`floor(ms / HOUR_MS)`, by the store's clock) in which this process last trimmed expired usage records. */
  #usageTrimmedHour: number | undefined;
  readonly #ownerValue = `${THIS_HOST} ${process.pid}`;
  /** Each scope's trailing spend for the breaker, by the hour it was read in (past hours never change). */
  readonly #history = new Map<string, { to: number; usd: number }>();

  /** Connects (failing fast with RedisUnavailableError) and returns a store that closes the connection on `close()`. */
  static async connect(
    config: RedisConfig,
    options: LedgerOptions & { connectTimeoutMs?: number | undefined; logger?: RedisLogger | undefined } = {},
  ): Promise<RedisQuotaStore> {
    const redis = await connectRedis(config.url, { connectTimeoutMs: options.connectTimeoutMs, logger: options.logger, name: `pictor-quota:${config.prefix}` });
    const store = new RedisQuotaStore({ ...options, redis, prefix: config.prefix });
    store.#ownsConnection = true;
    store.#lookThroughInBackground();
    return store;
  }

  constructor(options: RedisQuotaStoreOptions) {
    this.prefix = options.prefix ?? 'pictor';
    this.#client = options.redis as LedgerClient;
    this.#process = new StoreProcess(options, () => this.renewLease());
    for (const [name, definition] of Object.entries(SCRIPTS)) {
      if (!(name in this.#client)) this.#client.defineCommand(name, definition);
    }
  }

  /** The connection for every call but a lease's renewal: a closed store refuses. */
  get #redis(): LedgerClient {
    this.#process.assertOpen();
    return this.#client;
  }

  get storage(): LedgerStorage {
    return { kind: 'redis', redis: this.#client, prefix: this.prefix };
  }

  /** A reservation answered after `close` (asked before it) is refused by `hold`: no lease would keep it. */
  async reserve(input: ReserveInput): Promise<ReserveResult> {
    const { jobId, userKey, scopeKey, estimateUsd, limits, now } = input;
    const [day, month] = [periodKey('day', now), periodKey('month', now)];
    const nanos = toNanos('estimateUsd', estimateUsd);
    const cooldownMs = (limits.userCooldownSeconds ?? 0) * 1000;
    const caps = capsAsData(limits, userKey, scopeKey).flatMap((c) => [c.code, c.key, c.period === 'day' ? 3 : 4, c.limitNanos]);
    const watched = breakerWatches(limits, scopeKey);
    const limit = watched ? breakerLimit(await this.#historyOf(scopeKey, now), limits.breaker!) : undefined;
    const [reply] = await this.#redis
      .pictorSpendReserve(
        ...this.#prelude(now),
        jobId,
        userKey,
        scopeKey,
        nanos,
        day,
        month,
        this.#process.owner,
        this.#ownerValue,
        this.#process.leaseMs,
        limits.userConcurrentJobs === undefined ? '' : String(limits.userConcurrentJobs),
        cooldownMs > 0 ? String(cooldownMs) : '',
        encodeJob(input.job),
        caps.length / 4,
        ...caps,
        watched ? '1' : '',
        limit === undefined ? '' : toNanos('breaker limit', limit),
        recentBucket(now - BREAKER_WINDOW_MS),
        recentBucket(now),
      )
      .catch((error: unknown) => {
        if (error instanceof Error && error.message.includes('DUPLICATE_JOB')) throw new Error(`job ${jobId} already has a reservation`);
        throw error;
      })
      .then((answer) => this.#told(answer));
    if (reply[0] === 1) {
      this.#process.hold(jobId, { userKey, scopeKey, nanos, day, month, job: input.job, at: now });
      return { ok: true };
    }
    const [, code, usedOrLast, limitNanos, tripped] = reply as [0, string, number, number?, number?];
    return refusalFromStore(code, usedOrLast, input, { limitNanos: limitNanos ?? 0, tripped: tripped === 1 });
  }

  /** A scope's settled spend in the 7 days of the breaker's trailing average (whole past hours: read once an hour). */
  async #historyOf(scopeKey: string, now: number): Promise<number> {
    const { from, to } = historyHours(now);
    const cached = this.#history.get(scopeKey);
    if (cached?.to === to) return cached.usd;
    const fields = Array.from({ length: to - from }, (_, i) => `h${from + i}`);
    const values = await this.#redis.hmget(this.#key('brk', scopeKey), ...fields);
    const usd = fromNanos(values.reduce((sum, v) => sum + Number(v ?? 0), 0));
    if (this.#history.size > 10_000) this.#history.clear();
    this.#history.set(scopeKey, { to, usd });
    return usd;
  }

  async markSent(jobId: string): Promise<void> {
    const copy = this.#process.held.get(jobId);
    const found = await this.#redis.pictorSpendMarkSent(...this.#prelude(this.#process.clock()), jobId, ...copyArgs(copy), this.#process.owner, this.#ownerValue, this.#process.leaseMs);
    if (found === 0) throw new Error(`job ${jobId} has no reservation: it must not be sent`);
    if (found === 2 && copy) this.#process.lost(jobId, copy, 'send', undefined);
  }

  async markUnsent(jobId: string): Promise<void> {
    await this.#redis.pictorSpendMarkUnsent(this.#key('res', jobId));
  }

  async settle(jobId: string, actualUsd: number, info: SettleInfo = {}): Promise<boolean> {
    const nanos = toNanos('actualUsd', actualUsd);
    const now = this.#process.clock();
    const copy = this.#process.held.get(jobId);
    const settled = await this.#redis.pictorSpendSettle(
      ...this.#prelude(now),
      jobId,
      nanos,
      info.requestId ?? '',
      settledBasis(info),
      info.outcome ?? '',
      info.images === undefined ? '' : info.images,
      ...copyArgs(copy),
      info.size ?? '',
      info.quality ?? '',
    );
    this.#process.held.delete(jobId);
    if (settled === 2 && copy) this.#process.lost(jobId, copy, 'settle', fromNanos(nanos));
    // The first settle in an hour other than the last trim's trims (either way: a clock that jumped ahead and was set
    // back trims again at once, rather than when it passes the hour it jumped to), as the file ledger cleans up by day.
    const hour = Math.floor(now / HOUR_MS);
    if (hour !== this.#usageTrimmedHour) {
      this.#usageTrimmedHour = hour;
      // The job is settled: a store closed meanwhile leaves the trim to whoever is next (the error is reported, not thrown).
      await this.#trimUsage().catch((error: unknown) => this.#process.onError?.(new Error('could not drop expired usage records', { cause: error })));
      this.#lookThroughInBackground();
    }
    return settled >= 1;
  }

  /**
   * Drops the usage records older than the retention, with the prompts kept beside them: read in batches (those the
   * last trim left, so about an hour's), their prompts deleted, then the stream trimmed exactly to the last one read.
   * Its ids are Redis's clock (`XADD *`), so is the retention's start: by this process's clock, one ahead of Redis's by
   * more than the retention dropped every record, the one just written too.
   */
  async #trimUsage(): Promise<void> {
    const usage = this.#key('usage');
    const before = String((await redisNow(this.#client)) - this.#process.usageRetentionMs - 1);
    for (;;) {
      const entries = await this.#client.xrange(usage, '-', before, 'COUNT', LOOK_THROUGH_BATCH);
      if (entries.length === 0) return;
      const step = this.#client.multi();
      for (const [id, fields] of entries) {
        const member = promptKeptBy(entryRecord(fields));
        if (member !== undefined) step.hdel(this.#key('prompts', member), id).zrem(this.#key('prompts-at', member), id);
      }
      await step.xtrim(usage, 'MINID', idAfter(entries.at(-1)![0])).exec();
      if (entries.length < LOOK_THROUGH_BATCH) return;
    }
  }

  /**
   * Records match by their own day (the callers' clock, as `since`), but stream ids are Redis's clock: the read starts as
   * far back on Redis's clock as `since` is on this process's (less a margin), so a clock years off still finds them.
   */
  async usage(query: UsageQuery): Promise<UsageRecord[]> {
    const redis = this.#redis;
    const back = query.since === undefined ? undefined : this.#process.clock() - query.since + USAGE_READ_MARGIN_MS;
    const from = back === undefined ? '-' : String(Math.max(0, (await redisNow(redis)) - back));
    return usageMatching(await this.#records(await redis.xrange(this.#key('usage'), from, '+')), query);
  }

  async capOverrides(scopeKey: string): Promise<CapOverrides> {
    const fields = await this.#redis.hgetall(this.#key('caps', scopeKey));
    const overrides: CapOverrides = {};
    for (const cap of OVERRIDABLE_CAPS) {
      const nanos = fields[cap];
      if (nanos === undefined || !/^\d+$/.test(nanos)) continue;
      overrides[cap] = { usd: fromNanos(Number(nanos)), by: fields[`${cap}:by`] ?? '', at: Number(fields[`${cap}:at`] ?? 0) };
    }
    return overrides;
  }

  async setCapOverride(scopeKey: string, cap: OverridableCap, usd: number | undefined, changedBy: string, now: number): Promise<{ previousUsd: number | undefined }> {
    const previous = await this.#redis.pictorSpendSetCap(this.#key('caps', scopeKey), cap, capOverrideNanos(cap, usd) ?? '', changedBy, now);
    return { previousUsd: previous === null || previous === undefined ? undefined : fromNanos(Number(previous)) };
  }

  /**
   * Erases the member's prompts (`FORGET`: its own keys; the stream only when an older version's entry holds one of
   * theirs), then has Redis rewrite its append-only file. The stream is looked through to its end first, so the script
   * reads at most a batch written since (more, and it changes nothing: looked through again, up to `FORGET_TRIES`). A
   * look that fails fails the forget (`ledger_busy`, retryable) before anything is erased.
   */
  async forgetPrompts(userKey: string): Promise<void> {
    const redis = this.#redis;
    let erased = -1;
    for (let tries = 0; erased === -1; tries++) {
      if (tries === FORGET_TRIES) throw new LedgerLookFailedError(new Error(`more than ${LOOK_THROUGH_BATCH} usage records were written after each of ${tries} looks`));
      await this.lookThroughOlderEntries().catch((cause: unknown) => {
        throw new LedgerLookFailedError(cause);
      });
      erased = await redis.pictorSpendForget(this.#key(''), userKey, LOOK_THROUGH_BATCH);
    }
    this.#process.forgetPrompts(userKey);
    if (erased === 1) await this.#rewriteAppendOnlyFile();
  }

  /** Told once: Redis refused to rewrite its append-only file (a managed Redis may). */
  #aofRefusalTold = false;
  /** A rewrite to ask once the one running ends (at most one waits: it covers every forget before it is asked). */
  #rewriteAfterRunning: Promise<unknown> | undefined;
  /** Set when `close` reached its deadline before that rewrite was asked (and told so): it is asked no more. */
  #rewriteGivenUp = false;

  /**
   * An erased prompt stays in Redis's append-only file until Redis rewrites it: asked now, when Redis keeps one. A
   * rewrite already running may have copied the prompt: another is asked once it ends.
   */
  async #rewriteAppendOnlyFile(persistence?: string): Promise<void> {
    try {
      if (/^aof_enabled:1\b/m.test(persistence ?? (await this.#client.info('persistence')))) await this.#client.bgrewriteaof();
    } catch (error) {
      if (error instanceof Error && /already in progress/i.test(error.message)) {
        this.#rewriteAfterRunning ??= this.#afterRunningRewrite().catch(
          (cause: unknown) => this.#rewriteGivenUp || this.#process.onError?.(new Error('could not ask Redis to rewrite its append-only file again after prompts were erased', { cause })),
        );
        return;
      }
      if (this.#aofRefusalTold) return;
      this.#aofRefusalTold = true;
      this.#process.onError?.(new Error('Redis did not rewrite its append-only file after prompts were erased: they stay in it until it does', { cause: error }));
    }
  }

  /**
   * Waits until the running rewrite has ended (Redis's `INFO persistence`), then asks for another. The last check that
   * `close` has not given it up and the ask are one step (no wait between): once `close` told it was not asked, it is not.
   */
  async #afterRunningRewrite(): Promise<void> {
    for (;;) {
      const persistence = await this.#client.info('persistence');
      if (this.#rewriteGivenUp) return;
      if (!/^aof_rewrite_in_progress:1\b/m.test(persistence)) {
        this.#rewriteAfterRunning = undefined;
        return this.#rewriteAppendOnlyFile(persistence);
      }
      await delay(REWRITE_POLL_MS);
    }
  }

  #lookThroughInBackground(): void {
    this.lookThroughOlderEntries().catch((error: unknown) => this.#process.onError?.(new Error('could not look through the usage records of an older version', { cause: error })));
  }

  /**
   * Looks through the usage entries written since the last look (`usage:looked`) in batches (never one long script),
   * listing the members with a prompt inside one (what a process of an older version writes): their forget rebuilds
   * the stream. `connect` starts it, so does the hourly trim, and every forget waits for it; it resolves when it has
   * read to the stream's end. When another process's look moved the cursor meanwhile, it reads the cursor again and
   * goes on from there.
   */
  lookThroughOlderEntries(): Promise<void> {
    this.#lookingThrough ??= this.#lookThrough().finally(() => {
      this.#lookingThrough = undefined;
    });
    return this.#lookingThrough;
  }

  #lookingThrough: Promise<void> | undefined;

  async #lookThrough(): Promise<void> {
    const redis = this.#redis;
    let looked = (await redis.get(this.#key('usage', 'looked'))) ?? '';
    while (!this.#process.closed) {
      const entries = await redis.xrange(this.#key('usage'), looked === '' ? '-' : `(${looked}`, '+', 'COUNT', LOOK_THROUGH_BATCH);
      if (entries.length === 0) return;
      // Only an entry whose text names a prompt (quoted: the job's JSON is inside the record's) is parsed; most have none.
      const members = new Set(entries.flatMap(([, fields]) => memberWithPrompt(entryRecord(fields, '\\"prompt\\"')) ?? []));
      const last = entries.at(-1)![0];
      if ((await redis.pictorSpendLookedThrough(this.#key(''), looked, last, ...members)) === 0) {
        // Another process's look stepped meanwhile: on from where it left the cursor (what it read it listed).
        looked = (await redis.get(this.#key('usage', 'looked'))) ?? '';
        continue;
      }
      if (entries.length < LOOK_THROUGH_BATCH) return;
      looked = last;
    }
  }

  /**
   * Older versions' `quota:settings:<scopeKey>` hashes and `quota:seen:<id>` keys, found by one SCAN of the whole
   * keyspace (docs/shared-limits.md says what that costs). Once `accept` has resolved, each hash loses the fields as they
   * were read (one script a scope, none of a scope `accept` left) and the signatures go in one DEL.
   */
  async takeLegacy(accept: (records: LegacyBotRecords) => Promise<LegacyLeft | void>): Promise<void> {
    const redis = this.#redis;
    // One look for both (`quota:se*`: no other key of the ledger starts so); SCAN may repeat a key.
    const [settingsHead, seenHead, scopes, seenIds] = [`${this.#key('settings')}:`, `${this.#key('seen')}:`, new Set<string>(), new Set<string>()];
    for await (const keys of redis.scanStream({ match: `${this.#key('se')}*`, count: 500 })) {
      for (const key of keys as string[]) {
        if (key.startsWith(settingsHead)) scopes.add(key.slice(settingsHead.length));
        else if (key.startsWith(seenHead)) seenIds.add(key.slice(seenHead.length));
      }
    }
    const seen = [...seenIds];
    const taken: LegacyBotRecords = { settings: {}, seen };
    const read = new Map<string, string[]>();
    for (const scopeKey of scopes) {
      const fields = Object.entries(await redis.hgetall(this.#key('settings', scopeKey)));
      read.set(scopeKey, fields.flat());
      taken.settings[scopeKey] = Object.fromEntries(fields.flatMap(([name, raw]) => {
        const entry = ScopeSettingEntrySchema.safeParse(safeJson(raw)).data;
        return entry ? [[name, entry]] : [];
      }));
    }
    const notTaken = new Set((await accept(taken))?.settingsOf);
    // Deleted only once `accept` succeeded: a hand-over that fails leaves them for the next take. Of the settings, only
    // each field as it was read (a damaged one too): one an older version's process wrote meanwhile, or a scope `accept` left, stays for the next take.
    for (const [scopeKey, fields] of read) if (!notTaken.has(scopeKey)) await redis.eval(DELETE_FIELDS_AS_READ, 1, this.#key('settings', scopeKey), ...fields);
    if (seen.length > 0) await redis.del(...seen.map((id) => this.#key('seen', id)));
  }

  async allCapOverrides(): Promise<Record<string, CapOverrides>> {
    const all: Record<string, CapOverrides> = {};
    for (const scopeKey of await this.#scan('caps')) {
      const overrides = await this.capOverrides(scopeKey);
      if (Object.keys(overrides).length > 0) all[scopeKey] = overrides;
    }
    return all;
  }

  /** The members of `active:account` (every reservation counts for the account) and their hashes, in one round trip. */
  async activeJobs(): Promise<ActiveJob[]> {
    const [, active] = keptLedgerKeys(this.prefix);
    const jobIds = await this.#redis.zrange(active, 0, -1);
    if (jobIds.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const jobId of jobIds) pipeline.hmget(this.#key('res', jobId), 'userKey', 'scopeKey', 'nanos', 'at', 'sent', 'owner', 'job');
    const replies = (await pipeline.exec()) ?? [];
    const jobs: ActiveJob[] = [];
    jobIds.forEach((jobId, i) => {
      const [error, fields] = replies[i] ?? [];
      const [userKey, scopeKey, nanos, at, sent, owner, job] = (error ? [] : (fields as (string | null)[])) ?? [];
      if (!userKey || !scopeKey) return;
      const details = job ? JobDetailsSchema.safeParse(safeJson(job)).data : undefined;
      jobs.push({ jobId, userKey, scopeKey, usd: fromNanos(Number(nanos ?? 0)), at: Number(at ?? 0), sent: sent === '1', owner: owner ?? '', ...(details && { job: details }) });
    });
    return inReservationOrder(jobs);
  }

  /** After the cursor (`<rewrites>/<stream id>`); a stream made anew (no entry at the cursor's id) or rewritten since is read whole. */
  async usageSince(cursor: string | undefined): Promise<UsageFeed> {
    const key = this.#key('usage');
    const rewrites = (await this.#redis.get(this.#key('usage', 'rewrites'))) ?? '0';
    // Split at the first '/'; a cursor without one (an older version's) names no rewrite count: read again whole.
    const [, cursorRewrites = '', streamCursor = '0-0'] = /^([^/]*)\/(.*)$/s.exec(cursor ?? `${rewrites}/0-0`) ?? [];
    let reset = cursorRewrites !== rewrites;
    if (!reset && streamCursor !== '0-0') reset = (await this.#redis.xrange(key, streamCursor, '+', 'COUNT', 1)).length === 0;
    const entries = await this.#redis.xrange(key, reset || streamCursor === '0-0' ? '-' : `(${streamCursor}`, '+');
    const next = entries.at(-1)?.[0] ?? (reset ? '0-0' : streamCursor);
    return { records: await this.#records(entries), cursor: `${rewrites}/${next}`, reset };
  }

  /** The records of stream entries (field `r`; one that cannot be read is skipped), with the prompts kept beside them joined back. */
  async #records(entries: [id: string, fields: string[]][]): Promise<UsageRecord[]> {
    const raws = entries.map(([id, fields]) => ({ id, raw: entryRecord(fields) }));
    const asked = new Map<string, string[]>();
    for (const { id, raw } of raws) {
      const member = promptKeptBy(raw);
      if (member === undefined) continue;
      const ids = asked.get(member);
      if (ids) ids.push(id);
      else asked.set(member, [id]);
    }
    const prompts = new Map<string, string>();
    // One round trip for every member's prompts (none when no entry has one: an empty pipeline sends nothing).
    const pipeline = this.#redis.pipeline();
    for (const [userKey, ids] of asked) pipeline.hmget(this.#key('prompts', userKey), ...ids);
    const replies = (await pipeline.exec()) ?? [];
    [...asked.values()].forEach((ids, i) => {
      const [error, texts] = replies[i] ?? [];
      if (!error) ids.forEach((id, j) => typeof (texts as (string | null)[])[j] === 'string' && prompts.set(id, (texts as string[])[j]!));
    });
    return raws.flatMap(({ id, raw }) => (raw && storedRecord(raw, prompts.get(id))) ?? []);
  }

  async countRefusals(counts: Readonly<Record<string, number>>, now: number): Promise<void> {
    const redis = this.#redis;
    const entries = Object.entries(counts).filter(([, n]) => n > 0);
    if (entries.length === 0) return;
    const key = this.#key('refusals', utcDay(now));
    const transaction = redis.multi();
    for (const [code, n] of entries) transaction.hincrby(key, code, n);
    transaction.pexpire(key, REFUSAL_KEEP_DAYS * DAY_MS);
    await transaction.exec();
  }

  async refusals(sinceDay: string): Promise<RefusalCounts> {
    const now = this.#process.clock();
    const days: string[] = [];
    // Back from today, as far as counts are kept (a day's key outlives it: it expires a kept span after its last count).
    const oldest = firstRefusalDay(sinceDay, now);
    for (let back = 0; utcDayBefore(now, back) >= oldest; back++) days.unshift(utcDayBefore(now, back));
    const pipeline = this.#redis.pipeline();
    for (const day of days) pipeline.hgetall(this.#key('refusals', day));
    const replies = (await pipeline.exec()) ?? [];
    const counts: RefusalCounts = {};
    days.forEach((day, i) => {
      const fields = (replies[i]?.[1] ?? {}) as Record<string, string>;
      if (Object.keys(fields).length > 0) counts[day] = Object.fromEntries(Object.entries(fields).map(([code, n]) => [code, Number(n)]));
    });
    return counts;
  }

  async breakerStates(): Promise<Record<string, BreakerState>> {
    const scopes = await this.#redis.smembers(this.#key('brk-scopes'));
    const states: Record<string, BreakerState> = {};
    for (const scopeKey of scopes) {
      const state = breakerStateOf(await this.#redis.hmget(this.#key('brk-state', scopeKey), ...BREAKER_FIELDS));
      if (state.pausedAt !== undefined || state.resumedAt !== undefined) states[scopeKey] = state;
    }
    return states;
  }

  async resumeScope(scopeKey: string, by: string, now: number): Promise<BreakerState | undefined> {
    const before = await this.#redis.pictorSpendResume(...this.#prelude(now), scopeKey, by);
    return before.length === 0 ? undefined : breakerStateOf(before);
  }

  /** The `<id>` of every key `<prefix>:quota:<parts>:<id>`, each once (SCAN may repeat one). */
  async #scan(...parts: string[]): Promise<string[]> {
    const head = `${this.#key(...parts)}:`;
    const ids = new Set<string>();
    for await (const keys of this.#redis.scanStream({ match: `${head}*`, count: 500 })) {
      for (const key of keys as string[]) ids.add(key.slice(head.length));
    }
    return [...ids];
  }

  async release(jobId: string): Promise<void> {
    await this.#redis.pictorSpendRelease(...this.#prelude(this.#process.clock()), jobId);
    this.#process.held.delete(jobId);
  }

  async spentToday(key: string, now: number): Promise<number> {
    return fromNanos(this.#told(await this.#redis.pictorSpendUsed(...this.#prelude(now), key, 3, periodKey('day', now)))[0]);
  }

  async spentThisMonth(key: string, now: number): Promise<number> {
    return fromNanos(this.#told(await this.#redis.pictorSpendUsed(...this.#prelude(now), key, 4, periodKey('month', now)))[0]);
  }

  /** One script (`SPENT_MANY`): what `spentToday` and `spentThisMonth` answer per key, read in one atomic step. */
  async spentMany(keys: readonly string[], now: number): Promise<Map<string, { day: number; month: number }>> {
    if (keys.length === 0) return new Map();
    const [used] = this.#told(await this.#redis.pictorSpendUsedMany(...this.#prelude(now), periodKey('day', now), periodKey('month', now), ...keys));
    return new Map(keys.map((key, i) => [key, { day: fromNanos(used[2 * i]!), month: fromNanos(used[2 * i + 1]!) }]));
  }

  /** The `<key>` of every `spent:<month>:<key>` of the month (one SCAN of the keyspace: for the console's page, not for every job). */
  settledKeys(now: number): Promise<string[]> {
    return this.#scan('spent', periodKey('month', now));
  }

  /** A process of this machine whose pid is gone (killed, crashed) is dead at once: its lease is deleted before the script runs. */
  async reconcile(now: number): Promise<ReconcileReport> {
    this.#process.reconcileEachLease(() => this.reconcile(this.#process.clock()));
    for (const id of await this.#scan('owner', THIS_HOST)) {
      const owner = `${THIS_HOST}:${id}`;
      if (owner !== this.#process.owner && !isProcessAlive(Number(id.split(':')[0]))) await this.#redis.del(this.#key('owner', owner));
    }
    return this.#told(await this.#redis.pictorSpendReconcile(...this.#prelude(now)))[1];
  }

  /** A script's reply, and what it ended of dead processes' reservations (every script that meets them ends them), told once. */
  #told<R>([reply, released, settledAtEstimate, nanos]: Ended<R>): [R, ReconcileReport] {
    return [reply, this.#process.reconciled({ released, settledAtEstimate, chargedUsd: fromNanos(nanos) })];
  }

  /**
   * Stops renewing the lease (what is still reserved is ended within `leaseMs`) and closes the connection if it owns it.
   * A rewrite to ask again after a forget (one was running) is asked before the connection goes, waiting no later than
   * `until` (the stop's deadline): past it, it is not asked, and `onError` tells so. Called again while closing (a close
   * begun without a deadline, as a forget's of the other ledger), it ends that close by its own `until`.
   */
  async close(options: { until?: number | undefined } = {}): Promise<void> {
    if (this.#closing && options.until !== undefined) this.#closeBy?.(options.until);
    this.#closing ??= this.#close(options.until);
    return this.#closing;
  }

  #closing: Promise<void> | undefined;
  /** Moves the close's deadline earlier (the earliest given counts). */
  #closeBy: ((until: number) => void) | undefined;

  async #close(until: number | undefined): Promise<void> {
    this.#process.close();
    this.#process.held.clear();
    // A look through stops after its batch.
    const ended = Promise.all([this.#rewriteAfterRunning, this.#lookingThrough?.catch(() => undefined)]).then(() => true);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let deadline = Infinity;
    const late = new Promise<false>((resolve) => {
      this.#closeBy = (by) => {
        if (by >= deadline) return;
        deadline = by;
        clearTimeout(timer);
        timer = setTimeout(() => resolve(false), Math.max(0, by - Date.now()));
      };
    });
    if (until !== undefined) this.#closeBy?.(until);
    const inTime = await Promise.race([ended, late]);
    clearTimeout(timer);
    this.#closeBy = undefined;
    // Told in the same step as `#rewriteGivenUp` is set: a rewrite still to ask is then never sent (`#afterRunningRewrite`).
    if (!inTime && this.#rewriteAfterRunning) {
      this.#rewriteGivenUp = true;
      this.#process.onError?.(
        new Error(
          'closed before Redis’s running rewrite of its append-only file ended: the rewrite after prompts were erased was not asked, so they may stay in that file until Redis rewrites it itself',
        ),
      );
    }
    if (this.#ownsConnection) await closeRedis(this.#client);
  }

  /** Renews the lease now (the timer does it every third of `leaseMs`); once closed, nothing. */
  async renewLease(): Promise<void> {
    if (this.#process.closed) return;
    // Extended while it is there (a full Redis still does that), written only when gone.
    await renewLeaseKey(this.#client, { key: this.#key('owner', this.#process.owner), holder: this.#ownerValue, ttlMs: this.#process.leaseMs, writeWhenGone: true });
  }

  #prelude(now: number): Arg[] {
    return [this.#key(''), this.#process.keepDays * DAY_MS, now, this.#process.usageRetentionMs];
  }

  /** `<prefix>:quota:<parts>`: the keys of the table in docs/shared-limits.md. */
  #key(...parts: string[]): string {
    return quotaKey(this.prefix, ...parts);
  }
}

/** How much before `since` (on Redis's clock) `usage` reads: the UTC day of `since` began up to a day before it; a day more for the clocks' drift. */
const USAGE_READ_MARGIN_MS = 2 * DAY_MS;

/** Redis's own time (`TIME`), in ms: the clock of the usage stream's ids (`XADD *`). */
async function redisNow(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** How many usage entries the look-through and the trim read at a time. */
const LOOK_THROUGH_BATCH = 1000;
/** Deletes each field of the hash KEYS[1] (ARGV: name, value, …) whose value is still the one given. */
const DELETE_FIELDS_AS_READ = "for i = 1, #ARGV, 2 do if redis.call('hget', KEYS[1], ARGV[i]) == ARGV[i + 1] then redis.call('hdel', KEYS[1], ARGV[i]) end end return 0";
/** How many times a forget looks through the stream before it gives up (each look met more new records than its script reads). */
const FORGET_TRIES = 3;

/** How often a forget's second rewrite asks whether the running one has ended. */
const REWRITE_POLL_MS = 100;

/** The stream id just after `id` (`<ms>-<seq + 1>`): `XTRIM MINID` to it drops `id` and all before. */
function idAfter(id: string): string {
  const [ms, seq = '0'] = id.split('-');
  return `${ms}-${BigInt(seq) + 1n}`;
}

/** The member of an older version's entry with a prompt (a string, as the forget script's `scrub` takes it) inside it, or undefined. */
function memberWithPrompt(raw: StoredRecord | undefined): string | undefined {
  if (typeof raw?.userKey !== 'string' || typeof raw.job !== 'string') return undefined;
  const job = safeJson(raw.job) as { prompt?: unknown } | undefined;
  return typeof job?.prompt === 'string' ? raw.userKey : undefined;
}

/** What this process keeps of a reservation it made (see `StoreProcess.held`): the ledger document's, its amount in nanos. */
type HeldReservation = Omit<Reservation, 'usd' | 'owner' | 'sent'> & { nanos: number };

/**
 * A job's details as the scripts take them: JSON, or '' without any. Well-formed text: half a surrogate pair becomes
 * U+FFFD (`toWellFormed`), as the scripts would read it, so Redis's JSON reads every text this version writes at its first try.
 */
const encodeJob = (job: Reservation['job']): string =>
  job ? JSON.stringify(job, (_key, value: unknown) => (typeof value === 'string' ? value.toWellFormed() : value)) : '';

/** The copy as the scripts take it (userKey, scopeKey, day, month, nanos, job encoded now, at), or as many '' without one. */
function copyArgs(copy: HeldReservation | undefined): Arg[] {
  if (!copy) return ['', '', '', '', '', '', ''];
  return [copy.userKey, copy.scopeKey, copy.day, copy.month, copy.nanos, encodeJob(copy.job), copy.at];
}

/** The fields of a scope's hash `brk-state:<scope>`, in the order the resume script answers them too. */
const BREAKER_FIELDS = ['pausedAt', 'pausedNanos', 'limitNanos', 'resumedAt', 'resumedBy'] as const;

/** The breaker's state from its stored fields, in `BREAKER_FIELDS`' order (nanos for amounts; '' or null: none). */
function breakerStateOf([pausedAt, pausedNanos, limitNanos, resumedAt, resumedBy]: (string | null)[]): BreakerState {
  return {
    ...(pausedAt && { pausedAt: Number(pausedAt), pausedUsd: fromNanos(Number(pausedNanos ?? 0)), limitUsd: fromNanos(Number(limitNanos ?? 0)) }),
    ...(resumedAt && { resumedAt: Number(resumedAt), resumedBy: resumedBy ?? '' }),
  };
}

/** A stream entry's record as the Lua `record` writes it (`prompted`: its prompt is kept beside the stream). */
type StoredRecord = Pick<UsageRecord, 'jobId' | 'time' | 'day' | 'userKey' | 'scopeKey' | 'requestId' | 'outcome' | 'reservedAt' | 'images'> & {
  month?: string; nanos: number; reservedNanos?: number; basis: string; job?: string; size?: unknown; quality?: unknown; prompted?: number;
};

/**
 * A stream entry's record (its field `r`), or undefined when it is not JSON or (given `naming`) its text does not hold
 * that, unparsed then: read so by the trim, the look through the stream and every usage read.
 */
function entryRecord(fields: string[], naming = ''): StoredRecord | undefined {
  const text = fields[fields.indexOf('r') + 1];
  return text?.includes(naming) ? safeJson<StoredRecord>(text) : undefined;
}

/** The member whose keys (`prompts:<user>`) keep the entry's prompt beside the stream, or undefined when it has none there. */
const promptKeptBy = (raw: StoredRecord | undefined): string | undefined => (raw?.prompted === 1 && typeof raw.userKey === 'string' ? raw.userKey : undefined);

/** A stream entry's record, with its prompt kept beside the stream (`prompt`) when there is one; undefined when it cannot be read. */
function storedRecord(raw: StoredRecord, prompt: string | undefined): UsageRecord | undefined {
  try {
    const details = raw.job === undefined ? undefined : JobDetailsSchema.safeParse(JSON.parse(raw.job)).data;
    const job = details && prompt !== undefined ? { ...details, prompt } : details;
    return usageRecord({
      ...raw,
      month: raw.month ?? raw.day.slice(0, 7),
      basis: readBasis(raw.basis, raw.month !== undefined),
      job,
      // What the service reported (records of older versions have none: those asked, in `job`).
      size: typeof raw.size === 'string' ? raw.size : undefined,
      quality: typeof raw.quality === 'string' ? raw.quality : undefined,
      costUsd: fromNanos(raw.nanos),
      // Records keep what was reserved; whether the charge exceeded it is the ledger's one rule (older records kept it only then).
      reservedUsd: raw.reservedNanos !== undefined && exceedsReservation({ usd: fromNanos(raw.reservedNanos) }, fromNanos(raw.nanos)) ? fromNanos(raw.reservedNanos) : undefined,
    });
  } catch {
    return undefined;
  }
}
