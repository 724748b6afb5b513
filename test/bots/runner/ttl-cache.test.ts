import { afterEach, describe, expect, it, vi } from 'vitest';
import { TtlCache } from '../../../bots/runner/ttl-cache.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('TtlCache', () => {
  it('keeps a key’s answer for ttlMs from when it was asked, then reads again', async () => {
    vi.useFakeTimers();
    const cache = new TtlCache<number>({ ttlMs: 5_000 });
    let value = 1;
    const load = vi.fn(async () => value);
    expect(await cache.get('discord:g1', load)).toBe(1);
    value = 2;
    vi.advanceTimersByTime(4_999);
    expect(await cache.get('discord:g1', load)).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await cache.get('discord:g1', load)).toBe(2);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('shares a read under way with every caller meanwhile, and keeps keys apart', async () => {
    const cache = new TtlCache<string>({ ttlMs: 5_000 });
    let answer!: (value: string) => void;
    const load = vi.fn(() => new Promise<string>((resolve) => (answer = resolve)));
    const both = [cache.get('k', load), cache.get('k', load)];
    answer('one read');
    expect(await Promise.all(both)).toEqual(['one read', 'one read']);
    expect(load).toHaveBeenCalledTimes(1);
    expect(await cache.get('other', async () => 'its own')).toBe('its own');
  });

  it('does not keep a read that failed: the next call reads again', async () => {
    const cache = new TtlCache<string>({ ttlMs: 5_000 });
    const failing = vi.fn(() => Promise.reject(new Error('store away')));
    await expect(cache.get('k', failing)).rejects.toThrow('store away');
    expect(cache.size).toBe(0);
    expect(await cache.get('k', async () => 'read again')).toBe('read again');
  });

  it('keeps a newer read when an older one of the same key fails after it', async () => {
    vi.useFakeTimers();
    const cache = new TtlCache<string>({ ttlMs: 1_000 });
    let fail!: (error: Error) => void;
    const older = cache.get('k', () => new Promise<string>((_, reject) => (fail = reject)));
    vi.advanceTimersByTime(1_000);
    expect(await cache.get('k', async () => 'newer')).toBe('newer');
    fail(new Error('late failure'));
    await expect(older).rejects.toThrow('late failure');
    const load = vi.fn(async () => 'not asked');
    expect(await cache.get('k', load)).toBe('newer');
    expect(load).not.toHaveBeenCalled();
  });

  it('forgets a key at once when told (a change made in this process)', async () => {
    const cache = new TtlCache<number>({ ttlMs: 60_000 });
    expect(await cache.get('k', async () => 1)).toBe(1);
    cache.delete('k');
    expect(await cache.get('k', async () => 2)).toBe(2);
  });

  it('keeps nothing with a ttl of 0', async () => {
    const cache = new TtlCache<number>({ ttlMs: 0 });
    const load = vi.fn(async () => 1);
    await cache.get('k', load);
    await cache.get('k', load);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('holds at most maxKeys, dropping the key asked longest ago first', async () => {
    const cache = new TtlCache<string>({ ttlMs: 60_000, maxKeys: 2 });
    for (const key of ['a', 'b', 'c']) await cache.get(key, async () => key);
    expect(cache.size).toBe(2);
    const load = vi.fn(async () => 'again');
    expect(await cache.get('a', load)).toBe('again');
    expect(await cache.get('c', load)).toBe('c');
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('counts an answer given from what it keeps as an ask: the key asked longest ago goes first, not the one read first', async () => {
    const cache = new TtlCache<string>({ ttlMs: 60_000, maxKeys: 2 });
    for (const key of ['a', 'b', 'a', 'c']) await cache.get(key, async () => key);
    const load = vi.fn(async () => 'again');
    expect(await cache.get('a', load)).toBe('a');
    expect(await cache.get('c', load)).toBe('c');
    expect(load).not.toHaveBeenCalled();
    expect(await cache.get('b', load)).toBe('again');
  });
});
