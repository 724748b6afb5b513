import { describe, expect, it } from 'vitest';
import { escapedExcerpt } from '../../../bots/slack/slack-text.js';

describe('escapedExcerpt', () => {
  it('keeps text that fits, escaped', () => {
    expect(escapedExcerpt('a <b> & c', 20)).toBe('a &lt;b&gt; &amp; c');
  });

  it('counts the escaped text, never cutting an entity in two, and ends with an ellipsis', () => {
    const excerpt = escapedExcerpt('<'.repeat(1000), 1000);
    expect(excerpt.length).toBeLessThanOrEqual(1000);
    expect(excerpt).toBe(`${'&lt;'.repeat(249)}…`);
    expect(escapedExcerpt('ab&cd', 5)).toBe('ab…');
  });
});
