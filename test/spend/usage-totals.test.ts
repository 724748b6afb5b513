import { describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../src/spend/types.js';
import { addUsage, sumUsage } from '../../src/spend/usage-totals.js';

const record = (jobId: string, costUsd: number, basis: UsageRecord['basis'] = 'table'): UsageRecord => ({
  jobId,
  time: Date.UTC(2030, 5, 16),
  day: '2030-06-16',
  month: '2030-06',
  surface: 'cli',
  userKey: 'cli:owner',
  scopeKey: 'cli:owner',
  n: 1,
  costUsd,
  basis,
});

describe('usage totals', () => {
  it('add a large ledger’s records to the nano-dollar, as the ledger counts them, not as floats drift', () => {
    // 60,000 records of mixed prices: a float sum drifts past half a nano-dollar (4114.675927499).
    const nanos = [6_400_000, 52_800_000, 167_000_000, 11_000_000, 40_000_000, 250_000_000, 21_300_000, 123_457];
    const records = Array.from({ length: 60_000 }, (_, i) => record(`j${i}`, nanos[i % nanos.length]! / 1e9, i % 2 === 0 ? 'uncertain' : 'table'));
    const totals = sumUsage(records, 'all');
    expect(totals.usd).toBe(records.reduce((sum, r) => sum + Math.round(r.costUsd * 1e9), 0) / 1e9);
    expect(totals.usd).toBe(4114.6759275);
    expect(totals.uncertainUsd).toBe(records.filter((r) => r.basis === 'uncertain').reduce((sum, r) => sum + Math.round(r.costUsd * 1e9), 0) / 1e9);
  });

  it('keep every running total a whole number of nano-dollars, a record taken away again included (the console’s index)', () => {
    const totals = { jobs: 0, images: 0, usd: 0, uncertainUsd: 0 };
    for (let i = 0; i < 10_000; i++) addUsage(totals, record(`j${i}`, 0.000000123 + i * 1e-9));
    addUsage(totals, record('j0', 0.000000123), -1);
    expect(totals.usd).toBe((9_999 * 123 + (9_999 * 10_000) / 2) / 1e9);
    expect(totals.jobs).toBe(9_999);
  });
});
