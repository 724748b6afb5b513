import { describe, expect, it } from 'vitest';
import { historyLineValues, say, type HistoryEntry } from '../../../bots/runner/index.js';
import { LOCALES } from '../../../bots/runner/words.js';

const entry = (over: Partial<HistoryEntry>): HistoryEntry => ({
  key: 'k',
  scopeKey: 'discord:g',
  userId: 'U1',
  channelId: 'C1',
  kind: 'generate',
  prompt: 'a kite',
  n: 1,
  size: '1024x1024',
  quality: 'low',
  status: 'completed',
  at: 0,
  ...over,
});

/** A history line as `/imagine-history` shows it (Discord's words), without its time or link. */
const line = (e: HistoryEntry, locale = 'en') =>
  say(locale, 'discord.history.line', { rank: 1, when: '', author: '<@U1>', prompt: e.prompt, hasLink: 'no', link: '', ...historyLineValues(e) });

describe('a history line in words', () => {
  it('says a completed job’s cost, or that it completed when its cost is not known', () => {
    expect(line(entry({ costUsd: 0.011 }))).toBe('1. <@U1> “a kite” · 1 × 1024x1024, low · $0.0110');
    expect(line(entry({}))).toBe('1. <@U1> “a kite” · 1 × 1024x1024, low · completed');
  });

  it('says how a failed or cancelled job ended and, when the ledger charged it, what it cost', () => {
    expect(line(entry({ status: 'cancelled', costUsd: 0.00636 }))).toBe('1. <@U1> “a kite” · 1 × 1024x1024, low · cancelled · $0.0064');
    expect(line(entry({ status: 'failed', costUsd: 0.00636 }))).toBe('1. <@U1> “a kite” · 1 × 1024x1024, low · failed · $0.0064');
    expect(line(entry({ status: 'cancelled' }))).toBe('1. <@U1> “a kite” · 1 × 1024x1024, low · cancelled');
    const slack = say('en', 'slack.history.line', { rank: 1, when: '', author: '<@U1>', channel: '#art', prompt: 'a kite', hasLink: 'no', link: '', ...historyLineValues(entry({ status: 'failed', costUsd: 0.00636 })) });
    expect(slack).toBe('1. <@U1> in #art “a kite” · 1 × 1024x1024, low · failed · $0.0064');
  });

  it('says on Slack that a job was asked in a direct message, without naming that conversation', () => {
    const values = { rank: 1, when: '', author: '<@U1>', channel: 'dm', prompt: 'a kite', hasLink: 'no', link: '', ...historyLineValues(entry({ costUsd: 0.011 })) };
    expect(say('en', 'slack.history.line', values)).toBe('1. <@U1> in a direct message “a kite” · 1 × 1024x1024, low · $0.0110');
    for (const locale of LOCALES) expect(say(locale, 'slack.history.line', values)).not.toMatch(/\bdm\b/);
  });

  it('says at most what a job a stop cut off may cost when its charge was not settled as its end was recorded', () => {
    expect(line(entry({ status: 'failed', mayCostUsd: 0.00636 }))).toBe('1. <@U1> “a kite” · 1 × 1024x1024, low · failed · ≤ $0.0064');
  });

  it('says on a Slack job’s message what a job a stop cut off may be charged, not settled yet', () => {
    expect(say('en', 'slack.job.may_be_charged', { usd: '$0.0064' })).toBe(':dollar: May be charged $0.0064: the request had reached the image service, and its charge is not settled yet.');
  });

  it('says on a Slack job’s message what a failed or cancelled job was charged', () => {
    expect(say('en', 'slack.job.charged', { usd: '$0.0064' })).toBe(':dollar: Charged $0.0064: the request had reached the image service.');
  });

  it('says both in every language', () => {
    for (const locale of LOCALES) {
      const cancelled = line(entry({ status: 'cancelled', costUsd: 0.00636 }), locale);
      const released = line(entry({ status: 'cancelled' }), locale);
      expect(cancelled.startsWith(released), locale).toBe(true);
      expect(cancelled.slice(released.length), locale).toMatch(/^ · \D*0[.,]0064/);
    }
  });
});
