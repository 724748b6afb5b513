import { describe, expect, it } from 'vitest';
import { closestWord } from '../../src/core/closest-word.js';

describe('the word meant', () => {
  const flags = ['prompt', 'n', 'size', 'quality', 'background', 'format', 'compression', 'moderation'];
  it('is found two letters away, a swap counting one, or by a prefix', () => {
    expect(closestWord('qualty', flags)).toBe('quality');
    expect(closestWord('qaulity', flags)).toBe('quality');
    expect(closestWord('backg', flags)).toBe('background');
  });

  it('is none when nothing is close', () => {
    expect(closestWord('style', flags)).toBeUndefined();
  });
});
