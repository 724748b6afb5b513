import { describe, expect, it } from 'vitest';
import { RANGE_FIELDS, rangeValueOf, rangeWords, sayWords } from '../../../bots/runner/index.js';
import { INTEGER_RANGES } from '../../../src/internal.js';

describe('rangeWords', () => {
  it('takes the bounds of a member’s range fields from the spec’s one table', () => {
    expect(RANGE_FIELDS.n).toBe(INTEGER_RANGES.n);
    expect(RANGE_FIELDS.output_compression).toBe(INTEGER_RANGES.output_compression);
  });

  it('says the field’s own bounds, or those it is given', () => {
    expect(sayWords('en', rangeWords('n'))).toBe('an integer from 1 to 10');
    expect(sayWords('en', rangeWords('n', {}, [1, 4]))).toBe('an integer from 1 to 4');
  });
});

describe('rangeValueOf', () => {
  it('takes a whole number in the field’s range, as digits or as a number', () => {
    expect(rangeValueOf('n', '3')).toBe(3);
    expect(rangeValueOf('n', ' 10 ')).toBe(10);
    expect(rangeValueOf('n', 4)).toBe(4);
    expect(rangeValueOf('output_compression', '0')).toBe(0);
  });

  it('refuses what is not digits, not whole, or out of range', () => {
    for (const raw of ['0x3', '3.0', '1e1', '2.5', '-1', '', 'three', '0', '11', 2.5, 0, 11, Number.NaN]) expect(rangeValueOf('n', raw), String(raw)).toBeUndefined();
    expect(rangeValueOf('output_compression', '101')).toBeUndefined();
  });
});
