import { describe, expect, expectTypeOf, it } from 'vitest';
import type { JobRecordStatus } from '../../../bots/discord/JobRecordStore.js';
import type { RequestStatus, SavedRequest } from '../../../bots/slack/RequestStore.js';
import { endToRecord, imagesToKeep, isDone, isRunning, keepsNoEnd, phaseOf, releaseWhenDone, withDraft, type StatusWord, type StatusWords } from '../../../bots/state/job-records.js';
import { MAX_KEPT_IMAGE_BYTES } from '../../../bots/state/spaces.js';

const end = { type: 'failed', code: 'server_error' };

describe('a job record’s release rule, the same on both surfaces', () => {
  it('reads each surface’s status words as one phase: running, ended, or neither', () => {
    expect(['pending', 'running', 'active'].map((status) => phaseOf({ status }))).toEqual(['running', 'running', 'running']);
    expect(['completed', 'failed', 'cancelled', 'refused', 'ended'].map((status) => phaseOf({ status }))).toEqual(Array(5).fill('ended'));
    expect([phaseOf({ status: 'draft' }), phaseOf({}), phaseOf({ status: 'toString' })]).toEqual(['other', 'other', 'other']);
  });

  it('names a phase for every status word of both stores: a word it does not name fails to compile (the type-check runs this)', () => {
    expectTypeOf<JobRecordStatus>().toExtend<StatusWord>();
    expectTypeOf<RequestStatus>().toExtend<StatusWord>();
    expectTypeOf<NonNullable<SavedRequest['status']>>().toEqualTypeOf<RequestStatus>();
    // @ts-expect-error — a store's new word, not yet in the rule's table
    expectTypeOf<StatusWords<'paused'>>().toBeString();
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

  it('keeps no end once it is recorded and its job no longer runs, on both surfaces; a running record keeps it for its sweep', () => {
    expect(['completed', 'ended', 'draft', undefined].map((status) => keepsNoEnd({ status, end, endRecorded: true }))).toEqual([true, true, true, true]);
    expect(['pending', 'running', 'active'].map((status) => keepsNoEnd({ status, end, endRecorded: true }))).toEqual([false, false, false]);
    // An end still to record is kept whatever the phase.
    expect(['failed', 'ended', 'active'].map((status) => keepsNoEnd({ status, end }))).toEqual([false, false, false]);
  });

  it('lists a member’s draft once by its key, last when written again, and keeps the newest ten (the bot and the upgrade alike)', () => {
    const drafts = Array.from({ length: 11 }, (_, i) => ({ key: `d${i}`, createdAt: i }));
    const listed = drafts.reduce<{ key: string; createdAt: number }[]>((own, draft) => withDraft(own, draft), []);
    expect(listed.map((d) => d.key)).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'd10']);
    expect(withDraft(listed, drafts[3]!).map((d) => d.key)).toEqual(['d1', 'd2', 'd4', 'd5', 'd6', 'd7', 'd8', 'd9', 'd10', 'd3']);
    expect(withDraft(undefined, drafts[0]!)).toEqual([drafts[0]]);
  });
});

describe('which of a job’s images are kept (imagesToKeep, the store’s and the upgrade’s one rule)', () => {
  const image = (bytes: number) => ({ data: Buffer.alloc(bytes) });
  const huge = image(MAX_KEPT_IMAGE_BYTES + 1);

  it('keeps each output within the bound with its number in the job, whatever is left out before it (too large, not read, refused)', () => {
    const refused = image(3);
    const { kept, tooLarge } = imagesToKeep('out', [huge, undefined, refused, image(4)], (img) => img !== refused);
    expect(kept.map((k) => k.index)).toEqual([3]);
    expect(tooLarge).toEqual([0]);
  });

  it('keeps an edit’s inputs all or none', () => {
    expect(imagesToKeep('in', [image(1), image(2)]).kept.map((k) => k.index)).toEqual([0, 1]);
    expect(imagesToKeep('in', [image(1), huge]).kept).toEqual([]);
    expect(imagesToKeep('in', [image(1), undefined]).kept).toEqual([]);
  });
});
