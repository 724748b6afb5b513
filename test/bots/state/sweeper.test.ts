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

  it('hands every sweep to `track` as it starts, the later ones too, so a stop’s grace covers the one under way', async () => {
    vi.useFakeTimers();
    const tracked: Promise<number>[] = [];
    let claims = 0;
    sweeper = startSweeper({
      store: { leaseMs: 300 },
      name: 'jobs',
      claim: async () => (++claims === 2 ? ['late'] : []),
      sweep: async () => {},
      track: (sweep) => tracked.push(sweep),
      logger: silentLogger(),
    });
    expect(tracked).toEqual([sweeper.first]);
    await vi.advanceTimersByTimeAsync(100);
    expect(tracked).toHaveLength(2);
    expect(await tracked[1]).toBe(1);
  });
});
