import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LedgerNow } from '../../src/console/ledger-now.js';
import { UsageIndex } from '../../src/console/usage-index.js';
import type { ActiveJob, ReconcileReport, UsageFeed, UsageRecord } from '../../src/spend/types.js';

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
    index: { refresh: async () => undefined, catchUp: async () => undefined },
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

  it('ends gone processes’ reservations again at once after the clock was set back, not once it has caught up', async () => {
    const l = ledger();
    const now = new LedgerNow(l.store, { index: l.index, readWaitMs: WAIT_MS });
    const asked = l.asked();
    const first = now.reconcile();
    await asked;
    l.answer();
    await first;
    // The clock is set back a day (it had jumped ahead).
    vi.setSystemTime(Date.UTC(2030, 5, 14, 12));
    const askedAgain = l.asked();
    const second = now.reconcile();
    await askedAgain;
    l.answer();
    await second;
    expect(l.calls).toEqual([Date.UTC(2030, 5, 15, 12), Date.UTC(2030, 5, 14, 12)]);
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
    const index = { refresh: async () => void steps.push('usage records'), catchUp: async () => undefined };
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

/**
 * A ledger holding JOB until its process dies (`kill`): the reconcile after that ends it, writing its *interrupted*
 * record, and tells `reconciled` as a store tells its `onReconciled` (the console hands it its usage index's `written`);
 * the reads of its usage records answer when the test says so.
 */
function dyingLedger() {
  const now = Date.now();
  const day = new Date(now).toISOString().slice(0, 10);
  const interrupted: UsageRecord = { jobId: JOB.jobId, time: now, day, month: day.slice(0, 7), surface: 'discord', userKey: JOB.userKey, scopeKey: JOB.scopeKey, costUsd: JOB.usd, basis: 'uncertain', outcome: 'interrupted' };
  const records: UsageRecord[] = [];
  const reads: { cursor: string | undefined; answer: () => void }[] = [];
  let active = [JOB];
  let dead = false;
  let reconciled: (() => void) | undefined;
  let held: Promise<void> | undefined;
  const store = {
    activeJobs: async () => {
      const jobs = [...active];
      await held;
      return jobs;
    },
    reconcile: async (): Promise<ReconcileReport> => {
      if (!dead || active.length === 0) return NOTHING_ENDED;
      active = [];
      records.push(interrupted);
      reconciled?.();
      return { released: [], settledAtEstimate: [JOB.jobId], chargedUsd: JOB.usd };
    },
    usageSince: (cursor: string | undefined) =>
      new Promise<UsageFeed>((resolve) => {
        // What the ledger holds when the read begins.
        const feed = { records: records.slice(Number(cursor ?? 0)), cursor: String(records.length), reset: false };
        reads.push({ cursor, answer: () => resolve(feed) });
      }),
  };
  /** Holds the answers of the reads of the reservations until the function returned is called. */
  const holdReservations = () => {
    let release!: () => void;
    held = new Promise<void>((resolve) => (release = resolve));
    return () => {
      held = undefined;
      release();
    };
  };
  return { store, reads, kill: () => void (dead = true), tellReconciles: (listener: () => void) => void (reconciled = listener), holdReservations };
}

/** A usage index of `l` that is told each step of it that ended reservations, as the console's is. */
function toldIndex(l: ReturnType<typeof dyingLedger>): UsageIndex {
  const index = new UsageIndex({ store: l.store, readWaitMs: WAIT_MS });
  l.tellReconciles(() => index.written());
  return index;
}

describe('the ledger and the usage records as the console reads them together', () => {
  it('lets a page read while the live list’s read is under way share its read of the usage records, when no reconcile wrote meanwhile', async () => {
    let calls = 0;
    const usageSince = () => {
      calls++;
      return new Promise<UsageFeed>((answer) => setTimeout(() => answer({ records: [], cursor: '0', reset: false }), 3_000));
    };
    const index = new UsageIndex({ store: { usageSince }, readWaitMs: WAIT_MS });
    const now = new LedgerNow({ activeJobs: async () => [], reconcile: async () => NOTHING_ENDED }, { index, readWaitMs: WAIT_MS });
    const start = Date.now();
    const done: number[] = [];
    void now.read().then(() => done.push(Date.now() - start)); // the live list's tick
    await vi.advanceTimersByTimeAsync(500);
    void now.read().then(() => done.push(Date.now() - start)); // a page
    await vi.advanceTimersByTimeAsync(10_000);
    // Both answered by the one read, well within the page's wait.
    expect(done).toEqual([3_000, 3_000]);
    expect(calls).toBe(1);
  });

  it('counts the interrupted record of the job its own reconcile ended, though a read of the records begun before was under way', async () => {
    const l = dyingLedger();
    const index = toldIndex(l);
    const now = new LedgerNow(l.store, { index, readWaitMs: WAIT_MS, everyMs: 1_000 });
    // The live list's tick: its reconcile ends nothing, its read of the records stays under way.
    const tick = now.read().then((jobs) => lists(jobs, index));
    await vi.waitFor(() => expect(l.reads).toHaveLength(1));
    l.kill();
    await vi.advanceTimersByTimeAsync(1_000);
    // A page: its reconcile ends the job.
    const page = now.read().then((jobs) => lists(jobs, index));
    await vi.advanceTimersByTimeAsync(0);
    l.reads[0]!.answer();
    await vi.waitFor(() => expect(l.reads).toHaveLength(2));
    expect(l.reads[1]!.cursor).toBe('0');
    l.reads[1]!.answer();
    // Gone from the reservations, and counted among the records, as each read answered: never in neither.
    expect(await page).toEqual({ running: [], recorded: [JOB.jobId] });
    expect(await tick).toEqual({ running: [], recorded: [JOB.jobId] });
    expect(l.reads).toHaveLength(2);
  });

  it('counts the interrupted record on a read that ran no reconcile, the one that ended the job having run meanwhile', async () => {
    const l = dyingLedger();
    const index = toldIndex(l);
    const now = new LedgerNow(l.store, { index, readWaitMs: WAIT_MS, everyMs: 1_000 });
    // A page: its reconcile ends nothing, its read of the records stays under way.
    const first = now.read().then((jobs) => lists(jobs, index));
    await vi.waitFor(() => expect(l.reads).toHaveLength(1));
    l.kill();
    await vi.advanceTimersByTimeAsync(1_000);
    // The live list's tick runs the reconcile that ends the job; a page a moment later runs none (one ran just now).
    const tick = now.read().then((jobs) => lists(jobs, index));
    await vi.advanceTimersByTimeAsync(0);
    const page = now.read().then((jobs) => lists(jobs, index));
    await vi.advanceTimersByTimeAsync(0);
    l.reads[0]!.answer();
    await vi.waitFor(() => expect(l.reads).toHaveLength(2));
    l.reads[1]!.answer();
    for (const read of [first, tick, page]) expect(await read).toEqual({ running: [], recorded: [JOB.jobId] });
    // One read of the records after the reconcile's writes, shared by all three.
    expect(l.reads).toHaveLength(2);
  });

  it('counts the interrupted record when the store’s own reconcile (the one it runs each lease) ends the job while the records are read', async () => {
    const l = dyingLedger();
    const index = toldIndex(l);
    const now = new LedgerNow(l.store, { index, readWaitMs: WAIT_MS });
    const read = now.read().then((jobs) => lists(jobs, index));
    await vi.waitFor(() => expect(l.reads).toHaveLength(1));
    // Not this read's reconcile: the store's, by its timer, while the read of the records is under way.
    l.kill();
    await l.store.reconcile();
    l.reads[0]!.answer();
    await vi.waitFor(() => expect(l.reads).toHaveLength(2));
    l.reads[1]!.answer();
    expect(await read).toEqual({ running: [], recorded: [JOB.jobId] });
  });
});

describe('the ledger and the usage records read together, when records were written meanwhile', () => {
  it('reads the records again only when no read of them begun after the write was counted before the reservations answered', async () => {
    const l = dyingLedger();
    const index = toldIndex(l);
    const now = new LedgerNow(l.store, { index, readWaitMs: WAIT_MS });
    // A page: its read of the records under way, begun before the store's own reconcile ends the job.
    const page = now.read().then((jobs) => lists(jobs, index));
    await vi.waitFor(() => expect(l.reads).toHaveLength(1));
    const release = l.holdReservations();
    l.kill();
    await l.store.reconcile();
    l.reads[0]!.answer();
    await vi.advanceTimersByTimeAsync(0);
    // While the page's read of the reservations is under way, the live list's read of the records, begun after the write, is counted.
    const tick = index.refresh();
    await vi.waitFor(() => expect(l.reads).toHaveLength(2));
    l.reads[1]!.answer();
    await tick;
    release();
    await vi.advanceTimersByTimeAsync(0);
    // That read counted the interrupted record: the page asks for no third.
    expect(l.reads).toHaveLength(2);
    expect(await page).toEqual({ running: [], recorded: [JOB.jobId] });
  });
});

describe('the usage records alone (the settings page), when records were written meanwhile', () => {
  it('counts the interrupted record though a stalled read begun before the write answers after the page’s own read began, and is counted first', async () => {
    const l = dyingLedger();
    const index = toldIndex(l);
    const now = new LedgerNow(l.store, { index, readWaitMs: WAIT_MS });
    // The live list's read of the records, begun before the process died; it stalls past its wait, so it is no longer shared.
    const stalled = index.refresh();
    await vi.waitFor(() => expect(l.reads).toHaveLength(1));
    await vi.advanceTimersByTimeAsync(WAIT_MS + 1);
    l.kill();
    await l.store.reconcile();
    const page = now.records();
    await vi.waitFor(() => expect(l.reads).toHaveLength(2));
    // The stalled read answers first and is counted (it holds no record); the page's, begun after the write, comes late.
    l.reads[0]!.answer();
    await vi.advanceTimersByTimeAsync(0);
    l.reads[1]!.answer();
    await vi.waitFor(() => expect(l.reads).toHaveLength(3));
    l.reads[2]!.answer();
    await page;
    await stalled;
    expect(lists([], index).recorded).toEqual([JOB.jobId]);
  });
});

/** What a read answered, and which jobs the usage index counted when it did. */
function lists(jobs: ActiveJob[], index: UsageIndex) {
  return { running: jobs.map((j) => j.jobId), recorded: index.recent(() => true, 5).map((r) => r.jobId) };
}
