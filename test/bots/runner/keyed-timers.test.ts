import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyedTimers } from '../../../bots/runner/keyed-timers.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('KeyedTimers', () => {
  it('runs each key’s run once its wait is over, one a key: a run set again replaces the one waiting', async () => {
    vi.useFakeTimers();
    const timers = new KeyedTimers();
    const ran: string[] = [];
    timers.set('alice', 1_000, () => ran.push('alice first'));
    timers.set('alice', 2_000, () => ran.push('alice again'));
    timers.set('bob', 500, () => ran.push('bob'));
    expect(timers.size).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(ran).toEqual(['bob']);
    expect(timers.has('bob')).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(ran).toEqual(['bob', 'alice again']);
    expect(timers.size).toBe(0);
  });

  it('runs every waiting run at once, or drops them (one key, or all) never to run', async () => {
    vi.useFakeTimers();
    const timers = new KeyedTimers();
    const ran: string[] = [];
    timers.set('alice', 1_000, () => ran.push('alice'));
    timers.set('bob', 1_000, () => ran.push('bob'));
    timers.runAll();
    expect(ran).toEqual(['alice', 'bob']);
    expect(timers.size).toBe(0);
    timers.set('carol', 1_000, () => ran.push('carol'));
    timers.set('dan', 1_000, () => ran.push('dan'));
    timers.drop('carol');
    expect(timers.has('carol')).toBe(false);
    timers.clear();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(ran).toEqual(['alice', 'bob']);
  });
});
