import { describe, expect, it } from 'vitest';
import { jobRow } from '../../../src/console/pages/jobs.js';
import { usageRecord } from '../../../src/spend/usage-records.js';

/** A job of the console's jobs table that took `tookMs` from its reservation to its settle. */
function rowOfJobThatTook(tookMs: number) {
  const time = Date.UTC(2030, 0, 2, 12);
  const record = usageRecord({ jobId: 'j1', time, day: '2030-01-02', month: '2030-01', userKey: 'cli:ana', scopeKey: 'cli', job: undefined, costUsd: 0.011, basis: 'table', reservedAt: time - tookMs });
  return jobRow(record, new Map(), []);
}

// How a duration reads is checked once (test/core/describe-duration.test.ts); here, that the table uses that rule.
describe("the console's jobs table", () => {
  it('says how long a job took as every time taken is said: milliseconds under a second, never "0 s"', () => {
    expect(rowOfJobThatTook(300).duration).toBe('300 ms');
    expect(rowOfJobThatTook(4_240).duration).toBe('4.2 s');
    expect(rowOfJobThatTook(125_400).duration).toBe('2 min 5 s');
    expect(rowOfJobThatTook((26 * 60 + 3) * 60_000).duration).toBe('26 h 3 min');
  });
});
