import { describe, expect, it } from 'vitest';
import { costText } from '../../nodes/nodes/PictorImage/output-items.js';

describe("an item's cost text", () => {
  it('shows the total and what each image cost with every digit, in the same format for one image and for several', () => {
    expect(costText({ n: 1, perImageUsd: 0.00636, totalUsd: 0.00636, basis: 'table' })).toBe('$0.00636 (1 × $0.00636)');
    expect(costText({ n: 2, perImageUsd: 0.00636, totalUsd: 0.01272, basis: 'table' })).toBe('$0.01272 (2 × $0.00636)');
  });

  it('says when the cost is an estimate, and why', () => {
    expect(costText({ n: 1, perImageUsd: 0.22375, totalUsd: 0.22375, basis: 'estimate', reason: 'no price is shown for edits' })).toBe(
      'up to $0.22375 (1 × $0.22375), an estimate: no price is shown for edits',
    );
  });
});
