import { describe, expect, it, vi } from 'vitest';
import type { JobRecordStore } from '../../../bots/discord/JobRecordStore.js';
import { JobView, type Completed } from '../../../bots/discord/JobView.js';
import type { ReplyTarget } from '../../../bots/discord/ReplyTarget.js';
import { RecordingLogger } from './harness.js';

const result: Completed = {
  type: 'completed',
  jobId: 'job-1',
  images: [Buffer.from('an image')],
  formats: ['png'],
  size: '1024x1024',
  quality: 'low',
  background: 'opaque',
  usage: undefined,
  cost: { totalUsd: 0.011, basis: 'table' } as Completed['cost'],
  elapsedMs: 1000,
};

/** A view whose final message always lands, and whose record store's `markEnded` (which tries again itself) answers `marked`. */
function viewWithStore(marked: () => Promise<void>) {
  const markEnded = vi.fn(marked);
  const final = vi.fn(async () => ({ first: true, all: true }));
  const logger = new RecordingLogger();
  const view = new JobView({
    target: { final, mode: 'webhook' } as unknown as ReplyTarget,
    header: { key: 'k1', kind: 'generate', prompt: 'a cat', n: 1, locale: 'en-US' },
    store: { markEnded, saveOutputs: async () => undefined, get: async () => undefined } as unknown as JobRecordStore,
    attachmentSizeLimit: 10 * 1024 * 1024,
    logger,
  });
  return { view, markEnded, final, logger };
}

describe('a job view marking its record ended', () => {
  it('marks the record completed through the store once the live result is shown, with the end the runner is to record', async () => {
    const { view, markEnded, final } = viewWithStore(async () => {});
    await view.sink(result);
    expect(final).toHaveBeenCalledTimes(1);
    expect(markEnded).toHaveBeenCalledExactlyOnceWith('k1', 'completed', { end: { type: 'completed', size: '1024x1024', quality: 'low', cost: { totalUsd: 0.011 } } });
    expect(final.mock.invocationCallOrder[0]).toBeLessThan(markEnded.mock.invocationCallOrder[0]!);
  });

  it('logs the mark’s last failure, the result shown all the same and its record left unmarked', async () => {
    const { view, logger } = viewWithStore(async () => {
      throw new Error('storage unavailable');
    });
    await view.sink(result);
    expect(view.resultShown).toBe(true);
    expect(logger.entries.map((e) => e.msg)).toContain('could not show a job update on Discord');
  });

  it('shows a result, with its facts or as kept images without them, and leaves its mark to the caller (the sweep)', async () => {
    const { view, markEnded, final } = viewWithStore(async () => {});
    await view.showResult(result);
    await view.showResult({ type: 'kept', images: result.images, formats: ['png'] }, { indices: [0], made: 1, notes: [] });
    expect(final).toHaveBeenCalledTimes(2);
    expect(markEnded).not.toHaveBeenCalled();
  });

  it('gives a cancellation that came with images their Edit and Delete buttons beside its Retry, as a failure has, and keeps them with that end', async () => {
    const final = vi.fn(async () => ({ first: true, all: true }));
    const saveOutputs = vi.fn(async () => undefined);
    const view = new JobView({
      target: { final, mode: 'webhook' } as unknown as ReplyTarget,
      header: { key: 'k1', kind: 'generate', prompt: 'a cat', n: 2, locale: 'en-US' },
      store: { markEnded: async () => undefined, saveOutputs, get: async () => undefined } as unknown as JobRecordStore,
      attachmentSizeLimit: 10 * 1024 * 1024,
      logger: new RecordingLogger(),
    });
    await view.sink({ type: 'cancelled', jobId: 'job-1', byUserId: 'u1', reason: 'requested', images: [Buffer.from('an image')], formats: ['png'] });
    const [messages] = final.mock.calls[0] as unknown as [{ components: { components: { label?: string }[] }[] }[]];
    expect(messages[0]!.components.flatMap((row) => row.components.map((b) => b.label))).toEqual(['Retry', 'Edit', 'Delete']);
    // Saved for its Edit button, with the cancellation it came with (a sweep shows that end with it, not a result).
    expect(saveOutputs).toHaveBeenCalledExactlyOnceWith('k1', [Buffer.from('an image')], ['png'], { final: { type: 'cancelled', byUserId: 'u1', reason: 'requested' } });
  });
});
