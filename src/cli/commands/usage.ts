import { join } from 'node:path';
import { ValidationError } from '../../core/errors.js';
import { formatUsd } from '../../core/pricing.js';
import type { CoreConfig } from '../../config.js';
import type { QuotaStore, UsageRecord } from '../../spend/types.js';
import { sumUsage, usageByKey, type UsageTotals } from '../../spend/usage-totals.js';
import { hasFileLedger, LEDGER_FILES } from '../../spend/ledger-files.js';
import { ledgerDir, ledgerRedis, openQuotaStore, type LedgerKind } from '../../spend/open-store.js';
import { utcDayStart, utcMonthStart } from '../../spend/utc-period.js';
import { parseFlags, USAGE_FLAGS } from '../flags.js';
import type { CliContext } from '../context.js';

/** The columns of `--csv`, in order: the header, each row, and the help that names them. */
const CSV_COLUMNS = ['time', 'day', 'month', 'surface', 'user', 'scope', 'operation', 'n', 'size', 'quality', 'cost_usd', 'basis', 'reserved_usd', 'request_id', 'prompt', 'job_id'] as const;

/** `text` in lines of at most `width` characters, every line after the first indented by `indent` spaces. */
function wrapped(text: string, indent: number, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

export const USAGE_USAGE = `Usage: pictor usage [--since DATE] [--until DATE] [--by day|user|scope|surface] [--json | --csv] [--emulator]

  --since DATE   first UTC day counted, YYYY-MM-DD (default: the 1st of this month)
  --until DATE   last UTC day counted, YYYY-MM-DD (default: today)
  --by KEY       one row per day (default), user, scope or surface
  --json         one JSON document: the totals and the rows
  --csv          ${wrapped(`one row per job, with the columns ${CSV_COLUMNS.join(', ')}.`, 17, 117)}
  --emulator     the embedded emulator's ledger (jobs run without PICTOR_BASE_URL) instead of the account's

What the account spent, from the usage records of its ledger: Redis with REDIS_URL (every process sharing it),
else the file ledger in PICTOR_DATA_DIR (default ~/.local/state/pictor, or $XDG_STATE_HOME/pictor). Each job
counts on the UTC day (and month) it was reserved in, as the caps count it, even when it was settled after midnight.
Basis: "table" priced from what came back, "estimate" charged at its upper-bound estimate (it may have been billed),
"uncertain" charged at its estimate after its process died. The jobs of a process that died (kill -9, a crash)
are ended first, as the next job would end them: one it had sent is charged at its estimate (or what its record
says, when its settle was recorded before the process died), so the totals are what the caps count.`;

const BY = ['day', 'user', 'scope', 'surface'] as const;
type By = (typeof BY)[number];
const DAY_MS = 24 * 60 * 60_000;

export async function runUsage(args: string[], ctx: CliContext, config: CoreConfig, stdoutIsTerminal: boolean): Promise<number> {
  const values = parseFlags(args, USAGE_FLAGS, 'usage');
  if (values.help) {
    ctx.stdout(USAGE_USAGE);
    return 0;
  }
  if (values.json && values.csv) throw new ValidationError('--csv', '--json and --csv cannot be used together; choose one');
  const by = (values.by ?? 'day') as By;
  if (!BY.includes(by)) throw new ValidationError('--by', `--by must be one of ${BY.join(', ')} (got ${JSON.stringify(values.by)})`);
  const now = Date.now();
  const today = utcDayStart(now);
  const since = values.since === undefined ? utcMonthStart(now) : parseDay('--since', values.since);
  const lastDay = values.until === undefined ? today : parseDay('--until', values.until);
  if (since > lastDay) throw new ValidationError('--since', `--since (${values.since ?? isoDay(since)}) is after --until (${values.until ?? isoDay(lastDay)})`);
  const until = lastDay + DAY_MS;

  const ledger: LedgerKind = values.emulator ? 'emulator' : 'account';
  const store = await openLedger(config, ledger);
  let records: UsageRecord[] = [];
  // Lines of the usage day files met damaged and skipped that may be of these days (`damagedWithin`): their records are missing from what follows, which says so.
  let damagedLines = 0;
  if (store) {
    try {
      records = await store.usage({ since, until, onDamagedLines: (lines) => (damagedLines = lines) });
    } finally {
      await store.close();
    }
  }

  if (damagedLines > 0 && !values.json) {
    const usagePath = join(ledgerDir(config.spend.dataDir, ledger), LEDGER_FILES.usage);
    const [lines, were, they] = damagedLines === 1 ? ['1 damaged line', 'was', 'it'] : [`${damagedLines} damaged lines`, 'were', 'they'];
    ctx.stderr(`pictor: ${lines} in ${usagePath} ${were} skipped: what ${they} recorded is missing from these totals (the spend ledger still counts what it cost).`);
  }
  if (values.csv) {
    ctx.stdout(CSV_COLUMNS.join(','));
    for (const r of records) ctx.stdout(CSV_COLUMNS.map((c) => csvCell(csvValue(r, c))).join(','));
    return 0;
  }
  const rows = group(records, by, since, lastDay);
  const total = sumUsage(records, 'total');
  if (values.json) {
    ctx.stdout(JSON.stringify({ ok: true, ledger, since: isoDay(since), until: isoDay(lastDay), by, total, rows, damagedLines }));
    return 0;
  }
  const where = `${ledger === 'emulator' ? "the emulator's" : "the account's"} ${config.redis ? `Redis ledger (prefix ${ledgerRedis(config.redis, ledger).prefix})` : `ledger in ${ledgerDir(config.spend.dataDir, ledger)}`}`;
  if (!store) {
    const what =
      ledger === 'emulator'
        ? 'Every job a Pictor emulator answers is recorded there once it is settled (by this CLI, npm start or the n8n node using this folder); real jobs in the account\'s ledger (pictor usage).'
        : 'Every job sent to the image service is recorded there once it is settled (by this CLI, npm start or the n8n node using this ledger); jobs an emulator answered in the emulator\'s ledger (pictor usage --emulator).';
    ctx.stdout(`Nothing recorded yet in ${where}. ${what}`);
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

/**
 * The ledger to read, or undefined when there is none yet (nothing is created to read it). Opened as every surface
 * opens it: a damaged file is restored or named, and the reservations of a process that is gone (kill -9, a crash) are
 * ended as the next job's reservation would end them — a job it had sent charged at its estimate and recorded as
 * uncertain (or what its usage record says, when its settle was recorded already), a queued one released — so the
 * totals are what the caps count.
 */
async function openLedger(config: CoreConfig, ledger: LedgerKind): Promise<QuotaStore | undefined> {
  const dir = ledgerDir(config.spend.dataDir, ledger);
  if (!config.redis && !hasFileLedger(dir)) return undefined;
  return openQuotaStore({ redis: config.redis, dataDir: config.spend.dataDir, ledger, usageRetentionDays: config.spend.usageRetentionDays });
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
    const day = r.day;
    const list = groups.get(day);
    if (list) list.push(r);
    else groups.set(day, [r]);
  }
  return [...groups].map(([key, list]) => sumUsage(list, key));
}

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
    case 'reserved_usd':
      return r.reservedUsd === undefined ? '' : String(r.reservedUsd);
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
