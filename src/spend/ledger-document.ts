import { z } from 'zod';
import { evaluate, exceedsReservation, keysOfJob, periodKey, roundToNanoUsd, toNanos, type CapPeriod } from './rules.js';
import type { ReconcileReport, ReserveInput, SettleInfo, SpendRefusal, UsageRecord } from './types.js';
import { JobDetailsSchema, usageRecord } from './usage-records.js';
import { utcDayBefore, utcMonthBefore } from './utc-period.js';

/**
 * The ledger as one document (the file store's JSON file) and the pure steps on
 * it: the same steps as the Redis ledger's scripts (`redis-ledger-scripts.ts`).
 * The rules themselves are the rulebook's (`rules.ts`); these keep the numbers.
 */

const DAY_MS = 24 * 60 * 60_000;

const ReservationSchema = z.object({
  userKey: z.string(),
  scopeKey: z.string(),
  usd: z.number().nonnegative(),
  /** The UTC day and month the amount counts for, settled or not: those it was reserved in. */
  day: z.string(),
  month: z.string(),
  /** When it was made (ms). */
  at: z.number(),
  /** The process that holds it (see `owners`). */
  owner: z.string(),
  /** Its request may have reached the service: if its process dies, it is charged at its estimate. */
  sent: z.boolean(),
  /** What the job is, for its usage record. */
  job: JobDetailsSchema.optional(),
});

const OwnerSchema = z.object({ pid: z.number(), host: z.string(), renewedAt: z.number() });

const UncertainSchema = z.object({ userKey: z.string(), scopeKey: z.string(), usd: z.number(), day: z.string(), at: z.number() });

export const LedgerV2Schema = z.object({
  version: z.literal(2),
  /** USD settled per UTC day (`YYYY-MM-DD`) and per UTC month (`YYYY-MM`), per user, scope or `account` key. */
  spent: z.record(z.string(), z.record(z.string(), z.number())),
  reservations: z.record(z.string(), ReservationSchema),
  owners: z.record(z.string(), OwnerSchema),
  /** Jobs charged at their estimate because their process died after sending them: the real cost is unknown. */
  uncertain: z.record(z.string(), UncertainSchema),
  /** When each user last had a job reserved (ms), for the cooldown. */
  lastJobAt: z.record(z.string(), z.number()),
});

/** The first format (daily spending, reservations with a time to live); read and upgraded. */
export const LedgerV1Schema = z.object({
  version: z.literal(1),
  spent: z.record(z.string(), z.record(z.string(), z.number())),
  reservations: z.record(z.string(), z.object({ userKey: z.string(), scopeKey: z.string(), usd: z.number(), day: z.string(), at: z.number() })),
  lastJobAt: z.record(z.string(), z.number()),
});

export type Ledger = z.output<typeof LedgerV2Schema>;
export type Reservation = z.output<typeof ReservationSchema>;
export type LedgerOwner = z.output<typeof OwnerSchema>;

export const emptyLedger = (): Ledger => ({ version: 2, spent: {}, reservations: {}, owners: {}, uncertain: {}, lastJobAt: {} });

/** A ledger document read back: the current format, or the first one upgraded; undefined when it is neither. */
export function parseLedger(json: unknown): { ok: true; ledger: Ledger } | { ok: false; cause: unknown } {
  const v2 = LedgerV2Schema.safeParse(json);
  if (v2.success) return { ok: true, ledger: v2.data };
  const v1 = LedgerV1Schema.safeParse(json);
  if (v1.success) return { ok: true, ledger: upgrade(v1.data) };
  return { ok: false, cause: v2.error };
}

/** Settled plus reserved under `key` in the period of `now`. Reservations of dead processes count until they are reconciled. */
export function usedIn(ledger: Ledger, key: string, period: CapPeriod, now: number): number {
  const current = periodKey(period, now);
  let used = ledger.spent[current]?.[key] ?? 0;
  for (const r of Object.values(ledger.reservations)) {
    if (r[period] === current && keysOfJob(r.userKey, r.scopeKey).includes(key)) used += r.usd;
  }
  return roundToNanoUsd(used);
}

/** The rulebook's answer for a job against this ledger. */
export function checkIn(ledger: Ledger, input: Omit<ReserveInput, 'jobId'>): SpendRefusal | undefined {
  const { userKey, now } = input;
  return evaluate(
    {
      activeJobsOfUser: Object.values(ledger.reservations).filter((r) => r.userKey === userKey).length,
      lastJobAt: ledger.lastJobAt[userKey],
      used: (key, period) => usedIn(ledger, key, period, now),
    },
    input,
  );
}

/** Adds what a job cost to the day and month it was reserved in, for its user, its scope and the account. */
export function chargeIn(ledger: Ledger, r: Reservation, usd: number): void {
  for (const period of [r.day, r.month]) {
    const totals = (ledger.spent[period] ??= {});
    for (const key of keysOfJob(r.userKey, r.scopeKey)) totals[key] = roundToNanoUsd((totals[key] ?? 0) + usd);
  }
}

/** The usage record of a reservation ended at `costUsd`. */
export function recordOf(
  jobId: string,
  r: Reservation,
  costUsd: number,
  basis: UsageRecord['basis'],
  now: number,
  requestId: string | undefined,
): UsageRecord {
  return usageRecord({
    jobId,
    time: now,
    day: r.day,
    month: r.month,
    userKey: r.userKey,
    scopeKey: r.scopeKey,
    job: r.job,
    costUsd,
    basis,
    requestId,
    ...(exceedsReservation(r, costUsd) && { reservedUsd: r.usd }),
  });
}

/** Drops days and months older than the kept ones, old uncertain marks, and cooldowns long past. */
export function pruneIn(ledger: Ledger, now: number, keepDays: number): void {
  const oldestDay = utcDayBefore(now, keepDays - 1);
  const oldestMonth = utcMonthBefore(now, 1);
  for (const period of Object.keys(ledger.spent)) {
    if (period.length === 7 ? period < oldestMonth : period < oldestDay) delete ledger.spent[period];
  }
  const forgetBefore = now - keepDays * DAY_MS;
  for (const [jobId, u] of Object.entries(ledger.uncertain)) if (u.at < forgetBefore) delete ledger.uncertain[jobId];
  for (const [key, at] of Object.entries(ledger.lastJobAt)) if (at < forgetBefore) delete ledger.lastJobAt[key];
}

/** Version 1 had daily totals and reservations with a time to live: they become reservations of a gone process. */
function upgrade(v1: z.output<typeof LedgerV1Schema>): Ledger {
  const ledger = emptyLedger();
  ledger.lastJobAt = v1.lastJobAt;
  for (const [day, totals] of Object.entries(v1.spent)) {
    ledger.spent[day] = { ...totals };
    const month = (ledger.spent[day.slice(0, 7)] ??= {});
    for (const [key, usd] of Object.entries(totals)) month[key] = roundToNanoUsd((month[key] ?? 0) + usd);
  }
  for (const [jobId, r] of Object.entries(v1.reservations)) {
    // Whether it was sent is unknown: it is charged at its estimate when reconciled, the safe side of a cap.
    ledger.reservations[jobId] = { ...r, month: r.day.slice(0, 7), owner: 'version-1', sent: true };
  }
  return ledger;
}

/**
 * Reserves a job's estimate for `owner` if every limit passes (the rulebook's answer otherwise), as the Redis
 * ledger's `reserve` script does. Throws, changing nothing, for a bad amount or a job reserved already.
 */
export function reserveIn(ledger: Ledger, input: ReserveInput, owner: string, keepDays: number): SpendRefusal | undefined {
  const { jobId, userKey, scopeKey, estimateUsd, now } = input;
  toNanos('estimateUsd', estimateUsd);
  if (ledger.reservations[jobId]) throw new Error(`job ${jobId} already has a reservation`);
  pruneIn(ledger, now, keepDays);
  const refusal = checkIn(ledger, input);
  if (refusal) return refusal;
  const usd = roundToNanoUsd(estimateUsd);
  ledger.reservations[jobId] = { userKey, scopeKey, usd, day: periodKey('day', now), month: periodKey('month', now), at: now, owner, sent: false, ...(input.job && { job: input.job }) };
  ledger.lastJobAt[userKey] = now;
  return undefined;
}

/** Ends a reservation at what the job cost, and answers its usage record; undefined when it had ended already. */
export function settleIn(ledger: Ledger, jobId: string, actualUsd: number, info: SettleInfo, now: number): UsageRecord | undefined {
  const reservation = ledger.reservations[jobId];
  if (!reservation) return undefined;
  delete ledger.reservations[jobId];
  chargeIn(ledger, reservation, actualUsd);
  return recordOf(jobId, reservation, roundToNanoUsd(actualUsd), info.basis ?? 'table', now, info.requestId);
}

/**
 * Ends the reservations of processes that are gone (`alive` says which are not): sent ones charged at their
 * estimate and marked uncertain (with their usage record), the others released; forgets the gone processes.
 */
export function reconcileIn(ledger: Ledger, alive: (owner: string) => boolean, now: number): { report: ReconcileReport; usage: UsageRecord[] } {
  const report: ReconcileReport = { released: [], settledAtEstimate: [], chargedUsd: 0 };
  const usage: UsageRecord[] = [];
  for (const [jobId, r] of Object.entries(ledger.reservations)) {
    if (alive(r.owner)) continue;
    delete ledger.reservations[jobId];
    if (!r.sent) {
      report.released.push(jobId);
      continue;
    }
    chargeIn(ledger, r, r.usd);
    ledger.uncertain[jobId] = { userKey: r.userKey, scopeKey: r.scopeKey, usd: r.usd, day: r.day, at: now };
    usage.push(recordOf(jobId, r, r.usd, 'uncertain', now, undefined));
    report.settledAtEstimate.push(jobId);
    report.chargedUsd = roundToNanoUsd(report.chargedUsd + r.usd);
  }
  for (const owner of Object.keys(ledger.owners)) if (!alive(owner)) delete ledger.owners[owner];
  return { report, usage };
}
