import { describe, expect, it } from 'vitest';
import { escapedExcerpt, jobMessageLinkOf, jobMessageSeenBy } from '../../../bots/slack/slack-text.js';

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

describe('jobMessageLinkOf', () => {
  it('links a job’s message once it is posted, and says a direct message with the bot is seen by the member alone', () => {
    expect(jobMessageLinkOf({ channelId: 'C0ART', messageTs: '1700000000.000100' })).toBe('https://slack.com/archives/C0ART/p1700000000000100');
    expect(jobMessageLinkOf({ channelId: 'G0PRIVATE', messageTs: '1700000000.000100' })).toBe('https://slack.com/archives/G0PRIVATE/p1700000000000100');
    expect(jobMessageLinkOf({ channelId: 'D0ALICE', messageTs: '1700000000.000100' })).toBe('https://slack.com/archives/D0ALICE/p1700000000000100');
    expect(jobMessageLinkOf({ channelId: 'C0ART' })).toBeUndefined();
    expect(['C0ART', 'G0PRIVATE', 'D0ALICE'].map((channelId) => jobMessageSeenBy({ channelId }))).toEqual(['everyone', 'everyone', 'member']);
  });
});
