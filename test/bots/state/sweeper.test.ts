import { afterEach, describe, expect, it, vi } from 'vitest';
import { startSweeper, type Sweeper } from '../../../bots/state/index.js';
import { silentLogger } from '../../../src/internal.js';

/** A promise and the function that resolves it. */
function deferred(): { promise: Promise<void>; resolve(): void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('the sweeper of jobs a stopped process left', () => {
  let sweeper: Sweeper | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await sweeper?.stop();
    sweeper = undefined;
  });

  it('stopped during a sweep, ends it after the entry under way: the entries not begun are left to the next sweep, not shown by a process on its way out', async () => {
    const first = deferred();
    const begun = deferred();
    const swept: string[] = [];
    sweeper = startSweeper({
      store: { leaseMs: Infinity },
      name: 'jobs',
      claim: async () => ['a', 'b', 'c'],
      sweep: async (entry) => {
        swept.push(entry);
        if (entry === 'a') {
          begun.resolve();
          await first.promise;
        }
      },
      logger: silentLogger(),
    });
    await begun.promise;
    const stopping = sweeper.stop();
    first.resolve();
    await stopping;
    expect(swept).toEqual(['a']);
    expect(await sweeper.first).toBe(1);
  });

  it('hands the showing of each claimed entry to `track` as it begins, of the later sweeps too, so a stop’s grace covers the one under way', async () => {
    vi.useFakeTimers();
    const tracked: Promise<void>[] = [];
    let claims = 0;
    sweeper = startSweeper({
      store: { leaseMs: 300 },
      name: 'jobs',
      claim: async () => (++claims === 2 ? ['late'] : []),
      sweep: async () => {},
      track: (showing) => tracked.push(showing),
      logger: silentLogger(),
    });
    expect(await sweeper.first).toBe(0);
    expect(tracked).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(100);
    expect(tracked).toHaveLength(1);
  });

  it('with `track`, gives a stop no entry being shown to wait for (its tracker waits for it), and a claim that does not answer only until the stop’s `until`', async () => {
    vi.useFakeTimers();
    const showing = deferred();
    const tracked: Promise<void>[] = [];
    let claims = 0;
    const unanswered = new Promise<string[]>(() => {});
    sweeper = startSweeper({
      store: { leaseMs: Infinity },
      name: 'jobs',
      claim: () => (++claims === 1 ? Promise.resolve(['a']) : unanswered),
      sweep: () => showing.promise,
      track: (shown) => tracked.push(shown),
      logger: silentLogger(),
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(tracked).toHaveLength(1);
    let stopped = false;
    void sweeper.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(true);
    showing.resolve();

    const stuck = startSweeper({ store: { leaseMs: Infinity }, name: 'jobs', claim: () => unanswered, sweep: async () => {}, track: () => {}, logger: silentLogger() });
    let stuckStopped = false;
    void stuck.stop({ until: Date.now() + 100 }).then(() => (stuckStopped = true));
    await vi.advanceTimersByTimeAsync(99);
    expect(stuckStopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(stuckStopped).toBe(true);
  });
});
