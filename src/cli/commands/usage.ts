import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ValidationError } from '../../core/errors.js';
import { formatUsd } from '../../core/pricing.js';
import type { CoreConfig } from '../../config.js';
import type { QuotaStore, UsageRecord } from '../../spend/types.js';
import { sumUsage, usageByKey, type UsageTotals } from '../../spend/usage-totals.js';
import { parseFlags } from '../flags.js';
import type { CliContext } from '../context.js';

export const USAGE_USAGE = `Usage: pictor usage [--since DATE] [--until DATE] [--by day|user|scope|surface] [--json | --csv]

  --since DATE   first UTC day counted, YYYY-MM-DD (default: the 1st of this month)
  --until DATE   last UTC day counted, YYYY-MM-DD (default: today)
  --by KEY       one row per day (default), user, scope or surface
  --json         one JSON document: the totals and the rows
  --csv          one row per job (time, surface, user, scope, operation, n, size, quality, cost, basis, request id, prompt)

What the account spent, from the usage records of its ledger: Redis with REDIS_URL (every process sharing it),
else the file ledger in PICTOR_DATA_DIR (default ./.data). Each job counts on the UTC day it was settled.
"uncertain" is what was charged at a job's estimate because its process died after sending it.`;

const BY = ['day', 'user', 'scope', 'surface'] as const;
type By = (typeof BY)[number];
const DAY_MS = 24 * 60 * 60_000;

export async function runUsage(args: string[], ctx: CliContext, config: CoreConfig, stdoutIsTerminal: boolean): Promise<number> {
  const values = parseFlags(
    args,
    {
      since: { type: 'string' },
      until: { type: 'string' },
      by: { type: 'string' },
      json: { type: 'boolean' },
      csv: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    'usage',
  );
  if (values.help) {
    ctx.stdout(USAGE_USAGE);
    return 0;
  }
  if (values.json && values.csv) throw new ValidationError('--csv', '--json and --csv cannot be used together; choose one');
  const by = (values.by ?? 'day') as By;
  if (!BY.includes(by)) throw new ValidationError('--by', `--by must be one of ${BY.join(', ')} (got ${JSON.stringify(values.by)})`);
  const now = Date.now();
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const since = values.since === undefined ? Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1) : parseDay('--since', values.since);
  const lastDay = values.until === undefined ? today : parseDay('--until', values.until);
  if (since > lastDay) throw new ValidationError('--since', `--since (${values.since ?? isoDay(since)}) is after --until (${values.until ?? isoDay(lastDay)})`);
  const until = lastDay + DAY_MS;

  const store = await openLedger(config);
  let records: UsageRecord[] = [];
  if (store) {
    try {
      records = await store.usage({ since, until });
    } finally {
      await store.close();
    }
  }

  if (values.csv) {
    ctx.stdout(CSV_COLUMNS.join(','));
    for (const r of records) ctx.stdout(CSV_COLUMNS.map((c) => csvCell(csvValue(r, c))).join(','));
    return 0;
  }
  const rows = group(records, by, since, lastDay);
  const total = sumUsage(records, 'total');
  if (values.json) {
    ctx.stdout(JSON.stringify({ ok: true, since: isoDay(since), until: isoDay(lastDay), by, total, rows }));
    return 0;
  }
  const where = config.redis ? 'the Redis ledger' : `the ledger in ${resolve(config.spend.dataDir)}`;
  if (!store) {
    ctx.stdout(`Nothing recorded yet: ${where} does not exist. Spending is recorded once a job is settled (with an account cap, REDIS_URL, or by npm start).`);
    return 0;
  }
  const uncertain = total.uncertainUsd > 0 ? ` (${formatUsd(total.uncertainUsd)} of it uncertain)` : '';
  ctx.stdout(`${isoDay(since)} to ${isoDay(lastDay)} (UTC), from ${where}: ${formatUsd(total.usd)}${uncertain} in ${plural(total.jobs, 'job')}, ${plural(total.images, 'image')}.`);
  if (rows.length === 0) return 0;
  ctx.stdout('');
  const width = Math.max(by.length, ...rows.map((r) => r.key.length));
  const maxUsd = Math.max(...rows.map((r) => r.usd));
  const chart = by === 'day' && stdoutIsTerminal;
  ctx.stdout(`${by.padEnd(width)}  ${'jobs'.padStart(5)}  ${'images'.padStart(6)}  ${'USD'.padStart(10)}`);
  for (const row of rows) {
    const bar = chart ? `  ${'█'.repeat(maxUsd > 0 ? Math.round((row.usd / maxUsd) * 30) : 0)}` : '';
    ctx.stdout(`${row.key.padEnd(width)}  ${String(row.jobs).padStart(5)}  ${String(row.images).padStart(6)}  ${formatUsd(row.usd).padStart(10)}${bar}`);
  }
  return 0;
}

/** The account's ledger to read, or undefined when there is none yet (nothing is created to read it). */
async function openLedger(config: CoreConfig): Promise<QuotaStore | undefined> {
  if (config.redis) {
    const { RedisQuotaStore } = await import('../../spend/RedisQuotaStore.js');
    return RedisQuotaStore.connect(config.redis);
  }
  const dir = resolve(config.spend.dataDir);
  if (!existsSync(join(dir, 'quota-ledger.json')) && !existsSync(join(dir, 'usage.jsonl'))) return undefined;
  const { FileQuotaStore } = await import('../../spend/FileQuotaStore.js');
  return new FileQuotaStore({ dir, usageRetentionDays: config.spend.usageRetentionDays });
}

function parseDay(flag: string, value: string): number {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value.trim());
  const at = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : Number.NaN;
  if (!match || Number.isNaN(at) || isoDay(at) !== value.trim()) throw new ValidationError(flag, `${flag} must be a UTC day as YYYY-MM-DD, e.g. 2026-11-01 (got ${JSON.stringify(value)})`);
  return at;
}

const isoDay = (at: number) => new Date(at).toISOString().slice(0, 10);
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** By day: every day of the period, oldest first (empty days too, so a chart shows the gaps); otherwise by spend, largest first. */
function group(records: UsageRecord[], by: By, since: number, lastDay: number): UsageTotals[] {
  if (by !== 'day') return usageByKey(records, (r) => (by === 'user' ? r.userKey : by === 'scope' ? r.scopeKey : r.surface));
  const groups = new Map<string, UsageRecord[]>();
  for (let at = since; at <= lastDay && groups.size < 400; at = at + DAY_MS) groups.set(isoDay(at), []);
  for (const r of records) {
    const day = isoDay(r.time);
    const list = groups.get(day);
    if (list) list.push(r);
    else groups.set(day, [r]);
  }
  return [...groups].map(([key, list]) => sumUsage(list, key));
}

const CSV_COLUMNS = ['time', 'surface', 'user', 'scope', 'operation', 'n', 'size', 'quality', 'cost_usd', 'basis', 'request_id', 'prompt', 'job_id'] as const;

function csvValue(r: UsageRecord, column: (typeof CSV_COLUMNS)[number]): string {
  switch (column) {
    case 'time':
      return new Date(r.time).toISOString();
    case 'surface':
      return r.surface;
    case 'user':
      return r.userKey;
    case 'scope':
      return r.scopeKey;
    case 'cost_usd':
      return String(r.costUsd);
    case 'request_id':
      return r.requestId ?? '';
    case 'job_id':
      return r.jobId;
    case 'n':
      return r.n === undefined ? '' : String(r.n);
    default:
      return r[column] ?? '';
  }
}

/** RFC 4180: a cell with a comma, quote or line break is quoted, its quotes doubled. A leading = + - @ is prefixed with ' so a spreadsheet does not run it. */
function csvCell(value: string): string {
  const safe = /^[=+\-@]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
