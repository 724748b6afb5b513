import { createHash, randomInt } from 'node:crypto';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { open as openFile, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { syncFolder, syncFolderHolding, writeAllAndSync, writeFileAtomically } from '../core/atomic-file.js';
import { safeJson } from '../core/safe-json.js';
import type { UsageRecord } from './types.js';
import { UsageRecordSchema, withoutPromptOf } from './usage-records.js';
import { DAY_MS, utcDay } from './utc-period.js';

/**
 * The usage records of a file ledger, in its `usage/` folder: `<YYYY-MM-DD>.jsonl`, one record a line (never a
 * prompt), and with `PICTOR_USAGE_PROMPTS=1` the prompts beside them, `prompts/<YYYY-MM-DD>/<member>.jsonl` (one file
 * per member and day, `<member>` a digest of their user key). Appended only, under the ledger's lock: nothing is ever
 * rewritten. A forget removes the member's prompt files; the daily clean-up removes whole days past retention.
 */
const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const PROMPTS = 'prompts';
const FEED_EPOCH = 'feed-epoch';

/** The usage records of lines read, and where the damaged lines were among them (`damagedLinesAt`). */
export interface ParsedUsage {
  records: UsageRecord[];
  damaged: number[];
}

/** A member's prompt file name: an unsalted digest of their user key (it hides the id from a listing, not from one who knows it). */
export function memberFileOf(userKey: string): string {
  return `${createHash('sha256').update(userKey).digest('hex').slice(0, 32)}.jsonl`;
}

/**
 * The days of the day files in `folder`, oldest first (none when it does not exist). The calls of a commit are made at
 * once, not awaited (but for its fsyncs): each awaited call would wait a turn of a busy event loop.
 */
export function daysIn(folder: string): string[] {
  return namesIn(folder).flatMap((name) => DAY_FILE.exec(name)?.[1] ?? []).sort();
}

function namesIn(folder: string): string[] {
  try {
    return readdirSync(folder);
  } catch (error) {
    return undefinedIfMissing(error as NodeJS.ErrnoException) ?? [];
  }
}

/** The day file of `day`. */
export const dayFileOf = (folder: string, day: string): string => join(folder, `${day}.jsonl`);

/**
 * Appends records (under the ledger's lock) to the day file of the UTC day of `now`, or of the newest day file when it
 * is at most a day ahead (another clock a little ahead): the files read in name order are the order written. A day
 * file further ahead (a clock that once jumped) is not followed, or every later record would go to a day the clean-up
 * drops only that far on; an append to a day before the newest raises the feed epoch (`feedEpochIn`). Prompts go
 * first to their members' files of that day; the record says it has one (`"prompted":1`).
 */
export async function appendUsage(folder: string, now: number, records: readonly UsageRecord[]): Promise<void> {
  if (records.length === 0) return;
  await makeFolder(folder);
  // A folder without one (new, or emptied): its epoch starts at a random value before any record is in it.
  if (!existsSync(join(folder, FEED_EPOCH))) await raiseFeedEpoch(folder);
  const [newest, today] = [daysIn(folder).at(-1), utcDay(now)];
  const day = newest !== undefined && newest > today && newest <= utcDay(now + DAY_MS) ? newest : today;
  await inBatches(await promptFilesOf(join(folder, PROMPTS, day), records), ([path, text]) => appendLines(path, text, { newName: 'synced' }));
  await appendLines(dayFileOf(folder, day), records.map(recordLine).join(''), { newName: 'synced' });
  // Raised once written: a reader whose cursor is past this day reads again, and misses none of them.
  if (newest !== undefined && day < newest) await raiseFeedEpoch(folder);
}

const recordLine = (record: UsageRecord): string => `${JSON.stringify(record.prompt === undefined ? record : { ...withoutPromptOf(record), prompted: 1 })}\n`;

/** Each member's file in the day's prompt folder `dir` (made) and the lines of their prompts of `records`. */
async function promptFilesOf(dir: string, records: readonly UsageRecord[]): Promise<[string, string][]> {
  const byMember = new Map<string, string>();
  for (const { jobId, userKey, prompt } of records) {
    if (prompt === undefined) continue;
    const path = join(dir, memberFileOf(userKey));
    byMember.set(path, `${byMember.get(path) ?? ''}${JSON.stringify({ id: jobId, prompt })}\n`);
  }
  if (byMember.size > 0) await makeFolder(dir);
  return [...byMember];
}

/** Makes a folder (0700) and those above it that are missing, each named in its parent durably (its parent synced). */
async function makeFolder(path: string): Promise<void> {
  const first = mkdirSync(path, { recursive: true, mode: 0o700 });
  if (first === undefined) return;
  for (let made = path; ; made = dirname(made)) {
    await syncFolderHolding(made);
    if (made === first) return;
  }
}

/** `step` for each item, at most 64 at once: their fsyncs overlap. */
async function inBatches<T>(items: readonly T[], step: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await step(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(64, items.length) }, worker));
}

/**
 * Appends whole lines to a file (0600) and syncs it; a line a crash cut short is left as it is (skipped when read), the
 * next starts a line of its own. A file it made is named durably too (`newName: 'synced'`: its folder synced), unless
 * the caller syncs its folders once for many files (`'caller'`, the move).
 */
async function appendLines(path: string, text: string, { newName }: { newName: 'synced' | 'caller' }): Promise<void> {
  const fd = openSync(path, 'a+', 0o600);
  try {
    const { size } = fstatSync(fd);
    const last = Buffer.alloc(1);
    const cut = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a;
    await writeAllAndSync(fd, `${cut ? '\n' : ''}${text}`);
    if (size === 0 && newName === 'synced') await syncFolderHolding(path);
  } catch (error) {
    // A write through the descriptor names no file: name it, so a full disk is told of the file.
    if (error instanceof Error && (error as NodeJS.ErrnoException).path === undefined) (error as NodeJS.ErrnoException).path = path;
    throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * The records of the day files from `fromDay` on (all without it), in the order written, and the damaged lines among
 * them. The day file before `fromDay` is read too: its last record is the time a damaged line after it was written
 * after (`damagedLinesAt`). With `prompts`, each record that has one gets it back from its member's file (none once forgotten).
 */
export async function readUsage(folder: string, fromDay?: string, prompts = false): Promise<ParsedUsage> {
  const days = daysIn(folder);
  const first = fromDay === undefined ? 0 : Math.max(0, days.findIndex((day) => day >= fromDay) - 1);
  const read = fromDay !== undefined && days.every((day) => day < fromDay) ? days.slice(-1) : days.slice(first);
  return (await readFrom(folder, read.map((day) => ({ day, at: 0 })), prompts)).parsed;
}

/**
 * The records of day files, each from its byte offset, in the order written; where the read ends (the last file, after
 * its last whole line: a line being written is left for the next read). A day file before the last one is complete
 * (an append to it raises the feed epoch, and a reader reads again): a line a crash cut short at its end is a damaged line.
 */
export async function readFrom(folder: string, files: readonly { day: string; at: number }[], prompts: boolean): Promise<{ parsed: ParsedUsage; end: { day: string; at: number } | undefined }> {
  const parsed: ParsedUsage = { records: [], damaged: [] };
  let end: { day: string; at: number } | undefined;
  for (const [i, { day, at }] of files.entries()) {
    const bytes = await readBytes(dayFileOf(folder, day), at);
    const last = i === files.length - 1;
    const whole = last ? bytes.lastIndexOf(0x0a) + 1 : bytes.length;
    const text = bytes.toString('utf8', 0, whole);
    const lines = parseLines(last || text.endsWith('\n') || text === '' ? text : `${text}\n`);
    if (prompts) await joinPrompts(join(folder, PROMPTS, day), lines);
    parsed.damaged.push(...lines.damaged.map((n) => n + parsed.records.length));
    parsed.records.push(...lines.records);
    end = { day, at: at + whole };
  }
  return { parsed, end };
}

/** A file's bytes from `from` on (none when it is gone: a day the clean-up dropped meanwhile). */
async function readBytes(path: string, from: number): Promise<Buffer> {
  const handle = await openFile(path, 'r').catch(undefinedIfMissing);
  if (!handle) return Buffer.alloc(0);
  try {
    const { size } = await handle.stat();
    const length = Math.max(0, size - from);
    const { buffer, bytesRead } = await handle.read(Buffer.allocUnsafe(length), 0, length, from);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** A day's parsed lines, with which records say they have a prompt. */
interface ParsedLines extends ParsedUsage {
  prompted: UsageRecord[];
}

/**
 * The records of lines of a day file: the one place its lines are counted. A line that is no record is skipped and
 * kept as damaged, by its place among the records (a line a crash cut short, or one damaged since), but for a blank
 * one and the text after the last newline: a line still being written.
 */
function parseLines(text: string): ParsedLines {
  const lines = text.split('\n');
  const parsed: ParsedLines = { records: [], damaged: [], prompted: [] };
  lines.forEach((line, i) => {
    const json = safeJson<Record<string, unknown>>(line);
    const record = UsageRecordSchema.safeParse(json).data;
    if (record) parsed.records.push(record);
    if (record && json?.prompted === 1) parsed.prompted.push(record);
    else if (!record && i < lines.length - 1 && line.trim() !== '') parsed.damaged.push(parsed.records.length);
  });
  return parsed;
}

/** Gives the records that have a prompt theirs, from their members' files of the day (`dir`); a file gone (forgotten) gives none. */
async function joinPrompts(dir: string, lines: ParsedLines): Promise<void> {
  const byMember = new Map<string, Map<string, string>>();
  for (const record of lines.prompted) {
    const name = memberFileOf(record.userKey);
    if (!byMember.has(name)) byMember.set(name, await promptsIn(join(dir, name)));
    const prompt = byMember.get(name)!.get(record.jobId);
    if (prompt !== undefined) record.prompt = prompt;
  }
}

/** A member's prompts of a day by job id (the last line of a job wins); none when the file is gone. */
async function promptsIn(path: string): Promise<Map<string, string>> {
  const text = (await readFile(path, 'utf8').catch(undefinedIfMissing)) ?? '';
  const prompts = new Map<string, string>();
  for (const line of text.split('\n')) {
    const entry = safeJson<{ id?: unknown; prompt?: unknown }>(line);
    if (typeof entry?.id === 'string' && typeof entry.prompt === 'string') prompts.set(entry.id, entry.prompt);
  }
  return prompts;
}

/**
 * Removes a member's prompt file of every day (under the lock): their prompts are then in no file of the folder. The
 * feed epoch goes up each time, files found or not (a forget that stopped after its removals is asked again): a reader
 * that kept records (the console) reads them again.
 */
export async function forgetPromptsIn(folder: string, userKey: string): Promise<void> {
  const name = memberFileOf(userKey);
  // No folder: no record yet, nothing a reader kept.
  if (!existsSync(folder)) return;
  for (const day of namesIn(join(folder, PROMPTS))) await rm(join(folder, PROMPTS, day, name), { force: true });
  // Raised once they are gone: a reader that read them sees an epoch it did not read at, and reads again.
  await raiseFeedEpoch(folder);
}

/**
 * The feed epoch: raised by each forget, each append to a day before the newest and each clean-up that removes the
 * newest day file, the changes a reader that goes on from its cursor (in the newest day file) would not see (that file
 * may be made again under it). A cursor holds the epoch it was read at. A missing file reads 0; one made (a new folder, or
 * one emptied) starts at a random value, so a cursor read before the folder was emptied never matches it.
 */
export function feedEpochIn(folder: string): number {
  try {
    return Number(readFileSync(join(folder, FEED_EPOCH), 'utf8')) || 0;
  } catch {
    return 0;
  }
}

const raiseFeedEpoch = (folder: string): Promise<void> => {
  const epoch = feedEpochIn(folder);
  return writeFileAtomically(join(folder, FEED_EPOCH), String(epoch === 0 ? randomInt(1, 2 ** 47) : epoch + 1), { inline: true });
};

/**
 * Removes the day files and prompt folders of days before `firstKept` (under the lock): whole days only. The feed
 * epoch goes up when the newest day file is among them (a clock days ahead): a reader's cursor may be in it, and the
 * file may be made again under that cursor. An older day file removed leaves a cursor in it nothing to miss: a record
 * written to that day again raises the epoch itself (a day before the newest), and the reader goes on at the next day.
 */
export async function dropDaysBefore(folder: string, firstKept: string): Promise<void> {
  const all = daysIn(folder);
  const days = all.filter((day) => day < firstKept);
  const newestGoes = days.length > 0 && days.at(-1) === all.at(-1);
  // Raised first too: an epoch that cannot be written removes nothing (a reader would miss what a file made again holds).
  if (newestGoes) await raiseFeedEpoch(folder);
  for (const day of days) rmSync(dayFileOf(folder, day), { force: true });
  for (const day of namesIn(join(folder, PROMPTS))) if (DAY.test(day) && day < firstKept) rmSync(join(folder, PROMPTS, day), { recursive: true, force: true });
  // Raised once it is gone: a reader that read it meanwhile reads every record again, and a file of that day made again is read whole.
  if (newestGoes) await raiseFeedEpoch(folder);
}

/**
 * Moves the records of `usage.jsonl` (an older version's one file, prompts inside) into the day files under the lock,
 * at every open and before every forget (an older version's process still running makes it again): each record to the
 * day of its time, its prompt to its member's file of that day, all synced, then `usage.jsonl` removed. A record whose
 * job id its day's file holds already (a move a crash stopped before that removal) is skipped. Its rewrite lines go;
 * its damaged lines (and a line a crash cut short) go, counted.
 */
export async function moveOldUsageFile(dir: string, legacyName: string, folderName: string): Promise<{ records: number; damaged: number } | undefined> {
  const [legacy, folder] = [join(dir, legacyName), join(dir, folderName)];
  const text = await readFile(legacy, 'utf8').catch(undefinedIfMissing);
  if (text === undefined) return undefined;
  const byDay = new Map<string, UsageRecord[]>();
  let damaged = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '' || /^\{"rewrite":"[0-9a-f]{16}"\}$/.test(line)) continue;
    const record = UsageRecordSchema.safeParse(safeJson(line)).data;
    if (record) (byDay.get(utcDay(record.time)) ?? byDay.set(utcDay(record.time), []).get(utcDay(record.time))!).push(record);
    else damaged++;
  }
  await makeFolder(folder);
  const days = await moveRecordsTo(folder, byDay);
  // Raised whenever the file held a record: a reader's cursor may be past the days it added to, and a move a crash
  // stopped after its appends (its records then skipped) raises it on the next.
  if (byDay.size > 0) await raiseFeedEpoch(folder);
  await rm(legacy);
  await syncFolderHolding(legacy);
  return { records: days.reduce((n, [, list]) => n + list.length, 0), damaged };
}

/** What tells a record from another, read back through the schema (its fields in one order), its prompt aside. */
const sameRecordKey = (record: UsageRecord): string => JSON.stringify(withoutPromptOf(record));

/**
 * Appends records (prompts inside) to the day files named, their prompts to their members' files of that day, all
 * synced; a record its day's file holds already, every field the same (a move a crash stopped before its source
 * was removed), is skipped; one of the same job that differs (its real charge beside the estimate a reconcile settled it
 * at) is kept. The days written to, with their records.
 */
async function moveRecordsTo(folder: string, byDay: Map<string, UsageRecord[]>): Promise<[string, UsageRecord[]][]> {
  for (const [day, list] of byDay) {
    const held = new Set((await readFrom(folder, [{ day, at: 0 }], false)).parsed.records.map(sameRecordKey));
    byDay.set(day, list.filter((r) => !held.has(sameRecordKey(r))));
  }
  // Prompts first, their folders synced, then the records that say they have one.
  const promptFiles = (await Promise.all([...byDay].map(([day, list]) => promptFilesOf(join(folder, PROMPTS, day), list)))).flat();
  await inBatches(promptFiles, ([path, text]) => appendLines(path, text, { newName: 'caller' }));
  for (const day of byDay.keys()) if (existsSync(join(folder, PROMPTS, day))) await syncFolder(join(folder, PROMPTS, day));
  const days = [...byDay].filter(([, list]) => list.length > 0);
  await inBatches(days, ([day, list]) => appendLines(dayFileOf(folder, day), list.map(recordLine).join(''), { newName: 'caller' }));
  await syncFolder(folder);
  return days;
}

/** undefined for a file that does not exist; any other error is thrown again. */
export function undefinedIfMissing(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}
