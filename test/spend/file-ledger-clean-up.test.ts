import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { FileQuotaStore } from '../../src/internal.js';
import { spyOnInstance } from '../helpers/instance-spy.js';
import { useTempDirs } from '../helpers/runner-harness.js';

const newDir = useTempDirs();
const open: FileQuotaStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const DAY = 24 * 60 * 60 * 1000;
const job = (prompt: string) => ({ operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', prompt });

async function settledJob(store: FileQuotaStore, jobId: string, userKey: string, prompt: string, now: number): Promise<void> {
  await store.reserve({ jobId, userKey, scopeKey: 'slack:T1', estimateUsd: 0.02, limits: {}, now, job: job(prompt) });
  await store.settle(jobId, 0.011);
}

/** Runs `meanwhile` once the daily clean-up has looked through usage.jsonl without the lock, before it takes the lock. */
function betweenLookAndLock(store: FileQuotaStore, meanwhile: () => Promise<void>): void {
  const look = FileQuotaStore.prototype.lookForExpiredUsage;
  const spy = spyOnInstance(FileQuotaStore.prototype, 'lookForExpiredUsage', (s) => s === store).mockImplementationOnce(async function (this: FileQuotaStore, now: number) {
    const seen = await look.call(this, now);
    await meanwhile();
    return seen;
  });
  onTestFinished(() => spy.mockRestore());
}

/** A store keeping two days of usage records, its first clean-up done: one record past retention at the next day's first settle. */
async function storeWithOneExpiring(): Promise<{ store: FileQuotaStore; later: () => number }> {
  let now = Date.UTC(2026, 0, 10, 12);
  const store = new FileQuotaStore({ dir: await newDir(), usageRetentionDays: 2, clock: () => now });
  open.push(store);
  await store.open();
  await settledJob(store, 'expiring', 'slack:U2', 'a calm lake', now);
  now += 1.5 * DAY;
  await settledJob(store, 'kept', 'slack:U1', 'a QUIXOTIC fox', now);
  // A day and more on: the next settle is the day's first, and the first record is past the two days kept.
  return { store, later: () => (now += 1.1 * DAY) };
}

describe('the file ledger’s daily clean-up of usage.jsonl', () => {
  it('keeps a settle another step appended after its look, and drops the record past retention', async () => {
    const { store, later } = await storeWithOneExpiring();
    const now = later();
    betweenLookAndLock(store, () => settledJob(store, 'in-window', 'slack:U3', 'a red kite', now));

    await settledJob(store, 'first-of-day', 'slack:U3', 'a slow river', now);

    expect(await readFile(store.usagePath, 'utf8')).not.toContain('calm lake');
    expect((await store.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([
      ['kept', 'a QUIXOTIC fox'],
      // The day's first commit that writes (its reserve) started the clean-up: the other job settled in the window.
      ['in-window', 'a red kite'],
      ['first-of-day', 'a slow river'],
    ]);
  });

  it('brings back nothing a rewrite of usage.jsonl after its look took out (a forget)', async () => {
    const { store, later } = await storeWithOneExpiring();
    const now = later();
    betweenLookAndLock(store, () => store.forgetPrompts('slack:U1'));

    await settledJob(store, 'first-of-day', 'slack:U3', 'a slow river', now);

    const text = await readFile(store.usagePath, 'utf8');
    expect(text).not.toContain('QUIXOTIC');
    expect(text).not.toContain('calm lake');
    expect((await store.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([
      ['kept', undefined],
      ['first-of-day', 'a slow river'],
    ]);
  });

  it('leaves usage.jsonl unrewritten when no record is past retention', async () => {
    let now = Date.UTC(2026, 0, 10, 12);
    const store = new FileQuotaStore({ dir: await newDir(), usageRetentionDays: 2, clock: () => now });
    open.push(store);
    await store.open();
    await settledJob(store, 'first', 'slack:U2', 'a calm lake', now);
    const before = await readFile(store.usagePath, 'utf8');
    now += 1.5 * DAY;

    await settledJob(store, 'next-day', 'slack:U2', 'a slow river', now);

    // Only appended to (a rewrite starts with a rewrite line of its own).
    expect((await readFile(store.usagePath, 'utf8')).startsWith(before)).toBe(true);
  });
});
