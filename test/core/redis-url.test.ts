import { describe, expect, it } from 'vitest';
import { redactRedisUrl, redisUrlSecrets } from '../../src/core/redis-url.js';

const SECRET = 'hunter2pw';

describe('a Redis URL shown in a log or an error', () => {
  it.each([
    ['password', `redis://127.0.0.1:46391/?password=${SECRET}`, 'redis://127.0.0.1:46391/?password=***'],
    ['Password, in any case', `redis://cache:6379/0?PassWord=${SECRET}&db=1`, 'redis://cache:6379/0?PassWord=***&db=1'],
    ['pass', `redis://cache?pass=${SECRET}`, 'redis://cache?pass=***'],
    ['username and user', `redis://cache?username=${SECRET}&user=${SECRET}x`, 'redis://cache?username=***&user=***'],
    ['a name written with percent escapes', `redis://cache?pass%77ord=${SECRET}`, 'redis://cache?pass%77ord=***'],
    ['a repeated name', `redis://cache?password=a&password=${SECRET}`, 'redis://cache?password=***&password=***'],
  ])('hides the value of a %s query parameter and keeps the rest as written', (_what, url, shown) => {
    expect(redactRedisUrl(url)).toBe(shown);
  });

  it('hides both the password before the host and one in the query', () => {
    expect(redactRedisUrl(`redis://default:${SECRET}@cache:6379/0?password=${SECRET}2`)).toBe('redis://default:***@cache:6379/0?password=***');
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
    expect(secrets).toEqual(expect.arrayContaining([SECRET, 'ops-user', `${SECRET}-q`]));
    expect(secrets).not.toContain('default');
    expect(secrets).not.toContain('6');
    const shown = redactRedisUrl(url);
    for (const secret of secrets) expect(shown).not.toContain(secret);
  });

  it('still names the password when it holds a percent sign that is not an escape', () => {
    expect(redisUrlSecrets('redis://:pa%zz@cache')).toContain('pa%zz');
    expect(redisUrlSecrets('redis://cache?password=pa%zz')).toContain('pa%zz');
  });
});
