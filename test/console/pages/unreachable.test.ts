import { describe, expect, it } from 'vitest';
import { ledgerWaitPage } from '../../../src/console/pages/unreachable.js';

// How a wait reads is checked once (test/core/describe-duration.test.ts); here, that the 503 page says its wait by that rule.
describe("the console's page for a ledger that did not answer in time", () => {
  it('says the wait as every wait is said: milliseconds under a second, never "0 s", and rounded up', () => {
    expect(String(ledgerWaitPage('unreachable', 'Redis, prefix pictor', 0))).toContain('had no answer within 0 ms,');
    expect(String(ledgerWaitPage('unreachable', 'Redis, prefix pictor', 250))).toContain('had no answer within 250 ms,');
    expect(String(ledgerWaitPage('slow', 'the file ledger in /var/lib/pictor', 1_500))).toContain('did not finish within 2 s (');
    expect(String(ledgerWaitPage('slow', 'the file ledger in /var/lib/pictor', 90_000))).toContain('did not finish within 1 min 30 s (');
  });
});
