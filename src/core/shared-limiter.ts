import Bottleneck from 'bottleneck';
import { Redis } from 'ioredis';
import { DEFAULT_TOLERANCE_MS } from './image-bucket.js';
import { ImageLimiter } from './image-limiter.js';
import { RedisImageBucket } from './RedisImageBucket.js';
import { RedisCoordinator } from './RedisCoordinator.js';
import type { RedisConfig } from './redis-config.js';
import { RedisLink, type RedisLogger } from './redis-connection.js';

export interface CreateImageLimiterOptions {
  /** Images per minute for the account; undefined means no pacing (429s still pause everyone). */
  imagesPerMinute?: number | undefined;
  /** Requests in flight at once, across every process sharing the limiter. Default 4. */
  maxConcurrent?: number | undefined;
  /** From `readRedisConfig(env)`. Undefined: a limiter for this process alone. */
  redis?: RedisConfig | undefined;
  /** The process's Redis link to use (not closed by the limiter); default a link of the limiter's own. */
  link?: RedisLink | undefined;
  /**
   * Shared only: longest time one request holds its slot (bottleneck's job
   * `expiration`), which is also how long a process that died can keep the
   * slots it held. A request that runs longer keeps running and gets its
   * result; its slot is simply counted free. Default 5 minutes.
   */
  leaseMs?: number | undefined;
  /** Shared only: how often each process looks at the shared state (bottleneck's heartbeat). Default 100 ms. */
  heartbeatMs?: number | undefined;
  /**
   * How long a request may take to reach the service after it leaves (a cold
   * first connection, a busy machine, another process's request overtaking it)
   * without the service's bucket being found short; see `toleranceMs` of
   * ImageLimiter. Default 1000 ms.
   */
  toleranceMs?: number | undefined;
  /** Shared only: how long to wait for Redis at start. Default 5000 ms. */
  connectTimeoutMs?: number | undefined;
  /** Shared only: tells when the Redis connection is lost and back, and other Redis trouble. */
  logger?: RedisLogger | undefined;
}

export const DEFAULT_LEASE_MS = 5 * 60_000;
export const DEFAULT_HEARTBEAT_MS = 100;

/**
 * The one place a surface (CLI, bots, n8n node) makes its limiter.
 *
 * Without `redis` it is today's in-process limiter. With `redis`, every process
 * given the same URL and prefix shares one limiter: one count of requests in
 * flight (bottleneck's own Redis clustering, `Bottleneck.IORedisConnection`),
 * one bucket of images per minute weighted by `n` on Redis's clock
 * (`RedisImageBucket`), one 429 pause, and one queue for positions. Rejects with RedisUnavailableError when Redis cannot
 * be reached at start; a connection lost later makes requests wait, not fail.
 */
export async function createImageLimiter(options: CreateImageLimiterOptions = {}): Promise<ImageLimiter> {
  const { imagesPerMinute, maxConcurrent, redis: config } = options;
  const toleranceMs = options.toleranceMs ?? DEFAULT_TOLERANCE_MS;
  if (!config) return new ImageLimiter({ imagesPerMinute, maxConcurrent, toleranceMs });

  const logger = options.logger;
  const link = options.link ?? (await RedisLink.open(config, { connectTimeoutMs: options.connectTimeoutMs, logger }));
  const client = link.commands;
  // Bottleneck's clustering on the link's two connections (it would otherwise open a subscriber of its own).
  const connection = new Bottleneck.IORedisConnection({ Redis, client: link.lend() });
  recogniseLostState(connection);
  const reportError = logger ? rateLimitedReporter(logger) : undefined;
  connection.on('error', (error: unknown) => reportError?.(error));
  const coordinator = new RedisCoordinator({
    redis: client,
    prefix: config.prefix,
    onError: reportError,
    onClose: async () => {
      // Bottleneck's channels are let go of; the connections are the link's (closed here only if the limiter opened it).
      const channels = Object.keys((connection as unknown as BottleneckConnectionInternals).limiters);
      if (channels.length > 0 && client.status === 'ready') await settlesWithin(link.subscriber().unsubscribe(...channels), 2000);
      await connection.disconnect(false);
      if (!options.link) await link.close();
    },
  });
  const limiter = new ImageLimiter({
    id: config.prefix,
    imagesPerMinute,
    maxConcurrent,
    coordinator,
    toleranceMs,
    bucket: (shape) => new RedisImageBucket(client, config.prefix, shape),
    leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
    onDatastoreError: reportError,
    bottleneck: {
      datastore: 'ioredis',
      connection,
      heartbeatInterval: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    },
  });
  // A lost connection makes waiting requests wait longer: tell them why (chat users see it).
  client.on('reconnecting', () => limiter.reportDatastoreTrouble(new Error('the connection to Redis was lost; reconnecting')));
  try {
    await limiter.ready();
  } catch (error) {
    await limiter.stop().catch(() => undefined);
    throw error;
  }
  probes.set(limiter, oneAtATime(() => slotsAnswer(connection)));
  return limiter;
}

/** How each shared limiter made here answers `sharedLimiterWorks`. */
const probes = new WeakMap<ImageLimiter, () => Promise<boolean>>();

/**
 * The readiness of a limiter (`/healthz`'s `limiter` check): for one shared through Redis, whether its slots can
 * run their scripts in Redis now — false while Redis is unreachable, refuses them (out of memory, a read-only
 * replica) or has lost their state in a way they cannot rebuild; a state lost by an empty restart is rebuilt by the
 * check itself, as by the next request. Never rejects; a limiter of one process alone always works.
 */
export function sharedLimiterWorks(limiter: ImageLimiter): Promise<boolean> {
  return probes.get(limiter)?.() ?? Promise.resolve(true);
}

/** Whether bottleneck's limiter on `connection` answers how many requests run (one of its scripts, through its own error handling). */
async function slotsAnswer(connection: Bottleneck.IORedisConnection): Promise<boolean> {
  const slots = Object.values((connection as unknown as BottleneckConnectionInternals).limiters)[0];
  if (!slots) return false;
  return slots.running().then(
    () => true,
    () => false,
  );
}

/** `probe`, asked again while it has not answered: the same answer (a Redis that does not answer gets one probe, not one per ask). */
function oneAtATime(probe: () => Promise<boolean>): () => Promise<boolean> {
  let pending: Promise<boolean> | undefined;
  return () =>
    (pending ??= probe().finally(() => {
      pending = undefined;
    }));
}

/** The two parts of bottleneck's `IORedisConnection` used here that its types do not show. */
interface BottleneckConnectionInternals {
  /** Its limiters, by channel (two channels each). */
  limiters: Record<string, Bottleneck>;
  /** The function that runs one of its scripts; the last argument is the callback its answer or error goes to. */
  __scriptFn__(name: string): (...args: unknown[]) => unknown;
}

/**
 * The errors with which bottleneck's scripts say Redis lost their state: its settings (Redis restarted empty, or was
 * flushed) or this process's registration. Bottleneck (2.19.5) recognises them by their exact text and rebuilds what
 * is missing; Redis 7 prefixes "ERR " to a script's error that has no code of its own, so unrecognised, every
 * request after an empty restart failed for ever (and every heartbeat with it).
 */
const LOST_STATE = /^ERR (SETTINGS_KEY_NOT_FOUND|UNKNOWN_CLIENT)$/;

/**
 * Every script `connection` runs — a request's, the heartbeat's — reports a lost state with the text bottleneck
 * recognises. Done on the callback bottleneck gives each script (where it reads the error), not on the promise
 * ioredis also returns, which bottleneck leaves alone: a copy of that promise that rejects would go unhandled.
 */
function recogniseLostState(connection: Bottleneck.IORedisConnection): void {
  const internals = connection as unknown as BottleneckConnectionInternals;
  const scriptFn = internals.__scriptFn__.bind(connection);
  internals.__scriptFn__ = (name) => {
    const run = scriptFn(name);
    return (...args) => {
      const callback = args.at(-1);
      if (typeof callback !== 'function') return run(...args);
      return run(...args.slice(0, -1), (error: unknown, replies: unknown) => {
        if (error instanceof Error && LOST_STATE.test(error.message)) error.message = error.message.slice('ERR '.length);
        (callback as (error: unknown, replies: unknown) => void)(error, replies);
      });
    };
  };
}

/** Whether `promise` fulfils within `ms`. */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(false);
      },
    );
  });
}

/** Logs Redis trouble at most once every 10 s, so an outage does not flood the log. */
function rateLimitedReporter(logger: RedisLogger): (error: unknown) => void {
  let last = 0;
  return (error) => {
    const now = Date.now();
    if (now - last < 10_000) return;
    last = now;
    logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'the shared limiter hit a Redis error; requests wait and retry');
  };
}
