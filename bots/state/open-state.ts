import type { LoggerLike } from 'pictor';
import { createSerialQueue, holdDataFolder, type QuotaStore, type RedisLink } from 'pictor/internal';
import { closeFailedOnce, forgetMember, type OtherLedgerTurns } from './forget-member.js';
import { FileStateStore } from './FileStateStore.js';
import { RedisStateStore } from './RedisStateStore.js';
import { botSpaces, type BotSpaces, type SpaceSettings } from './spaces.js';
import type { StateStore } from './StateStore.js';
import { upgradeOldLayout } from './upgrade.js';
import { warnIfRedisTooSmall } from './redis-memory.js';

/** The bots' storage room: one backend for the process, the spaces on it, and `forget`. */
export interface BotState {
  readonly store: StateStore;
  readonly spaces: BotSpaces;
  /** With Redis: the process's link (its one command connection and one subscriber), lent to leases and buckets. */
  readonly redis: RedisLink | undefined;
  /**
   * Erases a member's prompts everywhere Pictor keeps them (README, "What a member's forget erases"). A part it cannot
   * erase (logged) stops nothing: the rest is erased, then it fails. Answers how many history entries there were.
   */
  forget(userKey: string): Promise<number>;
  /** Gives the lease back (what this process holds is swept by another at once), by `until` at the latest. The link is its opener's. */
  close(options?: { until?: number | undefined }): Promise<void>;
}

export interface OpenBotStateOptions extends SpaceSettings {
  /** The data folder (the file backend, and what an older version left there). */
  dataDir: string;
  /** With `REDIS_URL`: the link every replica's state goes through. */
  redis?: RedisLink | undefined;
  /** `PICTOR_REPLICA_LEASE_SECONDS` in ms. */
  leaseMs?: number | undefined;
  /** The ledger in use: `forget` erases its usage records' prompts, and an upgrade takes over what it kept for the bots. */
  ledger?: Pick<QuotaStore, 'forgetPrompts' | 'takeLegacy'> | undefined;
  /** The ledger not in use (the embedded emulator's, or the account's), if it was ever kept: `forget` opens it for its prompts only, then closes it. */
  otherLedger?: (() => Promise<Pick<QuotaStore, 'forgetPrompts' | 'close'> | undefined>) | undefined;
  /** Other ledgers an older version may have kept the bots' records in (0.1: the account's), opened and closed only when the upgrade runs. */
  legacyLedgers?: readonly (() => Promise<Pick<QuotaStore, 'takeLegacy' | 'close'>>)[] | undefined;
  /** How long a start waits for another process's upgrade from 0.1 (its lease renewed) before it fails. Default 5 minutes. */
  upgradeWaitMs?: number | undefined;
  logger: LoggerLike;
}

/** Picks the backend (Redis with a link, else the data folder), moves what an older version kept into it, once. */
export async function openBotState(options: OpenBotStateOptions): Promise<BotState> {
  const { redis, logger } = options;
  const spaces = botSpaces(options);
  // Without Redis the folder is this process's while it runs: a second start on it is refused (`holdDataFolder`).
  const lock = redis ? undefined : await holdDataFolder(options.dataDir);
  const store: StateStore = redis ? await RedisStateStore.open({ link: redis, leaseMs: options.leaseMs, logger }) : new FileStateStore({ dataDir: options.dataDir, spaces: Object.values(spaces), logger });
  const closeStore = (closeOptions?: { until?: number | undefined }) => store.close(closeOptions).finally(() => lock?.release());
  // The other ledger is opened by one forget at a time: a file ledger's folder is opened once per process, so a second
  // forget meanwhile (two members, or Discord's and Slack's of one) waits for the first to close it.
  const other: OtherLedgerTurns = { turn: createSerialQueue(), open: undefined, closing: undefined, closeFailed: closeFailedOnce(logger) };
  // A stop ends the other ledger's close by its own deadline (on Redis it may wait for a running rewrite), and waits for it.
  const close = async (closeOptions?: { until?: number | undefined }) => {
    other.closing = { until: closeOptions?.until };
    const closeOpen = other.open?.close(closeOptions).catch(other.closeFailed('a stop could not close the other ledger a forget opened'));
    await Promise.all([closeOpen, other.turn(async () => undefined).catch(() => undefined)]);
    await closeStore(closeOptions);
  };
  try {
    if (redis) await warnIfRedisTooSmall(redis.commands, spaces, logger);
    // What a crash left beside a record (a whole version of it, prompts too), in every space, opened later or not.
    await store.removeLeftovers();
    await upgradeOldLayout({ ...options, store, spaces, redis });
  } catch (error) {
    await closeStore();
    throw error;
  }
  return { store, spaces, redis, forget: (userKey) => forgetMember(store, spaces, userKey, options, other, logger), close };
}
