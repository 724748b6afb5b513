import { roundToNanoUsd } from './rules.js';
import type { UsageRecord } from './types.js';

/** What a group of usage records adds up to: `pictor usage`'s rows and the chat usage summaries' top users. */
export interface UsageTotals {
  key: string;
  jobs: number;
  images: number;
  usd: number;
  /** What of `usd` was charged at an estimate by a reconcile (its process died after sending the job): basis `uncertain`. */
  uncertainUsd: number;
}


/** The records' jobs, images and cost, under one key. */
export function sumUsage(records: Iterable<UsageRecord>, key: string): UsageTotals {
  const totals: UsageTotals = { key, jobs: 0, images: 0, usd: 0, uncertainUsd: 0 };
  for (const r of records) addUsage(totals, r);
  totals.usd = roundToNanoUsd(totals.usd);
  totals.uncertainUsd = roundToNanoUsd(totals.uncertainUsd);
  return totals;
}

/**
 * What one record adds to totals (`sign` -1 takes it away again, for a job whose later record replaces it): a job,
 * the images it asked for, its cost, and that cost again as uncertain when a reconcile charged it. The one
 * definition of these figures, for `pictor usage`, the chat summaries and the console, each a whole number of nano-dollars.
 */
export function addUsage(totals: Omit<UsageTotals, 'key'>, r: UsageRecord, sign: 1 | -1 = 1): void {
  totals.jobs += sign;
  totals.images += sign * (r.n ?? 0);
  // Each step to the nano-dollar, as the ledger counts: a float sum of many records drifts past half a nano-dollar.
  totals.usd = roundToNanoUsd(totals.usd + sign * r.costUsd);
  if (r.basis === 'uncertain') totals.uncertainUsd = roundToNanoUsd(totals.uncertainUsd + sign * r.costUsd);
}

/** The records grouped by `keyOf` (user key, scope key, surface …), largest spend first, then by key. */
export function usageByKey(records: Iterable<UsageRecord>, keyOf: (record: UsageRecord) => string): UsageTotals[] {
  const groups = new Map<string, UsageRecord[]>();
  for (const r of records) {
    const key = keyOf(r);
    const list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, [r]);
  }
  return [...groups].map(([key, list]) => sumUsage(list, key)).sort((a, b) => b.usd - a.usd || a.key.localeCompare(b.key));
}

/** USD to the nano-dollar, the ledger's precision (the rulebook's rounding). */
export { roundToNanoUsd };
