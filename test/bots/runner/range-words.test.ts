import { describe, expect, it } from 'vitest';
import { RANGE_FIELDS, rangeWords, sayWords } from '../../../bots/runner/index.js';
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
