import { z } from 'zod';
import type { JobDetails, UsageQuery, UsageRecord } from './types.js';

/** Default `PICTOR_USAGE_RETENTION_DAYS`: a little over a year, so this month can be compared with the same month last year. */
export const DEFAULT_USAGE_RETENTION_DAYS = 400;

export const JobDetailsSchema = z.object({
  operation: z.enum(['generate', 'edit']),
  n: z.number().int().positive(),
  size: z.string(),
  quality: z.string(),
  prompt: z.string().optional(),
});

/** One line of `usage.jsonl` / one entry of the Redis stream: a record, read back tolerantly (unknown fields are dropped). */
export const UsageRecordSchema = z.object({
  jobId: z.string(),
  time: z.number(),
  day: z.string(),
  surface: z.string(),
  userKey: z.string(),
  scopeKey: z.string(),
  operation: z.enum(['generate', 'edit']).optional(),
  n: z.number().optional(),
  size: z.string().optional(),
  quality: z.string().optional(),
  costUsd: z.number(),
  // Records written before `table` and `uncertain` existed said `actual` for a settle.
  basis: z.enum(['actual', 'table', 'estimate', 'uncertain']).transform((b) => (b === 'actual' ? 'table' : b)),
  reservedUsd: z.number().optional(),
  requestId: z.string().optional(),
  prompt: z.string().optional(),
});

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
  userKey: string;
  scopeKey: string;
  job: JobDetails | undefined;
  costUsd: number;
  basis: UsageRecord['basis'];
  reservedUsd?: number | undefined;
  requestId?: string | undefined;
}): UsageRecord {
  const { job } = input;
  return {
    jobId: input.jobId,
    time: input.time,
    day: input.day,
    surface: surfaceOf(input.userKey),
    userKey: input.userKey,
    scopeKey: input.scopeKey,
    ...(job && { operation: job.operation, n: job.n, size: job.size, quality: job.quality }),
    ...(job?.prompt !== undefined && { prompt: job.prompt }),
    costUsd: input.costUsd,
    basis: input.basis,
    ...(input.reservedUsd !== undefined && { reservedUsd: input.reservedUsd }),
    ...(input.requestId !== undefined && { requestId: input.requestId }),
  };
}

export function matchesQuery(record: UsageRecord, query: UsageQuery): boolean {
  if (query.since !== undefined && record.time < query.since) return false;
  if (query.until !== undefined && record.time >= query.until) return false;
  if (query.userKey !== undefined && record.userKey !== query.userKey) return false;
  if (query.scopeKey !== undefined && record.scopeKey !== query.scopeKey) return false;
  return true;
}

/**
 * Records in time order with one per job: when a job has two (its settle was
 * recorded, then the process died before the ledger said so, and the job was
 * settled again at its estimate), the later one is what the ledger counted.
 */
export function latestPerJob(records: Iterable<UsageRecord>): UsageRecord[] {
  const byJob = new Map<string, UsageRecord>();
  for (const record of records) {
    byJob.delete(record.jobId);
    byJob.set(record.jobId, record);
  }
  return [...byJob.values()].sort((a, b) => a.time - b.time);
}
