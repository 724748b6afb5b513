import { describe, expect, it } from 'vitest';
import { alertsPage } from '../../../src/console/pages/alerts.js';

const context = { csrf: 'csrf', allowChanges: false, ledger: 'account', ledgerWhere: 'Redis, prefix pictor', now: Date.UTC(2030, 0, 2, 12) } as const;

/** The alerts page of rules looked at every `checkMs`. */
function pageCheckingEvery(checkMs: number): string {
  return String(alertsPage(context, { thresholds: [50, 80, 100], breaker: true, chosen: undefined, channels: [], checkMs, recent: [] }));
}

// How a duration reads is checked once (test/core/describe-duration.test.ts); here, that the page says its interval by that rule.
describe("the console's alerts page", () => {
  it('says how often the caps are looked at as every wait is said', () => {
    expect(pageCheckingEvery(30_000)).toContain('The caps are looked at every 30 s,');
    expect(pageCheckingEvery(60_000)).toContain('The caps are looked at every 1 min,');
    expect(pageCheckingEvery(600_000)).toContain('The caps are looked at every 10 min,');
    expect(pageCheckingEvery(3_600_000)).toContain('The caps are looked at every 1 h,');
  });
});
