/**
 * Forgetting a member's prompts on the file ledger, at `--records` usage records (each with a prompt, `--members`
 * members): a forget holds the data folder's lock while it removes the member's prompt file of each day (nothing is
 * rewritten), so every reserve and settle of every member waits that long. The records are written as an older version
 * kept them (one `usage.jsonl`) and moved into day files by the first open, before any window. Measured side by side in
 * one run, rounds rotating the order, one warm-up round:
 *
 * - `no forget`: the same window with no forget running (the baseline);
 * - `forget, a member with prompts`: a forget that removes something (a new member each round);
 * - `forget, a member with none`: a forget of a member with no prompt file (nothing removed).
 *
 * Meanwhile another process (this script again, `--reserver`) runs reserve + settle one job at a time on the same data
 * folder as fast as it can: printed are how long each forget took (it holds the lock for nearly all of it) and the
 * slowest reserve of that member, ratios against the baseline's slowest reserve.
 *
 * Usage: node --import tsx bench/file-forget.ts [--records 200000] [--members 500] [--rounds 3]
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

const { values } = parseArgs({
  options: { records: { type: 'string', default: '200000' }, members: { type: 'string', default: '500' }, rounds: { type: 'string', default: '3' }, reserver: { type: 'string' } },
});

if (values.reserver !== undefined) await reserve(values.reserver);
else await main();

/** The other process: reserve + settle one job at a time until told to stop, then sends each reserve's start and time. */
async function reserve(dir: string): Promise<void> {
  const store = new FileQuotaStore({ dir });
  await store.open();
  const samples: Sample[] = [];
  let running = true;
  process.on('message', (message) => {
    if (message === 'stop') running = false;
  });
  process.send!('ready');
  for (let i = 0; running; i++) {
    const start = performance.now() + performance.timeOrigin;
    // A step that waited past the lock's 10 s is refused (ledger_busy): counted, and the next job tried.
    const result = await store.reserve({ jobId: `reserver-${i}`, userKey: 'bench:reserver', scopeKey: 'bench:g', estimateUsd: 0.05, limits: { accountDailyUsd: 1e9 }, now: Date.now() }).catch(() => undefined);
    samples.push([start, performance.now() + performance.timeOrigin - start, result ? 'reserve' : 'refused']);
    if (result && !result.ok) throw new Error('refused');
    if (!result) continue;
    const settling = performance.now() + performance.timeOrigin;
    const settled = await store.settle(`reserver-${i}`, 0.04).catch(() => undefined);
    samples.push([settling, performance.now() + performance.timeOrigin - settling, settled === undefined ? 'refused' : 'settle']);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await store.close();
  process.send!(samples, () => process.exit(0));
}

async function main(): Promise<void> {
  const records = positiveInt('records', values.records);
  const members = positiveInt('members', values.members);
  const rounds = positiveInt('rounds', values.rounds);
  const dir = await mkdtemp(join(tmpdir(), 'pictor-bench-forget-'));
  const now = Date.now();
  const lines: string[] = [];
  for (let i = 0; i < records; i++) {
    const time = now - (records - i) * 1000;
    const day = utcDay(time);
    const record = { jobId: `job-${i}`, time, day, month: day.slice(0, 7), surface: 'discord', userKey: `discord:member-${i % members}`, scopeKey: 'discord:g', operation: 'generate', n: 1, size: '1024x1024', quality: 'medium', prompt: `a lighthouse at dusk, variation ${i}`, costUsd: 0.042, basis: 'table', outcome: 'completed', reservedAt: time - 20_000, images: 1 };
    lines.push(`${JSON.stringify(record)}\n`);
  }
  await writeFile(join(dir, 'usage.jsonl'), lines.join(''));
  const size = (await stat(join(dir, 'usage.jsonl'))).size;
  const store = new FileQuotaStore({ dir });
  await store.open();

  const child = fork(fileURLToPath(import.meta.url), ['--reserver', dir], { execArgv: ['--import', 'tsx'] });
  await new Promise((resolve) => child.once('message', resolve));
  const windows: { name: string; start: number; end: number; forgetMs: number }[] = [];
  let next = 0;
  const variants: { name: string; run: () => Promise<void> }[] = [
    { name: 'no forget', run: () => new Promise((resolve) => setTimeout(resolve, 500)) },
    { name: 'forget, a member with prompts', run: () => store.forgetPrompts(`discord:member-${next++ % members}`) },
    { name: 'forget, a member with none', run: () => store.forgetPrompts('discord:nobody') },
  ];
  for (let round = 0; round < rounds + 1; round++) {
    for (const variant of variants.map((_, i) => variants[(i + round) % variants.length]!)) {
      // A pause between windows, so each starts with the other process committing as usual.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const start = performance.now() + performance.timeOrigin;
      await variant.run();
      const end = performance.now() + performance.timeOrigin;
      if (round > 0) windows.push({ name: variant.name, start, end, forgetMs: end - start });
    }
  }
  const samples = await new Promise<Sample[]>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the reserving process exited (${code})`)));
    child.once('message', (message) => resolve(message as Sample[]));
    child.send('stop');
  });
  await store.close();
  await rm(dir, { recursive: true, force: true });

  // A reserve belongs to a window when it was waiting at any moment of it.
  const during = (w: { start: number; end: number }) => samples.filter(([at, took]) => at < w.end && at + took > w.start);
  const worstIn = (w: { start: number; end: number }, step?: 'reserve') => Math.max(0, ...during(w).flatMap(([, took, kind]) => (step === undefined || kind === step ? [took] : [])));
  const rows = variants.map((v) => {
    const mine = windows.filter((w) => w.name === v.name);
    const refused = mine.reduce((n, w) => n + during(w).filter(([, , kind]) => kind === 'refused').length, 0);
    return { name: v.name, forgetMs: median(mine.map((w) => w.forgetMs)), reserveMs: median(mine.map((w) => worstIn(w, 'reserve'))), stepMs: median(mine.map((w) => worstIn(w))), refused };
  });
  const base = rows[0]!;
  console.log(`\nFile ledger: ${records} usage records with prompts (${mb(size)}), ${members} members; medians of ${rounds} rounds, another process reserving + settling meanwhile (${samples.filter(([, , kind]) => kind === 'reserve').length} jobs)\n`);
  printTable(
    ['window', 'forget (wall)', 'slowest reserve', 'slowest step (refused too): the lock held', 'reserve / no forget', 'step / no forget', 'refused (ledger_busy, all rounds)'],
    rows.map((r) => [r.name, r.name === base.name ? '—' : ms(r.forgetMs), ms(r.reserveMs), ms(r.stepMs), ratio(r.reserveMs, base.reserveMs), ratio(r.stepMs, base.stepMs), String(r.refused)]),
  );
}
