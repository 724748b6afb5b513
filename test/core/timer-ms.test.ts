import { afterEach, describe, expect, it, vi } from 'vitest';
import { startDiscordBot } from '../../bots/discord/start-discord-bot.js';
import { PictorClient } from '../../src/index.js';
import { checkUntil, MAX_TIMER_MS, timerMsOf, waitWithin } from '../../src/core/timer-ms.js';

describe('a wait in ms (a grace, a timeout)', () => {
  it('is taken as given from 0 to the longest a timer holds', () => {
    for (const ms of [0, 1.5, 10_000, MAX_TIMER_MS]) expect(timerMsOf('graceMs', ms)).toBe(ms);
  });

  it.each([-1, MAX_TIMER_MS + 1, Infinity, NaN, '10'])('is refused at %s with a RangeError naming the option (setTimeout would wait 1 ms)', (ms) => {
    expect(() => timerMsOf('graceMs', ms)).toThrow(RangeError);
    expect(() => timerMsOf('graceMs', ms)).toThrow(/^graceMs must be a number of milliseconds from 0 to 2147483647/);
  });

  it('is refused at 0 for a timeout, and as the error it is given', () => {
    expect(() => timerMsOf('timeoutMs', 0, { aboveZero: true })).toThrow(/^timeoutMs must be a number of milliseconds more than 0/);
    expect(() => timerMsOf('timeoutMs', 0, { aboveZero: true, error: (option) => new TypeError(option) })).toThrow(new TypeError('timeoutMs'));
  });
});

describe('every option that is a wait in ms is checked by that one rule', () => {
  const client = (timeoutMs: number) => new PictorClient({ baseURL: 'http://127.0.0.1:1', apiKey: 'k', timeoutMs, idleTimeoutMs: timeoutMs });
  const bot = (stopGraceMs: number) => startDiscordBot({ token: 'unused', runner: {} as never, state: {} as never, logger: {} as never, stopGraceMs });

  it.each([-1, MAX_TIMER_MS + 1, Infinity, NaN])('%s: the client’s timeouts and the Discord bot’s stop grace are refused, as the rule refuses it', async (ms) => {
    expect(() => client(ms)).toThrow(expect.objectContaining({ code: 'validation_error', param: 'timeoutMs', message: captured(() => timerMsOf('timeoutMs', ms, { aboveZero: true })) }));
    await expect(bot(ms)).rejects.toThrow(new RangeError(captured(() => timerMsOf('stopGraceMs', ms))));
  });

  it('takes the longest a timer holds as a timeout; 0 as a grace, not as a timeout', () => {
    expect(client(MAX_TIMER_MS).timeoutMs).toBe(MAX_TIMER_MS);
    expect(client(MAX_TIMER_MS).idleTimeoutMs).toBe(MAX_TIMER_MS);
    expect(() => client(0)).toThrow(expect.objectContaining({ param: 'timeoutMs', message: captured(() => timerMsOf('timeoutMs', 0, { aboveZero: true })) }));
  });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('a stop’s time left', () => {
  it('refuses an until that is not a time, before the stop begins (NaN or Infinity would make every wait 1 ms)', () => {
    for (const until of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) expect(() => checkUntil(until)).toThrow(RangeError);
    expect(checkUntil(undefined)).toBeUndefined();
    expect(checkUntil(1_700_000_000_000)).toBe(1_700_000_000_000);
  });

  it('gives a step its own bound, or what is left of until when that is less, never below 0 nor above what a timer can wait', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    expect(waitWithin(5_000, undefined)).toBe(5_000);
    expect(waitWithin(5_000, 1_002_000)).toBe(2_000);
    expect(waitWithin(5_000, 1_009_000)).toBe(5_000);
    expect(waitWithin(5_000, 999_000)).toBe(0);
    expect(waitWithin(Number.POSITIVE_INFINITY, undefined)).toBe(MAX_TIMER_MS);
    expect(waitWithin(Number.POSITIVE_INFINITY, 1_000_000 + 2 * MAX_TIMER_MS)).toBe(MAX_TIMER_MS);
  });
});

/** The message of what `thrower` throws. */
function captured(thrower: () => unknown): string {
  try {
    thrower();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('it threw nothing');
}
