import { afterEach, describe, expect, it, vi } from 'vitest';
import { ANSWER_TRIP_MS, AnswerBudget } from '../../../bots/runner/answer-budget.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('AnswerBudget', () => {
  it('ends the waits before a first answer at arrival + the platform’s deadline − the answer’s own trip, and says what is left', () => {
    const budget = new AnswerBudget(1_000_000, 3_000);
    expect(budget.answerBy).toBe(1_003_000);
    expect(budget.endsAt).toBe(1_003_000 - ANSWER_TRIP_MS);
    expect(budget.timeLeft(1_001_000)).toBe(2_000 - ANSWER_TRIP_MS);
    expect(budget.timeLeft(1_003_000)).toBe(0);
  });

  it('waits for what is asked within it only while time is left, and asks nothing once none is', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const budget = new AnswerBudget(Date.now(), 3_000);
    await expect(budget.within(async (leftMs) => leftMs)).resolves.toBe(3_000 - ANSWER_TRIP_MS);
    const stalled = budget.within(() => new Promise<never>(() => {}), 'the store');
    const outcome = expect(stalled).rejects.toThrow('the store');
    await vi.advanceTimersByTimeAsync(3_000 - ANSWER_TRIP_MS);
    await outcome;
    const ask = vi.fn(async () => 'asked');
    await expect(budget.within(ask)).rejects.toBeInstanceOf(Error);
    expect(ask).not.toHaveBeenCalled();
  });
});
