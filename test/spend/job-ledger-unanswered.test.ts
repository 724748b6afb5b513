import { rm } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PRICE_TABLE, type CompletedEvent } from '../../src/index.js';
import { FileQuotaStore, JobLedger, type QuotaStore } from '../../src/internal.js';

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
