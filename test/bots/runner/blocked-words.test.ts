import { describe, expect, it } from 'vitest';
import { findBlockedWord, parseWordList } from '../../../bots/runner/index.js';

describe('findBlockedWord', () => {
  it('matches whole words and phrases whatever the case, accents or compatibility forms', () => {
    expect(findBlockedWord('A CAFÉ at night', ['cafe'])).toBe('cafe');
    expect(findBlockedWord('a cafe\u0301', ['Café'])).toBe('Café');
    expect(findBlockedWord('ｇｏｒｅ', ['gore'])).toBe('gore');
    expect(findBlockedWord('the red,  FOX.', ['red fox'])).toBe('red fox');
  });

  it('matches a word split by invisible characters (zero-width space, soft hyphen, zero-width joiner)', () => {
    expect(findBlockedWord('go\u200Bre', ['gore'])).toBe('gore');
    expect(findBlockedWord('go\u00ADre', ['gore'])).toBe('gore');
    expect(findBlockedWord('a red fo\u200Dx', ['red fox'])).toBe('red fox');
  });

  it('does not match inside other words or across a word in between', () => {
    expect(findBlockedWord('a classic glass', ['ass'])).toBeUndefined();
    expect(findBlockedWord('a redfox', ['red fox'])).toBeUndefined();
    expect(findBlockedWord('a red little fox', ['red fox'])).toBeUndefined();
  });
});

describe('parseWordList', () => {
  it('splits on commas and new lines, dropping blanks and repeats by their folded form', () => {
    expect(parseWordList(' gore,, Café ,cafe\nred   fox ')).toEqual(['gore', 'Café', 'red fox']);
  });
});
