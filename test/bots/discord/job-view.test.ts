import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JobRecordStore } from '../../../bots/discord/JobRecordStore.js';
import { JobView, type Completed } from '../../../bots/discord/JobView.js';
import type { ReplyTarget } from '../../../bots/discord/ReplyTarget.js';
import { RecordingLogger } from './harness.js';

const result: Completed = {
  type: 'completed',
  jobId: 'job-1',
  images: [Buffer.from('an image')],
  format: 'png',
  size: '1024x1024',
  quality: 'low',
  background: 'opaque',
  usage: undefined,
  cost: { totalUsd: 0.011, basis: 'table' } as Completed['cost'],
  elapsedMs: 1000,
};

/** A view whose final message always lands, and whose record store refuses the first `failures` updates. */
function viewWithFlakyStore(failures: number) {
  const update = vi.fn(async () => {
    if (update.mock.calls.length <= failures) throw new Error('storage unavailable');
  });
  const final = vi.fn(async () => true);
  const logger = new RecordingLogger();
  const view = new JobView({
    target: { final, mode: 'webhook' } as unknown as ReplyTarget,
    header: { key: 'k1', kind: 'generate', prompt: 'a cat', n: 1, locale: 'en-US' },
    store: { update } as unknown as JobRecordStore,
    attachmentSizeLimit: 10 * 1024 * 1024,
    logger,
  });
  return { view, update, final, logger };
}

describe('a job view marking its record ended', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('tries the "completed" mark again when it fails after the result was shown — a record left running has its result shown again by the next start', async () => {
    const { view, update, final } = viewWithFlakyStore(2);
    const showing = view.showResult(result);
    await vi.advanceTimersByTimeAsync(200 + 400);
    await showing;
    expect(view.resultShown).toBe(true);
    expect(final).toHaveBeenCalledTimes(1);
    expect(update).toHaveBeenCalledTimes(3);
    expect(update).toHaveBeenLastCalledWith('k1', { status: 'completed' });
  });

  it('gives up after a bounded number of tries, throwing the last failure for the caller to log', async () => {
    const { view, update } = viewWithFlakyStore(Infinity);
    const showing = expect(view.showResult(result)).rejects.toThrow('storage unavailable');
    await vi.advanceTimersByTimeAsync(200 + 400);
    await showing;
    expect(update).toHaveBeenCalledTimes(3);
    // Shown all the same: the sweep keeps it in the history and does not mark it failed.
    expect(view.resultShown).toBe(true);
  });
});
