import { afterEach, describe, expect, it, vi } from 'vitest';
import { LedgerNow } from '../../src/console/ledger-now.js';
import { LiveJobs, type LiveListener } from '../../src/console/live-jobs.js';
import { UsageIndex } from '../../src/console/usage-index.js';
import type { ActiveJob, UsageFeed, UsageRecord } from '../../src/spend/types.js';
import { LEDGER_WAIT_MS } from '../../src/console/server.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A ledger whose reads of the running jobs the test answers, one by one. */
function heldLedger() {
  const asked: ((jobs: ActiveJob[]) => void)[] = [];
  return {
    asked,
    ledger: { read: () => new Promise<ActiveJob[]>((resolve) => asked.push(resolve)) },
    index: { recent: () => [], refresh: async () => undefined, ready: true },
  };
}

const job = (jobId: string): ActiveJob => ({ jobId, userKey: 'discord:1', scopeKey: 'discord:guild', usd: 0.2, at: 0, sent: true, owner: 'process-1' });

function listener(): LiveListener & { lives: string[][] } {
  const lives: string[][] = [];
  return { lives, live: (jobs) => void lives.push(jobs.map((j) => j.jobId)), finished: () => undefined };
}

/** Lets the promises settled so far run their callbacks. */
const settle = () => vi.advanceTimersByTimeAsync(0);

describe('the live jobs the jobs page listens to', () => {
  it('shares one first read among listeners arriving meanwhile, counts them toward the limit, and reads on one interval', async () => {
    vi.useFakeTimers();
    const ledger = heldLedger();
    const live = new LiveJobs({ readWaitMs: LEDGER_WAIT_MS, ledger: ledger.ledger, index: ledger.index, intervalMs: 1000, maxListeners: 2 });
    const a = listener();
    const b = listener();
    const first = live.subscribe(a);
    const second = live.subscribe(b);
    // A third while the two wait for the stalled first read: past the limit.
    expect(await live.subscribe(listener())).toBeUndefined();
    await settle();
    expect(ledger.asked).toHaveLength(1);
    ledger.asked[0]!([job('j1')]);
    const [offA, offB] = await Promise.all([first, second]);
    expect(a.lives).toEqual([['j1']]);
    expect(b.lives).toEqual([['j1']]);
    // One interval: one read a second, not one per listener.
    await vi.advanceTimersByTimeAsync(1000);
    expect(ledger.asked).toHaveLength(2);
    ledger.asked[1]!([job('j1')]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(ledger.asked).toHaveLength(3);
    ledger.asked[2]!([]);
    offA!();
    offB!();
    // Nobody listens: nothing is read, no interval is left.
    await vi.advanceTimersByTimeAsync(5000);
    expect(ledger.asked).toHaveLength(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reads again after a read that stalls, and drops what the late read brings', async () => {
    vi.useFakeTimers();
    const ledger = heldLedger();
    const errors: unknown[] = [];
    const live = new LiveJobs({ ledger: ledger.ledger, index: ledger.index, intervalMs: 1000, readWaitMs: 3000, onError: (e) => void errors.push(e) });
    const a = listener();
    const subscribing = live.subscribe(a);
    await settle();
    ledger.asked[0]!([]);
    const off = await subscribing;
    // The first poll stalls.
    await vi.advanceTimersByTimeAsync(1000);
    expect(ledger.asked).toHaveLength(2);
    // Past its wait, the next tick reads again.
    await vi.advanceTimersByTimeAsync(4000);
    expect(errors).toHaveLength(1);
    expect(ledger.asked.length).toBeGreaterThanOrEqual(3);
    ledger.asked[2]!([job('new')]);
    await settle();
    expect(a.lives).toEqual([[], ['new']]);
    // The stalled read answers at last: what it brings is older, and dropped.
    ledger.asked[1]!([job('old')]);
    await settle();
    expect(a.lives).toEqual([[], ['new']]);
    off!();
  });

  it('lets a retry during a stall wait for the same first read, and leaves one interval once the ledger answers', async () => {
    vi.useFakeTimers();
    const ledger = heldLedger();
    const live = new LiveJobs({ readWaitMs: LEDGER_WAIT_MS, ledger: ledger.ledger, index: ledger.index, intervalMs: 1000, maxListeners: 20 });
    // Each retry of the browser during the stall: a subscribe whose first read does not answer.
    const tries = [live.subscribe(listener()), live.subscribe(listener()), live.subscribe(listener())];
    await settle();
    expect(ledger.asked).toHaveLength(1);
    ledger.asked[0]!([]);
    // Each was answered late (its stream ended): let go once the read ends.
    for (const off of await Promise.all(tries)) off!();
    expect(live.listeners).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reads nothing more once closed during the first read: no interval left, the listeners waiting are not taken', async () => {
    vi.useFakeTimers();
    const ledger = heldLedger();
    const live = new LiveJobs({ readWaitMs: LEDGER_WAIT_MS, ledger: ledger.ledger, index: ledger.index, intervalMs: 1000 });
    const a = listener();
    const subscribing = live.subscribe(a);
    await settle();
    live.close();
    ledger.asked[0]!([job('j1')]);
    expect(await subscribing).toBeUndefined();
    expect(a.lives).toEqual([]);
    expect(live.listeners).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    // A page asking after the close is not taken either, and nothing is read.
    expect(await live.subscribe(listener())).toBeUndefined();
    await vi.advanceTimersByTimeAsync(5000);
    expect(ledger.asked).toHaveLength(1);
  });
});

describe('the live jobs over a usage index whose ledger stalls', () => {
  it('goes on telling the jobs that end once the ledger answers again, though one read of the records never does', async () => {
    vi.useFakeTimers();
    const now = Date.now();
    const day = new Date(now).toISOString().slice(0, 10);
    const record = (jobId: string): UsageRecord => ({ jobId, time: now, day, month: day.slice(0, 7), surface: 'discord', userKey: 'discord:1', scopeKey: 'discord:g', costUsd: 0.1, basis: 'table' });
    const reads: ((feed: UsageFeed) => void)[] = [];
    const index = new UsageIndex({ store: { usageSince: () => new Promise<UsageFeed>((answer) => reads.push(answer)) }, now: () => now, readWaitMs: 3000 });
    const ledger = new LedgerNow({ activeJobs: async () => [], reconcile: async () => ({ released: [], settledAtEstimate: [], chargedUsd: 0 }) }, { index, readWaitMs: 3000 });
    const live = new LiveJobs({ ledger, index, intervalMs: 1000, readWaitMs: 3000, onError: () => undefined });
    const finished: string[] = [];
    // The page's load.
    const loading = ledger.read();
    await settle();
    reads[0]!({ records: [], cursor: '0', reset: false });
    await loading;
    const subscribing = live.subscribe({ live: () => undefined, finished: (records) => void finished.push(...records.map((r) => r.jobId)) });
    await settle();
    reads[1]!({ records: [], cursor: '0', reset: false });
    const off = await subscribing;
    // The first poll's read of the records stalls, for good.
    await vi.advanceTimersByTimeAsync(1000);
    expect(reads).toHaveLength(3);
    // Past its wait a later poll asks the ledger again, which answers: the job that ended is told.
    await vi.advanceTimersByTimeAsync(4000);
    expect(reads).toHaveLength(4);
    reads[3]!({ records: [record('done')], cursor: '1', reset: false });
    await settle();
    expect(finished).toEqual(['done']);
    off!();
    live.close();
  });
});

describe('the live jobs when a process is killed', () => {
  it('tells its job ended in the same tick it leaves the running jobs: never in neither list', async () => {
    vi.useFakeTimers();
    const now = Date.now();
    const day = new Date(now).toISOString().slice(0, 10);
    const held = job('held');
    const interrupted: UsageRecord = { jobId: 'held', time: now, day, month: day.slice(0, 7), surface: 'discord', userKey: 'discord:1', scopeKey: 'discord:guild', costUsd: 0.2, basis: 'uncertain', outcome: 'interrupted' };
    // A ledger whose job's process dies: the reconcile after that ends the job and writes its record.
    let dead = false;
    let active = [held];
    const records: UsageRecord[] = [];
    const store = {
      activeJobs: async () => [...active],
      reconcile: async () => {
        if (!dead) return { released: [], settledAtEstimate: [], chargedUsd: 0 };
        active = [];
        records.push(interrupted);
        index.written(); // as a store tells its onReconciled, which the console hands the index's `written`
        return { released: [], settledAtEstimate: ['held'], chargedUsd: 0.2 };
      },
      usageSince: async (cursor: string | undefined): Promise<UsageFeed> => ({ records: records.slice(Number(cursor ?? 0)), cursor: String(records.length), reset: false }),
    };
    const index = new UsageIndex({ store, now: () => now, readWaitMs: 3000 });
    const live = new LiveJobs({ ledger: new LedgerNow(store, { index, readWaitMs: 3000 }), index, intervalMs: 1000, readWaitMs: 3000 });
    const finished: string[] = [];
    /** What had been told ended when the running jobs were told empty. */
    const endedWhenGone: string[][] = [];
    const off = await live.subscribe({
      live: (jobs) => void (jobs.length === 0 && endedWhenGone.push([...finished])),
      finished: (ended) => void finished.push(...ended.map((r) => r.jobId)),
    });
    dead = true;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(endedWhenGone).toEqual([['held']]);
    off!();
    live.close();
  });
});

describe('the live jobs when a process is killed just before the first read', () => {
  it('tells its job ended when the first read is the one whose reconcile ends it: never in neither list', async () => {
    vi.useFakeTimers();
    const now = Date.now();
    const day = new Date(now).toISOString().slice(0, 10);
    const record = (jobId: string, outcome: UsageRecord['outcome']): UsageRecord => ({ jobId, time: now, day, month: day.slice(0, 7), surface: 'discord', userKey: 'discord:1', scopeKey: 'discord:guild', costUsd: 0.2, basis: outcome === 'interrupted' ? 'uncertain' : 'table', outcome });
    let dead = false;
    let active = [job('held')];
    const records: UsageRecord[] = [record('before', 'completed')];
    const store = {
      activeJobs: async () => [...active],
      reconcile: async () => {
        if (!dead) return { released: [], settledAtEstimate: [], chargedUsd: 0 };
        active = [];
        records.push(record('held', 'interrupted'));
        index.written(); // as a store tells its onReconciled
        return { released: [], settledAtEstimate: ['held'], chargedUsd: 0.2 };
      },
      usageSince: async (cursor: string | undefined): Promise<UsageFeed> => ({ records: records.slice(Number(cursor ?? 0)), cursor: String(records.length), reset: false }),
    };
    const index = new UsageIndex({ store, readWaitMs: 3000 });
    const ledger = new LedgerNow(store, { index, readWaitMs: 3000 });
    const live = new LiveJobs({ ledger, index, intervalMs: 1000, readWaitMs: 3000 });
    // The page's load: 'held' in flight, 'before' among the recent jobs.
    expect(await ledger.read()).toEqual([job('held')]);
    // Its process dies; the page's stream subscribes once the next reconcile is due, and that reconcile ends the job.
    dead = true;
    await vi.advanceTimersByTimeAsync(5000);
    const lives: string[][] = [];
    const finished: string[] = [];
    const off = await live.subscribe({ live: (jobs) => void lives.push(jobs.map((j) => j.jobId)), finished: (ended) => void finished.push(...ended.map((r) => r.jobId)) });
    // Told ended by the first read itself, before any tick: 'before' was on the page already.
    expect(lives).toEqual([[]]);
    expect(finished).toEqual(['held']);
    // The next tick tells it no second time.
    await vi.advanceTimersByTimeAsync(1000);
    expect(finished).toEqual(['held']);
    off!();
    live.close();
  });

  it('tells nothing already counted as ended when it starts over a usage index not read yet', async () => {
    vi.useFakeTimers();
    const now = Date.now();
    const day = new Date(now).toISOString().slice(0, 10);
    const records: UsageRecord[] = [{ jobId: 'before', time: now, day, month: day.slice(0, 7), surface: 'discord', userKey: 'discord:1', scopeKey: 'discord:guild', costUsd: 0.2, basis: 'table' }];
    const store = {
      activeJobs: async () => [],
      reconcile: async () => ({ released: [], settledAtEstimate: [], chargedUsd: 0 }),
      usageSince: async (cursor: string | undefined): Promise<UsageFeed> => ({ records: records.slice(Number(cursor ?? 0)), cursor: String(records.length), reset: false }),
    };
    const index = new UsageIndex({ store, readWaitMs: 3000 });
    const live = new LiveJobs({ ledger: new LedgerNow(store, { index, readWaitMs: 3000 }), index, intervalMs: 1000, readWaitMs: 3000 });
    const finished: string[] = [];
    const off = await live.subscribe({ live: () => undefined, finished: (ended) => void finished.push(...ended.map((r) => r.jobId)) });
    await vi.advanceTimersByTimeAsync(3000);
    expect(finished).toEqual([]);
    off!();
    live.close();
  });
});
