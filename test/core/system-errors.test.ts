import { describe, expect, it } from 'vitest';
import { describeFileError, describeUnreachable, systemErrorCode } from '../../src/internal.js';

describe('system errors in words', () => {
  it.each([
    ['ENOENT', 'no such file or directory'],
    ['EACCES', 'permission denied'],
    ['ENOSPC', 'no space left on device'],
  ])('describes %s as "%s"', (code, words) => {
    expect(describeFileError(Object.assign(new Error(`${code}: x`), { code }))).toBe(words);
  });

  it('keeps a message that has no system code', () => {
    expect(describeFileError(new Error('the disk is haunted'))).toBe('the disk is haunted');
  });

  it('finds the code inside the errors that wrap it (cause, Slack’s original)', () => {
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND discord.com'), { code: 'ENOTFOUND' });
    expect(systemErrorCode(new TypeError('fetch failed', { cause: dns }))).toBe('ENOTFOUND');
    expect(systemErrorCode(Object.assign(new Error('A request error occurred'), { code: 'slack_webapi_request_error', original: dns }))).toBe('ENOTFOUND');
  });

  it('finds undici’s code inside fetch’s error (its cause), and no code that is not a system’s', () => {
    const connect = Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' });
    expect(systemErrorCode(new TypeError('fetch failed', { cause: connect }))).toBe('UND_ERR_CONNECT_TIMEOUT');
    expect(systemErrorCode(new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }))).toBe('UND_ERR_SOCKET');
    expect(systemErrorCode(Object.assign(new Error('An API error occurred: internal_error'), { code: 'slack_webapi_platform_error' }))).toBeUndefined();
    expect(systemErrorCode(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))).toBeUndefined();
  });

  it('says a host could not be reached, and why, only for errors of reaching it', () => {
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND discord.com'), { code: 'ENOTFOUND' });
    expect(describeUnreachable(new TypeError('fetch failed', { cause: dns }), 'discord.com')).toBe(
      'could not reach discord.com: its name could not be found (no network, or a wrong host name)',
    );
    expect(describeUnreachable(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }), 'slack.com')).toBe('could not reach slack.com: connection refused');
    expect(describeUnreachable(new Error('401: Unauthorized'), 'discord.com')).toBeUndefined();
  });
});
