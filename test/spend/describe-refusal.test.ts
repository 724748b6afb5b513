import { describe, expect, it } from 'vitest';
import { formatUsd } from '../../src/core/pricing.js';
import { describeSpendRefusal } from '../../src/spend/describe-refusal.js';
import { BudgetExceededError } from '../../src/spend/errors.js';

const NOW = Date.UTC(2030, 0, 2, 20, 48);
const MIDNIGHT = Date.UTC(2030, 0, 3);

describe('describeSpendRefusal, the one sentence for a refused job on every surface', () => {
  it('says what the job could cost, what is left of whose budget, and when it resets', () => {
    expect(describeSpendRefusal({ code: 'budget_user_daily', limit: 1, used: 0.8, resetsAt: MIDNIGHT }, { estimateUsd: 0.5, now: NOW })).toBe(
      'This job could cost up to $0.500, more than the $0.200 left of your daily budget of $1.00 (spent $0.800); fewer or cheaper images may fit, and the budget resets at 00:00 UTC (in 3 h 12 min).',
    );
  });

  it('says the budget is used up when nothing is left', () => {
    expect(describeSpendRefusal({ code: 'budget_scope_daily', limit: 2, used: 2, resetsAt: MIDNIGHT }, { estimateUsd: 0.05, now: NOW, scopeName: 'this workspace' })).toBe(
      'This workspace has reached its daily budget of $2.00 (spent $2.00, $0.00 left); it resets at 00:00 UTC (in 3 h 12 min).',
    );
  });

  it('says what is left as the ledger counts it, without the noise of a float subtraction', () => {
    // $1 a day with $0.90 spent: $0.10 left, where a float subtraction says 0.09999999999999998 (shown as $0.1000).
    const sentence = describeSpendRefusal({ code: 'budget_user_daily', limit: 1, used: 0.9, resetsAt: MIDNIGHT }, { estimateUsd: 0.2, now: NOW });
    expect(sentence).toContain(` ${formatUsd(0.1)} left `);
  });

  it('names the whole account, and the date a monthly cap resets', () => {
    expect(describeSpendRefusal({ code: 'budget_account_monthly', limit: 50, used: 49.99, resetsAt: Date.UTC(2030, 1, 1) }, { estimateUsd: 0.2, now: NOW })).toBe(
      'This job could cost up to $0.200, more than the $0.0100 left of the whole account’s monthly budget of $50.00 (spent $49.99); fewer or cheaper images may fit, and the budget resets at 2030-02-01 00:00 UTC (in 30 days).',
    );
  });

  it('words the limits on jobs at once and between jobs', () => {
    expect(describeSpendRefusal({ code: 'user_concurrency', limit: 1, used: 1, resetsAt: 0 }, { estimateUsd: 0, now: NOW })).toBe(
      'You already have 1 job queued or running, the most allowed at once (1); wait for one to finish or cancel it.',
    );
    expect(describeSpendRefusal({ code: 'user_cooldown', limit: 30, used: 10, resetsAt: NOW + 20_000 }, { estimateUsd: 0, now: NOW })).toBe(
      'You can start one job every 30 s; try again in 20 s.',
    );
  });

  it('never tells a person to try again in 0 ms: a cooldown that ran out while the refusal was worded is the smallest wait said', () => {
    for (const resetsAt of [NOW, NOW - 250]) {
      expect(describeSpendRefusal({ code: 'user_cooldown', limit: 30, used: 30, resetsAt }, { estimateUsd: 0, now: NOW })).toBe('You can start one job every 30 s; try again in 1 ms.');
    }
  });

  it('says a scope the breaker paused is paused, what it spent in the last hour against what it usually may, and who can resume it', () => {
    const paused = { code: 'scope_paused' as const, limit: 1.5, used: 4.2, resetsAt: Number.POSITIVE_INFINITY };
    expect(describeSpendRefusal(paused, { estimateUsd: 0.2, now: NOW, scopeName: 'this server' })).toBe(
      'This server is paused: it spent $4.20 in the last hour, more than the $1.50 an hour its usual use allows. ' +
        'No new jobs are taken until the bot’s operator (who pays for its API key) resumes it from the Pictor console.',
    );
    expect(describeSpendRefusal(paused, { estimateUsd: 0.2, now: NOW, scopeName: 'your use of the bot outside servers' })).toMatch(/^Your use of the bot outside servers is paused: /);
  });

  it('is the message of the CLI’s and the n8n node’s error, whose code is the cap’s', () => {
    const refusal = { ok: false as const, code: 'budget_account_daily' as const, limit: 0.01, used: 0.00636, resetsAt: MIDNIGHT };
    const error = new BudgetExceededError(refusal, 0.00636, NOW);
    expect(error.code).toBe('budget_account_daily');
    expect(error.message).toBe(describeSpendRefusal(refusal, { estimateUsd: 0.00636, now: NOW }));
    expect(error.leftUsd).toBeCloseTo(0.00364, 9);
  });
});
