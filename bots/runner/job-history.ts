import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { closeRedis, connectRedis, DEFAULTS, withFileLock, writeFileAtomically, type LoggerLike, type RedisConfig } from '../../src/index.js';
import type { FinalUpdate, JobOptions, JobSpec, Platform, Requester } from './types.js';

/**
 * What `/imagine-history` (Discord) and `/imagine history` (Slack) show: a
 * member's last jobs — prompt, options, cost, when, where — kept only for this
 * and only `PICTOR_HISTORY_RETENTION_DAYS`; `forget` erases a member's own.
 */
export const HistoryEntrySchema = z.object({
  /** The surface's key of the job (its buttons use it: Reroll from the history). */
  key: z.string().max(100),
  scopeKey: z.string().max(200),
  userId: z.string().max(100),
  channelId: z.string().max(100),
  kind: z.enum(['generate', 'edit']),
  prompt: z.string().max(40_000),
  n: z.number().int(),
  size: z.string().max(20).optional(),
  quality: z.string().max(20).optional(),
  status: z.enum(['completed', 'failed', 'cancelled']),
  /** What it cost (USD), when known. */
  costUsd: z.number().nonnegative().optional(),
  /** When it ended (ms since the epoch). */
  at: z.number(),
  /** A link to the result message, when the surface knows it. */
  link: z.string().max(500).optional(),
});

export type HistoryEntry = z.output<typeof HistoryEntrySchema>;

/** Jobs kept per member, jobs kept per server/workspace for its admins, and what a member is shown. */
export const HISTORY_LIMITS = { perUser: 20, perScope: 100, shown: 10, users: 10_000 } as const;

/** Where the history lives: the data folder's file, or Redis (`REDIS_URL`). Storage only: retention and who sees what are `JobHistory`'s. */
export interface JobHistoryStore {
  add(userKey: string, entry: HistoryEntry, keepMs: number, now: number): Promise<void>;
  /** A member's entries, newest first. */
  ofUser(userKey: string): Promise<HistoryEntry[]>;
  /** A server's/workspace's entries, newest first. */
  ofScope(scopeKey: string): Promise<HistoryEntry[]>;
  /** Erases every entry of a member; answers how many there were. */
  forget(userKey: string): Promise<number>;
  close(): Promise<void>;
}

export interface JobHistoryOptions {
  store: JobHistoryStore;
  /** Days a job is kept (`PICTOR_HISTORY_RETENTION_DAYS`). Default 30. */
  retentionDays?: number | undefined;
  logger?: LoggerLike | undefined;
  now?: (() => number) | undefined;
}

export const DEFAULT_HISTORY_RETENTION_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The members' job history: recorded by the surfaces when a job ends, shown privately, erased on request. */
export class JobHistory {
  readonly #store: JobHistoryStore;
  readonly #keepMs: number;
  readonly #logger: LoggerLike | undefined;
  readonly #now: () => number;
  /** Entries being kept: the runner's shutdown waits for them, so none is written after the bot stops. */
  readonly #pending = new Set<Promise<void>>();

  constructor(options: JobHistoryOptions) {
    this.#store = options.store;
    this.#keepMs = (options.retentionDays ?? DEFAULT_HISTORY_RETENTION_DAYS) * DAY_MS;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Keeps a job that has ended as both surfaces show it: what was asked, the
   * size and quality it ran with, what it cost; `link` points at its message
   * when the surface can tell (it may still be asking Discord). Call it when
   * the job's `done` resolves: `settled()` then covers it.
   */
  recordEnd(
    requester: Requester,
    job: { key: string; kind: JobSpec['kind']; prompt: string; options: JobOptions },
    final: FinalUpdate,
    link?: Promise<string | undefined> | string | undefined,
  ): Promise<void> {
    const kept = Promise.resolve(link)
      .catch(() => undefined)
      .then((url) =>
        this.record(requester, {
          key: job.key,
          kind: job.kind,
          prompt: job.prompt,
          n: job.options.n ?? DEFAULTS.n,
          size: final.type === 'completed' ? final.size : job.options.size,
          quality: final.type === 'completed' ? final.quality : job.options.quality,
          status: final.type,
          ...(final.type === 'completed' && { costUsd: final.cost.totalUsd }),
          ...(url && { link: url }),
        }),
      );
    this.#pending.add(kept);
    void kept.finally(() => this.#pending.delete(kept));
    return kept;
  }

  /** Resolves once every entry being kept is written (or has failed, which is logged). */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Keeps one ended job; a failure to keep it is logged, never shown to the member (the job itself is done). */
  async record(requester: Requester, entry: Omit<HistoryEntry, 'scopeKey' | 'userId' | 'channelId' | 'at'>): Promise<void> {
    const full: HistoryEntry = { ...entry, scopeKey: scopeKeyOf(requester), userId: requester.userId, channelId: requester.channelId, at: this.#now() };
    try {
      await this.#store.add(userKeyOf(requester), HistoryEntrySchema.parse(full), this.#keepMs, this.#now());
    } catch (error) {
      this.#logger?.warn({ err: error, key: entry.key }, 'could not keep a job in the history');
    }
  }

  /** The member's last jobs (at most 10), newest first. */
  async mine(requester: Requester): Promise<HistoryEntry[]> {
    return this.#fresh(await this.#store.ofUser(userKeyOf(requester))).slice(0, HISTORY_LIMITS.shown);
  }

  /** An admin's view: the server's/workspace's last jobs; undefined for anyone else. */
  async ofScope(requester: Requester): Promise<HistoryEntry[] | undefined> {
    if (!requester.isAdmin) return undefined;
    return this.#fresh(await this.#store.ofScope(scopeKeyOf(requester))).slice(0, HISTORY_LIMITS.shown * 2);
  }

  /** Erases the member's own history; answers how many jobs were erased. Logged without any prompt. */
  async forget(requester: Requester): Promise<number> {
    const count = await this.#store.forget(userKeyOf(requester));
    this.#logger?.info({ userKey: userKeyOf(requester), count }, 'a member erased their history');
    return count;
  }

  #fresh(entries: HistoryEntry[]): HistoryEntry[] {
    const since = this.#now() - this.#keepMs;
    return entries.filter((e) => e.at >= since);
  }
}

const userKeyOf = (r: Requester) => `${r.platform}:${r.userId}`;
const scopeKeyOf = (r: { platform: Platform; scopeId: string }) => `${r.platform}:${r.scopeId}`;
/** The member an entry belongs to, as `userKeyOf` names them (the platform is the scope key's). */
const userKeyOfEntry = (e: HistoryEntry) => `${e.scopeKey.slice(0, e.scopeKey.indexOf(':'))}:${e.userId}`;

const HistoryFileSchema = z.object({ version: z.literal(1), users: z.record(z.string(), z.array(HistoryEntrySchema)) });
type HistoryFile = z.output<typeof HistoryFileSchema>;

/**
 * The history in `<data>/history.json`, changed under a lock file (processes
 * of one machine sharing the folder lose nothing), written atomically. Bounded:
 * 20 jobs per member, 10 000 members, nothing older than the retention. An
 * unreadable file is set aside (history is not worth refusing to start for).
 */
export class FileJobHistoryStore implements JobHistoryStore {
  readonly path: string;
  readonly #dir: string;
  readonly #lockPath: string;
  readonly #logger: LoggerLike | undefined;

  constructor(options: { dir: string; logger?: LoggerLike | undefined }) {
    this.#dir = options.dir;
    this.path = join(options.dir, 'history.json');
    this.#lockPath = `${this.path}.lock`;
    this.#logger = options.logger;
  }

  async add(userKey: string, entry: HistoryEntry, keepMs: number, now: number): Promise<void> {
    await this.#change((file) => {
      const since = now - keepMs;
      file.users[userKey] = [entry, ...(file.users[userKey] ?? []).filter((e) => e.key !== entry.key)].slice(0, HISTORY_LIMITS.perUser);
      for (const [user, entries] of Object.entries(file.users)) {
        const kept = entries.filter((e) => e.at >= since);
        if (kept.length === 0) delete file.users[user];
        else file.users[user] = kept;
      }
      const users = Object.entries(file.users);
      if (users.length > HISTORY_LIMITS.users) {
        users.sort((a, b) => b[1][0]!.at - a[1][0]!.at);
        for (const [user] of users.slice(HISTORY_LIMITS.users)) delete file.users[user];
      }
    });
  }

  async ofUser(userKey: string): Promise<HistoryEntry[]> {
    return (await this.#read()).users[userKey] ?? [];
  }

  async ofScope(scopeKey: string): Promise<HistoryEntry[]> {
    const file = await this.#read();
    return Object.values(file.users)
      .flat()
      .filter((e) => e.scopeKey === scopeKey)
      .sort((a, b) => b.at - a.at)
      .slice(0, HISTORY_LIMITS.perScope);
  }

  async forget(userKey: string): Promise<number> {
    let count = 0;
    await this.#change((file) => {
      count = file.users[userKey]?.length ?? 0;
      delete file.users[userKey];
    });
    return count;
  }

  async close(): Promise<void> {}

  async #change(change: (file: HistoryFile) => void): Promise<void> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    await withFileLock(this.#lockPath, async () => {
      const file = await this.#read();
      change(file);
      await writeFileAtomically(this.path, JSON.stringify(file));
    });
  }

  async #read(): Promise<HistoryFile> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, users: {} };
      throw error;
    }
    try {
      return HistoryFileSchema.parse(JSON.parse(text));
    } catch {
      this.#logger?.warn({ path: this.path }, 'the history file is unreadable; starting the history afresh');
      return { version: 1, users: {} };
    }
  }
}

/** What the Redis history store needs of an ioredis client. */
export interface JobHistoryRedis {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  lrange(key: string, start: number, stop: number): Promise<string[]>;
  lrem(key: string, count: number, value: string): Promise<unknown>;
  smembers(key: string): Promise<string[]>;
  del(...keys: string[]): Promise<unknown>;
}

/**
 * Pushes an entry onto the member's list and the scope's (KEYS[1], KEYS[2]),
 * trims each to its bound and drops its tail entries older than the retention
 * (newest are pushed first), and notes the scope among the member's (KEYS[3],
 * so `forget` finds entries the member's own list no longer holds).
 * ARGV: entry, per-user bound, per-scope bound, retention (ms), oldest `at` kept, scope key.
 */
const ADD_ENTRY = `
local function push(key, limit)
  redis.call('LPUSH', key, ARGV[1])
  redis.call('LTRIM', key, 0, limit - 1)
  while true do
    local tail = redis.call('LINDEX', key, -1)
    if not tail then break end
    local ok, entry = pcall(cjson.decode, tail)
    if ok and type(entry) == 'table' and type(entry.at) == 'number' and entry.at < tonumber(ARGV[5]) then
      redis.call('RPOP', key)
    else
      break
    end
  end
  redis.call('PEXPIRE', key, ARGV[4])
end
push(KEYS[1], tonumber(ARGV[2]))
push(KEYS[2], tonumber(ARGV[3]))
redis.call('SADD', KEYS[3], ARGV[6])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return 1`;

/**
 * The history in Redis: a list per member `<prefix>:history:user:<userKey>`
 * (20 jobs) and one per server/workspace `<prefix>:history:scope:<scopeKey>`
 * (100 jobs), each without entries older than the retention and expiring after
 * it; `<prefix>:history:scopes:<userKey>` names the scopes a member has jobs in,
 * so `forget` removes the member's jobs from every scope's list, also those
 * their own (shorter) list has already let go.
 */
export class RedisJobHistoryStore implements JobHistoryStore {
  readonly #redis: JobHistoryRedis;
  readonly #prefix: string;
  readonly #close: (() => Promise<void>) | undefined;

  static async connect(config: RedisConfig, options: { logger?: LoggerLike | undefined } = {}): Promise<RedisJobHistoryStore> {
    const redis = await connectRedis(config.url, { name: `pictor-history:${config.prefix}`, logger: options.logger });
    return new RedisJobHistoryStore({ redis, prefix: config.prefix, close: () => closeRedis(redis) });
  }

  constructor(options: { redis: JobHistoryRedis; prefix?: string | undefined; close?: (() => Promise<void>) | undefined }) {
    this.#redis = options.redis;
    this.#prefix = options.prefix ?? 'pictor';
    this.#close = options.close;
  }

  async add(userKey: string, entry: HistoryEntry, keepMs: number, now: number): Promise<void> {
    const keys = [this.#userKey(userKey), this.#scopeKey(entry.scopeKey), this.#scopesKey(userKey)];
    await this.#redis.eval(ADD_ENTRY, keys.length, ...keys, JSON.stringify(entry), HISTORY_LIMITS.perUser, HISTORY_LIMITS.perScope, keepMs, now - keepMs, entry.scopeKey);
  }

  async ofUser(userKey: string): Promise<HistoryEntry[]> {
    return parseEntries(await this.#redis.lrange(this.#userKey(userKey), 0, -1));
  }

  async ofScope(scopeKey: string): Promise<HistoryEntry[]> {
    return parseEntries(await this.#redis.lrange(this.#scopeKey(scopeKey), 0, -1));
  }

  async forget(userKey: string): Promise<number> {
    const raw = await this.#redis.lrange(this.#userKey(userKey), 0, -1);
    const scopes = new Set([...(await this.#redis.smembers(this.#scopesKey(userKey))), ...parseEntries(raw).map((e) => e.scopeKey)]);
    for (const scopeKey of scopes) {
      const scopeList = this.#scopeKey(scopeKey);
      for (const value of await this.#redis.lrange(scopeList, 0, -1)) {
        const entry = parseEntries([value])[0];
        if (entry && userKeyOfEntry(entry) === userKey) await this.#redis.lrem(scopeList, 0, value);
      }
    }
    await this.#redis.del(this.#userKey(userKey), this.#scopesKey(userKey));
    return raw.length;
  }

  async close(): Promise<void> {
    await this.#close?.();
  }

  #userKey(userKey: string): string {
    return `${this.#prefix}:history:user:${userKey}`;
  }

  #scopeKey(scopeKey: string): string {
    return `${this.#prefix}:history:scope:${scopeKey}`;
  }

  #scopesKey(userKey: string): string {
    return `${this.#prefix}:history:scopes:${userKey}`;
  }
}

function parseEntries(raw: string[]): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  for (const value of raw) {
    try {
      const parsed = HistoryEntrySchema.safeParse(JSON.parse(value));
      if (parsed.success) out.push(parsed.data);
    } catch {
      // A damaged entry is skipped.
    }
  }
  return out;
}

/** The history store `npm start` uses: Redis when `REDIS_URL` is set, else the data folder. */
export async function openJobHistory(redis: RedisConfig | undefined, dataDir: string, logger: LoggerLike): Promise<JobHistoryStore> {
  return redis ? RedisJobHistoryStore.connect(redis, { logger }) : new FileJobHistoryStore({ dir: dataDir, logger });
}
