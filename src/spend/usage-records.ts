import { z } from 'zod';
import type { JobDetails, UsageQuery, UsageRecord } from './types.js';
import { DAY_MS, utcDay } from './utc-period.js';

/** Default `PICTOR_USAGE_RETENTION_DAYS`: a little over a year, so this month can be compared with the same month last year. */
export const DEFAULT_USAGE_RETENTION_DAYS = 400;

export const JobDetailsSchema = z.object({
  operation: z.enum(['generate', 'edit']),
  n: z.number().int().positive(),
  size: z.string(),
  quality: z.string(),
  prompt: z.string().optional(),
});

/**
 * One line of a usage day file (`usage-days.ts`) / one entry of the Redis stream: a record, read
 * back tolerantly (unknown fields are dropped). Records of older versions have
 * no `month` (it is the day's), `basis: "actual"` (priced from the result:
 * `table`) and `basis: "estimate"` for what a reconcile charged (`uncertain`).
 */
export const UsageRecordSchema = z
  .object({
  jobId: z.string(),
  time: z.number(),
  day: z.string(),
  month: z.string().optional(),
  surface: z.string(),
  userKey: z.string(),
  scopeKey: z.string(),
  operation: z.enum(['generate', 'edit']).optional(),
  n: z.number().optional(),
  size: z.string().optional(),
  quality: z.string().optional(),
  costUsd: z.number(),
  basis: z.enum(['table', 'estimate', 'uncertain', 'actual']),
  reservedUsd: z.number().optional(),
  requestId: z.string().optional(),
  prompt: z.string().optional(),
  outcome: z.enum(['completed', 'failed', 'cancelled', 'interrupted']).optional(),
  reservedAt: z.number().optional(),
  images: z.number().optional(),
})
  .transform(({ month, basis, ...rest }): UsageRecord => ({
    ...rest,
    month: month ?? rest.day.slice(0, 7),
    basis: readBasis(basis, month !== undefined),
  }));

/** A stored basis as today's: `actual` (older versions) is `table`; `estimate` in a record without a month (older versions) is `uncertain`. */
export function readBasis(basis: string, hasMonth: boolean): UsageRecord['basis'] {
  if (basis === 'actual') return 'table';
  if (basis === 'estimate') return hasMonth ? 'estimate' : 'uncertain';
  return basis === 'uncertain' ? 'uncertain' : 'table';
}

/** The surface a user key belongs to: what comes before its first `:` (`discord:123` → `discord`). */
export function surfaceOf(userKey: string): string {
  const colon = userKey.indexOf(':');
  return colon > 0 ? userKey.slice(0, colon) : userKey;
}

/** The record of a job settled at `costUsd`. */
export function usageRecord(input: {
  jobId: string;
  time: number;
  day: string;
  month: string;
  userKey: string;
  scopeKey: string;
  job: JobDetails | undefined;
  costUsd: number;
  basis: UsageRecord['basis'];
  requestId?: string | undefined;
  reservedUsd?: number | undefined;
  /** How it ended; a record charged by a reconcile (basis `uncertain`) is `interrupted`. */
  outcome?: UsageRecord['outcome'];
  reservedAt?: number | undefined;
  images?: number | undefined;
  /** What the service reported making: recorded in place of the job's size and quality asked. */
  size?: string | undefined;
  quality?: string | undefined;
}): UsageRecord {
  const outcome = input.basis === 'uncertain' ? 'interrupted' : input.outcome;
  const { job } = input;
  return {
    jobId: input.jobId,
    time: input.time,
    day: input.day,
    month: input.month,
    surface: surfaceOf(input.userKey),
    userKey: input.userKey,
    scopeKey: input.scopeKey,
    ...(job && { operation: job.operation, n: job.n, size: input.size ?? job.size, quality: input.quality ?? job.quality }),
    ...(job?.prompt !== undefined && { prompt: job.prompt }),
    costUsd: input.costUsd,
    basis: input.basis,
    ...(input.reservedUsd !== undefined && { reservedUsd: input.reservedUsd }),
    ...(input.requestId !== undefined && { requestId: input.requestId }),
    ...(outcome !== undefined && { outcome }),
    ...(input.reservedAt !== undefined && { reservedAt: input.reservedAt }),
    ...(input.images !== undefined && outcome !== 'interrupted' && { images: input.images }),
  };
}

/** Whether a record is one the query asks for: judged by the UTC day its job counts in (reserved), not when it was settled. */
export function matchesQuery(record: UsageRecord, query: UsageQuery): boolean {
  if (query.since !== undefined && record.day < utcDay(query.since)) return false;
  if (query.until !== undefined && Date.parse(`${record.day}T00:00:00Z`) >= query.until) return false;
  if (query.userKey !== undefined && record.userKey !== query.userKey) return false;
  if (query.scopeKey !== undefined && record.scopeKey !== query.scopeKey) return false;
  return true;
}

/**
 * Records in time order with one per job: when a job has two (its settle was tried again after a ledger write that
 * failed, or a ledger put back from its copy was behind: records of older versions also kept the estimate a reconcile
 * charged beside the settle its process had recorded), the later one is what the ledger counted.
 */
export function latestPerJob(records: Iterable<UsageRecord>): UsageRecord[] {
  return [...latestByJob(records).values()].sort((a, b) => a.time - b.time);
}

/** Each job's latest record (see `latestPerJob`) by its job id, in the order their latest records were written. */
export function latestByJob(records: Iterable<UsageRecord>): Map<string, UsageRecord> {
  const byJob = new Map<string, UsageRecord>();
  for (const record of records) {
    byJob.delete(record.jobId);
    byJob.set(record.jobId, record);
  }
  return byJob;
}

/** What `usage` answers, on either store: each job's latest record (see `latestPerJob`), those the query matches. */
export function usageMatching(records: Iterable<UsageRecord>, query: UsageQuery): UsageRecord[] {
  return latestPerJob(records).filter((record) => matchesQuery(record, query));
}

/** A record (or a job's details) without its prompt. */
export function withoutPromptOf<T extends { prompt?: string | undefined }>(record: T): T {
  const { prompt: _prompt, ...rest } = record;
  return rest as T;
}

/**
 * The times a damaged line of the usage day files may have been written. It has no trusted time of its own, but records are
 * appended in time order: it was written after the good line before it (`after`: its time; none at the file's start)
 * and before the good line after it (`before`; none yet at the file's end).
 */
export interface DamagedLine {
  after?: number | undefined;
  before?: number | undefined;
}

/** The damaged lines among `records` (in file order), each given as how many of them were before it in the file. */
export function damagedLinesAt(records: readonly UsageRecord[], positions: readonly number[]): DamagedLine[] {
  return positions.map((at) => ({ after: records[at - 1]?.time, before: records[at]?.time }));
}

/**
 * How many damaged lines may hold a record of [since, until) (ms): those the times they may have been written meet
 * (a line between two records of older days is not counted in a later range, nor one between two newer ones in an
 * earlier range). A record goes by its job's day, and its line is written when the job is settled, up to a day later
 * (the slack of the tail read): a line written within a day after `until` may still be of the range. The one rule of
 * `pictor usage` and the console's note.
 */
export function damagedWithin(lines: readonly DamagedLine[], since: number | undefined, until: number | undefined): number {
  return lines.filter((line) => (until === undefined || line.after === undefined || line.after < until + DAY_MS) && (since === undefined || line.before === undefined || line.before >= since)).length;
}
