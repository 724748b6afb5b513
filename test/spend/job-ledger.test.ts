import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ServerError, StreamBrokenError } from '../../src/core/errors.js';
import { PRICE_TABLE, type CompletedEvent } from '../../src/index.js';
import { FileQuotaStore, JobLedger, type QuotaStore } from '../../src/internal.js';
import { NEXT_JOB_SETTLE_WAIT_MS } from '../../src/spend/job-ledger.js';

const LOW = PRICE_TABLE['1024x1024'].low;
const HIGH = PRICE_TABLE['1024x1024'].high;
const image = (quality = 'low'): CompletedEvent => ({
  type: 'image_generation.completed',
  b64_json: 'AAAA',
  created_at: 1,
  size: '1024x1024',
  quality,
  background: 'opaque',
  output_format: 'png',
  usage: undefined,
});

const dirs: string[] = [];
const stores: FileQuotaStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A ledger folder of its own, removed after the test. */
async function ledgerDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-job-ledger-'));
  dirs.push(dir);
  return dir;
}

/** Leaves the ledger in `dir` as a process that died leaves it: its owners' pids run no process and their leases were never renewed. */
async function ownersDied(dir: string): Promise<void> {
  const file = join(dir, 'quota-ledger.json');
  const saved = JSON.parse(await readFile(file, 'utf8')) as { owners: Record<string, { pid: number; renewedAt: number }> };
  for (const owner of Object.values(saved.owners)) Object.assign(owner, { pid: 2 ** 22 + 1, renewedAt: 0 });
  await writeFile(file, JSON.stringify(saved));
}

async function fileStore(dir?: string): Promise<FileQuotaStore> {
  const folder = dir ?? (await ledgerDir());
  const store = new FileQuotaStore({ dir: folder });
  stores.push(store);
  return store;
}

/** The ledger as the job sees it when its settles fail (lock busy, Redis away) `failures` times, then work again. */
function failingSettles(store: QuotaStore, failures: { left: number }): QuotaStore {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'settle' || key === 'release') {
        return (...args: unknown[]) => {
          if (failures.left > 0) {
            failures.left -= 1;
            return Promise.reject(new Error('the ledger lock is busy'));
          }
          return (target[key] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      // The store's methods read its private fields: called on the store itself, not on the proxy.
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const request = { operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low' };
const begin = async (ledger: JobLedger, jobId: string, limits = {}) => {
  const begun = await ledger.begin({ jobId, userKey: 'cli:ann', scopeKey: 'cli', limits, request });
  if (!begun.ok) throw new Error(`refused: ${begun.code}`);
  return begun.job;
};

describe('JobLedger', () => {
  it('tries a settle the ledger refused again, and charges it once when the ledger takes it', async () => {
    const store = await fileStore();
    const ledger = new JobLedger({ store: failingSettles(store, { left: 2 }), retryDelayMs: 10, retryForMs: 5_000 });
    const job = await begin(ledger, 'cli:ann:1');
    await job.beforeSend();
    job.onImage(image());

    const settlement = await job.end({ kind: 'completed' }).settled;

    expect(settlement).toMatchObject({ action: 'settled', usd: LOW, basis: 'table', recorded: true, deferred: false });
    expect(await store.spentToday('cli:ann', Date.now())).toBeCloseTo(LOW, 9);
    expect(await store.usage({})).toEqual([expect.objectContaining({ jobId: 'cli:ann:1', costUsd: LOW, basis: 'table' })]);
  });

  it('says what a job is charged the moment it ends, before the ledger has taken its settle, and the settle charges that', async () => {
    const store = await fileStore();
    let open = () => {};
    const opened = new Promise<void>((resolve) => (open = resolve));
    const held = new Proxy(store, {
      get(target, key) {
        if (key === 'settle') return async (...args: Parameters<QuotaStore['settle']>) => (await opened, target.settle(...args));
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const ledger = new JobLedger({ store: held });
    const job = await begin(ledger, 'cli:ann:1');
    await job.beforeSend();
    const released = await begin(ledger, 'cli:ann:2');

    const ended = job.end({ kind: 'cancelled' });

    expect(ended.charge).toEqual({ usd: LOW, basis: 'estimate' });
    expect(released.end({ kind: 'cancelled' }).charge).toBeUndefined();
    // A second end is the first one: the same charge, the same settle.
    expect(job.end({ kind: 'completed' })).toBe(ended);
    expect(await store.spentToday('cli:ann', Date.now())).toBeCloseTo(LOW, 9);
    expect(await store.usage({})).toEqual([]);
    open();
    expect(await ended.settled).toMatchObject({ action: 'settled', usd: LOW, basis: 'estimate', recorded: true });
    expect(await store.usage({})).toEqual([expect.objectContaining({ jobId: 'cli:ann:1', costUsd: LOW, outcome: 'cancelled' })]);
  });

  it('keeps a settle the ledger refuses for good, frees the user’s slot once the ledger answers, and never charges twice', async () => {
    const store = await fileStore();
    const failures = { left: 1_000 };
    const ledger = new JobLedger({ store: failingSettles(store, failures), retryDelayMs: 5, retryForMs: 30 });
    const limits = { userConcurrentJobs: 1 };
    const job = await begin(ledger, 'cli:ann:1', limits);
    await job.beforeSend();
    job.onImage(image());

    const settlement = await job.end({ kind: 'completed' }).settled;

    expect(settlement).toMatchObject({ action: 'settled', usd: LOW, recorded: false, deferred: true });
    expect(ledger.kept).toBe(1);
    // Meanwhile the reservation still counts (its estimate), and holds the user's one slot.
    expect(await store.reserve({ jobId: 'other', userKey: 'cli:ann', scopeKey: 'cli', estimateUsd: 0, limits, now: Date.now() })).toMatchObject({ ok: false, code: 'user_concurrency' });

    failures.left = 0;
    // No time passes (the next job's wait for the kept settle is only 30 ms here): it is decided once the settle landed.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const next = await begin(ledger, 'cli:ann:2', limits).finally(() => vi.useRealTimers());

    expect(ledger.kept).toBe(0);
    expect(next.id).toBe('cli:ann:2');
    expect(await store.usage({})).toEqual([expect.objectContaining({ jobId: 'cli:ann:1', costUsd: LOW, basis: 'table' })]);
    await next.end({ kind: 'cancelled' }).settled;
    await ledger.flushKept();
    expect(await store.spentToday('cli:ann', Date.now())).toBeCloseTo(LOW, 9);
  });

  it('leaves a kept settle of a process that stops to reconcile: its estimate, once, marked uncertain', async () => {
    const dir = await ledgerDir();
    const store = await fileStore(dir);
    const ledger = new JobLedger({ store: failingSettles(store, { left: 1_000 }), retryDelayMs: 5, retryForMs: 20 });
    const job = await begin(ledger, 'cli:ann:1');
    await job.beforeSend();
    job.onImage(image());
    expect((await job.end({ kind: 'completed' }).settled).deferred).toBe(true);
    ledger.close();
    // The process stops without its settle (its pid gone); a later one meets the reservation of a dead owner.
    await store.close();
    await ownersDied(dir);
    const later = await fileStore(dir);

    const report = await later.reconcile(Date.now());

    expect(report.settledAtEstimate).toEqual(['cli:ann:1']);
    expect(await later.usage({})).toEqual([expect.objectContaining({ jobId: 'cli:ann:1', costUsd: job.estimate.totalUsd, basis: 'uncertain' })]);
    // The old process's settle, had it come back, would charge nothing more.
    expect(await later.settle('cli:ann:1', LOW)).toBe(false);
  });

  it('counts a settle above its reservation in full, and flags it in the usage record, the log and the callback', async () => {
    const store = await fileStore();
    const warnings: unknown[] = [];
    const charged: unknown[] = [];
    const ledger = new JobLedger({
      store,
      logger: { debug() {}, info() {}, warn: (obj) => warnings.push(obj), error() {} },
      onCharged: (c) => charged.push(c),
    });
    const job = await begin(ledger, 'cli:ann:1');
    await job.beforeSend();
    // Reserved at low; the service reports it made a high-quality image.
    job.onImage(image('high'));

    await job.end({ kind: 'completed' }).settled;

    expect(await store.spentToday('cli:ann', Date.now())).toBeCloseTo(HIGH, 9);
    expect(await store.usage({})).toEqual([expect.objectContaining({ costUsd: HIGH, reservedUsd: LOW, basis: 'table' })]);
    expect(warnings).toEqual([expect.objectContaining({ jobId: 'cli:ann:1', usd: HIGH, reservedUsd: LOW })]);
    expect(charged).toEqual([expect.objectContaining({ usd: HIGH, reservedUsd: LOW })]);
  });

  it('records an estimate charged after a broken stream as an estimate, not as a table price', async () => {
    const store = await fileStore();
    const ledger = new JobLedger({ store });
    const job = await begin(ledger, 'cli:ann:1');
    await job.beforeSend();

    await job.end({ kind: 'failed', error: new StreamBrokenError('the stream broke') }).settled;

    expect(await store.usage({})).toEqual([expect.objectContaining({ costUsd: job.estimate.totalUsd, basis: 'estimate' })]);
  });

  it('records the quality and size the service reported, not those asked: the ones its table price is of', async () => {
    const store = await fileStore();
    const ledger = new JobLedger({ store });
    const dearer = await begin(ledger, 'cli:ann:1');
    await dearer.beforeSend();
    dearer.onImage(image('high'));
    await dearer.end({ kind: 'completed' }).settled;
    const auto = await ledger.begin({ jobId: 'cli:ann:2', userKey: 'cli:ann', scopeKey: 'cli', limits: {}, request: { operation: 'generate', n: 1 } });
    if (!auto.ok) throw new Error('refused');
    await auto.job.beforeSend();
    auto.job.onImage({ ...image('medium'), size: '1536x1024' });
    await auto.job.end({ kind: 'completed' }).settled;

    const records = await store.usage({});
    expect(records.find((r) => r.jobId === 'cli:ann:1')).toMatchObject({ quality: 'high', size: '1024x1024', costUsd: HIGH, basis: 'table' });
    expect(records.find((r) => r.jobId === 'cli:ann:2')).toMatchObject({ quality: 'medium', size: '1536x1024', costUsd: PRICE_TABLE['1536x1024'].medium, basis: 'table' });
  });

  it('keeps the quality asked in the record of a job no image came back from', async () => {
    const store = await fileStore();
    const ledger = new JobLedger({ store });
    const job = await begin(ledger, 'cli:ann:1');
    await job.beforeSend();
    await job.end({ kind: 'cancelled' }).settled;
    expect(await store.usage({})).toEqual([expect.objectContaining({ quality: 'low', size: '1024x1024', basis: 'estimate' })]);
  });

  it('says why a release charged nothing: never sent, or every attempt sent was answered with an error that bills nothing', async () => {
    const store = await fileStore();
    const ledger = new JobLedger({ store });
    const queued = await begin(ledger, 'cli:ann:queued');
    expect(await queued.end({ kind: 'cancelled' }).settled).toMatchObject({ action: 'released', released: 'not_sent' });
    const waiting = await begin(ledger, 'cli:ann:waiting');
    await waiting.beforeSend();
    waiting.onRetry({ error: new ServerError('server_error', 'busy', { status: 503 }) });
    expect(await waiting.end({ kind: 'cancelled' }).settled).toMatchObject({ action: 'released', released: 'answered' });
    const resent = await begin(ledger, 'cli:ann:resent');
    await resent.beforeSend();
    resent.onRetry({ error: new ServerError('server_error', 'busy', { status: 503 }) });
    await resent.beforeSend();
    expect(await resent.end({ kind: 'cancelled' }).settled).toMatchObject({ action: 'settled', usd: LOW });
  });

  it('releases at reconcile a job whose process died while it waited to retry a refused attempt: the store was told nothing was billed', async () => {
    const dir = await ledgerDir();
    const store = await fileStore(dir);
    const markUnsent = vi.spyOn(store, 'markUnsent');
    const ledger = new JobLedger({ store });
    const job = await begin(ledger, 'cli:ann:1');
    await job.beforeSend();
    job.onRetry({ error: new ServerError('server_error', 'busy', { status: 503 }) });
    expect(job.sent).toBe(false);
    await markUnsent.mock.results[0]?.value; // the store took the "not sent" mark
    expect(await store.activeJobs()).toEqual([expect.objectContaining({ jobId: 'cli:ann:1', sent: false })]);
    // The process dies in the wait (never ended); a later one meets the reservation of a dead owner.
    await store.close();
    await ownersDied(dir);
    const later = await fileStore(dir);

    expect(await later.reconcile(Date.now())).toEqual({ released: ['cli:ann:1'], settledAtEstimate: [], chargedUsd: 0 });
    expect(await later.usage({})).toEqual([]);
  });

  it('marks a retried job sent again only once its "not sent" mark has landed: the next attempt is never left marked unsent', async () => {
    const store = await fileStore();
    let land = () => {};
    const landed = new Promise<void>((resolve) => (land = resolve));
    let unsent: Promise<void> | undefined;
    const slowUnsent = new Proxy(store, {
      get(target, key) {
        if (key === 'markUnsent') return (jobId: string) => (unsent = landed.then(() => target.markUnsent(jobId)));
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const ledger = new JobLedger({ store: slowUnsent });
    const job = await begin(ledger, 'cli:ann:1');
    await job.beforeSend();
    job.onRetry({ error: new ServerError('server_error', 'busy', { status: 503 }) });

    const resent = job.beforeSend();
    land();
    await Promise.all([resent, unsent]);

    expect(await store.activeJobs()).toEqual([expect.objectContaining({ jobId: 'cli:ann:1', sent: true })]);
    expect(job.sent).toBe(true);
  });

  it('says a job whose retry was cancelled before any byte of it left was answered, not unsent: its first attempt reached the service', async () => {
    const store = await fileStore();
    const ledger = new JobLedger({ store });
    const job = await begin(ledger, 'cli:ann:1');
    await job.beforeSend();
    job.onRetry({ error: new ServerError('server_error', 'busy', { status: 503 }) });
    await job.beforeSend();

    expect(await job.end({ kind: 'cancelled', leftNothing: true }).settled).toMatchObject({ action: 'released', usd: 0, released: 'answered' });
    expect(await store.usage({})).toEqual([]);
  });

  describe('a user’s next job asked for while the last one’s settle is under way (a reroll as the result shows)', () => {
    /** The store with its settles held until `open` is called. */
    function heldSettles(store: QuotaStore): { store: QuotaStore; open: () => void } {
      let open = () => {};
      const opened = new Promise<void>((resolve) => (open = resolve));
      const held = new Proxy(store, {
        get(target, key) {
          if (key === 'settle') return async (...args: Parameters<QuotaStore['settle']>) => (await opened, target.settle(...args));
          const value = Reflect.get(target, key) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      return { store: held, open };
    }

    it('waits for that settle before it is decided: the slot is free and the cost counted, not the estimate', async () => {
      const store = await fileStore();
      const { store: held, open } = heldSettles(store);
      const ledger = new JobLedger({ store: held });
      const limits = { userConcurrentJobs: 1, userDailyUsd: HIGH };
      const last = await ledger.begin({ jobId: 'cli:ann:1', userKey: 'cli:ann', scopeKey: 'cli', limits, request: { ...request, quality: 'high' } });
      if (!last.ok) throw new Error('refused');
      await last.job.beforeSend();
      last.job.onImage(image());
      const ended = last.job.end({ kind: 'completed' });

      const next = begin(ledger, 'cli:ann:2', limits);
      // Another user is not held up by it.
      const other = await ledger.begin({ jobId: 'cli:bob:1', userKey: 'cli:bob', scopeKey: 'cli', limits, request });
      expect(other.ok).toBe(true);
      open();

      expect((await next).id).toBe('cli:ann:2');
      expect(await ended.settled).toMatchObject({ action: 'settled', usd: LOW, recorded: true });
    });

    it('waits at most NEXT_JOB_SETTLE_WAIT_MS, well inside a chat’s first-answer deadline, however long a settle is tried: then it is decided on the reservation still held', async () => {
      const store = await fileStore();
      const { store: held, open } = heldSettles(store);
      // The default retry time (30 s): the wait is bounded by its own limit, not by it.
      const ledger = new JobLedger({ store: held });
      const limits = { userConcurrentJobs: 1 };
      const last = await begin(ledger, 'cli:ann:1', limits);
      await last.beforeSend();
      last.onImage(image());
      const ended = last.end({ kind: 'completed' });

      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      let answer: unknown;
      const next = ledger.begin({ jobId: 'cli:ann:2', userKey: 'cli:ann', scopeKey: 'cli', limits, request }).then((a) => (answer = a));
      try {
        await vi.advanceTimersByTimeAsync(NEXT_JOB_SETTLE_WAIT_MS - 1);
        expect(answer).toBeUndefined();
        await vi.advanceTimersByTimeAsync(1);
      } finally {
        vi.useRealTimers();
      }
      expect(await next).toMatchObject({ ok: false, code: 'user_concurrency' });
      open();
      await ended.settled;
    });
  });
});
