/**
 * A usage query with since on the file ledger (`pictor usage`, the chat budgets' top users):
 * `FileQuotaStore.usage({ since })` for the last day over `--records` records spread over 400 days
 * (the default retention), measured side by side in one run (round-robin, one warm-up round, medians):
 *
 * - `whole file, as before`: one file of every record (as versions before kept them, `usage.jsonl`) read at once,
 *   every line parsed, then `usageMatching` — what `usage` once did for any query;
 * - `whole file, usage({})`: `usage({})` (every day file read, every line parsed), then the query's filter — what a
 *   query without `since` costs;
 * - `from the end`: `usage({ since })`, which reads only the day files from the day before `since`'s day on (and the
 *   one before them).
 *
 * The records are written as one `usage.jsonl`, which the store's open moves into day files.
 *
 * Both answers are compared (the script fails if they differ). Wall time and this process's CPU time.
 *
 * Usage: node --import tsx bench/usage-read.ts [--records 100000] [--days 1] [--rounds 7]
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { FileQuotaStore } from '../src/spend/FileQuotaStore.js';
import type { UsageQuery, UsageRecord } from '../src/spend/types.js';
import { safeJson } from '../src/core/safe-json.js';
import { matchesQuery, usageMatching, UsageRecordSchema } from '../src/spend/usage-records.js';
import { utcDay } from '../src/spend/utc-period.js';
import { mb, median, ms, positiveInt, printTable, ratio, timed } from './helpers/measure.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '100000' }, days: { type: 'string', default: '1' }, rounds: { type: 'string', default: '7' } } });
const records = positiveInt('--records', values.records);
const days = positiveInt('--days', values.days);
const rounds = positiveInt('--rounds', values.rounds);

const DAY_MS = 24 * 60 * 60_000;
const now = Date.now();
const first = now - 400 * DAY_MS;
const step = (now - first) / records;
const lines: string[] = [];
for (let i = 0; i < records; i++) {
  const time = Math.round(first + i * step);
  const day = utcDay(time);
  const job = { operation: 'generate', n: 1 + (i % 4), size: '1024x1024', quality: 'medium', prompt: `a lighthouse at dusk, variation ${i}` };
  const record = { jobId: `job-${i}`, time, day, month: day.slice(0, 7), surface: 'discord', userKey: `discord:u${i % 50}`, scopeKey: `discord:g${i % 5}`, ...job, costUsd: 0.042, basis: 'table', requestId: `req_${i}`, outcome: 'completed', reservedAt: time - 20_000, images: job.n };
  lines.push(`${JSON.stringify(record)}\n`);
}
const dir = await mkdtemp(join(tmpdir(), 'pictor-bench-usage-'));
await writeFile(join(dir, 'usage.jsonl'), lines.join(''));
await writeFile(join(dir, 'whole.jsonl'), lines.join(''));
const store = new FileQuotaStore({ dir });
await store.open();
const query: UsageQuery = { since: now - days * DAY_MS };

const variants: { name: string; run: () => Promise<UsageRecord[]> }[] = [
  {
    name: 'whole file, as before',
    run: async () => usageMatching((await readFile(join(dir, 'whole.jsonl'), 'utf8')).split('\n').flatMap((line) => UsageRecordSchema.safeParse(safeJson(line)).data ?? []), query),
  },
  { name: 'whole file, usage({})', run: async () => (await store.usage({})).filter((r) => matchesQuery(r, query)) },
  { name: 'from the end', run: () => store.usage(query) },
];
const wall = new Map<string, number[]>(variants.map((v) => [v.name, []]));
const cpu = new Map<string, number[]>(variants.map((v) => [v.name, []]));
const answers = new Map<string, UsageRecord[]>();
for (let round = 0; round < rounds + 1; round++) {
  for (const variant of variants.map((_, i) => variants[(i + round) % variants.length]!)) {
    const { value, wallMs, cpuMs } = await timed(variant.run);
    answers.set(variant.name, value);
    if (round === 0) continue; // warms up
    wall.get(variant.name)!.push(wallMs);
    cpu.get(variant.name)!.push(cpuMs);
  }
}
const [whole, tail] = [answers.get('whole file, as before')!, answers.get('from the end')!];
const size = (await stat(join(dir, 'whole.jsonl'))).size;
await store.close();
await rm(dir, { recursive: true, force: true });
if (!isDeepStrictEqual(whole, tail) || !isDeepStrictEqual(whole, answers.get('whole file, usage({})'))) throw new Error(`the answers differ: ${whole.length} records from the whole file, ${tail.length} from the end`);

console.log(`\nFile ledger usage view: ${records} records over 400 days (${mb(size)}), a ${days}-day query (${tail.length} records); median of ${rounds} rounds`);
const base = { wall: median(wall.get('whole file, as before')!), cpu: median(cpu.get('whole file, as before')!) };
printTable(
  ['read', 'wall', 'CPU', 'as before / this (wall)', 'as before / this (CPU)'],
  variants.map((v) => {
    const [w, c] = [median(wall.get(v.name)!), median(cpu.get(v.name)!)];
    return [v.name, ms(w), ms(c), ratio(base.wall, w), ratio(base.cpu, c)];
  }),
);
