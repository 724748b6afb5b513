import { describe, expect, it } from 'vitest';
import { describeFileError, describeUnreachable, systemErrorCode, systemFailure } from '../../src/internal.js';

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

  it('finds the failed step under a wrapper that copies its cause’s code (the HTTP library under Slack’s WebClient)', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { code: 'ECONNREFUSED', syscall: 'connect' });
    const wrapper = Object.assign(new Error(refused.message, { cause: refused }), { code: 'ECONNREFUSED' });
    expect(systemFailure(Object.assign(new Error('A request error occurred'), { code: 'slack_webapi_request_error', original: wrapper }))).toEqual({ code: 'ECONNREFUSED', syscall: 'connect' });
  });

  it('gives each attempt of an AggregateError (each address of a name failing), with or without a code of its own', () => {
    const timedOut = Object.assign(new Error('connect ETIMEDOUT ::1:443'), { code: 'ETIMEDOUT', syscall: 'connect' });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), { code: 'ECONNREFUSED', syscall: 'connect' });
    const attempts = [
      { code: 'ETIMEDOUT', syscall: 'connect' },
      { code: 'ECONNREFUSED', syscall: 'connect' },
    ];
    // Node's own gives itself its first attempt's code; a bare one has none.
    expect(systemFailure(Object.assign(new AggregateError([timedOut, refused]), { code: 'ETIMEDOUT' }))).toEqual({ code: 'ETIMEDOUT', syscall: undefined, attempts });
    expect(systemFailure(new TypeError('fetch failed', { cause: new AggregateError([timedOut, refused]) }))).toEqual({ code: 'ETIMEDOUT', syscall: undefined, attempts });
    expect(systemErrorCode(new AggregateError([new Error('not a system error'), refused]))).toBe('ECONNREFUSED');
    // An attempt with no system error is kept as unknown, not dropped: a reader asking how every attempt failed sees it.
    expect(systemFailure(new AggregateError([new Error('not a system error'), refused]))?.attempts).toEqual([undefined, { code: 'ECONNREFUSED', syscall: 'connect' }]);
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
