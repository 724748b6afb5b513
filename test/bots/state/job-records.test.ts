import { describe, expect, it } from 'vitest';
import { endToRecord, isDone, isRunning, phaseOf, releaseWhenDone } from '../../../bots/state/job-records.js';

const end = { type: 'failed', code: 'server_error' };

describe('a job record’s release rule, the same on both surfaces', () => {
  it('reads each surface’s status words as one phase: running, ended, or neither', () => {
    expect(['pending', 'running', 'active'].map((status) => phaseOf({ status }))).toEqual(['running', 'running', 'running']);
    expect(['completed', 'failed', 'cancelled', 'refused', 'ended'].map((status) => phaseOf({ status }))).toEqual(Array(5).fill('ended'));
    expect([phaseOf({ status: 'draft' }), phaseOf({}), phaseOf({ status: 'toString' })]).toEqual(['other', 'other', 'other']);
  });

  it('has an end to record only on an ended record not yet marked recorded', () => {
    expect(endToRecord({ status: 'failed', end })).toBe(end);
    expect(endToRecord({ status: 'ended', end })).toBe(end);
    expect(endToRecord({ status: 'ended', end, endRecorded: true })).toBeUndefined();
    // A running job's end is not recorded by a sweep: its job is shown first.
    expect(endToRecord({ status: 'running', end, endRecorded: true })).toBeUndefined();
    expect(endToRecord({ status: 'draft', end })).toBeUndefined();
  });

  it('releases a record once it ended with nothing left to do, and keeps the hold of any other as it was', () => {
    expect([isDone({ status: 'completed' }), isDone({ status: 'ended', end, endRecorded: true })]).toEqual([true, true]);
    expect([isDone({ status: 'ended', end }), isDone({ status: 'active' }), isDone({ status: 'draft' })]).toEqual([false, false, false]);
    expect([releaseWhenDone({ status: 'cancelled' }), releaseWhenDone({ status: 'cancelled', end }), releaseWhenDone({ status: 'pending' })]).toEqual([false, undefined, undefined]);
    expect([isRunning({ status: 'active' }), isRunning({ status: 'ended' })]).toEqual([true, false]);
  });
});
