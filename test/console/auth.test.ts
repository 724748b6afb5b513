import { describe, expect, it } from 'vitest';
import { Sessions } from '../../src/console/auth.js';

const TOKEN = 'the-owners-token-0123456789';

describe('the console’s sessions', () => {
  it('count wrong tokens per client address and per minute, and always let the right token in', () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 0);
    const sessions = new Sessions(TOKEN, () => now);
    for (let i = 0; i < 10; i++) expect(sessions.login(`wrong-${i}`, '192.0.2.1')).toBeUndefined();
    expect(sessions.login('wrong-10', '192.0.2.1')).toBe('throttled');
    expect(sessions.login('wrong-0', '192.0.2.2')).toBeUndefined();
    expect(sessions.login(TOKEN, '192.0.2.1')).toMatchObject({ id: expect.any(String), csrf: expect.any(String) });
    // Not counted (null): never throttled.
    for (let i = 0; i < 20; i++) expect(sessions.login(`wrong-${i}`, null)).toBeUndefined();
    now += 60_000;
    expect(sessions.login('wrong-11', '192.0.2.1')).toBeUndefined();
  });

  it('keep count of at most 10,000 addresses at once, forgetting the one longest quiet', () => {
    const sessions = new Sessions(TOKEN, () => Date.UTC(2026, 0, 1, 12, 0, 0));
    for (let i = 0; i < 10; i++) sessions.login(`wrong-${i}`, '192.0.2.1');
    for (let i = 0; i < 10_000; i++) sessions.login('wrong', `10.0.${Math.floor(i / 256)}.${i % 256}`);
    expect(sessions.login('wrong-10', '192.0.2.1')).toBeUndefined();
  });
});
