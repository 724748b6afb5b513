import { describe, expect, it } from 'vitest';
import { redactRedisUrl, redisUrlSecrets, scrubRedisSecrets } from '../../src/core/redis-url.js';

const SECRET = 'hunter2pw';

describe('a Redis URL shown in a log or an error', () => {
  it.each([
    ['password', `redis://127.0.0.1:46391/?password=${SECRET}`, 'redis://127.0.0.1:46391/?password=***'],
    ['Password, in any case', `redis://cache:6379/0?PassWord=${SECRET}&db=1`, 'redis://cache:6379/0?PassWord=***&db=1'],
    ['pass', `redis://cache?pass=${SECRET}`, 'redis://cache?pass=***'],
    ['username and user', `redis://cache?username=${SECRET}&user=${SECRET}x`, 'redis://cache?username=***&user=***'],
    ['a name written with percent escapes', `redis://cache?pass%77ord=${SECRET}`, 'redis://cache?pass%77ord=***'],
    ['a repeated name', `redis://cache?password=a&password=${SECRET}`, 'redis://cache?password=***&password=***'],
    ['sentinelPassword', `redis://cache?sentinelPassword=${SECRET}&db=1`, 'redis://cache?sentinelPassword=***&db=1'],
    ['sentinelUsername', `redis://cache?sentinelUsername=${SECRET}`, 'redis://cache?sentinelUsername=***'],
    ['TLS key and passphrase', `rediss://cache?tls.passphrase=${SECRET}&tls.key=${SECRET}k`, 'rediss://cache?tls.passphrase=***&tls.key=***'],
    ['secret or token', `redis://cache?clientSecret=${SECRET}&authToken=${SECRET}t`, 'redis://cache?clientSecret=***&authToken=***'],
  ])('hides the value of a %s query parameter and keeps the rest as written', (_what, url, shown) => {
    expect(redactRedisUrl(url)).toBe(shown);
  });

  it('hides both the password before the host and one in the query', () => {
    expect(redactRedisUrl(`redis://default:${SECRET}@cache:6379/0?password=${SECRET}2`)).toBe('redis://***:***@cache:6379/0?password=***');
  });

  it.each([
    ['a user name and password before the host', `redis://alice:${SECRET}@cache`, 'redis://***:***@cache'],
    ['a user name alone before the host', 'redis://alice@cache:6379', 'redis://***@cache:6379'],
    ['a user name in the query', 'redis://cache?username=alice', 'redis://cache?username=***'],
  ])('hides user names the same way before the host and in the query: %s', (_what, url, shown) => {
    expect(redactRedisUrl(url)).toBe(shown);
    expect(redisUrlSecrets(url)).toContain('alice');
  });

  it('drops the fragment, where a password with an unescaped # spills over', () => {
    const url = 'redis://cache?password=hunter#2pw';
    expect(redactRedisUrl(url)).toBe('redis://cache?password=***');
    expect(redisUrlSecrets(url)).toEqual(expect.arrayContaining(['hunter', '2pw']));
  });

  it('keeps query parameters that hold no credential', () => {
    expect(redactRedisUrl('redis://cache:6379/0?family=6&connectionName=pictor&tls=true')).toBe('redis://cache:6379/0?family=6&connectionName=pictor&tls=true');
  });
});

describe('the secret parts of a Redis URL, scrubbed from text that quotes it', () => {
  it('names a query password as it is written and as the client decodes it', () => {
    expect(redisUrlSecrets('redis://cache?password=hunter%202+pw')).toEqual(expect.arrayContaining(['hunter%202+pw', 'hunter 2 pw']));
  });

  it('names every value the shown URL hides, and nothing it keeps', () => {
    const url = `redis://default:${SECRET}@cache/0?user=ops-user&pass=${SECRET}-q&family=6`;
    const secrets = redisUrlSecrets(url);
    expect(secrets).toEqual(expect.arrayContaining(['default', SECRET, 'ops-user', `${SECRET}-q`]));
    expect(secrets).not.toContain('6');
    const shown = redactRedisUrl(url);
    for (const secret of secrets) expect(shown).not.toContain(secret);
  });

  it('still names the password when it holds a percent sign that is not an escape', () => {
    expect(redisUrlSecrets('redis://:pa%zz@cache')).toContain('pa%zz');
    expect(redisUrlSecrets('redis://cache?password=pa%zz')).toContain('pa%zz');
  });
});

describe('the Redis client\'s reason with the secrets of its URL scrubbed', () => {
  it.each([
    ['a secret of 4 characters or more, wherever it is', 'AUTH failed for hunter2pw (xhunter2pwx)', ['hunter2pw'], 'AUTH failed for *** (x***x)'],
    ['a short password standing as a word', 'ERR AUTH x failed: "x".', ['x'], 'ERR AUTH *** failed: "***".'],
    ['a short password with characters a pattern would read', 'AUTH a.b failed', ['a.b'], 'AUTH *** failed'],
    ['a longer secret before a shorter one inside it', 'AUTH abc abcdef', ['abc', 'abcdef'], 'AUTH *** ***'],
  ])('hides %s', (_what, text, secrets, shown) => {
    expect(scrubRedisSecrets(text, secrets)).toBe(shown);
  });

  it.each([
    ['a one-letter password', 'password=e', 'connect ECONNREFUSED 127.0.0.1:6379 (the server refused)'],
    ['a two-letter password', 'password=in', 'WRONGPASS invalid username-password pair or user is disabled.'],
    ['a three-letter user name', 'username=use&password=a', 'WRONGPASS invalid username-password pair or user is disabled.'],
  ])('keeps the words of the reason that only contain %s', (_what, query, reason) => {
    expect(scrubRedisSecrets(reason, redisUrlSecrets(`redis://cache?${query}`))).toBe(reason);
  });
});
