import { afterEach, describe, expect, it, vi } from 'vitest';
import { RefusalTally } from '../../src/spend/refusal-tally.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('the refusal tally', () => {
  it('writes what it counted at close, in one write', async () => {
    const writes: Record<string, number>[] = [];
    const tally = new RefusalTally({ store: { countRefusals: async (counts) => void writes.push({ ...counts }) } });
    tally.add('daily_cap');
    tally.add('daily_cap');
    tally.add('blocked_word');
    await tally.close();
    expect(writes).toEqual([{ daily_cap: 2, blocked_word: 1 }]);
  });

  it('closes by its until when the ledger never answers the last write (a Redis gone away), dropping those counts', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const asked: Record<string, number>[] = [];
    const tally = new RefusalTally({ store: { countRefusals: (counts) => (asked.push(counts), new Promise<void>(() => {})) } });
    tally.add('daily_cap');
    let closed = false;
    const closing = tally.close({ until: Date.now() + 1_000 }).then(() => (closed = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(closed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await closing;
    expect(closed).toBe(true);
    expect(asked).toEqual([{ daily_cap: 1 }]);
  });
});
