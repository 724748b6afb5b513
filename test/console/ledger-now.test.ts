import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LedgerNow } from '../../src/console/ledger-now.js';
import type { ActiveJob, ReconcileReport } from '../../src/spend/types.js';

const NOTHING_ENDED: ReconcileReport = { released: [], settledAtEstimate: [], chargedUsd: 0 };

/** A ledger whose reconcile answers when the test says so, counting its calls. */
function ledger() {
  const calls: number[] = [];
  const pending: ((report: ReconcileReport) => void)[] = [];
  let fail = false;
  return {
    calls,
    answer: () => pending.splice(0).forEach((resolve) => resolve(NOTHING_ENDED)),
    failNext: () => void (fail = true),
    store: {
      reconcile: (now: number) => {
        calls.push(now);
        if (fail) {
          fail = false;
          return Promise.reject(new Error('the ledger is unreachable'));
        }
        return new Promise<ReconcileReport>((resolve) => pending.push(resolve));
      },
      activeJobs: async (): Promise<ActiveJob[]> => [],
    },
  };
}

beforeEach(() => void vi.useFakeTimers({ now: Date.UTC(2030, 5, 15, 12) }));
afterEach(() => void vi.useRealTimers());

describe('the ledger as the console reads it now', () => {
  it('ends gone processes’ reservations at most once every 5 s, calls meanwhile sharing the one running', async () => {
    const l = ledger();
    const now = new LedgerNow(l.store);
    const first = now.reconcile();
    const second = now.reconcile();
    expect(second).toBe(first);
    l.answer();
    await Promise.all([first, second]);
    vi.advanceTimersByTime(4_999);
    await now.activeJobs();
    expect(l.calls).toHaveLength(1);
    vi.advanceTimersByTime(1);
    const third = now.activeJobs();
    l.answer();
    await third;
    expect(l.calls).toEqual([Date.UTC(2030, 5, 15, 12), Date.UTC(2030, 5, 15, 12) + 5_000]);
  });

  it('tells a reconcile that failed and still answers the reservations', async () => {
    const l = ledger();
    const errors: unknown[] = [];
    const now = new LedgerNow(l.store, { onError: (error) => errors.push(error) });
    l.failNext();
    expect(await now.activeJobs()).toEqual([]);
    expect(errors).toEqual([expect.objectContaining({ message: 'the ledger is unreachable' })]);
  });
});
