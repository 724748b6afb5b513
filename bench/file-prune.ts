/**
 * The file ledger's daily clean-up of its usage day files (the days past retention removed, on a process's first commit
 * of the day that writes) at `--records` usage records spread over 200 days, each with a prompt. The records are written
 * as an older version kept them (one `usage.jsonl`) and moved into day files by the first open, outside the windows. Measured side by side in
 * one run, rounds rotating the order, one warm-up round, as `file-forget.ts` measures a forget:
 *
 * - `no clean-up`: a reserve + settle of a process that already cleaned up today (the baseline);
 * - `clean-up, a day's records expired`: the same step as a process's first of the day (a store opened anew, its
 *   retention one day shorter each round), so a day's file and prompt folder (1/200 of the records) are removed;
 * - `clean-up, none expired`: the first step of a day with nothing past retention (the folder listed, nothing removed).
 *
 * The window runs until the store is closed; printed too is when its own reserve + settle answered (the clean-up runs
 * in that step's commit: a few unlinks). Meanwhile another process (this script again,
 * `--reserver`) runs reserve + settle one job at a time on the same data folder: printed are each window's wall time
 * and that process's slowest reserve and slowest step (how long the clean-up held the data folder's lock), ratios
 * against the baseline, and its steps refused (`ledger_busy`).
 *
 * Usage: node --import tsx bench/file-prune.ts [--records 200000] [--members 500] [--rounds 3]
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { FileQuotaStore } from '../src/spend/FileQuotaStore.js';
import { utcDay } from '../src/spend/utc-period.js';
import { mb, median, ms, positiveInt, printTable, ratio } from './helpers/measure.js';

/** When a step of the other process began, how long it took, and what it was (`refused`: ledger_busy). */
type Sample = [number, number, 'reserve' | 'settle' | 'refused'];

const DAY_MS = 24 * 60 * 60 * 1000;
const DAYS = 200;

const { values } = parseArgs({
  options: { records: { type: 'string', default: '200000' }, members: { type: 'string', default: '500' }, rounds: { type: 'string', default: '3' }, reserver: { type: 'string' } },
});

if (values.reserver !== undefined) await reserve(values.reserver);
else await main();

/** One reserve + settle; undefined when refused (ledger_busy). */
async function step(store: FileQuotaStore, jobId: string, userKey: string, samples?: Sample[]): Promise<boolean> {
  const start = performance.now() + performance.timeOrigin;
  const result = await store.reserve({ jobId, userKey, scopeKey: 'bench:g', estimateUsd: 0.05, limits: { accountDailyUsd: 1e9 }, now: Date.now() }).catch(() => undefined);
  samples?.push([start, performance.now() + performance.timeOrigin - start, result ? 'reserve' : 'refused']);
  if (result && !result.ok) throw new Error('refused');
  if (!result) return false;
  const settling = performance.now() + performance.timeOrigin;
  const settled = await store.settle(jobId, 0.04).catch(() => undefined);
  samples?.push([settling, performance.now() + performance.timeOrigin - settling, settled === undefined ? 'refused' : 'settle']);
  return settled !== undefined;
}

/** The other process: reserve + settle one job at a time until told to stop (its own clean-up done first: it keeps every record). */
async function reserve(dir: string): Promise<void> {
  const store = new FileQuotaStore({ dir, usageRetentionDays: 10 * DAYS });
  await store.open();
  await step(store, 'reserver-first', 'bench:reserver');
  const samples: Sample[] = [];
  let running = true;
  process.on('message', (message) => {
    if (message === 'stop') running = false;
  });
  process.send!('ready');
  for (let i = 0; running; i++) {
    await step(store, `reserver-${i}`, 'bench:reserver', samples);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await store.close();
  process.send!(samples, () => process.exit(0));
}

async function main(): Promise<void> {
  const records = positiveInt('records', values.records);
  const members = positiveInt('members', values.members);
  const rounds = positiveInt('rounds', values.rounds);
  const dir = await mkdtemp(join(tmpdir(), 'pictor-bench-prune-'));
  const now = Date.now();
  const lines: string[] = [];
  // Oldest first, evenly over DAYS days before now: a retention of d days keeps the records of the last d of them.
  for (let i = 0; i < records; i++) {
    const time = now - Math.ceil(((records - i) * DAYS * DAY_MS) / records);
    const day = utcDay(time);
    const record = { jobId: `job-${i}`, time, day, month: day.slice(0, 7), surface: 'discord', userKey: `discord:member-${i % members}`, scopeKey: 'discord:g', operation: 'generate', n: 1, size: '1024x1024', quality: 'medium', prompt: `a lighthouse at dusk, variation ${i}`, costUsd: 0.042, basis: 'table', outcome: 'completed', reservedAt: time - 20_000, images: 1 };
    lines.push(`${JSON.stringify(record)}\n`);
  }
  await writeFile(join(dir, 'usage.jsonl'), lines.join(''));
  const size = (await stat(join(dir, 'usage.jsonl'))).size;

  const child = fork(fileURLToPath(import.meta.url), ['--reserver', dir], { execArgv: ['--import', 'tsx'] });
  await new Promise((resolve) => child.once('message', resolve));
  // The baseline's store (one ledger open per process at a time: closed for each clean-up window, opened again after,
  // its day's clean-up done outside the windows).
  let cleaned: FileQuotaStore | undefined;
  const windows: { name: string; start: number; end: number; wallMs: number; answerMs: number }[] = [];
  /** When the window's own first step (reserve + settle) answered. */
  let answered = 0;
  let job = 0;
  let keepDays = DAYS;
  /** A process's first step of the day, keeping `days` days: the window runs until its clean-up is done (closed). */
  const firstOfDay = async (days: number) => {
    await cleaned?.close();
    cleaned = undefined;
    const store = new FileQuotaStore({ dir, usageRetentionDays: days });
    await store.open();
    const start = performance.now() + performance.timeOrigin;
    await step(store, `main-${job++}`, 'bench:main');
    answered = performance.now() + performance.timeOrigin;
    await store.close();
    return start;
  };
  const variants: { name: string; before?: () => Promise<void>; run: () => Promise<number> }[] = [
    {
      name: 'no clean-up',
      before: async () => {
        if (cleaned) return;
        cleaned = new FileQuotaStore({ dir, usageRetentionDays: 10 * DAYS });
        await cleaned.open();
        // Its first step's clean-up (nothing expired) runs in that step's commit: outside the window.
        await step(cleaned, `main-${job++}`, 'bench:main');
      },
      run: async () => {
        const start = performance.now() + performance.timeOrigin;
        await step(cleaned!, `main-${job++}`, 'bench:main');
        answered = performance.now() + performance.timeOrigin;
        await new Promise((resolve) => setTimeout(resolve, 500));
        return start;
      },
    },
    { name: "clean-up, a day's records expired", run: () => firstOfDay(--keepDays) },
    { name: 'clean-up, none expired', run: () => firstOfDay(10 * DAYS) },
  ];
  for (let round = 0; round < rounds + 1; round++) {
    for (const variant of variants.map((_, i) => variants[(i + round) % variants.length]!)) {
      await variant.before?.();
      // A pause between windows, so each starts with the other process committing as usual.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const start = await variant.run();
      const end = performance.now() + performance.timeOrigin;
      if (round > 0) windows.push({ name: variant.name, start, end, wallMs: end - start, answerMs: answered - start });
    }
  }
  await cleaned?.close();
  const samples = await new Promise<Sample[]>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the reserving process exited (${code})`)));
    child.once('message', (message) => resolve(message as Sample[]));
    child.send('stop');
  });
  await rm(dir, { recursive: true, force: true });

  // A step belongs to a window when it was waiting at any moment of it.
  const during = (w: { start: number; end: number }) => samples.filter(([at, took]) => at < w.end && at + took > w.start);
  const worstIn = (w: { start: number; end: number }, kind?: 'reserve') => Math.max(0, ...during(w).flatMap(([, took, k]) => (kind === undefined || k === kind ? [took] : [])));
  const rows = variants.map((v) => {
    const mine = windows.filter((w) => w.name === v.name);
    const refused = mine.reduce((n, w) => n + during(w).filter(([, , kind]) => kind === 'refused').length, 0);
    return { name: v.name, wallMs: median(mine.map((w) => w.wallMs)), answerMs: median(mine.map((w) => w.answerMs)), reserveMs: median(mine.map((w) => worstIn(w, 'reserve'))), stepMs: median(mine.map((w) => worstIn(w))), refused };
  });
  const base = rows[0]!;
  console.log(`\nFile ledger: ${records} usage records with prompts over ${DAYS} days (${mb(size)}), ${members} members; medians of ${rounds} rounds, another process reserving + settling meanwhile (${samples.filter(([, , kind]) => kind === 'reserve').length} jobs)\n`);
  printTable(
    ['window', 'its reserve + settle answered', 'step + clean-up (wall)', 'slowest reserve', 'slowest step (refused too): the lock held', 'reserve / no clean-up', 'step / no clean-up', 'refused (ledger_busy, all rounds)'],
    rows.map((r) => [r.name, ms(r.answerMs), ms(r.wallMs), ms(r.reserveMs), ms(r.stepMs), ratio(r.reserveMs, base.reserveMs), ratio(r.stepMs, base.stepMs), String(r.refused)]),
  );
}
