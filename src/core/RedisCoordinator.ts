import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { LimiterCoordinator } from './image-limiter.js';

export interface RedisCoordinatorOptions {
  redis: Redis;
  /** The account's key prefix: keys are `<prefix>:queue`, `<prefix>:queue:leases`, `<prefix>:paused-until`. */
  prefix: string;
  /** How often positions are refreshed (and this process's tickets kept alive) while it has requests waiting. Default 500 ms. */
  pollMs?: number | undefined;
  /** A ticket not kept alive for this long is dropped: its process died. Default 5000 ms. */
  ticketTtlMs?: number | undefined;
  /** Redis errors while refreshing (the refresh is tried again on the next poll). */
  onError?: ((error: unknown) => void) | undefined;
  /** Called last by `close()`, e.g. to close the connection the limiter used. */
  onClose?: (() => Promise<void>) | undefined;
}

const DEFAULT_POLL_MS = 500;
const DEFAULT_TICKET_TTL_MS = 5000;

/**
 * Joins this process's tickets, keeps them alive, drops dead ones, and answers each ticket's rank.
 * KEYS[1] queue (score: enqueued at), KEYS[2] leases (score: alive until).
 * ARGV: now, ttl, then pairs of ticket id and enqueued-at.
 */
const REFRESH_SCRIPT = `
local now = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local dead = redis.call('zrangebyscore', KEYS[2], '-inf', '(' .. now)
for i = 1, #dead, 500 do
  local batch = {}
  for j = i, math.min(i + 499, #dead) do batch[#batch + 1] = dead[j] end
  redis.call('zrem', KEYS[1], unpack(batch))
  redis.call('zrem', KEYS[2], unpack(batch))
end
local ranks = {}
for i = 3, #ARGV, 2 do
  redis.call('zadd', KEYS[1], 'NX', ARGV[i + 1], ARGV[i])
  redis.call('zadd', KEYS[2], now + ttl, ARGV[i])
  ranks[#ranks + 1] = redis.call('zrank', KEYS[1], ARGV[i])
end
if #ranks > 0 then
  redis.call('pexpire', KEYS[1], ttl * 4)
  redis.call('pexpire', KEYS[2], ttl * 4)
end
return ranks
`;

/** Moves the shared pause later, never earlier. KEYS[1] paused-until; ARGV: until, now. */
const PAUSE_SCRIPT = `
local untilMs = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local current = tonumber(redis.call('get', KEYS[1]) or '0')
if untilMs > current and untilMs > now then
  redis.call('set', KEYS[1], ARGV[1], 'PX', math.ceil(untilMs - now))
end
return 0
`;

interface Ticket {
  id: string;
  enqueuedAt: number;
  report: ((ahead: number) => void) | undefined;
  lastAhead: number;
}

type Scripts = Redis & {
  pictorQueueRefresh(queueKey: string, leasesKey: string, ...argv: (string | number)[]): Promise<(number | null)[]>;
  pictorPauseUntil(pauseKey: string, until: number, now: number): Promise<number>;
};

/**
 * The queue order and the 429 pause of a limiter shared through Redis. Every
 * waiting request has a ticket in one sorted set ordered by when it was
 * queued, so a chat user sees how many requests are ahead in every process.
 * Each process keeps its own tickets alive; tickets of a process that died
 * expire after `ticketTtlMs` and vanish from everyone's count.
 */
export class RedisCoordinator implements LimiterCoordinator {
  readonly #redis: Scripts;
  readonly #queueKey: string;
  readonly #leasesKey: string;
  readonly #pauseKey: string;
  readonly #pollMs: number;
  readonly #ttlMs: number;
  readonly #onError: ((error: unknown) => void) | undefined;
  readonly #onClose: (() => Promise<void>) | undefined;
  readonly #clientId = randomBytes(6).toString('hex');
  readonly #tickets = new Map<string, Ticket>();
  #sequence = 0;
  #timer: NodeJS.Timeout | undefined;
  #soon: NodeJS.Immediate | undefined;
  #refreshing = false;
  #again = false;
  #closed = false;
  /** When the connection stopped being ready (0 while it is). */
  #lostAt = 0;

  constructor(options: RedisCoordinatorOptions) {
    this.#redis = options.redis as Scripts;
    this.#queueKey = `${options.prefix}:queue`;
    this.#leasesKey = `${options.prefix}:queue:leases`;
    this.#pauseKey = `${options.prefix}:paused-until`;
    this.#pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.#ttlMs = options.ticketTtlMs ?? DEFAULT_TICKET_TTL_MS;
    this.#onError = options.onError;
    this.#onClose = options.onClose;
    this.#redis.on('close', () => (this.#lostAt ||= Date.now()));
    this.#redis.on('ready', () => (this.#lostAt = 0));
    if (!this.#redis.pictorQueueRefresh) this.#redis.defineCommand('pictorQueueRefresh', { numberOfKeys: 2, lua: REFRESH_SCRIPT });
    if (!this.#redis.pictorPauseUntil) this.#redis.defineCommand('pictorPauseUntil', { numberOfKeys: 1, lua: PAUSE_SCRIPT });
  }

  join(report: ((ahead: number) => void) | undefined): () => void {
    if (this.#closed) return () => undefined;
    const ticket: Ticket = { id: `${this.#clientId}:${(this.#sequence++).toString(36)}`, enqueuedAt: Date.now(), report, lastAhead: -1 };
    this.#tickets.set(ticket.id, ticket);
    this.#refreshSoon();
    this.#timer ??= setInterval(() => this.#refresh(), this.#pollMs).unref();
    return () => this.#leave(ticket.id);
  }

  async pauseUntil(until: number): Promise<void> {
    await this.#redis.pictorPauseUntil(this.#pauseKey, Math.ceil(until), Date.now());
  }

  async pausedUntil(): Promise<number> {
    const value = await this.#redis.get(this.#pauseKey);
    const until = value === null ? 0 : Number(value);
    return Number.isFinite(until) ? until : 0;
  }

  /** Requests of every process waiting now (dead processes' tickets may count until they expire). */
  async waiting(): Promise<number> {
    return this.#redis.zcard(this.#queueKey);
  }

  unreachableForMs(): number {
    return this.#lostAt === 0 ? 0 : Date.now() - this.#lostAt;
  }

  onUnreachableFor(ms: number, listener: () => void): () => void {
    let timer: NodeJS.Timeout | undefined;
    // Armed when the connection is lost (for what is left of `ms`), disarmed when it is ready again.
    const lost = () => {
      if (timer === undefined && this.#lostAt !== 0) timer = setTimeout(listener, Math.max(0, ms - this.unreachableForMs()));
    };
    const back = () => {
      clearTimeout(timer);
      timer = undefined;
    };
    this.#redis.on('close', lost);
    this.#redis.on('ready', back);
    lost();
    return () => {
      back();
      this.#redis.off('close', lost);
      this.#redis.off('ready', back);
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    if (this.#soon) clearImmediate(this.#soon);
    const ids = [...this.#tickets.keys()];
    this.#tickets.clear();
    if (ids.length > 0 && this.#redis.status === 'ready') {
      await this.#redis
        .multi()
        .zrem(this.#queueKey, ...ids)
        .zrem(this.#leasesKey, ...ids)
        .exec()
        .catch((error: unknown) => this.#onError?.(error));
    }
    await this.#onClose?.();
  }

  #leave(id: string): void {
    if (!this.#tickets.delete(id) || this.#closed) return;
    if (this.#tickets.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    this.#redis
      .multi()
      .zrem(this.#queueKey, id)
      .zrem(this.#leasesKey, id)
      .exec()
      .then(() => this.#refreshSoon())
      .catch((error: unknown) => this.#onError?.(error));
  }

  /** Refreshes on the next turn of the event loop, once for everything that changed in this one. */
  #refreshSoon(): void {
    this.#soon ??= setImmediate(() => {
      this.#soon = undefined;
      this.#refresh();
    });
  }

  #refresh(): void {
    if (this.#closed) return;
    if (this.#refreshing) {
      this.#again = true;
      return;
    }
    const tickets = [...this.#tickets.values()];
    if (tickets.length === 0) return;
    this.#refreshing = true;
    const argv = tickets.flatMap((t) => [t.id, t.enqueuedAt]);
    this.#redis
      .pictorQueueRefresh(this.#queueKey, this.#leasesKey, Date.now(), this.#ttlMs, ...argv)
      .then((ranks) => {
        tickets.forEach((ticket, i) => {
          const ahead = ranks[i];
          if (typeof ahead !== 'number' || !this.#tickets.has(ticket.id) || ahead === ticket.lastAhead) return;
          ticket.lastAhead = ahead;
          ticket.report?.(ahead);
        });
      })
      .catch((error: unknown) => this.#onError?.(error))
      .finally(() => {
        this.#refreshing = false;
        if (this.#again) {
          this.#again = false;
          this.#refreshSoon();
        }
      });
  }
}
