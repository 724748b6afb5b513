import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { writeFileAtomically } from '../../core/atomic-file.js';
import { withFileLock } from '../../spend/file-lock.js';
import { createSerialQueue } from '../../spend/serial-queue.js';

/** One alert that went out, for the alerts page. */
export interface AlertLogEntry {
  id: string;
  channel: string;
  text: string;
  at: number;
}

/** The alert rules the owner chose in the console (they replace `PICTOR_ALERT_THRESHOLDS` and `PICTOR_ALERT_BREAKER`). */
export interface AlertRules {
  thresholds: number[];
  breaker: boolean;
  by: string;
  at: number;
}

/**
 * Which alerts went out, kept where the ledger is (its data folder, or its
 * Redis prefix), so an alert goes out once (per cap, amount, period and
 * threshold) across restarts and replicas: a process claims an alert before it sends it (a
 * claim lasts a minute, in case it dies meanwhile), marks it sent, or lets it
 * go when sending failed (the next check tries again). A check claims all it
 * may send in one step. Also keeps the owner's alert rules and the last 100
 * alerts sent.
 */
export interface AlertLog {
  /**
   * Claims every key of `keys` that no process sent and none is sending (all in one write); answers those this process
   * is to send now.
   */
  claim(keys: readonly string[], now: number, leaseMs: number): Promise<Set<string>>;
  /**
   * They went out (or count as gone out): none is sent again before its `keepUntil` (one write). `entry`, when given, is
   * what the alerts page lists; a mark alone (a lower threshold passed with a higher one) adds nothing to it.
   */
  sent(marks: readonly AlertMark[], now: number, entry?: AlertLogEntry): Promise<void>;
  /**
   * Of each reach key (see `AlertMark.reach`), the highest amount its event was told up to this period; a key never told
   * is left out.
   */
  reached(keys: readonly string[], now: number): Promise<Map<string, number>>;
  /** Sending failed, or stopped before it: a later check may try again. */
  release(keys: readonly string[]): Promise<void>;
  /** The last alerts sent, newest first. */
  recent(limit: number): Promise<AlertLogEntry[]>;
  rules(): Promise<AlertRules | undefined>;
  setRules(rules: AlertRules): Promise<void>;
}

/** A claim to mark sent: kept until `keepUntil`. */
export interface AlertMark {
  key: string;
  keepUntil: number;
  /**
   * A cap's event told (or counting as told): every amount of that cap up to `usd` counts as told of it this period,
   * under `key` (the cap, period and event, without the amount). Raised, never lowered, kept until `keepUntil`.
   */
  reach?: { key: string; usd: number } | undefined;
}

/** The alerts page's history: the last this many alerts sent are kept (older ones dropped at each send). */
export const ALERT_LOG_KEPT = 100;
const RulesSchema = z.object({ thresholds: z.array(z.number().int().min(1).max(1000)).min(1).max(10), breaker: z.boolean(), by: z.string(), at: z.number() });
const EntrySchema = z.object({ id: z.string(), channel: z.string(), text: z.string(), at: z.number() });
const FileSchema = z.object({
  version: z.literal(1),
  claims: z.record(z.string(), z.object({ state: z.enum(['sending', 'sent']), until: z.number() })),
  log: z.array(EntrySchema),
  rules: RulesSchema.optional(),
  reach: z.record(z.string(), z.object({ usd: z.number(), until: z.number() })).optional(),
});
type AlertFile = z.output<typeof FileSchema>;

/** `console-alerts.json` in the ledger's data folder, written under its own lock file (every process of the machine). */
export class FileAlertLog implements AlertLog {
  readonly path: string;
  readonly #serial = createSerialQueue();

  constructor(dir: string) {
    this.path = join(dir, 'console-alerts.json');
  }

  claim(keys: readonly string[], now: number, leaseMs: number): Promise<Set<string>> {
    if (keys.length === 0) return Promise.resolve(new Set());
    return this.#change((file) => {
      const claimed = new Set<string>();
      for (const key of keys) {
        const claim = file.claims[key];
        if (claim && claim.until > now) continue;
        file.claims[key] = { state: 'sending', until: now + leaseMs };
        claimed.add(key);
      }
      return claimed;
    }, now, (claimed) => claimed.size > 0);
  }

  sent(marks: readonly AlertMark[], now: number, entry?: AlertLogEntry): Promise<void> {
    if (marks.length === 0 && !entry) return Promise.resolve();
    return this.#change((file) => {
      for (const { key, keepUntil, reach } of marks) {
        file.claims[key] = { state: 'sent', until: keepUntil };
        if (reach && raisesReach(file.reach?.[reach.key], reach.usd, now)) (file.reach ??= {})[reach.key] = { usd: reach.usd, until: keepUntil };
      }
      if (entry) file.log = [entry, ...file.log].slice(0, ALERT_LOG_KEPT);
    }, now);
  }

  async reached(keys: readonly string[], now: number): Promise<Map<string, number>> {
    const reach = this.#read().reach ?? {};
    return new Map(keys.flatMap((key) => (Object.hasOwn(reach, key) && reach[key]!.until > now ? [[key, reach[key]!.usd] as const] : [])));
  }

  release(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return Promise.resolve();
    return this.#change((file) => {
      for (const key of keys) if (file.claims[key]?.state === 'sending') delete file.claims[key];
    }, Date.now());
  }

  async recent(limit: number): Promise<AlertLogEntry[]> {
    return this.#read().log.slice(0, limit);
  }

  async rules(): Promise<AlertRules | undefined> {
    return this.#read().rules;
  }

  setRules(rules: AlertRules): Promise<void> {
    return this.#change((file) => {
      file.rules = RulesSchema.parse(rules);
    }, rules.at);
  }

  /** The file; an unreadable one counts as empty (at worst an alert goes out twice), and is replaced at the next change. */
  #read(): AlertFile {
    try {
      const parsed = FileSchema.safeParse(JSON.parse(readFileSync(this.path, 'utf8')));
      if (parsed.success) return parsed.data;
    } catch {
      // Missing or damaged: start afresh.
    }
    return { version: 1, claims: {}, log: [] };
  }

  /** Changes the file under its lock; written unless `changed` says the change left it as it was. */
  #change<T>(change: (file: AlertFile) => T, now: number, changed: (result: T) => boolean = () => true): Promise<T> {
    return this.#serial(() =>
      withFileLock(`${this.path}.lock`, async () => {
        const file = this.#read();
        const result = change(file);
        if (!changed(result)) return result;
        for (const [key, claim] of Object.entries(file.claims)) if (claim.until <= now) delete file.claims[key];
        for (const [key, told] of Object.entries(file.reach ?? {})) if (told.until <= now) delete file.reach![key];
        await writeFileAtomically(this.path, JSON.stringify(file));
        return result;
      }),
    );
  }
}

/** Raises a reach key to ARGV[1] dollars (kept ARGV[2] ms), never lowers it. */
const RAISE_REACH = "local v = tonumber(redis.call('get', KEYS[1])) if v == nil or v < tonumber(ARGV[1]) then redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) end return 0";

/**
 * Keys under `<prefix>:console:`: `alert:<key>` (a claim, with its time to live), `alert-reach:<key>` (the amount an
 * event of a cap was told up to, with its time to live), `alert-log` (a list), `alert-rules`.
 */
export class RedisAlertLog implements AlertLog {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}:console:`;
  }

  async claim(keys: readonly string[], _now: number, leaseMs: number): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const pipeline = this.#redis.pipeline();
    for (const key of keys) pipeline.set(`${this.#prefix}alert:${key}`, 'sending', 'PX', Math.max(1, leaseMs), 'NX');
    const answers = (await pipeline.exec()) ?? [];
    return new Set(keys.filter((_key, i) => answers[i]?.[0] === null && answers[i]?.[1] === 'OK'));
  }

  async sent(marks: readonly AlertMark[], now: number, entry?: AlertLogEntry): Promise<void> {
    if (marks.length === 0 && !entry) return;
    const multi = this.#redis.multi();
    for (const { key, keepUntil, reach } of marks) {
      multi.set(`${this.#prefix}alert:${key}`, 'sent', 'PX', Math.max(1, keepUntil - now));
      if (reach) multi.eval(RAISE_REACH, 1, `${this.#prefix}alert-reach:${reach.key}`, String(reach.usd), Math.max(1, keepUntil - now));
    }
    if (entry) multi.lpush(`${this.#prefix}alert-log`, JSON.stringify(entry)).ltrim(`${this.#prefix}alert-log`, 0, ALERT_LOG_KEPT - 1);
    await multi.exec();
  }

  async reached(keys: readonly string[], _now: number): Promise<Map<string, number>> {
    if (keys.length === 0) return new Map();
    const values = await this.#redis.mget(keys.map((key) => `${this.#prefix}alert-reach:${key}`));
    return new Map(keys.flatMap((key, i) => (values[i] != null && Number.isFinite(Number(values[i])) ? [[key, Number(values[i])] as const] : [])));
  }

  async release(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    // Only a claim still being sent; a 'sent' mark stays.
    const pipeline = this.#redis.pipeline();
    for (const key of keys) pipeline.eval("if redis.call('get', KEYS[1]) == 'sending' then return redis.call('del', KEYS[1]) end return 0", 1, `${this.#prefix}alert:${key}`);
    await pipeline.exec();
  }

  async recent(limit: number): Promise<AlertLogEntry[]> {
    const items = await this.#redis.lrange(`${this.#prefix}alert-log`, 0, limit - 1);
    return items.flatMap((item) => {
      try {
        const parsed = EntrySchema.safeParse(JSON.parse(item));
        return parsed.success ? [parsed.data] : [];
      } catch {
        return [];
      }
    });
  }

  async rules(): Promise<AlertRules | undefined> {
    const text = await this.#redis.get(`${this.#prefix}alert-rules`);
    if (!text) return undefined;
    try {
      return RulesSchema.safeParse(JSON.parse(text)).data;
    } catch {
      return undefined;
    }
  }

  async setRules(rules: AlertRules): Promise<void> {
    await this.#redis.set(`${this.#prefix}alert-rules`, JSON.stringify(RulesSchema.parse(rules)));
  }
}

/** In memory, for tests and a console without a lasting ledger. */
export class MemoryAlertLog implements AlertLog {
  readonly #claims = new Map<string, { state: 'sending' | 'sent'; until: number }>();
  readonly #reach = new Map<string, { usd: number; until: number }>();
  #log: AlertLogEntry[] = [];
  #rules: AlertRules | undefined;

  async claim(keys: readonly string[], now: number, leaseMs: number): Promise<Set<string>> {
    const claimed = new Set<string>();
    for (const key of keys) {
      const claim = this.#claims.get(key);
      if (claim && claim.until > now) continue;
      this.#claims.set(key, { state: 'sending', until: now + leaseMs });
      claimed.add(key);
    }
    return claimed;
  }

  async sent(marks: readonly AlertMark[], now: number, entry?: AlertLogEntry): Promise<void> {
    for (const { key, keepUntil, reach } of marks) {
      this.#claims.set(key, { state: 'sent', until: keepUntil });
      if (reach && raisesReach(this.#reach.get(reach.key), reach.usd, now)) this.#reach.set(reach.key, { usd: reach.usd, until: keepUntil });
    }
    if (entry) this.#log = [entry, ...this.#log].slice(0, ALERT_LOG_KEPT);
  }

  async reached(keys: readonly string[], now: number): Promise<Map<string, number>> {
    return new Map(keys.flatMap((key) => {
      const told = this.#reach.get(key);
      return told && told.until > now ? [[key, told.usd] as const] : [];
    }));
  }

  async release(keys: readonly string[]): Promise<void> {
    for (const key of keys) if (this.#claims.get(key)?.state === 'sending') this.#claims.delete(key);
  }

  async recent(limit: number): Promise<AlertLogEntry[]> {
    return this.#log.slice(0, limit);
  }

  async rules(): Promise<AlertRules | undefined> {
    return this.#rules;
  }

  async setRules(rules: AlertRules): Promise<void> {
    this.#rules = RulesSchema.parse(rules);
  }
}

/**
 * Whether an event told for an amount of `usd` raises what is kept as told (`told`): none is kept, or it lapsed, or it
 * is lower. What is told is only ever raised within its period (the Redis script `RAISE_REACH` keeps the same rule).
 */
function raisesReach(told: { usd: number; until: number } | undefined, usd: number, now: number): boolean {
  return !(told && told.until > now && told.usd >= usd);
}
