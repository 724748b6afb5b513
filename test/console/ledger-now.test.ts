import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LedgerNow } from '../../src/console/ledger-now.js';
import type { ActiveJob, ReconcileReport } from '../../src/spend/types.js';

const NOTHING_ENDED: ReconcileReport = { released: [], settledAtEstimate: [], chargedUsd: 0 };

/** The console's backend wait. */
const WAIT_MS = 5_000;

const JOB: ActiveJob = { jobId: 'j1', userKey: 'discord:alice', scopeKey: 'discord:guild', usd: 0.5, at: Date.UTC(2030, 5, 15, 11), sent: true, owner: 'host:1:a' };

/** A ledger holding `active`, whose reconcile answers when the test says so, counting its calls. */
function ledger(active: ActiveJob[] = [JOB]) {
  const calls: number[] = [];
  const pending: ((report: ReconcileReport) => void)[] = [];
  const waiting: (() => void)[] = [];
  let fail = false;
  return {
    calls,
    /** Resolves once the ledger is asked to reconcile. */
    asked: () => new Promise<void>((resolve) => waiting.push(resolve)),
    answer: () => pending.splice(0).forEach((resolve) => resolve(NOTHING_ENDED)),
    failNext: () => void (fail = true),
    store: {
      reconcile: (now: number) => {
        calls.push(now);
        waiting.splice(0).forEach((resolve) => resolve());
        if (fail) {
          fail = false;
          return Promise.reject(new Error('the ledger is unreachable'));
        }
        return new Promise<ReconcileReport>((resolve) => pending.push(resolve));
      },
      activeJobs: async (): Promise<ActiveJob[]> => [...active],
    },
    /** A usage index with nothing to read. */
    index: { refreshAfterWrites: async () => undefined },
    active,
  };
}

beforeEach(() => void vi.useFakeTimers({ now: Date.UTC(2030, 5, 15, 12) }));
afterEach(() => void vi.useRealTimers());

describe('the ledger as the console reads it now', () => {
  it('ends gone processes’ reservations at most once every 5 s, calls meanwhile sharing the one running', async () => {
    const l = ledger();
    const now = new LedgerNow(l.store, { index: l.index, readWaitMs: WAIT_MS });
    const asked = l.asked();
    const first = now.reconcile();
    const second = now.reconcile();
    await asked;
    expect(l.calls).toHaveLength(1);
    l.answer();
    await Promise.all([first, second]);
    vi.advanceTimersByTime(4_999);
    await now.read();
    expect(l.calls).toHaveLength(1);
    vi.advanceTimersByTime(1);
    const askedAgain = l.asked();
    const third = now.read();
    await askedAgain;
    l.answer();
    await third;
    expect(l.calls).toEqual([Date.UTC(2030, 5, 15, 12), Date.UTC(2030, 5, 15, 12) + 5_000]);
  });

  it('reads in one order: the gone processes’ reservations ended, then the usage records, then the reservations', async () => {
    const steps: string[] = [];
    const store = {
      reconcile: async () => {
        steps.push('reconcile');
        return NOTHING_ENDED;
      },
      activeJobs: async () => {
        steps.push('reservations');
        return [JOB];
      },
    };
    const index = { refreshAfterWrites: async () => void steps.push('usage records') };
    expect(await new LedgerNow(store, { index, readWaitMs: WAIT_MS }).read()).toEqual([JOB]);
    // The first read of the reservations only asks whether there is any to end.
    expect(steps).toEqual(['reservations', 'reconcile', 'usage records', 'reservations']);
  });

  it('asks the ledger to end nothing while it holds no reservation (a reconcile only ends reservations), and does once it holds one', async () => {
    const l = ledger([]);
    const now = new LedgerNow(l.store, { index: l.index, readWaitMs: WAIT_MS });
    for (let i = 0; i < 12; i++) {
      expect(await now.read()).toEqual([]);
      vi.advanceTimersByTime(5_000);
    }
    expect(l.calls).toEqual([]);
    l.active.push(JOB);
    const asked = l.asked();
    const read = now.read();
    await asked;
    l.answer();
    expect(await read).toEqual([JOB]);
  });

  it('tells a reconcile that failed and still answers the reservations', async () => {
    const l = ledger();
    const errors: unknown[] = [];
    const now = new LedgerNow(l.store, { index: l.index, readWaitMs: WAIT_MS, onError: (error) => errors.push(error) });
    l.failNext();
    expect(await now.read()).toEqual([JOB]);
    expect(errors).toEqual([expect.objectContaining({ message: 'the ledger is unreachable' })]);
  });

  it('keeps a reconcile that stalls as the one under way: each later call reads without it after its wait, and none starts another until it answers', async () => {
    const l = ledger();
    let answered = 0;
    const now = new LedgerNow(l.store, { index: l.index, readWaitMs: WAIT_MS, everyMs: 1_000 });
    const asked = l.asked();
    void now.read().then(() => answered++);
    await asked;
    await vi.advanceTimersByTimeAsync(WAIT_MS);
    expect(answered).toBe(1);
    // A page, the live list, an alert check, ... while the ledger stays silent, each long past `everyMs` and its own wait.
    for (let i = 2; i <= 6; i++) {
      void now.read().then(() => answered++);
      await vi.advanceTimersByTimeAsync(WAIT_MS);
      expect(answered).toBe(i);
    }
    expect(l.calls).toHaveLength(1);
    // Once it answers, the next call past `everyMs` starts the next one.
    l.answer();
    await vi.advanceTimersByTimeAsync(0);
    const askedAgain = l.asked();
    const read = now.read();
    await askedAgain;
    l.answer();
    expect(await read).toEqual([JOB]);
    expect(l.calls).toHaveLength(2);
  });
});
