import { describe, expect, it } from 'vitest';
import { clientOf, OncePerMinute, Sessions } from '../../src/console/auth.js';

const TOKEN = 'the-owners-token-0123456789';

describe('the console’s sessions', () => {
  it('count wrong tokens per client address and per minute, and answer a throttled address 429 without comparing its token', () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const sessions = new Sessions(TOKEN, () => now);
    for (let i = 0; i < 10; i++) expect(sessions.login(`wrong-${i}`, '192.0.2.1')).toBeUndefined();
    expect(sessions.login('wrong-10', '192.0.2.1')).toBe('throttled');
    // Its right token too: a throttled address learns nothing about its guesses.
    expect(sessions.login(TOKEN, '192.0.2.1')).toBe('throttled');
    // Another address is not slowed, and its right token gets in.
    expect(sessions.login('wrong-0', '192.0.2.2')).toBeUndefined();
    expect(sessions.login(TOKEN, '192.0.2.2')).toMatchObject({ id: expect.any(String), csrf: expect.any(String) });
    // Not counted (null): never throttled.
    for (let i = 0; i < 20; i++) expect(sessions.login(`wrong-${i}`, null)).toBeUndefined();
    expect(sessions.login(TOKEN, null)).toMatchObject({ id: expect.any(String) });
    now += 60_000;
    expect(sessions.login('wrong-11', '192.0.2.1')).toBeUndefined();
    expect(sessions.login(TOKEN, '192.0.2.1')).toMatchObject({ id: expect.any(String) });
  });

  it('count an IPv6 client by its /64 (one holder has all of it) and an IPv4-mapped one as its IPv4 address', () => {
    const sessions = new Sessions(TOKEN, () => Date.UTC(2026, 0, 1, 12, 0, 0));
    // Addresses of one /64, written in different ways: one count.
    const sameNet = ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:DB8:1:2:a:b:c:d', '[2001:db8:1:2::5]'];
    for (let i = 0; i < 10; i++) expect(sessions.login(`wrong-${i}`, sameNet[i % sameNet.length]!)).toBeUndefined();
    expect(sessions.login(TOKEN, '2001:db8:1:2:dead:beef:0:1')).toBe('throttled');
    // The next /64 is another client.
    expect(sessions.login(TOKEN, '2001:db8:1:3::1')).toMatchObject({ id: expect.any(String) });
    // An IPv4 client seen through an IPv6 socket is its IPv4 address, however it is written.
    for (let i = 0; i < 5; i++) sessions.login(`wrong-${i}`, '::ffff:192.0.2.7');
    for (let i = 5; i < 10; i++) sessions.login(`wrong-${i}`, '192.0.2.7');
    expect(sessions.login(TOKEN, '::FFFF:192.0.2.7')).toBe('throttled');
    expect(sessions.login(TOKEN, '192.0.2.7')).toBe('throttled');
    expect(sessions.login(TOKEN, '192.0.2.8')).toMatchObject({ id: expect.any(String) });
  });

  it('count an IPv4 client seen through NAT64 or an IPv4-translated address as its IPv4 address, not as one /64 shared with every other', () => {
    // The well-known NAT64 prefix (64:ff9b::/96): each IPv4 client behind it is its own.
    expect(clientOf('64:ff9b::192.0.2.7')).toBe('192.0.2.7');
    expect(clientOf('64:ff9b::c000:208')).toBe('192.0.2.8');
    expect(clientOf('[64:FF9B:0:0:0:0:C000:209]')).toBe('192.0.2.9');
    // IPv4-mapped and IPv4-translated (::ffff:0:a.b.c.d), however written: not the /64 of ::1.
    expect(clientOf('::ffff:c000:207')).toBe('192.0.2.7');
    expect(clientOf('0:0:0:0:0:ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(clientOf('::ffff:0:192.0.2.7')).toBe('192.0.2.7');
    expect(clientOf('::ffff:0:c000:207')).toBe('192.0.2.7');
    // Anything else in those /64s is still counted by its /64: ::1 is not an IPv4 address.
    expect(clientOf('::1')).toBe('0:0:0:0::/64');
    expect(clientOf('64:ff9b:1::192.0.2.7')).toBe('64:ff9b:1:0::/64');
    expect(clientOf('2001:db8::192.0.2.7')).toBe('2001:db8:0:0::/64');

    const sessions = new Sessions(TOKEN, () => Date.UTC(2026, 0, 1, 12, 0, 0));
    for (let i = 0; i < 10; i++) expect(sessions.login(`wrong-${i}`, '64:ff9b::192.0.2.7')).toBeUndefined();
    expect(sessions.login(TOKEN, '192.0.2.7')).toBe('throttled');
    // Another IPv4 client through the same NAT64 is not slowed, nor the loopback one.
    expect(sessions.login(TOKEN, '64:ff9b::192.0.2.8')).toMatchObject({ id: expect.any(String) });
    for (let i = 0; i < 10; i++) sessions.login(`wrong-${i}`, '::ffff:0:192.0.2.9');
    expect(sessions.login(TOKEN, '::1')).toMatchObject({ id: expect.any(String) });
  });

  it('keep count of at most 10,000 addresses at once, forgetting the one longest quiet', () => {
    const sessions = new Sessions(TOKEN, () => Date.UTC(2026, 0, 1, 12, 0, 0));
    for (let i = 0; i < 9; i++) sessions.login(`wrong-${i}`, '192.0.2.1');
    for (let i = 0; i < 10; i++) sessions.login(`wrong-${i}`, '192.0.2.2');
    for (let i = 0; i < 9_998; i++) sessions.login('wrong', `10.0.${Math.floor(i / 256)}.${i % 256}`);
    // The first address counted is heard from again: now the one longest quiet is the second.
    sessions.login('wrong-9', '192.0.2.1');
    sessions.login('wrong', '10.1.0.0');
    expect(sessions.login('wrong-10', '192.0.2.1')).toBe('throttled');
    expect(sessions.login('wrong-10', '192.0.2.2')).toBeUndefined();
  });
});

describe('a warning once a minute', () => {
  it('says the first of each key in a minute, with how many of that key went unsaid since its last', () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const once = new OncePerMinute<string | null>(() => now);
    expect(once.note('192.0.2.1')).toBe(0);
    for (let i = 0; i < 5; i++) expect(once.note('192.0.2.1')).toBeUndefined();
    expect(once.note('192.0.2.2')).toBe(0);
    expect(once.note(null)).toBe(0);
    expect(once.note(null)).toBeUndefined();
    now += 59_999;
    expect(once.note('192.0.2.1')).toBeUndefined();
    now += 1;
    expect(once.note('192.0.2.1')).toBe(6);
    expect(once.note(null)).toBe(1);
    expect(once.note('192.0.2.2')).toBe(0);
  });

  it('keeps at most 10,000 keys, forgetting the one longest quiet', () => {
    const once = new OncePerMinute<string>(() => 0);
    once.note('a');
    once.note('b');
    for (let i = 0; i < 9_998; i++) once.note(`k${i}`);
    once.note('a');
    once.note('c');
    expect(once.note('a')).toBeUndefined();
    expect(once.note('b')).toBe(0);
  });
});
