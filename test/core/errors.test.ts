import { types } from 'node:util';
import { describe, expect, it } from 'vitest';
import { AbortedError, BadResponseError, ConnectionError, ERROR_CODES, PictorError, StreamBrokenError, TimeoutError } from '../../src/index.js';
import { FileLockBusyError } from '../../src/spend/file-lock.js';
import { withoutPartial, withPartial } from '../../src/core/errors.js';
import { errorCodeOf, INTERNAL_ERROR_CODE, LedgerBusyError, makeAPIError, QuotaStoreClosedError, redactSecrets, registerSecret, sanitizeServiceText } from '../../src/internal.js';

describe('errors never carry a secret', () => {
  it('redacts a registered key wherever it appears in a message', () => {
    registerSecret('plain-registered-key-42');
    const error = new StreamBrokenError('the server said plain-registered-key-42 twice: plain-registered-key-42');
    expect(error.message).not.toContain('plain-registered-key-42');
    expect(String(error)).not.toContain('plain-registered-key-42');
    expect(error.stack).not.toContain('plain-registered-key-42');
  });

  it('redacts credential-shaped text that was never registered', () => {
    const text = redactSecrets('key sk-abcdef0123456789, header Bearer abc.def-ghi, {"Authorization": "Basic dXNlcjpwYXNz"}');
    expect(text).not.toMatch(/abcdef0123456789|abc\.def-ghi|dXNlcjpwYXNz/);
  });

  it.each([
    ['a Bearer token', 'header Bearer abc.def-ghi sent', 'abc.def-ghi'],
    ['a long letters-only Bearer token', 'Bearer abcdefghijklmnopqrstuvwxyz', 'abcdefghijklmnopqrstuvwxyz'],
    ['Basic credentials (base64 of user:password)', 'Authorization was Basic dXNlcjpwYXNz here', 'dXNlcjpwYXNz'],
    ['Basic credentials inside a JSON header', '{"Authorization": "Basic dXNlcjpwYXNz"}', 'dXNlcjpwYXNz'],
    ['a letters-only token after an Authorization header', 'Authorization: Bearer abcdefgh', 'abcdefgh'],
    ['a token-like value of an authorization field given without a scheme', 'authorization=a1b2c3d4e5f6', 'a1b2c3d4e5f6'],
    ['a project key', 'the key "sk-proj-Z9y8X7w6V5u4T3s2R1q0_aB-cD" was refused', 'Z9y8X7w6V5u4T3s2R1q0'],
    ['a key after a colon', 'Incorrect API key provided:sk-test-0123456789', '0123456789'],
    ['a long letters-only key', `api_key=sk-${'abcdefghij'.repeat(4)}`, 'abcdefghij'.repeat(4)],
    ['a Bearer key', 'Bearer sk-abcdef0123456789', 'abcdef0123456789'],
    ['a Bearer token with odd characters in an Authorization header', 'Authorization: Bearer abc!def', 'abc!def'],
  ])('redacts %s', (_what, text, secret) => {
    const redacted = redactSecrets(text);
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain('[redacted]');
  });

  it.each([
    'SLACK_SIGNING_SECRET is needed when SLACK_MODE=http (Basic Information → Signing Secret)',
    'Send it in the Authorization header as "Bearer <API_KEY>".',
    'a Bearer token is what the service expects; Basic auth is not supported',
  ])('leaves our own words intact: %s', (text) => {
    expect(redactSecrets(text)).toBe(text);
  });

  it.each([
    'Missing authorization. Check your Authorization header. See risk-sk-levels and https://x.test/sk-guidelines-v2',
    'Authorization: Bearer <API_KEY>',
    'Set Authorization: Bearer <API_KEY>.',
    'authorization: Bot ‹token›',
    'Authorization: <token>',
    'saved as out/a-lighthouse-at-dusk-20250101-120000-3f9a2c.png',
    'see sk-guidelines-v2 and desk-lamp-0123456789',
    'the error code is invalid_api_key',
  ])('leaves a service message without a credential intact: %s', (text) => {
    expect(redactSecrets(text)).toBe(text);
    expect(makeAPIError({ status: 401, body: { error: { message: text } } }).message).toBe(`401 ${text}`);
  });
});

describe('a service error keeps its words around a credential it hides', () => {
  it.each([
    [
      'the billing sentence of a JSON error',
      { error: { message: 'Access denied. The Authorization: header was empty or malformed, so the request was rejected before billing; check the key.' } },
      undefined,
      /^401 Access denied\. The Authorization: \[redacted\] empty or malformed, so the request was rejected before billing; check the key\.$/,
    ],
    [
      'the incident number of an HTML page',
      undefined,
      '<html><body><h1>401 Unauthorized</h1><p>Expected Authorization: Negotiate</p>\n<p>This server could not verify your credentials.\nIncident 7781</p></body></html>',
      /^401 401 Unauthorized Expected Authorization: Negotiate \[redacted\] server could not verify your credentials\. Incident 7781$/,
    ],
    ['the next line after an unclosed quote', { error: { message: 'x-api-key: "unterminated secret\nSee the docs for the key format' } }, undefined, /^401 x-api-key: "\[redacted\] See the docs for the key format$/],
    ['the hint after a stray quote', { error: { message: 'bad "api_key": " value;\nthe key must start with sk-…' } }, undefined, /^401 bad "api_key": "\[redacted\]; the key must start with sk-…$/],
  ])('keeps the service\'s words around a credential field in its error: %s', (_what, body, rawText, shown) => {
    expect(makeAPIError({ status: 401, body, rawText }).message).toMatch(shown);
  });

  it('redacts an echoed key from a service error message, its code and its headers', () => {
    registerSecret('echoed-key-0000-1111');
    const error = makeAPIError({
      status: 401,
      body: { error: { message: 'Incorrect API key provided: echoed-key-0000-1111', type: 'invalid_request_error', code: 'invalid_api_key' } },
      headers: { 'x-echo': 'Bearer echoed-key-0000-1111' },
    });
    expect(error.code).toBe('authentication_failed');
    expect(JSON.stringify({ message: error.message, headers: error.headers, str: String(error) })).not.toContain('echoed-key-0000-1111');
  });
});

describe('server-provided text in an error is made safe to print', () => {
  it('leads an HTTP error with its status, and gives an error event inside a stream (no status) in the service’s words alone', () => {
    const said = 'The server had an error while processing your request.';
    const body = { error: { message: said, type: 'server_error', param: null, code: 'server_error' } };
    expect(makeAPIError({ status: 500, body }).message).toBe(`500 ${said}`);
    const inStream = makeAPIError({ status: undefined, body });
    expect(inStream.message).toBe(said);
    expect(inStream).toMatchObject({ code: 'server_error', status: undefined });
    expect(makeAPIError({ status: undefined, body: { error: { type: 'server_error' } } }).message).not.toMatch(/^error\b/);
  });

  it('removes ANSI escapes and control characters', () => {
    expect(sanitizeServiceText('\u001b[31mred\u001b[0m\u0007 and\r\nmore\u0000 \u001b]8;;http://x\u0007link\u001b]8;;\u0007')).toBe('red and more link');
  });

  it('cuts a long message to a sane length', () => {
    const error = makeAPIError({ status: 400, body: { error: { message: 'A'.repeat(5_000_000), type: 'invalid_request_error' } } });
    expect(error.message.length).toBeLessThan(400);
  });

  it('cuts and cleans a non-JSON error page', () => {
    const error = makeAPIError({ status: 502, body: undefined, rawText: `<html><body>${'\u001b[2J'}Bad gateway ${'x'.repeat(10_000)}</body></html>` });
    // eslint-disable-next-line no-control-regex
    expect(error.message).not.toMatch(/<html|\u001b/);
    expect(error.message.length).toBeLessThan(300);
  });
});

describe('error codes', () => {
  it('gives an answer that is not what was asked the code bad_response and says it may be billed', () => {
    const error = new BadResponseError('the service answered 200 with no images', { requestId: 'req_1' });
    expect(error).toMatchObject({ code: 'bad_response', requestId: 'req_1' });
    expect(error.message).toMatch(/may have been billed/);
  });

  it('says a timeout after sending may be billed, and one before sending does not', () => {
    const before = new TimeoutError('total', 60_000);
    expect(before.message).not.toMatch(/billed/);
    expect(before.afterSending()).toMatchObject({ code: 'timeout', kind: 'total', mayBeBilled: true, message: expect.stringMatching(/may have been billed/) });
  });

  it('says how long a timeout waited, in milliseconds under a second', () => {
    expect(new TimeoutError('idle', 300).message).toBe('the service sent nothing for 300 ms');
    expect(new TimeoutError('total', 15 * 60_000).message).toBe('the request took longer than 15 min');
  });

  it('keeps connection_failed for what never reached the service', () => {
    expect(new ConnectionError('could not reach')).toMatchObject({ code: 'connection_failed' });
  });
});

describe('the images an error of an answer carries', () => {
  const partial = { data: [{ b64_json: 'AAAA' }] };

  it('are put on a bad_response as on the other failures of a body, its message worded once', () => {
    const error = new BadResponseError('completed image 2 is not an image', { requestId: 'req_1' });
    const carrying = withPartial(error, partial, 'req_2');
    expect(carrying).toBeInstanceOf(BadResponseError);
    expect(carrying).toMatchObject({ code: 'bad_response', requestId: 'req_1', partial, message: error.message });
    expect(withPartial(new BadResponseError('no images'), partial, 'req_2')).toMatchObject({ requestId: 'req_2' });
  });

  it('are put on a stream_broken, a timeout or an aborted as on a bad_response: a copy with the same class, code, message, labels and the stack of where it failed', () => {
    const cause = new Error('socket hang up');
    const cases = [
      { error: new StreamBrokenError('the connection broke', { cause }), same: { code: 'stream_broken', requestId: 'req_2' } },
      { error: new TimeoutError('total', 60_000, { cause, mayBeBilled: true }), same: { code: 'timeout', kind: 'total', timeoutMs: 60_000, mayBeBilled: true } },
      { error: new AbortedError('the request was cancelled', { cause, mayBeBilled: false }), same: { code: 'aborted', mayBeBilled: false } },
    ];
    for (const { error, same } of cases) {
      const carrying = withPartial(error, partial, 'req_2');
      expect(carrying).toBeInstanceOf(error.constructor);
      expect(carrying).toMatchObject({ ...same, message: error.message, cause, partial });
      expect(carrying.stack).toBe(error.stack);
    }
    expect(withPartial(new StreamBrokenError('the connection broke', { requestId: 'req_1' }), partial, 'req_2')).toMatchObject({ requestId: 'req_1', partial });
  });

  it('stay on a cancel found to have struck before sending, which is the same cancel, never billed', () => {
    const cancel = withPartial(new AbortedError('the request was cancelled', { cause: 'the user stopped it' }), partial) as AbortedError;
    const before = cancel.beforeSending();
    expect(before).toBeInstanceOf(AbortedError);
    expect(before).toMatchObject({ code: 'aborted', mayBeBilled: false, message: cancel.message, cause: 'the user stopped it', partial });
    expect(before.stack).toBe(cancel.stack);
    expect(cancel.mayBeBilled).toBe(true);
  });

  it('are taken off a copy with the same class, code, message and labels, and none is taken off what carries none', () => {
    const timeout = withPartial(new TimeoutError('idle', 300, { mayBeBilled: true }), partial);
    const bare = withoutPartial(timeout);
    expect(bare).toBeInstanceOf(TimeoutError);
    expect(bare).toMatchObject({ code: 'timeout', kind: 'idle', timeoutMs: 300, mayBeBilled: true, message: timeout.message, partial: undefined });
    expect(timeout).toMatchObject({ partial });
    const broken = new StreamBrokenError('the connection broke', { requestId: 'req_1' });
    expect(withoutPartial(broken)).toBe(broken);
    expect(withoutPartial(withPartial(new BadResponseError('bad'), partial))).toMatchObject({ code: 'bad_response', partial: undefined });
  });

  it('are taken off a copy that is an error as the first was, with the stack of where that one failed', () => {
    const bad = withPartial(new BadResponseError('bad', { requestId: 'req_1' }), partial);
    const timeout = withPartial(new TimeoutError('idle', 300, { mayBeBilled: true }), partial);
    for (const error of [bad, timeout]) {
      const bare = withoutPartial(error);
      // What Node's own printing takes for an error, shown with its stack (on Node 22 and later a copy that is not one has none).
      expect(types.isNativeError(bare)).toBe(true);
      expect(bare.stack).toBe(error.stack);
      expect(bare.stack).toContain(error.message);
    }
  });
});

describe('the code of a failure that is none of the project’s errors', () => {
  it('is internal_error, a code of its own that no error of the tree has', () => {
    expect(INTERNAL_ERROR_CODE).toBe('internal_error');
    expect(ERROR_CODES).not.toContain(INTERNAL_ERROR_CODE);
  });

  it('is what errorCodeOf says for anything that is not a project error, while a project error keeps its own code', () => {
    expect(errorCodeOf(new TypeError('x is undefined'))).toBe('internal_error');
    expect(errorCodeOf('a thrown string')).toBe('internal_error');
    expect(errorCodeOf(new TimeoutError('total', 1_000))).toBe('timeout');
    expect(errorCodeOf(new LedgerBusyError(new FileLockBusyError('/ledger.lock', 'pid 7', 10_000)))).toBe('ledger_busy');
    expect(errorCodeOf(new QuotaStoreClosedError())).toBe('quota_store_closed');
    expect(errorCodeOf(new PictorError('state_upgrade_held', 'held'))).toBe('state_upgrade_held');
  });
});
