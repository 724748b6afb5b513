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
 * Redis prefix), so an alert goes out once per cap and period across
 * restarts and replicas: a process claims an alert before it sends it (a
 * claim lasts a minute, in case it dies meanwhile), marks it sent, or lets it
 * go when sending failed (the next check tries again). Also keeps the owner's
 * alert rules and the last 100 alerts sent.
 */
export interface AlertLog {
  /** True for the one process that is to send `key` now: no process sent it, and none is sending it. */
  claim(key: string, now: number, leaseMs: number): Promise<boolean>;
  /** It went out: not sent again before `keepUntil`. */
  sent(key: string, entry: AlertLogEntry, now: number, keepUntil: number): Promise<void>;
  /** Sending failed: a later check may try again. */
  release(key: string): Promise<void>;
  /** The last alerts sent, newest first. */
  recent(limit: number): Promise<AlertLogEntry[]>;
  rules(): Promise<AlertRules | undefined>;
  setRules(rules: AlertRules): Promise<void>;
}

const LOG_KEPT = 100;
const RulesSchema = z.object({ thresholds: z.array(z.number().int().min(1).max(1000)).min(1).max(10), breaker: z.boolean(), by: z.string(), at: z.number() });
const EntrySchema = z.object({ id: z.string(), channel: z.string(), text: z.string(), at: z.number() });
const FileSchema = z.object({
  version: z.literal(1),
  claims: z.record(z.string(), z.object({ state: z.enum(['sending', 'sent']), until: z.number() })),
  log: z.array(EntrySchema),
  rules: RulesSchema.optional(),
});
type AlertFile = z.output<typeof FileSchema>;

/** `console-alerts.json` in the ledger's data folder, written under its own lock file (every process of the machine). */
export class FileAlertLog implements AlertLog {
  readonly path: string;
  readonly #serial = createSerialQueue();

  constructor(dir: string) {
    this.path = join(dir, 'console-alerts.json');
  }

  claim(key: string, now: number, leaseMs: number): Promise<boolean> {
    return this.#change((file) => {
      const claim = file.claims[key];
      if (claim && claim.until > now) return false;
      file.claims[key] = { state: 'sending', until: now + leaseMs };
      return true;
    }, now);
  }

  sent(key: string, entry: AlertLogEntry, now: number, keepUntil: number): Promise<void> {
    return this.#change((file) => {
      file.claims[key] = { state: 'sent', until: keepUntil };
      file.log = [entry, ...file.log].slice(0, LOG_KEPT);
    }, now);
  }

  release(key: string): Promise<void> {
    return this.#change((file) => {
      if (file.claims[key]?.state === 'sending') delete file.claims[key];
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

  #change<T>(change: (file: AlertFile) => T, now: number): Promise<T> {
    return this.#serial(() =>
      withFileLock(`${this.path}.lock`, async () => {
        const file = this.#read();
        const result = change(file);
        for (const [key, claim] of Object.entries(file.claims)) if (claim.until <= now) delete file.claims[key];
        await writeFileAtomically(this.path, JSON.stringify(file));
        return result;
      }),
    );
  }
}

/** Keys under `<prefix>:console:`: `alert:<key>` (a claim, with its time to live), `alert-log` (a list), `alert-rules`. */
export class RedisAlertLog implements AlertLog {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}:console:`;
  }

  async claim(key: string, _now: number, leaseMs: number): Promise<boolean> {
    return (await this.#redis.set(`${this.#prefix}alert:${key}`, 'sending', 'PX', Math.max(1, leaseMs), 'NX')) === 'OK';
  }

  async sent(key: string, entry: AlertLogEntry, now: number, keepUntil: number): Promise<void> {
    await this.#redis
      .multi()
      .set(`${this.#prefix}alert:${key}`, 'sent', 'PX', Math.max(1, keepUntil - now))
      .lpush(`${this.#prefix}alert-log`, JSON.stringify(entry))
      .ltrim(`${this.#prefix}alert-log`, 0, LOG_KEPT - 1)
      .exec();
  }

  async release(key: string): Promise<void> {
    // Only a claim still being sent; a 'sent' mark stays.
    await this.#redis.eval("if redis.call('get', KEYS[1]) == 'sending' then return redis.call('del', KEYS[1]) end return 0", 1, `${this.#prefix}alert:${key}`);
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
  #log: AlertLogEntry[] = [];
  #rules: AlertRules | undefined;

  async claim(key: string, now: number, leaseMs: number): Promise<boolean> {
    const claim = this.#claims.get(key);
    if (claim && claim.until > now) return false;
    this.#claims.set(key, { state: 'sending', until: now + leaseMs });
    return true;
  }

  async sent(key: string, entry: AlertLogEntry, _now: number, keepUntil: number): Promise<void> {
    this.#claims.set(key, { state: 'sent', until: keepUntil });
    this.#log = [entry, ...this.#log].slice(0, LOG_KEPT);
  }

  async release(key: string): Promise<void> {
    if (this.#claims.get(key)?.state === 'sending') this.#claims.delete(key);
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
