import { afterEach, describe, expect, it, vi } from 'vitest';
import { OwedWrites } from '../../../bots/runner/owed-writes.js';
import { stopOnce } from '../../../bots/runner/stop-once.js';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { botSpaces, openBotState, RedisStateStore, type BotState } from '../../../bots/state/index.js';
import { RedisLink, silentLogger } from '../../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { testTempDir } from '../../helpers/temp-dir.js';
import { RecordingLogger } from '../discord/harness.js';
import { refused } from '../../helpers/refusing-state.js';

const redis = testRedis();
const request = { kind: 'generate' as const, prompt: 'an owed end', options: {}, teamId: 'T1', userId: 'U1', channelId: 'C1', status: 'active' as const };

describe.skipIf(redis.skipReason)('an end still owed when the bots’ state on Redis closes', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    vi.restoreAllMocks();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A Redis-backed state, a request running in it, and its end owed (every write refused). */
  async function owedOnRedis(): Promise<{ state: BotState; store: RequestStore; id: string; link: RedisLink; refusing: { mockRestore(): void } }> {
    const url = requireRedisUrl(redis);
    const prefix = uniquePrefix('owed');
    const link = await RedisLink.open({ url, prefix });
    cleanups.push(() => deleteKeys(url, prefix), () => link.close());
    const state = await openBotState({ dataDir: await testTempDir('pictor-owed-'), redis: link, logger: silentLogger() });
    cleanups.push(() => state.close());
    const store = new RequestStore(state);
    const { id } = await store.create(request);
    const refusing = vi.spyOn(store.space, 'update').mockImplementation(refused);
    await expect(store.markEnded(id, undefined)).rejects.toThrow(/OOM/);
    expect(store.owed.count).toBe(1);
    return { state, store, id, link, refusing };
  }

  it('is never written after the close: a replica’s sweep may hold the request by then', async () => {
    const { state, store, id, link, refusing } = await owedOnRedis();
    await state.close();
    // Redis takes writes again, and a write would still succeed on it: the close alone must stop them.
    refusing.mockRestore();
    store.owed.payNow();
    await store.owed.paid;

    const other = await RedisStateStore.open({ link });
    cleanups.push(() => other.close());
    expect(await other.space(botSpaces().slackRequests).get(id)).toMatchObject({ status: 'active' });
    expect(store.owed.count).toBe(0);
  });

  it('settles what a stop waits for once the state closes, though Redis still refuses', async () => {
    const { state, store } = await owedOnRedis();
    await state.close();
    store.owed.payNow();
    await store.owed.paid;
    expect(store.owed.count).toBe(0);
  });
});

describe('ends owed, tried at once by a stop', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts the next round without its pause when a stop asks during a round', async () => {
    vi.useFakeTimers();
    const owed = new OwedWrites(silentLogger(), () => false);
    let tries = 0;
    let failRound: (() => void) | undefined;
    owed.owe('job', () => {
      tries++;
      return tries === 1 ? new Promise((_, reject) => (failRound = () => reject(new Error('still full')))) : Promise.resolve();
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(tries).toBe(1);

    owed.payNow();
    failRound!();
    // No time passes: the round the stop asked for comes at once, not after the next pause.
    await vi.advanceTimersByTimeAsync(0);
    expect(tries).toBe(2);
    await owed.paid;
    expect(owed.count).toBe(0);
  });
});

describe('an end whose first write is still under way when a stop waits for the owed ends', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A first write the test refuses when it wants (`refuse`), then later writes answered by `again`. */
  function slowFirstWrite(again: () => Promise<unknown>): { write: () => Promise<unknown>; refuse: () => void; events: string[] } {
    const events: string[] = [];
    let refuse!: () => void;
    let tries = 0;
    const write = (): Promise<unknown> => {
      tries++;
      if (tries === 1) return new Promise((_, reject) => (refuse = () => (events.push('first refused'), reject(new Error('still full')))));
      events.push('tried again');
      return again();
    };
    return { write, refuse: () => refuse(), events };
  }

  it('is waited for, then its owed write tried at once, within the stop’s wait', async () => {
    vi.useFakeTimers();
    const logger = new RecordingLogger();
    const owed = new OwedWrites(logger, () => false);
    const { write, refuse, events } = slowFirstWrite(() => Promise.resolve());
    const ended = owed.writeOrOwe('job', write).catch(() => undefined);
    expect(owed.count).toBe(1);

    const stopped = stopOnce()(Date.now() + 10_000, (budget) => owed.payWithin(budget, 5_000)).then(() => events.push('stop waited'));
    await vi.advanceTimersByTimeAsync(0);
    refuse();
    // No time passes: the refused end is tried again at once, and the stop waited for both tries.
    await vi.advanceTimersByTimeAsync(0);
    await ended;
    await stopped;
    expect(events).toEqual(['first refused', 'tried again', 'stop waited']);
    expect(owed.count).toBe(0);
    expect(logger.entries.filter((e) => e.level === 'error')).toEqual([]);
  });

  it('is logged as lost, with how many, when it is still owed at the end of the stop’s wait', async () => {
    vi.useFakeTimers();
    const logger = new RecordingLogger();
    const owed = new OwedWrites(logger, () => false);
    const { write, refuse } = slowFirstWrite(() => Promise.reject(new Error('still full')));
    const ended = owed.writeOrOwe('job', write).catch(() => undefined);

    const stopped = stopOnce()(Date.now() + 10_000, (budget) => owed.payWithin(budget, 5_000));
    await vi.advanceTimersByTimeAsync(0);
    refuse();
    await vi.advanceTimersByTimeAsync(5_000);
    await ended;
    await stopped;
    expect(logger.entries.filter((e) => e.level === 'error')).toEqual([expect.objectContaining({ obj: { owed: 1 } })]);
  });
});

describe('ends owed after a stop asked for a round that wrote them all', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('are tried again only after the pause', async () => {
    vi.useFakeTimers();
    const owed = new OwedWrites(silentLogger(), () => false);
    let written!: () => void;
    owed.owe('first', () => new Promise<void>((resolve) => (written = resolve)));
    await vi.advanceTimersByTimeAsync(1_000);
    owed.payNow();
    written();
    await owed.paid;

    let tries = 0;
    owed.owe('later', () => (tries++, Promise.resolve()));
    await vi.advanceTimersByTimeAsync(0);
    expect(tries).toBe(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(tries).toBe(1);
  });
});
