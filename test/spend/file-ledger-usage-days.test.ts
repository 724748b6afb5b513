import { appendFile, cp, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FileQuotaStore } from '../../src/internal.js';
import { useFileQuotaStores, useTempDirs } from '../helpers/runner-harness.js';
import { memberFileOf } from '../../src/spend/usage-days.js';
import { newestUsageFile } from '../helpers/usage-days.js';

const newDir = useTempDirs();
const storeAt = useFileQuotaStores();

const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;
const MIDNIGHT = Date.UTC(2030, 5, 16);

const job = (prompt?: string) => ({ operation: 'generate' as const, n: 1, size: '1024x1024', quality: 'low', ...(prompt !== undefined && { prompt }) });

async function settled(store: FileQuotaStore, jobId: string, userKey: string, prompt?: string, now = Date.now()): Promise<void> {
  expect(await store.reserve({ jobId, userKey, scopeKey: 'slack:T1', estimateUsd: 0.02, limits: {}, now, job: job(prompt) })).toEqual({ ok: true });
  await store.settle(jobId, 0.011);
}

/** Every file under `dir`, with its text. */
async function filesUnder(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files.set(join(entry.parentPath, entry.name), await readFile(join(entry.parentPath, entry.name), 'utf8'));
  }
  return files;
}

/** A store whose clock the test moves. */
function clockedStore(dir: string, time: { now: number }, options: Parameters<ReturnType<typeof useFileQuotaStores>>[1] = {}): FileQuotaStore {
  return storeAt(dir, { clock: () => time.now, ...options });
}

describe('the usage records of the file ledger, one file a day', () => {
  it('writes each record to the day file of its day, without its prompt, which goes to the member’s file of that day', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT - HOUR };
    const store = clockedStore(dir, time);
    await store.open();
    await settled(store, 'before', 'slack:U1', 'a QUIXOTIC fox', time.now);
    time.now = MIDNIGHT + HOUR;
    await settled(store, 'after', 'slack:U1', 'a QUIXOTIC owl', time.now);

    expect((await readdir(join(dir, 'usage'))).sort()).toEqual(['2030-06-15.jsonl', '2030-06-16.jsonl', 'feed-epoch', 'prompts']);
    expect(await readFile(join(dir, 'usage', '2030-06-15.jsonl'), 'utf8')).not.toContain('QUIXOTIC');
    expect(await readFile(join(dir, 'usage', '2030-06-15.jsonl'), 'utf8')).toContain('"prompted":1');
    expect((await store.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([
      ['before', 'a QUIXOTIC fox'],
      ['after', 'a QUIXOTIC owl'],
    ]);
    expect((await stat(join(dir, 'usage', '2030-06-16.jsonl'))).mode & 0o777).toBe(0o600);
  });

  it('feeds a reader the records in the order written across a midnight, and appends to the newest day even from a clock behind it', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT - HOUR };
    const store = clockedStore(dir, time);
    await store.open();
    await settled(store, 'a', 'slack:U1', undefined, time.now);
    const first = await store.usageSince(undefined);
    expect(first.records.map((r) => r.jobId)).toEqual(['a']);
    time.now = MIDNIGHT + HOUR;
    await settled(store, 'b', 'slack:U1', undefined, time.now);
    // Another process whose clock is two hours behind: its record goes after b, in b's day file.
    const behind = clockedStore(`${dir}-link`, { now: MIDNIGHT - HOUR }, {});
    await symlink(dir, `${dir}-link`);
    await settled(behind, 'c', 'slack:U2', undefined, MIDNIGHT - HOUR);

    const next = await store.usageSince(first.cursor);
    expect(next).toMatchObject({ reset: false });
    expect(next.records.map((r) => r.jobId)).toEqual(['b', 'c']);
    expect((await store.usageSince(undefined)).records.map((r) => r.jobId)).toEqual(['a', 'b', 'c']);
    expect((await readdir(join(dir, 'usage'))).filter((n) => n.endsWith('.jsonl')).sort()).toEqual(['2030-06-15.jsonl', '2030-06-16.jsonl']);
    expect(await store.usageSince(next.cursor)).toMatchObject({ records: [], reset: false });
  });

  it('writes to today’s file, not to a day file far ahead that another process’s clock a year ahead made, and tells a reader past that day to read again', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT + HOUR };
    const store = clockedStore(dir, time);
    await store.open();
    await settled(store, 'first', 'slack:U1', undefined, time.now);
    await symlink(dir, `${dir}-link`);
    const ahead = clockedStore(`${dir}-link`, { now: MIDNIGHT + 365 * DAY });
    await settled(ahead, 'ahead', 'slack:U1', undefined, MIDNIGHT + 365 * DAY);
    const read = await store.usageSince(undefined);
    await settled(store, 'today', 'slack:U1', undefined, time.now);

    expect((await readdir(join(dir, 'usage'))).filter((n) => n.endsWith('.jsonl')).sort()).toEqual(['2030-06-16.jsonl', '2031-06-16.jsonl']);
    // A reader whose cursor is in the day ahead would miss the record written to an older day: it reads everything again.
    expect(await store.usageSince(read.cursor)).toMatchObject({ reset: true, records: [{ jobId: 'first' }, { jobId: 'today' }, { jobId: 'ahead' }] });
  });

  it('keeps every day file where it is through a clock days behind and back: no record moved, lost or doubled', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT - 9 * DAY };
    const store = clockedStore(dir, time);
    await store.open();
    for (let day = 0; day < 10; day++) {
      time.now = MIDNIGHT - (9 - day) * DAY + HOUR;
      await settled(store, `day${day}`, 'slack:U1', undefined, time.now);
    }
    time.now = MIDNIGHT - 5 * DAY + 2 * HOUR;
    await settled(store, 'behind', 'slack:U1', undefined, time.now);
    time.now = MIDNIGHT + 3 * HOUR;
    await settled(store, 'right', 'slack:U1', undefined, time.now);

    expect((await readdir(join(dir, 'usage'))).filter((n) => n.endsWith('.jsonl'))).toHaveLength(10);
    expect((await store.usage({})).map((r) => r.jobId).sort()).toEqual([...Array.from({ length: 10 }, (_, i) => `day${i}`), 'behind', 'right'].sort());
    expect((await store.usage({ since: MIDNIGHT - 2 * DAY })).map((r) => r.jobId)).toEqual(['day7', 'day8', 'day9', 'right']);
  });

  it('keeps appending to a day file one day ahead of its clock (another process’s clock a little ahead)', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT + HOUR };
    const store = clockedStore(dir, time);
    await store.open();
    await settled(store, 'ahead', 'slack:U1', undefined, time.now);
    time.now = MIDNIGHT - HOUR;
    await settled(store, 'behind', 'slack:U1', undefined, time.now);

    expect((await readdir(join(dir, 'usage'))).filter((n) => n.endsWith('.jsonl'))).toEqual(['2030-06-16.jsonl']);
  });

  it('reads everything again after the usage folder was emptied and written past the cursor again', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await store.open();
    for (const jobId of ['a', 'b', 'c']) await settled(store, jobId, 'slack:U1');
    const read = await store.usageSince(undefined);
    // The operator empties the folder, the feed's epoch file with it; more is written than was there.
    await rm(join(dir, 'usage'), { recursive: true });
    for (const jobId of ['d', 'e', 'f', 'g', 'h', 'i']) await settled(store, jobId, 'slack:U1');

    const next = await store.usageSince(read.cursor);
    expect(next.reset).toBe(true);
    expect(next.records.map((r) => r.jobId)).toEqual(['d', 'e', 'f', 'g', 'h', 'i']);
  });

  it('reads everything again for a cursor of an older version', async () => {
    const store = storeAt(await newDir());
    await store.open();
    await settled(store, 'a', 'slack:U1');
    for (const cursor of ['1234:56', '0123456789abcdef/1234:56']) expect(await store.usageSince(cursor)).toMatchObject({ records: [expect.objectContaining({ jobId: 'a' })], reset: true });
  });

  it('skips a line a crash cut short, counts it damaged once the next append starts a line of its own, and feeds what follows', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await store.open();
    await settled(store, 'a', 'slack:U1');
    const read = await store.usageSince(undefined);
    await appendFile(await newestUsageFile(dir), '{"jobId":"torn","ti');
    expect(await store.usageSince(read.cursor)).toMatchObject({ records: [], damagedAt: [] });
    await settled(store, 'b', 'slack:U1');
    let damaged: number | undefined;

    expect((await store.usage({ onDamagedLines: (n) => (damaged = n) })).map((r) => r.jobId)).toEqual(['a', 'b']);
    expect(damaged).toBe(1);
    expect(await store.usageSince(read.cursor)).toMatchObject({ records: [expect.objectContaining({ jobId: 'b' })], damagedAt: [0] });
  });

  it('counts a line a crash cut short at the end of an earlier day as damaged, where the next record went to a new day', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT - HOUR };
    const store = clockedStore(dir, time);
    await store.open();
    await settled(store, 'a', 'slack:U1', undefined, time.now);
    await appendFile(await newestUsageFile(dir), '{"jobId":"torn","ti');
    time.now = MIDNIGHT + HOUR;
    await settled(store, 'b', 'slack:U1', undefined, time.now);
    const feed = await store.usageSince(undefined);

    expect(feed.records.map((r) => r.jobId)).toEqual(['a', 'b']);
    expect(feed.damagedAt).toEqual([1]);
  });
});

describe('forgetting a member’s prompts in the file ledger’s day files', () => {
  it('removes their prompt files of every day, leaving their marker word in no file, and keeps the records and other members’ prompts', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT - HOUR };
    const store = clockedStore(dir, time);
    await store.open();
    await settled(store, 'theirs-1', 'slack:U1', 'a QUIXOTIC fox', time.now);
    await settled(store, 'other', 'slack:U2', 'a calm lake', time.now);
    time.now = MIDNIGHT + HOUR;
    await settled(store, 'theirs-2', 'slack:U1', 'a QUIXOTIC owl', time.now);
    // A line of theirs a crash cut short in their prompt file goes with it.
    await appendFile(join(dir, 'usage', 'prompts', '2030-06-16', (await readdir(join(dir, 'usage', 'prompts', '2030-06-16')))[0]!), '{"id":"x","prompt":"QUIXOTIC');
    const read = await store.usageSince(undefined);

    await store.forgetPrompts('slack:U1');

    for (const [file, text] of await filesUnder(dir)) expect(text, file).not.toContain('QUIXOTIC');
    expect((await store.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([
      ['theirs-1', undefined],
      ['other', 'a calm lake'],
      ['theirs-2', undefined],
    ]);
    // A reader that kept their prompts reads everything again.
    expect(await store.usageSince(read.cursor)).toMatchObject({ reset: true, records: [{ jobId: 'theirs-1' }, { jobId: 'other' }, { jobId: 'theirs-2' }] });
  });

  it('tells a reader to read again when a forget is asked again after one that removed the files but stopped before counting', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await store.open();
    await settled(store, 'theirs', 'slack:U1', 'a QUIXOTIC fox');
    const read = await store.usageSince(undefined);
    // The first forget removed the prompt files, then its process stopped.
    for (const day of await readdir(join(dir, 'usage', 'prompts'))) await rm(join(dir, 'usage', 'prompts', day), { recursive: true });

    await store.forgetPrompts('slack:U1');

    expect(await store.usageSince(read.cursor)).toMatchObject({ reset: true, records: [{ jobId: 'theirs' }] });
  });

  it('loses no record another process appends while it forgets', async () => {
    const dir = await newDir();
    const store = storeAt(dir);
    await store.open();
    await symlink(dir, `${dir}-link`);
    const other = storeAt(`${dir}-link`);
    await other.open();
    await settled(store, 'theirs', 'slack:U1', 'a QUIXOTIC fox');
    const appends = Array.from({ length: 30 }, (_, i) => settled(other, `o-${i}`, 'slack:U2', `prompt ${i}`));
    const forgets = Array.from({ length: 5 }, () => store.forgetPrompts('slack:U1'));
    await Promise.all([...appends, ...forgets]);

    const records = await store.usage({});
    expect(records).toHaveLength(31);
    expect(records.filter((r) => r.userKey === 'slack:U2').every((r) => r.prompt === `prompt ${r.jobId.slice(2)}`)).toBe(true);
    expect(records.find((r) => r.jobId === 'theirs')?.prompt).toBeUndefined();
  });
});

describe('the daily clean-up of the file ledger’s day files', () => {
  it('drops whole days that ended before now less the retention, prompts too, and keeps the day the retention ends in', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT - 3 * DAY + HOUR };
    const store = clockedStore(dir, time, { usageRetentionDays: 2 });
    await store.open();
    await settled(store, 'old', 'slack:U1', 'an OLD fox', time.now);
    time.now = MIDNIGHT - 2 * DAY + HOUR;
    await settled(store, 'kept', 'slack:U1', 'a kept owl', time.now);
    // The next day's first commit, the retention ending an hour into the day of kept: old's day is over, kept's is not.
    time.now = MIDNIGHT + 2 * HOUR;
    await settled(store, 'new', 'slack:U1', undefined, time.now);

    expect((await store.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([
      ['kept', 'a kept owl'],
      ['new', undefined],
    ]);
    for (const [file, text] of await filesUnder(dir)) expect(text, file).not.toContain('OLD');
    expect(await readdir(join(dir, 'usage', 'prompts'))).toEqual(['2030-06-14']);
  });

  it('answers the day’s first reserve when the clean-up fails, telling onError once, even when the hook throws', async () => {
    const dir = await newDir();
    // A file where the prompts' folder would be: the clean-up cannot list it.
    await mkdir(join(dir, 'usage'));
    await writeFile(join(dir, 'usage', 'prompts'), '');
    const told: unknown[] = [];
    const store = storeAt(dir, {
      onError: (error) => {
        told.push(error);
        throw new Error('the hook fails too');
      },
    });
    await store.open();
    await settled(store, 'a', 'slack:U1');
    await settled(store, 'b', 'slack:U1');

    expect(told).toEqual([expect.objectContaining({ message: 'could not drop expired usage records' })]);
    expect((await store.usage({})).map((r) => r.jobId)).toEqual(['a', 'b']);
  });

  it('drops a day at the first write of a later UTC day, whatever the hour of the last clean-up: a record is kept at most a day longer than the retention', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT - DAY };
    const store = clockedStore(dir, time, { usageRetentionDays: 1 });
    await store.open();
    await settled(store, 'old', 'slack:U1', 'an OLD fox', time.now);
    // The next clean-ups: late the next day (nothing past the retention yet), then the first write of the day after.
    time.now = MIDNIGHT + 23 * HOUR + 30 * 60_000;
    await settled(store, 'late', 'slack:U1', undefined, time.now);
    time.now = MIDNIGHT + DAY + HOUR;
    await settled(store, 'next', 'slack:U1', undefined, time.now);

    expect((await store.usage({})).map((r) => r.jobId)).toEqual(['late', 'next']);
    for (const [file, text] of await filesUnder(dir)) expect(text, file).not.toContain('OLD');
  });

  it('tells a reader to read again when it drops the newest day file: a cursor in a day file dropped and made again misses no record', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT + 10 * HOUR };
    const store = clockedStore(dir, time, { usageRetentionDays: 1 });
    await store.open();
    for (const jobId of ['a', 'b', 'c']) await settled(store, jobId, 'slack:U1', undefined, time.now);
    const read = await store.usageSince(undefined);
    // A clock two days ahead for one write that records nothing (a job released): its clean-up drops today's file.
    time.now += 2 * DAY;
    expect(await store.reserve({ jobId: 'x', userKey: 'slack:U2', scopeKey: 'slack:T1', estimateUsd: 0.02, limits: {}, now: time.now, job: job() })).toEqual({ ok: true });
    await store.release('x');
    // Back to today: the file is made again, longer than where the cursor is.
    time.now -= 2 * DAY;
    for (const jobId of ['d', 'e', 'f', 'g', 'h', 'i']) await settled(store, jobId, 'slack:U1', undefined, time.now);

    const next = await store.usageSince(read.cursor);
    expect(next.reset).toBe(true);
    expect(next.records.map((r) => r.jobId)).toEqual(['d', 'e', 'f', 'g', 'h', 'i']);
  });

  it('removes no day file when it cannot tell readers first: a cursor in the newest day file misses no record', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT + 10 * HOUR };
    const told: unknown[] = [];
    const store = clockedStore(dir, time, { usageRetentionDays: 1, onError: (error) => void told.push(error) });
    await store.open();
    for (const jobId of ['a', 'b', 'c']) await settled(store, jobId, 'slack:U1', undefined, time.now);
    // The feed epoch cannot be written (a folder where its file goes): the clean-up cannot raise it.
    await rm(join(dir, 'usage', 'feed-epoch'));
    await mkdir(join(dir, 'usage', 'feed-epoch', 'x'), { recursive: true });
    const read = await store.usageSince(undefined);
    time.now += 2 * DAY;
    expect(await store.reserve({ jobId: 'x', userKey: 'slack:U2', scopeKey: 'slack:T1', estimateUsd: 0.02, limits: {}, now: time.now, job: job() })).toEqual({ ok: true });
    await store.release('x');
    time.now -= 2 * DAY;
    for (const jobId of ['d', 'e', 'f', 'g', 'h', 'i']) await settled(store, jobId, 'slack:U1', undefined, time.now);

    expect(told).toEqual([expect.objectContaining({ message: 'could not drop expired usage records' })]);
    expect((await store.usageSince(read.cursor)).records.map((r) => r.jobId)).toEqual(['d', 'e', 'f', 'g', 'h', 'i']);
  });

  it('goes on from a cursor whose day was dropped, at the next day kept, without reading again', async () => {
    const dir = await newDir();
    const time = { now: MIDNIGHT - 3 * DAY };
    const store = clockedStore(dir, time, { usageRetentionDays: 2 });
    await store.open();
    await settled(store, 'old', 'slack:U1', undefined, time.now);
    const read = await store.usageSince(undefined);
    time.now = MIDNIGHT - 2 * DAY;
    await settled(store, 'kept', 'slack:U1', undefined, time.now);
    // The day's first write drops the cursor's day, not the newest.
    time.now = MIDNIGHT;
    await settled(store, 'new', 'slack:U1', undefined, time.now);

    expect((await readdir(join(dir, 'usage'))).filter((n) => n.endsWith('.jsonl'))).toEqual(['2030-06-14.jsonl', '2030-06-16.jsonl']);
    expect(await store.usageSince(read.cursor)).toMatchObject({ reset: false, records: [{ jobId: 'kept' }, { jobId: 'new' }] });
  });
});

describe('a data folder an older version wrote (one usage.jsonl)', () => {
  const record = (jobId: string, time: number, extra: Record<string, unknown> = {}) => {
    const day = new Date(time).toISOString().slice(0, 10);
    return JSON.stringify({ jobId, time, day, month: day.slice(0, 7), surface: 'slack', userKey: 'slack:U1', scopeKey: 'slack:T1', costUsd: 0.01, basis: 'table', ...extra });
  };
  const OLD = [
    '{"rewrite":"0123456789abcdef"}',
    record('a', MIDNIGHT - HOUR, { prompt: 'an OLDMARKER fox' }),
    '{"jobId":"damaged","ti',
    record('b', MIDNIGHT + HOUR),
    // Settled with a clock behind: goes to the day of its time, before b.
    record('c', MIDNIGHT - 2 * HOUR, { prompt: 'an OLDMARKER owl' }),
    '',
  ].join('\n');

  async function oldFolder(): Promise<string> {
    const dir = await newDir();
    await writeFile(join(dir, 'usage.jsonl'), OLD);
    return dir;
  }

  async function expectMoved(dir: string): Promise<void> {
    expect((await readdir(dir)).filter((n) => n.startsWith('usage'))).toEqual(['usage']);
    expect((await readdir(join(dir, 'usage'))).sort()).toEqual(['2030-06-15.jsonl', '2030-06-16.jsonl', 'feed-epoch', 'prompts']);
    const store = storeAt(dir);
    expect((await store.usageSince(undefined)).records.map((r) => [r.jobId, r.prompt])).toEqual([
      ['a', 'an OLDMARKER fox'],
      ['c', 'an OLDMARKER owl'],
      ['b', undefined],
    ]);
    for (const [file, text] of await filesUnder(join(dir, 'usage'))) if (file.endsWith('.jsonl') && !file.includes('prompts')) expect(text).not.toContain('OLDMARKER');
    await store.forgetPrompts('slack:U1');
    for (const [file, text] of await filesUnder(dir)) expect(text, file).not.toContain('OLDMARKER');
  }

  it('moves its records into day files at open, prompts apart, its rewrite and damaged lines dropped, and says how many', async () => {
    const dir = await oldFolder();
    const store = storeAt(dir);
    expect(await store.open()).toMatchObject({ movedUsage: { records: 3, damaged: 1 } });
    await store.close();
    await expectMoved(dir);
  });

  it('makes the move again at the next open when a crash stopped it midway, doubling no record', async () => {
    const dir = await oldFolder();
    // Its prompts were written, then the day file up to half of c's line.
    await mkdir(join(dir, 'usage', 'prompts', '2030-06-15'), { recursive: true });
    await writeFile(join(dir, 'usage', 'prompts', '2030-06-15', memberFileOf('slack:U1')), '{"id":"a","prompt":"an OLDMARKER fox"}\n{"id":"c","prompt":"an OLDMARKER owl"}\n');
    await writeFile(join(dir, 'usage', '2030-06-15.jsonl'), `${record('a', MIDNIGHT - HOUR, { prompted: 1 })}\n${record('c', MIDNIGHT - 2 * HOUR).slice(0, 30)}`);
    const store = storeAt(dir);
    expect(await store.open()).toMatchObject({ movedUsage: { records: 2, damaged: 1 } });
    await store.close();
    await expectMoved(dir);
  });

  it('raises the feed’s epoch at the next open when a crash stopped the move after its appends: a reader that read them reads again', async () => {
    const moved = await oldFolder();
    await storeAt(moved).open();
    // The day files and prompts as the move wrote them, the epoch not yet raised, usage.jsonl still there.
    const dir = await newDir();
    await cp(join(moved, 'usage'), join(dir, 'usage'), { recursive: true });
    await rm(join(dir, 'usage', 'feed-epoch'));
    await writeFile(join(dir, 'usage.jsonl'), OLD);
    const cursor = `e0/2030-06-16:${(await readFile(join(dir, 'usage', '2030-06-16.jsonl'))).length}`;
    const store = storeAt(dir);
    expect(await store.open()).toMatchObject({ movedUsage: { records: 0, damaged: 1 } });

    expect(await store.usageSince(cursor)).toMatchObject({ reset: true });
    expect((await store.usage({})).map((r) => r.jobId)).toEqual(['c', 'a', 'b']);
  });

  it('keeps a record of usage.jsonl its day’s file holds for the same job with other fields (the real charge beside a reconcile’s estimate)', async () => {
    const dir = await newDir();
    await mkdir(join(dir, 'usage'), { recursive: true });
    await writeFile(join(dir, 'usage', '2030-06-16.jsonl'), `${record('J', MIDNIGHT + HOUR, { costUsd: 0.02, outcome: 'interrupted' })}\n`);
    await writeFile(join(dir, 'usage.jsonl'), `${record('J', MIDNIGHT + HOUR, { costUsd: 0.011, basis: 'actual', requestId: 'req_123' })}\n`);
    const store = storeAt(dir);
    expect(await store.open()).toMatchObject({ movedUsage: { records: 1, damaged: 0 } });

    const kept = await readFile(join(dir, 'usage', '2030-06-16.jsonl'), 'utf8');
    expect(kept).toContain('"outcome":"interrupted"');
    expect(kept).toContain('"requestId":"req_123"');
  });

  it('moves again, at the next open, a usage.jsonl a crash left after the move or an older version’s process made again, doubling no record', async () => {
    const dir = await oldFolder();
    const first = storeAt(dir);
    await first.open();
    await first.close();
    // An older version's process still running settles a job: its code makes usage.jsonl again.
    await writeFile(join(dir, 'usage.jsonl'), `${OLD}${record('d', MIDNIGHT + 2 * HOUR, { prompt: 'a LATERMARKER fox' })}\n`);
    const store = storeAt(dir);
    expect(await store.open()).toMatchObject({ movedUsage: { records: 1, damaged: 1 } });
    expect((await store.usage({})).map((r) => [r.jobId, r.prompt])).toEqual([
      ['c', 'an OLDMARKER owl'],
      ['a', 'an OLDMARKER fox'],
      ['b', undefined],
      ['d', 'a LATERMARKER fox'],
    ]);
    await store.close();
    expect((await readdir(dir)).filter((n) => n.startsWith('usage'))).toEqual(['usage']);
  });

  it('erases a member’s prompts from a usage.jsonl an older version’s process made again after the move, when they forget', async () => {
    const dir = await oldFolder();
    const store = storeAt(dir);
    await store.open();
    await appendFile(join(dir, 'usage.jsonl'), `${record('d', MIDNIGHT + 2 * HOUR, { prompt: 'a LATERMARKER fox' })}\n`);

    await store.forgetPrompts('slack:U1');

    for (const [file, text] of await filesUnder(dir)) expect(text, file).not.toContain('LATERMARKER');
    expect((await store.usage({})).map((r) => r.jobId)).toEqual(['c', 'a', 'b', 'd']);
  });
});
