import { describe, expect, it } from 'vitest';
import type { Completed } from '../../../bots/discord/JobView.js';
import { renderCompleted } from '../../../bots/discord/render-job.js';

const header = { key: 'k1', kind: 'generate' as const, prompt: 'a cat', n: 2, locale: 'en-US' };

function completed(formats: Completed['formats']): Completed {
  return {
    type: 'completed',
    jobId: 'job-1',
    images: [Buffer.from('one'), Buffer.from('two')],
    formats,
    size: '1024x1024',
    quality: 'low',
    background: 'opaque',
    usage: undefined,
    cost: { totalUsd: 0.011, basis: 'table' } as Completed['cost'],
    elapsedMs: 1000,
  };
}

describe('a finished job’s facts line', () => {
  it('names every format its images came in, once each, when an answer mixes them', () => {
    expect(renderCompleted(header, completed(['png', 'jpeg']), [], []).content).toContain('1024x1024 · low · png/jpeg · ');
  });

  it('names the one format of an answer whose images share it once', () => {
    expect(renderCompleted(header, completed(['webp', 'webp']), [], []).content).toContain('1024x1024 · low · webp · ');
  });
});
