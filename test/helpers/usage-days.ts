import { appendFile, mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { safeJson } from '../../src/core/safe-json.js';
import { utcDay } from '../../src/spend/utc-period.js';

/**
 * Writes lines of usage records into a file ledger's `usage/` folder as the store lays them out: each in the day file
 * of its record's time, never an older day than the line before (a line that is no record goes with the one before).
 */
export async function writeUsageDays(dir: string, text: string, folderName = 'usage'): Promise<void> {
  const folder = join(dir, folderName);
  await mkdir(folder, { recursive: true });
  let day = '';
  const byDay = new Map<string, string>();
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const time = (safeJson(line) as { time?: unknown } | undefined)?.time;
    if (typeof time === 'number' && utcDay(time) > day) day = utcDay(time);
    const at = day || '2000-01-01';
    byDay.set(at, `${byDay.get(at) ?? ''}${line}${i < lines.length - 1 ? '\n' : ''}`);
  });
  for (const [at, lines] of byDay) if (lines !== '') await appendFile(join(folder, `${at}.jsonl`), lines);
}

/** The newest day file of a file ledger's `usage/` folder. */
export async function newestUsageFile(dir: string, folderName = 'usage'): Promise<string> {
  const days = (await readdir(join(dir, folderName))).filter((name) => name.endsWith('.jsonl')).sort();
  return join(dir, folderName, days.at(-1)!);
}

/** Every day file's text, in name order. */
export async function usageText(dir: string): Promise<string> {
  const folder = join(dir, 'usage');
  const days = (await readdir(folder).catch(() => [])).filter((name) => name.endsWith('.jsonl')).sort();
  return (await Promise.all(days.map((name) => readFile(join(folder, name), 'utf8')))).join('');
}

