import { describe, expect, it } from 'vitest';
import type { Completed } from '../../../bots/discord/JobView.js';
import { renderCompleted } from '../../../bots/discord/render-job.js';

const header = { key: 'k1', kind: 'generate' as const, prompt: 'a cat', n: 2, locale: 'en-US' };

function completed(formats: Completed['formats'], elapsedMs = 1000): Completed {
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
    elapsedMs,
  };
}

describe('a finished job’s facts line', () => {
  it('names every format its images came in, once each, when an answer mixes them', () => {
    expect(renderCompleted(header, completed(['png', 'jpeg']), [], []).content).toContain('1024x1024 · low · png/jpeg · ');
  });

  it('names the one format of an answer whose images share it once', () => {
    expect(renderCompleted(header, completed(['webp', 'webp']), [], []).content).toContain('1024x1024 · low · webp · ');
  });

  it('ends with how long the job took in the member’s language: under a second in milliseconds, never “0.3 s” nor “0.0 s”', () => {
    // The locale's no-break spaces (French puts them between a number and its unit) read as spaces.
    const took = (elapsedMs: number, locale: string) => renderCompleted({ ...header, locale }, completed(['png', 'png'], elapsedMs), [], []).content.split('\n')[1]!.split(' · ').at(-1)!.replace(/\s/g, ' ');
    expect(took(250, 'en-US')).toBe('250 ms');
    expect(took(40, 'ja')).toBe('40 ms');
    expect(took(4_240, 'en-US')).toBe('4.2 s');
    expect(took(4_240, 'de')).toBe('4,2 Sek.');
    expect(took(125_400, 'fr')).toBe('2 min 5 s');
  });
});
