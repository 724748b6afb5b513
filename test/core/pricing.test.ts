import { describe, expect, it } from 'vitest';
import { describeQuote, estimatePrice, PRICE_TABLE, priceOfResult } from '../../src/index.js';

describe('pricing', () => {
  it('quotes the spec table per image times n', () => {
    const quote = estimatePrice({ size: '1024x1024', quality: 'medium', n: 3 });
    expect(quote).toMatchObject({ basis: 'table', perImageUsd: 0.05618, totalUsd: 0.16854, n: 3 });
    expect(quote.reason).toBeUndefined();
  });

  it('knows every cell of the table', () => {
    expect(estimatePrice({ size: '1536x1024', quality: 'low' }).totalUsd).toBe(0.0053);
    expect(estimatePrice({ size: '1024x1536', quality: 'high' }).totalUsd).toBe(0.1749);
    expect(estimatePrice({ size: '1024x1024', quality: 'high' }).totalUsd).toBe(0.22366);
    expect(Object.keys(PRICE_TABLE)).toHaveLength(3);
  });

  it('estimates quality auto at the highest tier of that size, and says so', () => {
    const quote = estimatePrice({ size: '1536x1024', quality: 'auto', n: 2 });
    expect(quote.basis).toBe('estimate');
    expect(quote.perImageUsd).toBe(0.1749);
    expect(quote.reason).toContain('quality auto');
  });

  it('estimates an unknown size at the highest price of the table', () => {
    const quote = estimatePrice({ size: '2048x2048', quality: 'low' });
    expect(quote).toMatchObject({ basis: 'estimate', perImageUsd: 0.00636 });
  });

  it('always flags edits as estimates, even with a table size and quality', () => {
    const quote = estimatePrice({ operation: 'edit', size: '1024x1024', quality: 'low' });
    expect(quote.basis).toBe('estimate');
    expect(quote.perImageUsd).toBe(0.00636);
    expect(quote.reason).toContain('edits');
  });

  it('prices a finished generation by the quality the service reports', () => {
    const quote = priceOfResult({ operation: 'generate', requested: { size: '1024x1024', quality: 'auto' }, reported: { size: '1024x1024', quality: 'medium' }, images: 2 });
    expect(quote).toMatchObject({ basis: 'table', totalUsd: 0.11236 });
  });

  it('describes a table price and an estimate differently', () => {
    // Every digit of the price per image, so that it adds up to the total shown (not "$0.0127 (2 × $0.0064)").
    expect(describeQuote(estimatePrice({ size: '1024x1024', quality: 'low', n: 2 }))).toBe('$0.01272 (2 × $0.00636)');
    expect(describeQuote(estimatePrice({ size: '1024x1024', quality: 'high', n: 4 }))).toBe('$0.89464 (4 × $0.22366)');
    expect(describeQuote(estimatePrice({ size: '1024x1024', quality: 'auto' }))).toMatch(/^up to \$0\.224, an estimate/);
  });

  it('shows one image as any other price, and with its breakdown when always asked, as the n8n node words each item', () => {
    const one = estimatePrice({ size: '1024x1024', quality: 'low' });
    // The CLI's "Cost:" line: one image reads as any other price.
    expect(describeQuote(one)).toBe('$0.0064');
    // The node's cost.text: one format on every item, every digit shown, so its figures are those of usd and perImageUsd.
    expect(describeQuote(one, { breakdown: 'always' })).toBe('$0.00636 (1 × $0.00636)');
    expect(describeQuote(estimatePrice({ size: '1024x1024', quality: 'low', n: 2 }), { breakdown: 'always' })).toBe('$0.01272 (2 × $0.00636)');
    expect(describeQuote({ n: 1, perImageUsd: 0.22375, totalUsd: 0.22375, basis: 'estimate', reason: 'no price is shown for edits' }, { breakdown: 'always' })).toBe(
      'up to $0.22375 (1 × $0.22375), an estimate: no price is shown for edits',
    );
  });
});
