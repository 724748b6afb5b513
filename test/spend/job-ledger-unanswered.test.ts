import { rm } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PRICE_TABLE, type CompletedEvent } from '../../src/index.js';
import { FileQuotaStore, JobLedger, type QuotaStore } from '../../src/internal.js';
import { NEXT_JOB_SETTLE_WAIT_MS } from '../../src/spend/job-ledger.js';

const LOW = PRICE_TABLE['1024x1024'].low;
const image: CompletedEvent = {
  type: 'image_generation.completed',
  b64_json: 'AAAA',
  created_at: 1,
  size: '1024x1024',
  quality: 'low',
  background: 'opaque',
  output_format: 'png',
  usage: undefined,
};

const dirs: string[] = [];
const stores: FileQuotaStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function fileStore(): Promise<FileQuotaStore> {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-job-ledger-'));
  dirs.push(dir);
  const store = new FileQuotaStore({ dir });
  stores.push(store);
  return store;
}

/**
 * The ledger as a Redis client that queues its commands while Redis is away sees it: a settle is neither taken nor
 * refused, it waits. `back()` brings the ledger back: every settle that waited then runs, as the queued commands do.
 */
function silentSettles(store: QuotaStore) {
  const waiting: (() => void)[] = [];
  let away = true;
  const silent = new Proxy(store, {
    get(target, key) {
      if (key === 'settle') {
        return (...args: Parameters<QuotaStore['settle']>) =>
          away ? new Promise((resolve, reject) => waiting.push(() => target.settle(...args).then(resolve, reject))) : target.settle(...args);
      }
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const back = () => {
    away = false;
    for (const run of waiting.splice(0)) run();
  };
  return { silent, back, tries: () => waiting.length };
}

describe('JobLedger when the ledger never answers a settle', () => {
  it('gives its try a time, sends no second settle while that one may still land, keeps it, and charges it once when the ledger is back', async () => {
    const store = await fileStore();
    const { silent, back, tries } = silentSettles(store);
    const ledger = new JobLedger({ store: silent, retryDelayMs: 5, retryForMs: 40, attemptTimeoutMs: 10 });
    const begun = await ledger.begin({ jobId: 'cli:ann:1', userKey: 'cli:ann', scopeKey: 'cli', limits: {}, request: { operation: 'generate', n: 1, size: '1024x1024', quality: 'low' } });
    if (!begun.ok) throw new Error(begun.code);
    const job = begun.job;
    await job.beforeSend();
    job.onImage(image);

    const settlement = await job.end({ kind: 'completed' }).settled;

    expect(settlement).toMatchObject({ action: 'settled', usd: LOW, recorded: false, deferred: true });
    expect(ledger.kept).toBe(1);
    // One settle sent: a second, queued behind the first, would charge the job twice once Redis ran them both.
    expect(tries()).toBe(1);
    // Meanwhile the reservation still counts, at its estimate.
    expect(await store.activeJobs()).toEqual([expect.objectContaining({ jobId: 'cli:ann:1' })]);

    back();
    // The kept settle is tried again (before the next job, or on its timer) until the one that was sent has landed.
    await vi.waitFor(async () => {
      await ledger.flushKept();
      expect(ledger.kept).toBe(0);
    });

    expect(await store.activeJobs()).toEqual([]);
    expect(await store.usage({})).toEqual([expect.objectContaining({ jobId: 'cli:ann:1', costUsd: LOW, basis: 'table' })]);
    expect(await store.spentToday('cli:ann', Date.now())).toBeCloseTo(LOW, 9);
  });
});

describe('JobLedger when kept settles meet a ledger that stalls', () => {
  /** The store refusing every settle at once (lock busy) until `stall()`; then silent (Redis away) until `back()`. */
  function troubledSettles(store: QuotaStore) {
    let mode: 'refuse' | 'silent' | 'take' = 'refuse';
    const waiting: (() => void)[] = [];
    let tries = 0;
    const troubled = new Proxy(store, {
      get(target, key) {
        if (key === 'settle') {
          return (...args: Parameters<QuotaStore['settle']>) => {
            tries++;
            if (mode === 'refuse') return Promise.reject(new Error('the ledger lock is busy'));
            if (mode === 'silent') return new Promise((resolve, reject) => waiting.push(() => target.settle(...args).then(resolve, reject)));
            return target.settle(...args);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    return {
      troubled,
      tries: () => tries,
      stall: () => void (mode = 'silent'),
      back: () => {
        mode = 'take';
        for (const run of waiting.splice(0)) run();
      },
    };
  }

  afterEach(() => void vi.useRealTimers());

  it('has the next job of any user wait for their try at most NEXT_JOB_SETTLE_WAIT_MS, not 5 s for each, and joins a try already under way', async () => {
    const store = await fileStore();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { troubled, tries, stall, back } = troubledSettles(store);
    const reserves = vi.spyOn(troubled, 'reserve');
    // The defaults: 30 s of tries, each given 5 s.
    const ledger = new JobLedger({ store: troubled });
    const request = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low' };
    const jobs = [];
    for (const jobId of ['n8n:wf1:1', 'n8n:wf1:2', 'n8n:wf1:3']) {
      const begun = await ledger.begin({ jobId, userKey: 'n8n:wf1', scopeKey: 'n8n', limits: {}, request });
      if (!begun.ok) throw new Error(begun.code);
      await begun.job.beforeSend();
      begun.job.onImage(image);
      jobs.push(begun.job);
    }
    const endings = jobs.map((job) => job.end({ kind: 'completed' }).settled);
    await vi.advanceTimersByTimeAsync(31_000);
    await Promise.all(endings);
    expect(ledger.kept).toBe(3);

    // The ledger now stalls: each kept settle's try takes its full 5 s.
    stall();
    reserves.mockClear();
    const triesBefore = tries();
    const next = ledger.begin({ jobId: 'n8n:wf2:1', userKey: 'n8n:wf2', scopeKey: 'n8n', limits: {}, request });
    await vi.advanceTimersByTimeAsync(NEXT_JOB_SETTLE_WAIT_MS - 1);
    expect(reserves).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(reserves).toHaveBeenCalledTimes(1);
    expect(await next).toMatchObject({ ok: true });

    // Another job while that try is still under way: it joins it (no second round of tries) and waits as long at most.
    expect(ledger.flushKept()).toBe(ledger.flushKept());
    const another = ledger.begin({ jobId: 'n8n:wf3:1', userKey: 'n8n:wf3', scopeKey: 'n8n', limits: {}, request });
    await vi.advanceTimersByTimeAsync(NEXT_JOB_SETTLE_WAIT_MS);
    expect(reserves).toHaveBeenCalledTimes(2);
    expect(await another).toMatchObject({ ok: true });
    expect(tries() - triesBefore).toBe(1);
    expect(ledger.kept).toBe(3);

    // The ledger is back: the kept settles land, each charged once.
    back();
    vi.useRealTimers();
    await vi.waitFor(async () => {
      await ledger.flushKept();
      expect(ledger.kept).toBe(0);
    });
    expect(await store.spentToday('n8n:wf1', Date.now())).toBeCloseTo(3 * LOW, 9);
  });
});

describe('JobLedger when a settle is kept while the kept ones are being tried against a ledger that stalls', () => {
  afterEach(() => void vi.useRealTimers());

  /**
   * Ann's job's settle that the ledger never answers, tried again (10 s each) from when it is kept; while that try
   * stalls, Bob's job's settle, refused until then, is kept too, and then the ledger takes it.
   */
  async function keptDuringAStalledTry() {
    const store = await fileStore();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const modes = new Map<string, 'refuse' | 'silent' | 'take'>([
      ['cli:ann:1', 'silent'],
      ['cli:bob:1', 'refuse'],
    ]);
    const tries = new Map<string, number>();
    const troubled = new Proxy(store, {
      get(target, key) {
        if (key === 'settle') {
          return (...args: Parameters<QuotaStore['settle']>) => {
            const [jobId] = args;
            tries.set(jobId, (tries.get(jobId) ?? 0) + 1);
            const mode = modes.get(jobId) ?? 'take';
            if (mode === 'refuse') return Promise.reject(new Error('the ledger lock is busy'));
            if (mode === 'silent') return new Promise(() => {});
            return target.settle(...args);
          };
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const ledger = new JobLedger({ store: troubled, retryForMs: 10_000, attemptTimeoutMs: 10_000 });
    const request = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low' };
    const limits = { userConcurrentJobs: 1 };
    const started = async (jobId: string, userKey: string) => {
      const begun = await ledger.begin({ jobId, userKey, scopeKey: 'cli', limits, request });
      if (!begun.ok) throw new Error(begun.code);
      await begun.job.beforeSend();
      begun.job.onImage(image);
      return begun.job;
    };
    const ann = await started('cli:ann:1', 'cli:ann');
    const bob = await started('cli:bob:1', 'cli:bob');

    const annEnded = ann.end({ kind: 'completed' }).settled;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(await annEnded).toMatchObject({ deferred: true });
    // The kept ones are tried: Ann's try stalls for its 10 s.
    const flushed = ledger.flushKept();
    const bobEnded = bob.end({ kind: 'completed' }).settled;
    await vi.advanceTimersByTimeAsync(7_000);
    expect(await bobEnded).toMatchObject({ deferred: true });
    expect(ledger.kept).toBe(2);
    // The ledger takes Bob's settle now; Ann's try is still under way.
    modes.set('cli:bob:1', 'take');
    return { store, ledger, flushed, tries, limits, request };
  }

  it('has the try under way try that settle too before it ends, each kept one once', async () => {
    const { store, ledger, flushed, tries } = await keptDuringAStalledTry();
    const annTries = tries.get('cli:ann:1');
    const bobTries = tries.get('cli:bob:1') ?? 0;

    await vi.advanceTimersByTimeAsync(3_000);
    vi.useRealTimers();
    await flushed;

    expect(ledger.kept).toBe(1);
    expect(tries.get('cli:bob:1')).toBe(bobTries + 1);
    // Ann's, whose first settle may still land, got no second one.
    expect(tries.get('cli:ann:1')).toBe(annTries);
    expect(await store.spentToday('cli:bob', Date.now())).toBeCloseTo(LOW, 9);
    ledger.close();
  });

  it('has that user’s next job try it at once, not wait its NEXT_JOB_SETTLE_WAIT_MS behind the stalled try: it is decided on what the last job cost', async () => {
    const { store, ledger, limits, request } = await keptDuringAStalledTry();

    const next = ledger.begin({ jobId: 'cli:bob:2', userKey: 'cli:bob', scopeKey: 'cli', limits, request });
    // The ledger's answer comes from its file (real I/O): waited for with a clock that moves 1 ms a look.
    await vi.waitFor(() => expect(ledger.kept).toBe(1), { interval: 1, timeout: 2_000 });
    await vi.advanceTimersByTimeAsync(NEXT_JOB_SETTLE_WAIT_MS);

    expect(await next).toMatchObject({ ok: true });
    expect(await store.usage({})).toEqual([expect.objectContaining({ jobId: 'cli:bob:1', costUsd: LOW })]);
    ledger.close();
  });
});

describe('ChargedJob whose settle or release is kept and lands later', () => {
  /** A store that refuses every settle and release (the ledger lock busy) until `take()`. */
  function refusingUntilTaken(store: QuotaStore) {
    let taking = false;
    const refusing = new Proxy(store, {
      get(target, key) {
        if (key === 'settle' || key === 'release') {
          const real = (Reflect.get(target, key) as (...a: unknown[]) => Promise<unknown>).bind(target);
          return (...args: unknown[]) => (taking ? real(...args) : Promise.reject(new Error('the ledger lock is busy')));
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    return { refusing, take: () => void (taking = true) };
  }

  for (const [what, ending, action] of [
    ['settle', { kind: 'completed' }, 'settled'],
    ['release', { kind: 'cancelled' }, 'released'],
  ] as const) {
    it(`no longer counts its reservation once its kept ${what} lands on a later try`, async () => {
      const store = await fileStore();
      const { refusing, take } = refusingUntilTaken(store);
      const ledger = new JobLedger({ store: refusing, retryDelayMs: 5, retryForMs: 20, attemptTimeoutMs: 5_000 });
      const begun = await ledger.begin({ jobId: 'cli:ann:1', userKey: 'cli:ann', scopeKey: 'cli', limits: {}, request: { operation: 'generate', n: 1, size: '1024x1024', quality: 'low' } });
      if (!begun.ok) throw new Error(begun.code);
      const job = begun.job;
      if (action === 'settled') {
        await job.beforeSend();
        job.onImage(image);
      }

      expect(await job.end(ending).settled).toMatchObject({ action, deferred: true });
      expect(job.reserving).toBe(true);

      take();
      // Tried again (here, or by a round its timer began before the ledger took it) until it lands.
      await vi.waitFor(async () => {
        await ledger.flushKept();
        expect(ledger.kept).toBe(0);
      });
      expect(await store.activeJobs()).toEqual([]);
      expect(job.reserving).toBe(false);
    });
  }
});
