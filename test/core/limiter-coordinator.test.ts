import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ImageLimiter, type LimiterCoordinator } from '../../src/index.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** The methods `LimiterCoordinator` declares, as its source has them. */
function declaredMethods(): string[] {
  const body = /export interface LimiterCoordinator \{([\s\S]*?)\n\}/.exec(read('src/core/image-limiter.ts'))?.[1] ?? '';
  return [...body.matchAll(/^ {2}(\w+)\??\(/gm)].map((m) => m[1]!);
}

describe('a coordinator of the user’s own (LimiterCoordinator)', () => {
  it('has each of its methods documented where the limiter’s sharing is', () => {
    const section = /## A coordinator of your own[\s\S]*?(?=\n## )/.exec(read('docs/shared-limits.md'))?.[0] ?? '';
    const methods = declaredMethods();
    expect(methods).toEqual(expect.arrayContaining(['join', 'pauseUntil', 'pausedUntil', 'close', 'onUnreachableFor']));
    for (const method of methods) expect(section, method).toContain(`| \`${method}(`);
  });

  it('is written from the public entry’s names alone, and stopped through', async () => {
    const calls: string[] = [];
    const coordinator: LimiterCoordinator = {
      join: () => (calls.push('join'), () => void calls.push('leave')),
      pauseUntil: async () => void calls.push('pauseUntil'),
      pausedUntil: async () => (calls.push('pausedUntil'), 0),
      close: async () => void calls.push('close'),
      onUnreachableFor: (_ms, listener) => (calls.push('onUnreachableFor'), queueMicrotask(listener), () => void calls.push('stop listening')),
    };
    const limiter = new ImageLimiter({ maxConcurrent: 1, coordinator });
    await expect(limiter.schedule({ weight: 1 }, async () => 'ran')).resolves.toBe('ran');
    await limiter.stop();
    expect(calls).toEqual(expect.arrayContaining(['join', 'leave', 'pausedUntil', 'onUnreachableFor', 'stop listening', 'close']));
    expect(calls.at(-1)).toBe('close');
  });
});
