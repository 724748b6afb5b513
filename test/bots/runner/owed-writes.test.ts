import { afterEach, describe, expect, it, vi } from 'vitest';
import { OwedWrites } from '../../../bots/runner/owed-writes.js';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { botSpaces, openBotState, RedisStateStore, type BotState } from '../../../bots/state/index.js';
import { RedisLink, silentLogger } from '../../../src/internal.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../../helpers/shared-limits-redis.js';
import { testTempDir } from '../../helpers/temp-dir.js';

const redis = testRedis();
const request = { kind: 'generate' as const, prompt: 'an owed end', options: {}, teamId: 'T1', userId: 'U1', channelId: 'C1', status: 'active' as const };
const refused = () => Promise.reject(new Error("OOM command not allowed when used memory > 'maxmemory'."));

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
