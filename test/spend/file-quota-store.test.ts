import { appendFile, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileQuotaStore, type SpendLimits } from '../../src/internal.js';
import { withFileLock } from '../../src/spend/file-lock.js';
import { matchesQuery } from '../../src/spend/usage-records.js';
import { utcDay } from '../../src/spend/utc-period.js';
import { useFileQuotaStores, useTempDirs } from '../helpers/runner-harness.js';
import { newestUsageFile, writeUsageDays } from '../helpers/usage-days.js';

const newDir = useTempDirs();
const storeAt = useFileQuotaStores();

const NOON = Date.UTC(2030, 5, 15, 12, 0, 0);
const HOUR = 60 * 60 * 1000;
let nextJob = 0;

function reserve(store: FileQuotaStore, usd: number, limits: SpendLimits, now = NOON, user = 'discord:u1', scope = 'discord:g1') {
  nextJob += 1;
  const jobId = `job-${nextJob}`;
  return store.reserve({ jobId, userKey: user, scopeKey: scope, estimateUsd: usd, limits, now }).then((result) => ({ jobId, result }));
}

describe('FileQuotaStore', () => {
  it('creates its data folder and keeps spending across a restart', async () => {
    const dir = join(await newDir(), 'nested', 'data');
    const first = storeAt(dir);
    const { jobId, result } = await reserve(first, 0.2, { userDailyUsd: 1 });
    expect(result).toEqual({ ok: true });
    await first.settle(jobId, 0.05);
    await first.close();

    const second = storeAt(dir);
    expect(await second.spentToday('discord:u1', NOON)).toBeCloseTo(0.05, 9);
    expect(await second.spentToday('discord:g1', NOON)).toBeCloseTo(0.05, 9);
    expect(await second.spentToday('discord:u2', NOON)).toBe(0);
  });

  it('keeps counting a reservation while its process lives, however long its job takes', async () => {
    const store = storeAt(await newDir());
    await reserve(store, 0.6, { userDailyUsd: 1, userConcurrentJobs: 1 });
    const later = NOON + 31 * 60_000;
    expect(await store.spentToday('discord:u1', later)).toBeCloseTo(0.6, 9);
    expect((await reserve(store, 0.6, { userDailyUsd: 1 }, later)).result).toMatchObject({ ok: false, code: 'budget_user_daily', used: 0.6 });
    expect((await reserve(store, 0.1, { userConcurrentJobs: 1 }, later)).result).toMatchObject({ ok: false, code: 'user_concurrency' });
  });

  it('takes in what another writer put in the ledger after its own last write (the ledger it wrote is reused only while the file is unchanged)', async () => {
    const store = storeAt(await newDir());
    const { jobId } = await reserve(store, 0.3, {});
    await store.settle(jobId, 0.3);
    // Another process's commit: the whole file replaced by a ledger in which the user has spent 0.9 today.
    const ledger = JSON.parse(await readFile(store.path, 'utf8')) as { spent: Record<string, Record<string, number>> };
    ledger.spent['2030-06-15']!['discord:u1'] = 0.9;
    const replacement = `${store.path}.other`;
    await writeFile(replacement, JSON.stringify(ledger));
    await rename(replacement, store.path);
    expect((await reserve(store, 0.2, { userDailyUsd: 1 })).result).toMatchObject({ ok: false, code: 'budget_user_daily', used: 0.9 });
    // Its own writes are still read back right after (the reservation above was refused; this one fits).
    expect((await reserve(store, 0.1, { userDailyUsd: 1 })).result).toEqual({ ok: true });
    expect((await reserve(store, 0.1, { userDailyUsd: 1 })).result).toMatchObject({ ok: false, code: 'budget_user_daily' });
  });

  it('still charges the right user and day when a job settles long after it was reserved', async () => {
    const store = storeAt(await newDir());
    const { jobId } = await reserve(store, 0.3, {});
    await store.settle(jobId, 0.25);
    expect(await store.spentToday('discord:u1', NOON + 5 * HOUR)).toBeCloseTo(0.25, 9);
  });

  it('settles a job once: a second settle (or one after the reservation was ended) charges nothing and says so', async () => {
    const store = storeAt(await newDir());
    const { jobId } = await reserve(store, 0.3, {});
    expect(await store.settle(jobId, 0.25)).toBe(true);
    expect(await store.settle(jobId, 0.25)).toBe(false);
    expect(await store.spentToday('discord:u1', NOON + HOUR)).toBeCloseTo(0.25, 9);
    expect(await store.usage({})).toHaveLength(1);
  });

  it('refuses a reservation that would pass the user budget, with the limit, the amount used and the next UTC midnight', async () => {
    const store = storeAt(await newDir());
    await reserve(store, 0.6, { userDailyUsd: 1 });
    const { result } = await reserve(store, 0.5, { userDailyUsd: 1 });
    expect(result).toEqual({ ok: false, code: 'budget_user_daily', limit: 1, used: 0.6, resetsAt: Date.UTC(2030, 5, 16) });
  });

  it('refuses a reservation that would pass the scope budget, counting every user of the scope', async () => {
    const store = storeAt(await newDir());
    await reserve(store, 0.6, { scopeDailyUsd: 1 }, NOON, 'slack:a', 'slack:T1');
    const { result } = await reserve(store, 0.5, { scopeDailyUsd: 1 }, NOON, 'slack:b', 'slack:T1');
    expect(result).toMatchObject({ ok: false, code: 'budget_scope_daily', used: 0.6 });
    expect((await reserve(store, 0.5, { scopeDailyUsd: 1 }, NOON, 'slack:b', 'slack:T2')).result).toEqual({ ok: true });
  });

  it('refuses a reservation within the cooldown, saying when it ends', async () => {
    const store = storeAt(await newDir());
    await reserve(store, 0.1, { userCooldownSeconds: 30 });
    const { result } = await reserve(store, 0.1, { userCooldownSeconds: 30 }, NOON + 10_000);
    expect(result).toEqual({ ok: false, code: 'user_cooldown', limit: 30, used: 10, resetsAt: NOON + 30_000 });
    expect((await reserve(store, 0.1, { userCooldownSeconds: 30 }, NOON + 30_000)).result).toEqual({ ok: true });
  });

  it('frees a concurrency slot when a job is released', async () => {
    const store = storeAt(await newDir());
    const { jobId } = await reserve(store, 0.1, { userConcurrentJobs: 1 });
    expect((await reserve(store, 0.1, { userConcurrentJobs: 1 })).result).toMatchObject({ ok: false, code: 'user_concurrency' });
    await store.release(jobId);
    expect(await store.spentToday('discord:u1', NOON)).toBe(0);
    expect((await reserve(store, 0.1, { userConcurrentJobs: 1 })).result).toEqual({ ok: true });
  });

  it('starts each UTC day afresh and prunes days older than it keeps', async () => {
    const dir = await newDir();
    const store = storeAt(dir, { keepDays: 2 });
    const { jobId } = await reserve(store, 0.9, { userDailyUsd: 1 });
    await store.settle(jobId, 0.9);
    expect((await reserve(store, 0.5, { userDailyUsd: 1 }, NOON + 11 * HOUR)).result).toMatchObject({ ok: false });

    const tomorrow = NOON + 24 * HOUR;
    const next = await reserve(store, 0.5, { userDailyUsd: 1 }, tomorrow);
    expect(next.result).toEqual({ ok: true });
    await store.settle(next.jobId, 0.5);
    const periods = async () => Object.keys(JSON.parse(await readFile(store.path, 'utf8')).spent).sort();
    expect(await periods()).toEqual(['2030-06', '2030-06-15', '2030-06-16']);

    await reserve(store, 0.1, {}, NOON + 48 * HOUR);
    expect(await periods()).toEqual(['2030-06', '2030-06-16']);
  });

  it('lets exactly as many concurrent reservations through as the budget holds', async () => {
    const store = storeAt(await newDir());
    const results = await Promise.all(Array.from({ length: 10 }, () => reserve(store, 0.3, { userDailyUsd: 1 })));
    expect(results.filter((r) => r.result.ok)).toHaveLength(3);
    expect(await store.spentToday('discord:u1', NOON)).toBeCloseTo(0.9, 9);
  });

  it('lets exactly one of two reservations racing for the last of a budget through', async () => {
    const store = storeAt(await newDir());
    await reserve(store, 0.8, { userDailyUsd: 1 });
    const [a, b] = await Promise.all([reserve(store, 0.2, { userDailyUsd: 1 }), reserve(store, 0.2, { userDailyUsd: 1 })]);
    expect([a.result.ok, b.result.ok].sort()).toEqual([false, true]);
  });

  it('writes atomically: no temporary file is left and the ledger always parses', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await Promise.all(Array.from({ length: 20 }, (_, i) => reserve(store, 0.01, {}, NOON, `discord:u${i}`)));
    // Only the ledger and (after a second write) its backup copy: no temporary file, no lock left behind.
    expect((await readdir(dir)).filter((f) => f !== 'quota-ledger.json.bak')).toEqual(['quota-ledger.json']);
    expect(Object.keys(JSON.parse(await readFile(store.path, 'utf8')).reservations)).toHaveLength(20);
  });

  it('removes at open, and when a member forgets, the temporary files a write a crash stopped left beside its files (each a whole version, their prompts too)', async () => {
    const dir = await newDir();
    const left = (name: string) => join(dir, `${name}.4242.0a1b2c3d.tmp`);
    const leave = async () => {
      for (const name of ['quota-ledger.json', 'usage.jsonl']) await writeFile(left(name), `{"prompt":"a QUIXOTIC cat"}`);
      await writeFile(`${left('quota-ledger.json')}.bak`, `{"prompt":"a QUIXOTIC cat"}`);
      // Not the ledger's: another writer's, left alone.
      await writeFile(left('alerts.json'), '{}');
    };
    await leave();
    const store = storeAt(dir);
    await store.open();
    expect((await readdir(dir)).sort()).toEqual(['alerts.json.4242.0a1b2c3d.tmp']);
    await leave();
    await store.forgetPrompts('discord:u1');
    expect((await readdir(dir)).sort()).toEqual(['alerts.json.4242.0a1b2c3d.tmp', 'quota-ledger.json', 'quota-ledger.json.bak']);
  });

  it('refuses to start on a ledger that is not JSON, naming the file, rather than forgetting what was spent', async () => {
    const dir = await newDir();
    await writeFile(join(dir, 'quota-ledger.json'), '{"version": 1, "spent": ');
    const store = storeAt(dir);
    await expect(store.spentToday('discord:u1', NOON)).rejects.toMatchObject({ code: 'ledger_unreadable', message: expect.stringMatching(/quota-ledger\.json is not JSON/) });
  });

  it.each([
    ['empty', '  \n', /quota-ledger\.json is empty/],
    ['of an unknown shape', '{"version": 9}', /quota-ledger\.json is not a spend ledger \(unknown shape\)/],
  ])('refuses a ledger that is %s, naming the file', async (_what, text, message) => {
    const dir = await newDir();
    await writeFile(join(dir, 'quota-ledger.json'), text);
    const refusal = { code: 'ledger_unreadable', message: expect.stringMatching(message) };
    await expect(storeAt(dir).spentToday('discord:u1', NOON)).rejects.toMatchObject(refusal);
  });

  it('puts back a ledger that went missing while its backup copy is beside it (one change behind), rather than counting from zero', async () => {
    const dir = await newDir();
    const first = storeAt(dir);
    await reserve(first, 0.1, {});
    await reserve(first, 0.1, {});
    await first.close();
    await rm(first.path);
    expect(await storeAt(dir).spentToday('discord:u1', NOON)).toBeCloseTo(0.1, 9);
  });

  it('refuses the same job id twice', async () => {
    const store = storeAt(await newDir());
    await store.reserve({ jobId: 'same', userKey: 'discord:u1', scopeKey: 'discord:g1', estimateUsd: 0.1, limits: {}, now: NOON });
    await expect(
      store.reserve({ jobId: 'same', userKey: 'discord:u1', scopeKey: 'discord:g1', estimateUsd: 0.1, limits: {}, now: NOON }),
    ).rejects.toThrow(/already has a reservation/);
  });

  it('refuses to open a ledger that this process already has open', async () => {
    const dir = await newDir();
    storeAt(dir);
    expect(() => new FileQuotaStore({ dir })).toThrow(/already open in this process/);
  });

  it('fails every operation after close', async () => {
    const store = storeAt(await newDir());
    await store.close();
    await expect(store.spentToday('discord:u1', NOON)).rejects.toMatchObject({ code: 'quota_store_closed' });
  });

  it('writes nothing for a reserve that was waiting for the lock when the store closed, and answers it with the closed error', async () => {
    const store = storeAt(await newDir());
    const settled = await reserve(store, 0.1, {});
    await store.settle(settled.jobId, 0.1);
    const ledgerBefore = await readFile(store.path, 'utf8');
    // Another process's commit holds the lock while this store is asked to reserve, then closed.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let taken!: () => void;
    const lockTaken = new Promise<void>((resolve) => (taken = resolve));
    const holder = withFileLock(`${store.path}.lock`, () => (taken(), held));
    await lockTaken;
    const refused = expect(reserve(store, 0.2, {})).rejects.toMatchObject({ code: 'quota_store_closed' });
    const closed = store.close();
    letGo();
    await holder;
    await refused;
    await closed;
    const ledgerAfter = await readFile(store.path, 'utf8');
    expect((JSON.parse(ledgerAfter) as { reservations: object }).reservations).toEqual({});
    expect(ledgerAfter).toBe(ledgerBefore);
  });

  it('refuses a reserve whose store closed while its commit was being written, and no lease keeps what it wrote', async () => {
    const dir = await newDir();
    const time = { now: NOON };
    const lease = { leaseMs: 60_000, clock: () => time.now };
    const store = storeAt(dir, lease);
    const settled = await reserve(store, 0.1, {});
    await store.settle(settled.jobId, 0.1);
    // The commit reads the backup copy's path as it starts writing the ledger (the reserve's check under the lock is
    // behind it): the store closes there, and the write goes on.
    const backupPath = store.backupPath;
    let closing: Promise<void> | undefined;
    Object.defineProperty(store, 'backupPath', { get: () => ((closing ??= store.close()), backupPath) });
    const reserved = store.reserve({ jobId: 'as-it-closes', userKey: 'discord:u1', scopeKey: 'discord:g1', estimateUsd: 0.2, limits: {}, now: NOON });
    await expect(reserved).rejects.toMatchObject({ code: 'quota_store_closed' });
    expect(closing).toBeDefined();
    await closing;
    // Written, and held by nothing: it counts until the closed store's lease lapses, then the next commit ends it.
    const other = storeAt(dir, lease);
    expect((await other.reconcile(time.now)).released).toEqual([]);
    time.now += 60_001;
    expect((await other.reconcile(time.now)).released).toEqual(['as-it-closes']);
    expect(await other.activeJobs()).toEqual([]);
  });
});

describe('FileQuotaStore usage since a time', () => {
  const DAY = 24 * HOUR;
  const TODAY = Date.UTC(2030, 5, 15);
  /** A line of a usage day file: a job reserved on the day of `reservedAt`, settled at `time`. */
  const line = (jobId: string, time: number, reservedAt = time, extra: Record<string, unknown> = {}) => {
    const day = utcDay(reservedAt);
    const record = { jobId, time, day, month: day.slice(0, 7), surface: 'discord', userKey: `discord:u${jobId.length % 3}`, scopeKey: 'discord:g1', costUsd: 0.04, basis: 'table', reservedAt, ...extra };
    return `${JSON.stringify(record)}\n`;
  };
  /** What the whole file answers for `query`: each job's latest record, those the query matches. */
  const fullRead = async (store: FileQuotaStore, query: { since: number }) => (await store.usage({})).filter((r) => matchesQuery(r, query));

  it('answers a query with since exactly as the whole file does, over 40 days of records', async () => {
    const dir = await newDir();
    let text = '';
    for (let t = TODAY - 40 * DAY, i = 0; t < TODAY + DAY; t += 20 * 60_000, i += 1) {
      text += line(`job-${i}`, t);
      // Some jobs are settled again at their estimate (the later record counts), some days after they were reserved.
      if (i % 40 === 0) text += line(`job-${i - 20}`, t, t - 20 * 20 * 60_000, { basis: 'uncertain', costUsd: 0.08 });
      if (i % 97 === 0) text += line(`late-${i}`, t, t - 3 * DAY);
      // A prompt longer than a chunk of the read.
      if (i % 700 === 0) text += line(`long-${i}`, t, t, { prompt: 'ü'.repeat(70_000) });
    }
    await writeUsageDays(dir, text);
    const store = storeAt(dir);
    const full = await store.usage({});
    for (const query of [TODAY, TODAY + 5 * HOUR, TODAY - DAY, TODAY - 3 * DAY - 1, TODAY - 7 * DAY, TODAY - 30 * DAY, TODAY - 90 * DAY, TODAY + 2 * DAY].map((since) => ({ since }))) {
      const answer = await store.usage(query);
      expect(answer, new Date(query.since).toISOString()).toEqual(full.filter((r) => matchesQuery(r, query)));
      expect(answer.length > 0 || query.since > TODAY + DAY).toBe(true);
    }
    const ofOne = { since: TODAY - 2 * DAY, userKey: 'discord:u1' };
    expect(await store.usage(ofOne)).toEqual(full.filter((r) => matchesQuery(r, ofOne)));
  });

  it('skips a torn last line, and a line a crash cut short before it', async () => {
    const dir = await newDir();
    let text = '';
    for (let i = 0; i < 2000; i += 1) text += line(`job-${i}`, TODAY - 10 * DAY + i * 10 * 60_000);
    text += '{"jobId":"cut-short","ti\n';
    for (let i = 2000; i < 2200; i += 1) text += line(`job-${i}`, TODAY - 10 * DAY + i * 10 * 60_000);
    await writeUsageDays(dir, text);
    await appendFile(await newestUsageFile(dir), '{"jobId":"torn","time":');
    const store = storeAt(dir);
    const since = TODAY - 2 * DAY;
    const answer = await store.usage({ since });
    expect(answer.at(-1)?.jobId).toBe('job-2199');
    expect(answer).toEqual(await fullRead(store, { since }));
  });

  it('finds a record of the day asked for behind records a day older appended after it (records are in time order only give or take a day)', async () => {
    const dir = await newDir();
    let text = '';
    for (let i = 0; i < 3000; i += 1) text += line(`old-${i}`, TODAY - 20 * DAY + i * 5 * 60_000);
    text += line('asked-for', TODAY + HOUR);
    // More than a chunk of records from a process whose clock is 23 hours behind (or settled with an earlier now).
    for (let i = 0; i < 1000; i += 1) text += line(`behind-${i}`, TODAY - 23 * HOUR + i);
    text += line('latest', TODAY + 2 * HOUR);
    await writeUsageDays(dir, text);
    const store = storeAt(dir);
    const answer = await store.usage({ since: TODAY });
    expect(answer.map((r) => r.jobId)).toEqual(['asked-for', 'latest']);
    expect(answer).toEqual(await fullRead(store, { since: TODAY }));
    // A since late in the day asks for the whole day: the records behind are older than since by more than a day.
    const lateInTheDay = await store.usage({ since: TODAY + 20 * HOUR });
    expect(lateInTheDay.map((r) => r.jobId)).toEqual(['asked-for', 'latest']);
    expect(lateInTheDay).toEqual(await fullRead(store, { since: TODAY + 20 * HOUR }));
  });
});
