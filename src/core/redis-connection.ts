import { Redis } from 'ioredis';
import { ConnectionError } from './errors.js';
import { redisDatabaseOf, type RedisConfig } from './redis-config.js';
import { redactRedisUrl, redisUrlSecrets, scrubRedisSecrets } from './redis-url.js';
import { untilSignalled, withTimeout } from './with-timeout.js';

/** Any logger with pino's call shape (a pino logger or a child of one fits). */
export interface RedisLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** The name operators know the Redis URL by, when the caller names none: the bots' and the CLI's variable. */
export const DEFAULT_REDIS_SETTING = 'REDIS_URL';

/**
 * Redis could not be reached (or refused us) when a process started. Its message, `reason` and `url` never hold the
 * password. The message names the setting the URL came from (`setting`, default REDIS_URL); a surface whose users
 * know it by another name builds its own words from `reason` and `database`.
 */
export class RedisUnavailableError extends ConnectionError {
  /** Why, without the advice the message adds (and without a period at the end). */
  readonly reason: string;
  /** The URL's database number when the server does not have it (a wrong setting, not a Redis that is down). */
  readonly database: number | undefined;

  constructor(url: string, reason: string, details: { setting?: string | undefined; database?: number | undefined } = {}) {
    const where = redactRedisUrl(url);
    const setting = details.setting ?? DEFAULT_REDIS_SETTING;
    // The Redis client's own reasons often end in a period already ("WRONGPASS … is disabled."): one is enough.
    const said = reason.trim().replace(/\.+$/, '');
    super(`cannot use Redis at ${where}: ${said}. Start Redis, fix ${setting}, or unset ${setting} to run this process on its own`, { url: where });
    this.reason = said;
    this.database = details.database;
  }
}

export interface ConnectRedisOptions {
  /** Longest wait for the first connection and its first answer. Default 5000 ms. */
  connectTimeoutMs?: number | undefined;
  /** Told once when the connection is lost and once when it is back. */
  logger?: RedisLogger | undefined;
  /** Shown by Redis's CLIENT LIST. */
  name?: string | undefined;
  /** The name the URL's owner knows it by, said in errors. Default REDIS_URL (the bots and the CLI). */
  setting?: string | undefined;
  /** Gives up connecting at once when aborted (a Ctrl+C): the connection is dropped and the call rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 5000;
const CLOSE_TIMEOUT_MS = 2000;
/**
 * How long the Redis client's `disconnect()` waits for the server to close its side before it destroys the socket (its
 * `disconnectTimeout` option; 2 s by default, on a timer that keeps the process alive). A Redis that answers closes its
 * side as soon as it reads ours, one network round trip later, well within this; only a server that takes connections
 * and never answers runs it out. Destroying the socket then loses nothing: `disconnect()` has given up
 * on the connection's pending commands already. With the default, a connection given up on such a server held the
 * process 2 s after the error, twice over (the client disconnects again when its ready check fails on the closed socket).
 */
const DISCONNECT_TIMEOUT_MS = 250;

/**
 * Connects to Redis and fails fast: rejects with the ValidationError of `redisDatabaseOf` (naming `setting`) before
 * connecting when the URL's database is not a number, and with RedisUnavailableError when
 * the server cannot be reached, refuses the credentials, refuses the URL's
 * database (`/9` on a Redis with fewer databases) or does not answer within
 * `connectTimeoutMs`. Once connected, the client never gives up: if the
 * connection is lost later, commands wait and are sent when it is back.
 */
export async function connectRedis(url: string, options: ConnectRedisOptions = {}): Promise<Redis> {
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const setting = options.setting ?? DEFAULT_REDIS_SETTING;
  const unavailable = (reason: string, database?: number) => new RedisUnavailableError(url, reason, { setting, database });
  // The one check of the URL's database (`readRedisConfig`'s), for a URL given here directly: refused naming the setting.
  const db = redisDatabaseOf(url, setting);
  const secrets = redisUrlSecrets(url);
  const { signal } = options;
  signal?.throwIfAborted();
  let redis: Redis;
  try {
    redis = new Redis(url, {
      lazyConnect: true,
      connectTimeout: timeoutMs,
      // Copies made with `duplicate()` (the subscriber) take it too.
      disconnectTimeout: DISCONNECT_TIMEOUT_MS,
      // After the first connection, commands wait for a lost connection to come back instead of failing.
      maxRetriesPerRequest: null,
      enableOfflineQueue: true,
      retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2000),
      connectionName: options.name,
    });
  } catch (error) {
    throw unavailable(scrubRedisSecrets(messageOf(error), secrets));
  }
  let firstError: unknown;
  const onStartError = (error: unknown) => {
    firstError ??= error;
  };
  redis.on('error', onStartError);
  try {
    await untilSignalled(withTimeout(redis.connect(), timeoutMs, `no connection within ${timeoutMs} ms`), signal);
    await untilSignalled(withTimeout(redis.ping(), timeoutMs, `no answer within ${timeoutMs} ms`), signal);
  } catch (error) {
    // Given up by the caller: the socket is dropped at once (a polite close waits for a server that may never answer),
    // and no word is said about Redis, which may be fine.
    if (signal?.aborted) dropNow(redis, signal);
    redis.disconnect();
    // ioredis errors can carry the AUTH command's arguments: only a scrubbed message leaves here.
    throw unavailable(scrubRedisSecrets(messageOf(firstError ?? error), secrets));
  }
  // The Redis client sends SELECT on connecting but, when it fails, only emits an error and carries on in database 0,
  // where this process would share another account's spending and caps: the database is asked for again, and a refusal
  // means this Redis cannot be used.
  if (db !== 0) {
    const refused = await untilSignalled(withTimeout(redis.select(db), timeoutMs, `no answer to SELECT within ${timeoutMs} ms`), signal).then(
      () => undefined,
      (error: unknown) => error,
    );
    if (refused !== undefined) {
      if (signal?.aborted) dropNow(redis, signal);
      redis.disconnect();
      const reason = scrubRedisSecrets(messageOf(refused), secrets);
      // A reply is Redis saying no (`ERR DB index is out of range`); anything else (no answer) is said as it is.
      if (!(refused instanceof Error && refused.name === 'ReplyError')) throw unavailable(reason);
      throw unavailable(`${setting} names database ${db}, but this Redis server has fewer databases (${reason}); use a database number below its "databases" setting`, db);
    }
  }
  redis.off('error', onStartError);
  // Copies made with `duplicate()` (bottleneck's subscriber is one) must connect on their own.
  redis.options.lazyConnect = false;
  watchConnection(redis, url, secrets, options.logger);
  return redis;
}

/** Connects, asks for a PONG and disconnects: the start-up check. Rejects with RedisUnavailableError. */
export async function checkRedis(url: string, options: Omit<ConnectRedisOptions, 'logger'> = {}): Promise<void> {
  const redis = await connectRedis(url, options);
  await closeRedis(redis);
}

/** Readiness of a connection: true when Redis answers PING within `timeoutMs`, false otherwise (never throws). */
export async function pingRedis(redis: Redis, timeoutMs = 2_000): Promise<boolean> {
  return withTimeout(redis.ping(), timeoutMs, 'Redis did not answer PING').then(
    (answer) => answer === 'PONG',
    () => false,
  );
}

/** Quits politely, or drops the connection if Redis does not answer in time (it may be the one that is gone). */
export async function closeRedis(redis: Redis, timeoutMs = CLOSE_TIMEOUT_MS): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status === 'ready') {
    try {
      await withTimeout(redis.quit(), timeoutMs, 'quit timed out');
      return;
    } catch {
      // Fall through: drop it.
    }
  }
  await endClient(redis, timeoutMs);
}

/**
 * Drops a client now, failing the commands it still holds. (With ioredis,
 * `disconnect()` on a client that is waiting to reconnect leaves it
 * "reconnecting" for ever, its queued commands never settled; one last
 * connection attempt, which `disconnect()` has marked as closing, ends it.)
 */
async function endClient(redis: Redis, timeoutMs: number): Promise<void> {
  const status = (): string => redis.status;
  const waitingToReconnect = status() === 'reconnecting';
  redis.disconnect();
  if (!waitingToReconnect || status() === 'end') return;
  await withTimeout(redis.connect(), timeoutMs, 'connect timed out').catch(() => undefined);
  if (status() !== 'end') redis.disconnect();
}

/**
 * A process's way to one Redis: one connection for commands and one for
 * subscriptions (opened at the first subscription), lent to everything in the
 * process that uses Redis — the limiter, the ledger, the bots' state, leases,
 * /healthz — instead of a connection each. Commands never block (no BLPOP, no
 * WATCH), so they share one connection safely; only subscriptions need their own.
 */
export class RedisLink {
  #subscriber: Redis | undefined;
  readonly #handlers = new Map<string, (message: string) => void>();

  private constructor(
    readonly config: RedisConfig,
    readonly commands: Redis,
  ) {}

  /**
   * Connects (failing fast with RedisUnavailableError). With a logger, warns once when Redis is set to evict keys
   * (`warnIfRedisEvicts`): every process that shares limits and budgets through Redis opens its link here.
   */
  static async open(config: RedisConfig, options: Omit<ConnectRedisOptions, 'name'> = {}): Promise<RedisLink> {
    const commands = await connectRedis(config.url, { ...options, name: `pictor:${config.prefix}` });
    if (options.logger) await warnIfRedisEvicts(commands, options.logger, options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS, options.signal);
    if (options.signal?.aborted) dropNow(commands, options.signal);
    return new RedisLink(config, commands);
  }

  /** The subscriber connection, opened once; it resubscribes by itself after a reconnection. Every listener of its `message` keeps to its own channels. */
  subscriber(): Redis {
    if (!this.#subscriber) {
      const subscriber = this.commands.duplicate({ connectionName: `pictor-subscriber:${this.config.prefix}` });
      // The command connection already says when Redis is lost and back.
      subscriber.on('error', () => undefined);
      subscriber.on('message', (channel: string, message: string) => this.#handlers.get(channel)?.(message));
      this.#subscriber = subscriber;
    }
    return this.#subscriber;
  }

  async subscribe(channel: string, handler: (message: string) => void): Promise<void> {
    this.#handlers.set(channel, handler);
    await this.subscriber().subscribe(channel);
  }

  async unsubscribe(channel: string): Promise<void> {
    if (this.#handlers.delete(channel)) await this.subscriber().unsubscribe(channel);
  }

  /**
   * The command connection for a library that duplicates its own subscriber and closes what it was given (bottleneck):
   * its copy is this link's subscriber, and its quit and disconnect do nothing (the link is closed by its opener).
   */
  lend(): Redis {
    const lent = (target: Redis, duplicate: () => Redis): Redis =>
      new Proxy(target, {
        get: (client, name) => {
          if (name === 'duplicate') return duplicate;
          if (name === 'quit') return async () => 'OK';
          if (name === 'disconnect') return () => undefined;
          const value: unknown = Reflect.get(client, name, client);
          return typeof value === 'function' ? value.bind(client) : value;
        },
      });
    return lent(this.commands, () => lent(this.subscriber(), () => this.subscriber()));
  }

  async close(): Promise<void> {
    if (this.#subscriber) await closeRedis(this.#subscriber);
    await closeRedis(this.commands);
  }
}

/**
 * Warns when Redis may evict Pictor's keys: a `maxmemory-policy` other than `noeviction` lets Redis drop leases and
 * open reservations under memory pressure (the `volatile-*` policies pick exactly those: they expire). Says nothing
 * when Redis does not tell its policy (some managed services do not) or does not answer within `timeoutMs`.
 */
async function warnIfRedisEvicts(redis: Redis, logger: RedisLogger, timeoutMs: number, signal: AbortSignal | undefined): Promise<void> {
  const info = await untilSignalled(withTimeout(redis.info('memory'), timeoutMs, 'no answer to INFO'), signal).catch(() => '');
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (!policy || policy === 'noeviction') return;
  logger.warn(
    { maxmemoryPolicy: policy },
    `Redis is set to evict keys under memory pressure (maxmemory-policy ${policy}): it could drop open reservations and the leases Pictor's processes hold (the ledger's, the bots' gateway and replica leases). Set maxmemory-policy noeviction: Pictor bounds what it keeps itself (see docs/shared-limits.md)`,
  );
}

/** Logs a lost connection once and its return once; keeps an error listener so ioredis never prints on its own. */
function watchConnection(redis: Redis, url: string, secrets: readonly string[], logger: RedisLogger | undefined): void {
  const where = redactRedisUrl(url);
  let lost = false;
  redis.on('error', (error: unknown) => {
    if (lost || !logger) return;
    lost = true;
    logger.warn({ redis: where, reason: scrubRedisSecrets(messageOf(error), secrets) }, 'lost the Redis connection; shared limits wait for it to come back');
  });
  redis.on('reconnecting', () => {
    if (lost || !logger) return;
    lost = true;
    logger.warn({ redis: where }, 'lost the Redis connection; shared limits wait for it to come back');
  });
  redis.on('ready', () => {
    if (!lost) return;
    lost = false;
    logger?.info({ redis: where }, 'the Redis connection is back');
  });
}

/**
 * Connecting was given up (`signal` aborted): drops the connection at once, without waiting for the server, and throws
 * the signal's reason. What the client still waits for afterwards (a close that already came, when its ready check fails
 * on the destroyed socket and it disconnects once more) is bounded by DISCONNECT_TIMEOUT_MS.
 */
function dropNow(redis: Redis, signal: AbortSignal): never {
  redis.disconnect();
  // `disconnect()` ends the socket politely, and a server that says nothing never closes its side: destroyed now.
  redis.stream?.destroy();
  throw signal.reason;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

