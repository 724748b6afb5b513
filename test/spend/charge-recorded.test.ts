import { describe, expect, it } from 'vitest';
import { chargeRecordedIn, emptyLedger, reconcileIn, type Ledger, type Reservation } from '../../src/spend/ledger-document.js';
import { latestByJob } from '../../src/spend/usage-records.js';
import type { UsageRecord } from '../../src/spend/types.js';
import { DAY_MS } from '../../src/spend/utc-period.js';

const AT = Date.parse('2030-06-15T12:00:00Z');
const HORIZON = AT - 7 * DAY_MS;
const record = (jobId: string, reservedAt: number | undefined, costUsd: number, extra: Partial<UsageRecord> = {}): UsageRecord => ({
  jobId,
  time: (reservedAt ?? AT) + 500,
  day: '2030-06-15',
  month: '2030-06',
  surface: 'slack',
  userKey: 'slack:U1',
  scopeKey: 'slack:T1',
  costUsd,
  basis: 'table',
  ...(reservedAt !== undefined && { reservedAt }),
  ...extra,
});
/** A copy that charged 0.05 and knows the user's last reservation at `AT`. */
const copy = (): Ledger => ({ ...emptyLedger(), spent: { '2030-06-15': { 'slack:U1': 0.05, 'slack:T1': 0.05, account: 0.05 } }, lastJobAt: { 'slack:U1': AT } });

describe('what a ledger put back from its copy charges of the usage records', () => {
  it('adds a job reserved after the last reservation of its user the copy knows, once, and moves that time forward', () => {
    const ledger = copy();
    expect(chargeRecordedIn(ledger, [record('later', AT + 1, 0.02), record('later', AT + 1, 0.02)], HORIZON)).toEqual(['later']);
    expect(ledger.spent['2030-06-15']).toEqual({ 'slack:U1': 0.07, 'slack:T1': 0.07, account: 0.07 });
    expect(ledger.lastJobAt['slack:U1']).toBe(AT + 1);
    // Brought up to date, the ledger accounts for it: asked again, nothing changes.
    expect(chargeRecordedIn(ledger, [record('later', AT + 1, 0.02)], HORIZON)).toEqual([]);
  });

  it('adds nothing for a job reserved up to that time and not open in the copy: its amount is in the totals', () => {
    const ledger = copy();
    expect(chargeRecordedIn(ledger, [record('before', AT - 1000, 0.03), record('same-moment', AT, 0.05)], HORIZON)).toEqual([]);
    expect(ledger.spent['2030-06-15']!.account).toBe(0.05);
  });

  it('adds nothing for a job the copy marked uncertain (a reconcile charged it), nor for a record that does not say when its job was reserved', () => {
    const ledger = copy();
    ledger.uncertain.cut = { userKey: 'slack:U1', scopeKey: 'slack:T1', usd: 0.3, day: '2030-06-15', at: AT + 5 };
    expect(chargeRecordedIn(ledger, [record('cut', AT + 2, 0.3, { basis: 'uncertain' }), record('old-version', undefined, 0.1)], HORIZON)).toEqual([]);
  });

  it('for a user the copy knows no reservation of, adds the jobs reserved since the oldest time a ledger keeps', () => {
    const ledger = copy();
    const other = { userKey: 'slack:U2' };
    expect(chargeRecordedIn(ledger, [record('kept', HORIZON + 1, 0.1, other), record('pruned', HORIZON - 1, 0.1, other)], HORIZON)).toEqual(['kept']);
  });
});

describe('what the end of a gone process’s reservations charges of the usage records', () => {
  it('charges a job whose settle was recorded what its record says, adding no record, one a reconcile recorded as uncertain, and only the others at their estimate', () => {
    const ledger = emptyLedger();
    const sent = (): Reservation => ({ userKey: 'slack:U1', scopeKey: 'slack:T1', usd: 0.3, day: '2030-06-15', month: '2030-06', at: AT, owner: 'gone', sent: true });
    ledger.reservations = { settled: sent(), cut: sent(), unrecorded: sent() };
    // The settle of `settled` reached the records twice (tried again after a failed write): its latest one counts.
    const recorded = latestByJob([record('settled', AT, 0.04), record('cut', AT, 0.3, { basis: 'uncertain' }), record('settled', AT, 0.05)]);

    const { report, usage, changed } = reconcileIn(ledger, () => 'gone', AT + 1000, recorded);

    expect(report).toEqual({ released: [], settledAtEstimate: ['unrecorded'], settledAsRecorded: ['settled', 'cut'], chargedUsd: 0.65 });
    expect(changed).toBe(true);
    expect(usage.map((r) => r.jobId)).toEqual(['unrecorded']);
    expect(ledger.spent['2030-06-15']).toEqual({ 'slack:U1': 0.65, 'slack:T1': 0.65, account: 0.65 });
    expect(Object.keys(ledger.uncertain).sort()).toEqual(['cut', 'unrecorded']);
    expect(ledger.reservations).toEqual({});
  });
});
