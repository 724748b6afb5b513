import { z } from 'zod';
import { BREAKER_BUCKET_MS, breakerApplies, historyHours, hourBucket, inWindow, recentBucket, type BreakerReading } from './breaker.js';
import { cutOffCostUsd } from './charge-rules.js';
import { isProcessAlive, THIS_HOST } from './file-lock.js';
import { isOpenHere } from './store-process.js';
import { countsUnder, evaluate, exceedsReservation, keysOfJob, NANOS_PER_USD, periodKey, roundToNanoUsd, toNanos, type CapPeriod } from './rules.js';
import type { ActiveJob, BreakerState, ChargeBasis, ReconcileReport, ReserveInput, SettleInfo, SpendRefusal, UsageRecord } from './types.js';
import { JobDetailsSchema, latestByJob, latestPerJob, usageRecord } from './usage-records.js';
import { DAY_MS, utcDayBefore, utcMonthBefore } from './utc-period.js';

/**
 * The ledger as one document (the file store's JSON file) and the pure steps on
 * it: the same steps as the Redis ledger's scripts (`redis-ledger-scripts.ts`).
 * The rules themselves are the rulebook's (`rules.ts`); these keep the numbers.
 */

/** Days of refusal counts kept: enough for the console's 90-day view. */
export const REFUSAL_KEEP_DAYS = 92;

/** The oldest UTC day whose refusal counts are kept at `now`: today and the days before it, `REFUSAL_KEEP_DAYS` in all. */
export function oldestRefusalDay(now: number): string {
  return utcDayBefore(now, REFUSAL_KEEP_DAYS - 1);
}

/** The first day `refusals(sinceDay)` answers at `now`: `sinceDay`, or the oldest day kept when that is later (even before a write drops the older ones). */
export function firstRefusalDay(sinceDay: string, now: number): string {
  const oldest = oldestRefusalDay(now);
  return sinceDay > oldest ? sinceDay : oldest;
}

/**
 * An amount in USD as a ledger holds it: 0 or more, and countable (in nano-dollars a finite number). A file holding
 * another (valid JSON, but no amount this code writes) is damaged, as one cut short is: moved aside and its backup put
 * back, or refused. So is one whose amounts add up past what can be counted (`countableSums`).
 */
const UsdSchema = z.number().nonnegative().refine((usd) => Number.isFinite(usd * NANOS_PER_USD)); // zod takes only finite numbers
/** USD per key (`account`, a user, a scope) or per bucket. */
const AmountsSchema = z.record(z.string(), UsdSchema);

const ReservationSchema = z.object({
  userKey: z.string(),
  scopeKey: z.string(),
  usd: UsdSchema,
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

/** One scope's part of the breaker: its recent spend (5-minute buckets), its hourly spend (7 days), and whether it is paused. */
const BreakerScopeSchema = z.object({
  /** USD settled per 5-minute bucket (`floor(ms / 300000)`), for the last hour. */
  recent: AmountsSchema.default({}),
  /** USD settled per hour (`floor(ms / 3600000)`), for the trailing average. */
  hours: AmountsSchema.default({}),
  pausedAt: z.number().optional(),
  pausedUsd: UsdSchema.optional(),
  limitUsd: UsdSchema.optional(),
  resumedAt: z.number().optional(),
  resumedBy: z.string().optional(),
});

/** The amounts of a ledger document, either format, as far as `countableSums` adds them up. */
interface Amounts {
  spent: Record<string, Record<string, number>>;
  reservations: Record<string, { usd: number }>;
  uncertain?: Record<string, { usd: number }> | undefined;
  breaker?: Record<string, { recent: Record<string, number>; hours: Record<string, number>; pausedUsd?: number | undefined; limitUsd?: number | undefined }> | undefined;
}

/**
 * Whether every sum of the ledger's amounts can be counted: each amount can, but a few near the limit add up past it
 * (a cap's check would then fail every job). All amounts are 0 or more, so their total bounds every sum.
 */
function countableSums(doc: Amounts): boolean {
  let total = 0;
  for (const amounts of Object.values(doc.spent)) for (const usd of Object.values(amounts)) total += usd;
  for (const { usd } of [...Object.values(doc.reservations), ...Object.values(doc.uncertain ?? {})]) total += usd;
  for (const b of Object.values(doc.breaker ?? {})) {
    for (const usd of [...Object.values(b.recent), ...Object.values(b.hours), b.pausedUsd ?? 0, b.limitUsd ?? 0]) total += usd;
  }
  return Number.isFinite(total * NANOS_PER_USD);
}

const SUMS_ISSUE = { message: 'its amounts add up past what can be counted' };

const UncertainSchema = z.object({ userKey: z.string(), scopeKey: z.string(), usd: UsdSchema, day: z.string(), at: z.number() });

export const LedgerV2Schema = z.object({
  version: z.literal(2),
  /** USD settled per UTC day (`YYYY-MM-DD`) and per UTC month (`YYYY-MM`), per user, scope or `account` key. */
  spent: z.record(z.string(), AmountsSchema),
  reservations: z.record(z.string(), ReservationSchema),
  owners: z.record(z.string(), OwnerSchema),
  /** Jobs charged at their estimate because their process died after sending them: the real cost is unknown. */
  uncertain: z.record(z.string(), UncertainSchema),
  /** When each user last had a job reserved (ms), for the cooldown. */
  lastJobAt: z.record(z.string(), z.number()),
  /** The breaker's numbers and paused scopes, per scope key (absent in files written before there was a breaker). */
  breaker: z.record(z.string(), BreakerScopeSchema).optional(),
  /** Refusals counted per UTC day and code, for the console (absent in files written before). */
  refusals: z.record(z.string(), z.record(z.string(), z.number())).optional(),
}).refine(countableSums, SUMS_ISSUE);

/** The first format (daily spending, reservations with a time to live); read and upgraded. */
export const LedgerV1Schema = z
  .object({
    version: z.literal(1),
    spent: z.record(z.string(), AmountsSchema),
    reservations: z.record(z.string(), z.object({ userKey: z.string(), scopeKey: z.string(), usd: UsdSchema, day: z.string(), at: z.number() })),
    lastJobAt: z.record(z.string(), z.number()),
  })
  .refine(countableSums, SUMS_ISSUE);

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
  for (const jobId in ledger.reservations) {
    const r = ledger.reservations[jobId]!;
    if (r[period] === current && countsUnder(key, r.userKey, r.scopeKey)) used += r.usd;
  }
  return roundToNanoUsd(used);
}

/** The reservations `which` picks, counted in place. */
function countReservations(ledger: Ledger, which: (r: Reservation) => boolean): number {
  let n = 0;
  for (const jobId in ledger.reservations) if (which(ledger.reservations[jobId]!)) n++;
  return n;
}

/** The rulebook's answer for a job against this ledger. */
function checkIn(ledger: Ledger, input: Omit<ReserveInput, 'jobId'>): SpendRefusal | undefined {
  const { userKey, now } = input;
  return evaluate(
    {
      activeJobsOfUser: countReservations(ledger, (r) => r.userKey === userKey),
      lastJobAt: ledger.lastJobAt[userKey],
      used: (key, period) => usedIn(ledger, key, period, now),
      breaker: () => breakerReadingIn(ledger, input.scopeKey, now),
    },
    input,
  );
}

/** What the breaker reads of a scope: its last hour (settled, and what its running jobs reserved), its 7 days before, whether it is paused. */
export function breakerReadingIn(ledger: Ledger, scopeKey: string, now: number): BreakerReading {
  const entry = ledger.breaker?.[scopeKey];
  let windowUsd = 0;
  for (const [bucket, usd] of Object.entries(entry?.recent ?? {})) if (inWindow(Number(bucket), now)) windowUsd += usd;
  for (const jobId in ledger.reservations) if (ledger.reservations[jobId]!.scopeKey === scopeKey) windowUsd += ledger.reservations[jobId]!.usd;
  const { from, to } = historyHours(now);
  let historyUsd = 0;
  for (const [hour, usd] of Object.entries(entry?.hours ?? {})) if (Number(hour) >= from && Number(hour) < to) historyUsd += usd;
  const paused = entry?.pausedAt !== undefined ? { usd: entry.pausedUsd ?? 0, limitUsd: entry.limitUsd ?? 0 } : undefined;
  return { paused, windowUsd: roundToNanoUsd(windowUsd), historyUsd: roundToNanoUsd(historyUsd) };
}

/** Keeps a scope paused by the breaker (the job of `refusal` tripped it). */
export function pauseIn(ledger: Ledger, scopeKey: string, refusal: SpendRefusal, now: number): void {
  const entry = breakerEntry(ledger, scopeKey);
  entry.pausedAt = now;
  entry.pausedUsd = refusal.used;
  entry.limitUsd = refusal.limit;
}

/** Resumes a paused scope: its last hour counts from zero. Answers its state before, or undefined when it was not paused. */
export function resumeIn(ledger: Ledger, scopeKey: string, by: string, now: number): BreakerState | undefined {
  const entry = ledger.breaker?.[scopeKey];
  if (entry?.pausedAt === undefined) return undefined;
  const before = breakerStateOf(entry);
  delete entry.pausedAt;
  delete entry.pausedUsd;
  delete entry.limitUsd;
  entry.recent = {};
  entry.resumedAt = now;
  entry.resumedBy = by;
  return before;
}

/** The breaker's state of every scope it paused or that was resumed. */
export function breakerStatesIn(ledger: Ledger): Record<string, BreakerState> {
  const states: Record<string, BreakerState> = {};
  for (const [scopeKey, entry] of Object.entries(ledger.breaker ?? {})) {
    if (entry.pausedAt !== undefined || entry.resumedAt !== undefined) states[scopeKey] = breakerStateOf(entry);
  }
  return states;
}

function breakerStateOf(entry: z.output<typeof BreakerScopeSchema>): BreakerState {
  const { pausedAt, pausedUsd, limitUsd, resumedAt, resumedBy } = entry;
  return {
    ...(pausedAt !== undefined && { pausedAt, pausedUsd, limitUsd }),
    ...(resumedAt !== undefined && { resumedAt, resumedBy }),
  };
}

function breakerEntry(ledger: Ledger, scopeKey: string): z.output<typeof BreakerScopeSchema> {
  return ((ledger.breaker ??= {})[scopeKey] ??= { recent: {}, hours: {} });
}

/** Adds refusals to the counts of the UTC day of `now`. */
export function countRefusalsIn(ledger: Ledger, counts: Readonly<Record<string, number>>, now: number): void {
  const day = (((ledger.refusals ??= {})[periodKey('day', now)]) ??= {});
  for (const [code, n] of Object.entries(counts)) if (n > 0) day[code] = (day[code] ?? 0) + n;
}

/**
 * Adds what a job cost to the day and month it was reserved in, for its user, its scope and the account; and, for a
 * scope the breaker watches, to its spend of the moment it was charged (`now`).
 */
export function chargeIn(ledger: Ledger, r: Pick<Reservation, 'userKey' | 'scopeKey' | 'day' | 'month'>, usd: number, now: number): void {
  for (const period of [r.day, r.month]) {
    const totals = (ledger.spent[period] ??= {});
    for (const key of keysOfJob(r.userKey, r.scopeKey)) totals[key] = roundToNanoUsd((totals[key] ?? 0) + usd);
  }
  if (!breakerApplies(r.scopeKey) || !(usd > 0)) return;
  const entry = breakerEntry(ledger, r.scopeKey);
  const recent = String(recentBucket(now));
  const hour = String(hourBucket(now));
  entry.recent[recent] = roundToNanoUsd((entry.recent[recent] ?? 0) + usd);
  entry.hours[hour] = roundToNanoUsd((entry.hours[hour] ?? 0) + usd);
}

/** The basis a settle's usage record keeps: the one it gives, `table` when it gives none (`SettleInfo.basis`). Every store asks this. */
export function settledBasis(info: Pick<SettleInfo, 'basis'>): ChargeBasis {
  return info.basis ?? 'table';
}

/** The usage record of a reservation ended at `costUsd`. */
export function recordOf(
  jobId: string,
  r: Reservation,
  costUsd: number,
  basis: UsageRecord['basis'],
  now: number,
  info: Pick<SettleInfo, 'requestId' | 'outcome' | 'images' | 'size' | 'quality'>,
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
    requestId: info.requestId,
    outcome: info.outcome,
    images: info.images,
    size: info.size,
    quality: info.quality,
    reservedAt: r.at,
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
  const oldestRefusals = oldestRefusalDay(now);
  for (const day of Object.keys(ledger.refusals ?? {})) if (day < oldestRefusals) delete ledger.refusals![day];
  const { from } = historyHours(now);
  for (const [scopeKey, entry] of Object.entries(ledger.breaker ?? {})) {
    for (const bucket of Object.keys(entry.recent)) if (Number(bucket) * BREAKER_BUCKET_MS < now - 2 * 60 * 60_000) delete entry.recent[bucket];
    for (const hour of Object.keys(entry.hours)) if (Number(hour) < from) delete entry.hours[hour];
    if ((entry.resumedAt ?? 0) < forgetBefore) {
      delete entry.resumedAt;
      delete entry.resumedBy;
    }
    const empty = Object.keys(entry.recent).length + Object.keys(entry.hours).length === 0;
    if (empty && entry.pausedAt === undefined && entry.resumedAt === undefined) delete ledger.breaker![scopeKey];
  }
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
    // No owner, and whether it was sent is unknown: marked as the money rule (`cutOffCostUsd`) takes an unknown.
    ledger.reservations[jobId] = { ...r, month: r.day.slice(0, 7), owner: 'version-1', sent: cutOffCostUsd({ usd: r.usd, sent: undefined }) !== undefined };
  }
  return ledger;
}

/**
 * Reserves a job's estimate for `owner` if every limit passes (the rulebook's answer otherwise), as the Redis
 * ledger's `reserve` script does; a refusal that tripped the breaker pauses the scope (the ledger changed). Throws,
 * changing nothing, for a bad amount or a job reserved already.
 */
export function reserveIn(ledger: Ledger, input: ReserveInput, owner: string, keepDays: number): SpendRefusal | undefined {
  const { jobId, userKey, scopeKey, estimateUsd, now } = input;
  toNanos('estimateUsd', estimateUsd);
  if (ledger.reservations[jobId]) throw new Error(`job ${jobId} already has a reservation`);
  pruneIn(ledger, now, keepDays);
  const refusal = checkIn(ledger, input);
  // A job that took its scope past the breaker: the scope stays paused (every process sees it) until resumed.
  if (refusal?.tripped) pauseIn(ledger, scopeKey, refusal, now);
  if (refusal) return refusal;
  const usd = roundToNanoUsd(estimateUsd);
  ledger.reservations[jobId] = { userKey, scopeKey, usd, day: periodKey('day', now), month: periodKey('month', now), at: now, owner, sent: false, ...(input.job && { job: input.job }) };
  ledger.lastJobAt[userKey] = now;
  return undefined;
}

/**
 * Ends a reservation at what the job cost, and answers its usage record; undefined when it had ended already (settled
 * before, or charged by a reconcile: `uncertain`). A reservation the ledger lost while its process held it (the file
 * replaced by an older copy, or deleted) is charged all the same from that process's `copy` (`lost`), as the Redis
 * ledger's `settle` script does: the service answered the job.
 */
export function settleIn(
  ledger: Ledger,
  jobId: string,
  actualUsd: number,
  info: SettleInfo,
  now: number,
  copy: Reservation | undefined,
): { usage: UsageRecord; lost: boolean } | undefined {
  const lost = !ledger.reservations[jobId];
  const reservation = ledger.reservations[jobId] ?? foundLostIn(ledger, jobId, copy);
  if (!reservation) return undefined;
  delete ledger.reservations[jobId];
  chargeIn(ledger, reservation, actualUsd, now);
  return { usage: recordOf(jobId, reservation, roundToNanoUsd(actualUsd), settledBasis(info), now, info), lost };
}

/**
 * Marks a job sent (answers whether that changed the ledger); a reservation the ledger lost while `owner` held it is
 * put back from its `copy`, sent (`lost`), as the Redis ledger's `MARK_SENT` script does. Throws, changing nothing, when
 * there is none to put back (no copy, or ended: charged by a reconcile, `uncertain`): the job must not be sent.
 */
export function sentIn(ledger: Ledger, jobId: string, copy: Reservation | undefined, owner: string, now: number): { changed: boolean; lost: boolean } {
  const reservation = ledger.reservations[jobId];
  if (reservation) {
    const changed = !reservation.sent;
    reservation.sent = true;
    return { changed, lost: false };
  }
  const found = foundLostIn(ledger, jobId, copy);
  if (!found) throw new Error(`job ${jobId} has no reservation: it must not be sent`);
  ledger.reservations[jobId] = { ...found, owner, sent: true };
  markAliveIn(ledger, owner, now);
  return { changed: true, lost: true };
}

/** A reservation the ledger lost, from its process's `copy` (noted, `noteReservedIn`); undefined without one, or when it ended (a reconcile charged it: `uncertain`). */
function foundLostIn(ledger: Ledger, jobId: string, copy: Reservation | undefined): Reservation | undefined {
  if (!copy || ledger.uncertain[jobId]) return undefined;
  noteReservedIn(ledger, copy.userKey, copy.at);
  return copy;
}

/**
 * Notes that the ledger knows a job of `userKey` reserved at `at`: its user's last reservation (`lastJobAt`, the
 * cooldown's) is never moved back. Every job whose amount the ledger holds is so noted, so a copy of the ledger
 * accounts for the jobs reserved up to it (`chargeRecordedIn`).
 */
export function noteReservedIn(ledger: Ledger, userKey: string, at: number): void {
  const last = ledger.lastJobAt[userKey];
  if (last === undefined || last < at) ledger.lastJobAt[userKey] = at;
}

/**
 * Brings a ledger put back from its backup copy up to what the usage records hold since: each job's latest record is
 * charged once, at its amount and time (marked uncertain when a reconcile charged it), unless the copy accounts for it
 * already. The copy holds no list of the jobs it charged, only totals; what it accounts for is told by job ids and
 * times: a job it still shows open is ended here (not charged again at its estimate when its gone process is met); a job
 * it marked uncertain was charged by it; a job reserved no later than its user's last reservation the copy knows
 * (`lastJobAt`, `noteReservedIn`) and no longer open in it had ended before the copy, its amount in the totals. A job
 * reserved after that is one the copy never saw: its record is added. A user the copy knows no reservation of (none, or
 * pruned) counts from `horizon` (the oldest reservation time a ledger keeps: an older job's day is no longer kept).
 * Answers the jobs charged.
 */
export function chargeRecordedIn(ledger: Ledger, records: Iterable<UsageRecord>, horizon: number): string[] {
  const charged: string[] = [];
  for (const record of latestPerJob(records)) {
    const open = ledger.reservations[record.jobId];
    const reservedAt = open?.at ?? record.reservedAt;
    const unseen = reservedAt !== undefined && !ledger.uncertain[record.jobId] && reservedAt > (ledger.lastJobAt[record.userKey] ?? horizon);
    if (!open && !unseen) continue;
    // The day and month a job counts in are its reservation's, which its record keeps.
    chargedAsRecordedIn(ledger, record, open ?? record, reservedAt!);
    charged.push(record.jobId);
  }
  return charged;
}

/**
 * Ends a job at what its usage record says, the one rule for a job whose record the ledger lacks (its settle reached
 * the usage records, written first, and not the ledger: a crash between the two, or a ledger put back from its copy): its
 * reservation (`r`, or the record itself, which keeps the day and month it counts in) is dropped, and the record's
 * amount charged at the record's time, once; a record a reconcile wrote (`uncertain`) marks it so. No record is added:
 * the one there is the job's. Both a restore (`chargeRecordedIn`) and the end of a gone process's reservation
 * (`reconcileIn`) charge a recorded job so.
 */
function chargedAsRecordedIn(ledger: Ledger, record: UsageRecord, r: Pick<Reservation, 'userKey' | 'scopeKey' | 'day' | 'month'>, reservedAt: number): void {
  delete ledger.reservations[record.jobId];
  chargeIn(ledger, r, record.costUsd, record.time);
  noteReservedIn(ledger, r.userKey, reservedAt);
  if (record.basis === 'uncertain') ledger.uncertain[record.jobId] = { userKey: r.userKey, scopeKey: r.scopeKey, usd: record.costUsd, day: r.day, at: record.time };
}

/**
 * Ends the reservations of processes that are gone (`lease` says which): one whose settle reached the usage records
 * (`recorded`: each job's latest record, `latestByJob`) is charged what its record says (`chargedAsRecordedIn`:
 * `settledAsRecorded`, no record added); any other charged what a job cut off so may cost (`cutOffCostUsd`: a sent one
 * its estimate) and marked uncertain (with its usage record), or released; forgets the gone processes. A reservation
 * whose owner's lease lapsed while its process lives (`lapsed`) is charged nothing: an unsent one is dropped
 * (should its process still hold it, its send puts it back from its copy, `sentIn`); a sent one stays,
 * counted, for its process may still hold it (stalled, stopped, its renewals failing) and be killed before it settles:
 * it ends at that process's next commit, which drops it if not held (`unheldDroppedIn`), or as a gone process's once
 * its process is gone. `changed`: whether it changed the ledger.
 */
export function reconcileIn(
  ledger: Ledger,
  lease: (owner: string) => LeaseState,
  now: number,
  recorded: ReadonlyMap<string, UsageRecord> = new Map(),
): { report: ReconcileReport; usage: UsageRecord[]; changed: boolean } {
  const report: ReconcileReport = { released: [], settledAtEstimate: [], chargedUsd: 0 };
  const usage: UsageRecord[] = [];
  let changed = false;
  // Run on every commit over every reservation: looked at in place, nothing copied for the ones that stay.
  for (const jobId in ledger.reservations) {
    const r = ledger.reservations[jobId]!;
    const state = lease(r.owner);
    if (staysIn(r, state)) continue;
    delete ledger.reservations[jobId];
    changed = true;
    if (state === 'lapsed') continue;
    const record = recorded.get(jobId);
    if (record) {
      chargedAsRecordedIn(ledger, record, r, r.at);
      (report.settledAsRecorded ??= []).push(jobId);
      report.chargedUsd = roundToNanoUsd(report.chargedUsd + record.costUsd);
      continue;
    }
    const usd = cutOffCostUsd(r);
    if (usd === undefined) {
      report.released.push(jobId);
      continue;
    }
    chargeIn(ledger, r, usd, now);
    ledger.uncertain[jobId] = { userKey: r.userKey, scopeKey: r.scopeKey, usd, day: r.day, at: now };
    usage.push(recordOf(jobId, r, usd, 'uncertain', now, {}));
    report.settledAtEstimate.push(jobId);
    report.chargedUsd = roundToNanoUsd(report.chargedUsd + usd);
  }
  for (const owner of Object.keys(ledger.owners)) if (lease(owner) === 'gone') delete ledger.owners[owner];
  return { report, usage, changed };
}

/**
 * Each job's latest usage record (`latestByJob`) that may hold the settle of a reservation a reconcile ends as a gone
 * process's: `read` is asked for the records from a day before the oldest such reservation was made (other processes'
 * clocks may differ), and only when there is one. What `reconcileIn` is told as `recorded`.
 */
export async function recordedOfGoneIn(ledger: Ledger, lease: (owner: string) => LeaseState, read: (from: number) => Promise<Iterable<UsageRecord>>): Promise<Map<string, UsageRecord>> {
  let since: number | undefined;
  for (const jobId in ledger.reservations) {
    const r = ledger.reservations[jobId]!;
    if (lease(r.owner) === 'gone' && (since === undefined || r.at < since)) since = r.at;
  }
  return latestByJob(since === undefined ? [] : await read(since - DAY_MS));
}

/** Whether a reconcile leaves a reservation as it is: its owner's lease holds, or lapsed while its process lives and the job was sent. */
function staysIn(r: Reservation, state: LeaseState): boolean {
  return state === 'holds' || (state === 'lapsed' && r.sent);
}

/** Marks `owner` (this process) alive as of `now`: its reservations count while its lease holds (`leasesIn`). */
export function markAliveIn(ledger: Ledger, owner: string, now: number): void {
  ledger.owners[owner] = { pid: process.pid, host: THIS_HOST, renewedAt: now };
}

/**
 * An owner's lease at a moment: it `holds`; it `lapsed` while its process lives on this host (a process renews every
 * third of the lease while it holds a reservation: it went idle and a restore from the backup copy brought back one it
 * had ended, or it still holds them but stalled, was stopped or failed to write its renewals); or its process is `gone`
 * (dead, or its lease lapsed on another host).
 */
export type LeaseState = 'holds' | 'lapsed' | 'gone';

/** How many leases a lease may stay lapsed while its pid lives before that pid is taken for another process's. */
export const LAPSED_LEASES_AT_MOST = 10;

/**
 * Each owner's lease at `now`, asked once per owner: `self`'s always holds; another's when renewed within `leaseMs`
 * unless, on this host, its pid is gone (a killed process's reservations end at once). A lapsed one is `lapsed` when
 * its process lives on this host: another pid that is alive, or this process's own pid with that store still open
 * (`isOpenHere`: a store it closed holds nothing, and its pid says nothing of it), for at most `LAPSED_LEASES_AT_MOST`
 * leases.
 */
export function leasesIn(ledger: Ledger, self: string, now: number, leaseMs: number): (owner: string) => LeaseState {
  const states = new Map<string, LeaseState>();
  const stateOf = (owner: string, entry = ledger.owners[owner]): LeaseState => {
    if (owner === self) return 'holds';
    if (!entry) return 'gone';
    const here = entry.host === THIS_HOST;
    if (here && !isProcessAlive(entry.pid)) return 'gone';
    if (now - entry.renewedAt < leaseMs) return 'holds';
    // Past `LAPSED_LEASES_AT_MOST` leases a live pid is taken for a reused one (a container restarted, another program):
    // its reservations end as a dead process's instead of counting for as long as that other process lives.
    if (now - entry.renewedAt >= LAPSED_LEASES_AT_MOST * leaseMs) return 'gone';
    const lives = here && (entry.pid === process.pid ? isOpenHere(owner) : true);
    return lives ? 'lapsed' : 'gone';
  };
  return (owner) => states.get(owner) ?? states.set(owner, stateOf(owner)).get(owner)!;
}

/** The ledger as a reconcile at `now` (told the same `recorded`) will leave it, for reads that write nothing: a copy, only when it differs. */
export function endingGoneIn(ledger: Ledger, lease: (owner: string) => LeaseState, now: number, recorded?: ReadonlyMap<string, UsageRecord>): Ledger {
  if (Object.values(ledger.reservations).every((r) => staysIn(r, lease(r.owner)))) return ledger;
  const copy = structuredClone(ledger);
  reconcileIn(copy, lease, now, recorded);
  return copy;
}

/** The jobs under way in the order both stores list them (`activeJobs`): the oldest reservation first, then by job id. */
export function inReservationOrder(jobs: ActiveJob[]): ActiveJob[] {
  return jobs.sort((a, b) => a.at - b.at || a.jobId.localeCompare(b.jobId));
}

/**
 * Brings a ledger put back from its backup copy up to date. The copy is behind by
 * the changes written after it: what the usage records say since that it does not account for is charged
 * (`chargeRecordedIn`), so what is spent equals what was settled; the restoring process's reservations are as it holds
 * them (`unheldDroppedIn`).
 */
export function restoredIn(ledger: Ledger, records: Iterable<UsageRecord>, horizon: number, owner: string, held: (jobId: string) => boolean): void {
  // Charged first: a settle ended its job with a record, which a dropped reservation would no longer be charged by.
  chargeRecordedIn(ledger, records, horizon);
  unheldDroppedIn(ledger, owner, held);
}

/**
 * `owner`'s reservations (this process's) are as it holds them (`held`): one it no longer holds was ended by a change
 * a restore from the backup copy took back (a release writes no usage record; a settle's record is charged by the
 * restore), and is dropped, not left to take its user's slot and be charged at its estimate once `owner` is gone.
 * Whichever process put the copy back, `owner` drops its own at its next commit. Answers whether it dropped any.
 */
export function unheldDroppedIn(ledger: Ledger, owner: string, held: (jobId: string) => boolean): boolean {
  let dropped = false;
  for (const jobId in ledger.reservations) {
    if (ledger.reservations[jobId]!.owner !== owner || held(jobId)) continue;
    delete ledger.reservations[jobId];
    dropped = true;
  }
  return dropped;
}
