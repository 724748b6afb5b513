import { appendFile, mkdir, readFile, rename, rm, symlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { FileQuotaStore } from '../../src/internal.js';
import { spyOnInstance } from '../helpers/instance-spy.js';
import { useTempDirs } from '../helpers/runner-harness.js';

const newDir = useTempDirs();
const open: FileQuotaStore[] = [];
/** Held looks (`holdLook`), let go before the stores close: a close waits for the clean-up. */
const holds: (() => void)[] = [];
afterEach(async () => {
  for (const release of holds.splice(0)) release();
  await Promise.all(open.splice(0).map((s) => s.close()));
});

const DAY = 24 * 60 * 60 * 1000;
const job = (prompt: string) => ({ operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', prompt });

async function settledJob(store: FileQuotaStore, jobId: string, userKey: string, prompt: string, now: number): Promise<void> {
  await store.reserve({ jobId, userKey, scopeKey: 'slack:T1', estimateUsd: 0.02, limits: {}, now, job: job(prompt) });
  await store.settle(jobId, 0.011);
}

/**
 * Runs `meanwhile` once the daily clean-up has looked through usage.jsonl without the lock, before it takes the lock;
 * resolves once `meanwhile` is done.
 */
function betweenLookAndLock(store: FileQuotaStore, meanwhile: () => Promise<void>): Promise<void> {
  const look = FileQuotaStore.prototype.lookForExpiredUsage;
  let done!: () => void;
  const ran = new Promise<void>((resolve) => (done = resolve));
  const spy = spyOnInstance(FileQuotaStore.prototype, 'lookForExpiredUsage', (s) => s === store).mockImplementationOnce(async function (this: FileQuotaStore, now: number) {
    const seen = await look.call(this, now);
    await meanwhile();
    done();
    return seen;
  });
  onTestFinished(() => spy.mockRestore());
  return ran;
}

/**
 * Holds the daily clean-up's look through usage.jsonl until the returned `release` is called; `looking` resolves
 * once the look has begun.
 */
function holdLook(store: FileQuotaStore): { looking: Promise<void>; release: () => void } {
  const look = FileQuotaStore.prototype.lookForExpiredUsage;
  let release!: () => void;
  let begun!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const looking = new Promise<void>((resolve) => (begun = resolve));
  const spy = spyOnInstance(FileQuotaStore.prototype, 'lookForExpiredUsage', (s) => s === store).mockImplementationOnce(async function (this: FileQuotaStore, now: number) {
    begun();
    await released;
    return look.call(this, now);
  });
  holds.push(release);
  onTestFinished(() => spy.mockRestore());
  return { looking, release };
}

/** The records of `store`'s usage.jsonl once its clean-up is done: `close` waits for it; read through the folder opened again. */
async function usageAfterCleanUp(store: FileQuotaStore): Promise<{ text: string; records: [string, string | undefined][] }> {
  await store.close();
  const again = new FileQuotaStore({ dir: dirname(store.path), usageRetentionDays: 2 });
  open.push(again);
  return { text: await readFile(store.usagePath, 'utf8'), records: (await again.usage({})).map((r) => [r.jobId, r.prompt]) };
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

/** The rewrite line `usage.jsonl` starts with: a new one at each rewrite. */
async function rewriteLine(store: FileQuotaStore): Promise<string> {
  return (await readFile(store.usagePath, 'utf8')).split('\n')[0]!;
}

/** A second process on the same ledger (one store per file per process: opened through a link to the folder). */
async function otherProcess(store: FileQuotaStore, clock: () => number): Promise<FileQuotaStore> {
  const alias = `${dirname(store.path)}-other-process`;
  await symlink(dirname(store.path), alias);
  onTestFinished(() => rm(alias, { force: true }));
  const other = new FileQuotaStore({ dir: alias, usageRetentionDays: 2, clock });
  open.push(other);
  await other.open();
  return other;
}

describe('the file ledger’s daily clean-up of usage.jsonl', () => {
  it('answers the day’s first reserve and its settle once their commit is written, while the clean-up still looks', async () => {
    const { store, later } = await storeWithOneExpiring();
    const now = later();
    const { looking, release } = holdLook(store);

    // The day's first commit that writes: it starts the clean-up, whose look is held.
    expect(await store.reserve({ jobId: 'first-of-day', userKey: 'slack:U3', scopeKey: 'slack:T1', estimateUsd: 0.02, limits: {}, now, job: job('a slow river') })).toEqual({ ok: true });
    await looking;
    expect(await store.settle('first-of-day', 0.011)).toBe(true);
    // Another job settled while the clean-up runs.
    await settledJob(store, 'meanwhile', 'slack:U1', 'a red kite', now);
    release();

    const { text, records } = await usageAfterCleanUp(store);
    expect(text).not.toContain('calm lake');
    expect(records).toEqual([
      ['kept', 'a QUIXOTIC fox'],
      ['first-of-day', 'a slow river'],
      ['meanwhile', 'a red kite'],
    ]);
  });

  it('keeps a settle another step appended after its look, and drops the record past retention', async () => {
    const { store, later } = await storeWithOneExpiring();
    const now = later();
    const ran = betweenLookAndLock(store, () => settledJob(store, 'in-window', 'slack:U3', 'a red kite', now));

    await settledJob(store, 'first-of-day', 'slack:U3', 'a slow river', now);
    await ran;

    const { text, records } = await usageAfterCleanUp(store);
    expect(text).not.toContain('calm lake');
    expect(records).toEqual([
      ['kept', 'a QUIXOTIC fox'],
      // The day's first commit that writes (its reserve) started the clean-up, and answered before it: its job settled
      // before the look was done, the other job in the window after it.
      ['first-of-day', 'a slow river'],
      ['in-window', 'a red kite'],
    ]);
  });

  it('brings back nothing a rewrite of usage.jsonl after its look took out (a forget)', async () => {
    const { store, later } = await storeWithOneExpiring();
    const now = later();
    const ran = betweenLookAndLock(store, () => store.forgetPrompts('slack:U1'));

    await settledJob(store, 'first-of-day', 'slack:U3', 'a slow river', now);
    await ran;

    const { text, records } = await usageAfterCleanUp(store);
    expect(text).not.toContain('QUIXOTIC');
    expect(text).not.toContain('calm lake');
    expect(records).toEqual([
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
    expect((await usageAfterCleanUp(store)).text.startsWith(before)).toBe(true);
  });

  it('does not rewrite usage.jsonl again when another process dropped the expired records after its look', async () => {
    const { store, later } = await storeWithOneExpiring();
    const now = later();
    const other = await otherProcess(store, () => now);
    let afterOther = '';
    const ran = betweenLookAndLock(store, async () => {
      // The other process's first commit of the day: its clean-up drops the record past retention (its close waits for it).
      await settledJob(other, 'other-first-of-day', 'slack:U3', 'a red kite', now);
      await other.close();
      afterOther = await rewriteLine(store);
    });

    await settledJob(store, 'first-of-day', 'slack:U3', 'a slow river', now);
    await ran;

    const { text } = await usageAfterCleanUp(store);
    expect(text).not.toContain('calm lake');
    expect(afterOther).not.toBe('');
    // The same rewrite id: nothing was left to drop, so the file was only appended to.
    expect(text.split('\n')[0]).toBe(afterOther);
  });

  it('answers the day’s first reserve and closes when the clean-up fails and the onError hook throws, telling the hook once', async () => {
    let now = Date.UTC(2026, 0, 10, 12);
    const told: unknown[] = [];
    const store = new FileQuotaStore({
      dir: await newDir(),
      usageRetentionDays: 2,
      clock: () => now,
      onError: (error) => {
        told.push(error);
        throw new Error('the hook failed too');
      },
    });
    open.push(store);
    await store.open();
    await settledJob(store, 'expiring', 'slack:U2', 'a calm lake', now);
    now += 3 * DAY;
    // usage.jsonl cannot be read: the clean-up's look fails.
    await rename(store.usagePath, `${store.usagePath}.moved`);
    await mkdir(store.usagePath);

    expect(await store.reserve({ jobId: 'first-of-day', userKey: 'slack:U3', scopeKey: 'slack:T1', estimateUsd: 0.02, limits: {}, now, job: job('a slow river') })).toEqual({ ok: true });
    // close waits for the clean-up.
    await expect(store.close()).resolves.toBeUndefined();
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ message: 'could not drop expired usage records', cause: { code: 'EISDIR' } });
  });

  it('drops damaged lines with the expired records when it rewrites the file, whoever’s they were (a forget keeps other members’ lines as written)', async () => {
    const { store, later } = await storeWithOneExpiring();
    await appendFile(store.usagePath, '{"jobId":"cut","userKey":"slack:U9","dam\n');
    await settledJob(store, 'first-of-day', 'slack:U3', 'a slow river', later());

    const after = await usageAfterCleanUp(store);
    expect(after.records.map(([jobId]) => jobId)).toEqual(['kept', 'first-of-day']);
    expect(after.text).not.toContain('"cut"');
  });
});
