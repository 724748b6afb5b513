import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { ImageLimiter, LocalImageBucket, type BucketShape, type ImageBucket, type LimiterCoordinator } from '../../src/index.js';

/**
 * A coordinator with every method of the interface, optional ones too (`Required`): one the interface gains and this
 * does not implement fails the type-check, so the documentation check below sees every method.
 */
function recordingCoordinator(calls: string[]): Required<LimiterCoordinator> {
  return {
    join: () => (calls.push('join'), () => void calls.push('leave')),
    pauseUntil: async () => void calls.push('pauseUntil'),
    pausedUntil: async () => (calls.push('pausedUntil'), 0),
    close: async () => void calls.push('close'),
    onUnreachableFor: (_ms, listener) => (calls.push('onUnreachableFor'), queueMicrotask(listener), () => void calls.push('stop listening')),
  };
}

describe('a coordinator of the user’s own (LimiterCoordinator)', () => {
  it('has each of its methods documented where the limiter’s sharing is, and no other', () => {
    const docs = readFileSync(new URL('../../docs/shared-limits.md', import.meta.url), 'utf8');
    const section = /## A coordinator of your own[\s\S]*?(?=\n## )/.exec(docs)?.[0] ?? '';
    const documented = [...section.matchAll(/^\| `(\w+)\(/gm)].map((m) => m[1]!);
    expect(documented.sort()).toEqual(Object.keys(recordingCoordinator([])).sort());
  });

  it('is written from the public entry’s names alone, and stopped through', async () => {
    const calls: string[] = [];
    const limiter = new ImageLimiter({ maxConcurrent: 1, coordinator: recordingCoordinator(calls) });
    await expect(limiter.schedule({ weight: 1 }, async () => 'ran')).resolves.toBe('ran');
    await limiter.stop();
    expect(calls).toEqual(expect.arrayContaining(['join', 'leave', 'pausedUntil', 'onUnreachableFor', 'stop listening', 'close']));
    expect(calls.at(-1)).toBe('close');
  });

  it('shares images per minute only through one bucket given to every limiter: two limiters of 2 images a minute let 2 leave, not 4', async () => {
    // One clock that stands still: the bucket never refills while the test looks.
    let shared: ImageBucket | undefined;
    const bucket = (shape: BucketShape): ImageBucket => (shared ??= new LocalImageBucket(shape, () => 0));
    const coordinator = recordingCoordinator([]);
    const [a, b] = [0, 1].map(() => new ImageLimiter({ imagesPerMinute: 2, maxConcurrent: 4, coordinator, bucket }));
    const started: string[] = [];
    await a!.schedule({ weight: 2 }, async () => void started.push('a'));
    const second = b!.schedule({ weight: 2 }, async () => void started.push('b'));
    second.catch(() => {});
    // B waits: the bucket A emptied is its own (below zero by the tolerance it keeps).
    await vi.waitFor(async () => {
      const stats = await b!.stats();
      expect(stats).toMatchObject({ queued: 1, running: 0 });
      expect(stats.imagesAvailable).toBeLessThanOrEqual(0);
    });
    expect(started).toEqual(['a']);
    await Promise.all([a!.stop(), b!.stop()]);
    await expect(second).rejects.toThrow();
    expect(started).toEqual(['a']);
  });
});
