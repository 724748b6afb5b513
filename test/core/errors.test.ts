import { describe, expect, it } from 'vitest';
import { BadResponseError, ConnectionError, StreamBrokenError, TimeoutError } from '../../src/index.js';
import { makeAPIError, redactSecrets, registerSecret, sanitizeServiceText } from '../../src/internal.js';

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

describe('a secret shaped like a key or in a credential field never survives, at the cost of a word when in doubt', () => {
  it.each([
    // sk- keys: a part with a digit of 4 characters or more, or 16 characters in all
    ['an Anthropic-style key', 'key sk-ant-api03-abcd refused', 'api03-abcd'],
    ['a project key with an underscore', 'key sk-proj-AbCd_1234-EfGh refused', 'AbCd_1234'],
    ['a letters-only key of 24', 'key sk-AbCdEfGhIjKlMnOpQrStUvWx refused', 'AbCdEfGhIjKlMnOpQrStUvWx'],
    ['a quoted letters-only key of 17', 'key "sk-abcdefghijklmnopq" refused', 'abcdefghijklmnopq'],
    ['a short key ending a sentence', 'your key is sk-abc123.', 'abc123'],
    ['a key in a URL path', 'GET https://h.test/v1/keys/sk-live0123456789abcdef failed', 'live0123456789abcdef'],
    ['a key after a percent escape', 'sent q=key%3Dsk-live0123456789 again', 'live0123456789'],
    ['a key after a plus', 'header Bearer+sk-abcdef0123456789 refused', 'abcdef0123456789'],
    // authorization fields: the whole value, with or without a scheme
    ['a value without a scheme', 'authorization=hunter2', 'hunter2'],
    ['a letters-only value without a scheme', 'Authorization: abcdefgh', 'abcdefgh'],
    ['a value without a scheme followed by words', 'Authorization: hunter2 is wrong', 'hunter2'],
    ['Basic credentials as written', 'Authorization: Basic user:pass', 'user:pass'],
    ['a Token credential', 'Authorization: Token abcdefgh', 'abcdefgh'],
    ['a Discord Bot token', '{"authorization":"Bot MTIzNDU2.Gh7x.abc"}', 'MTIzNDU2'],
    ['a quoted Bearer token', 'Authorization: Bearer "abc123 def"', 'abc123'],
    ['a braced Bearer token', 'Authorization: Bearer {abcdef0123456789}', 'abcdef0123456789'],
    ['a quoted Bearer token outside a field', 'sent Bearer "abc123def"', 'abc123def'],
    ['a braced Bearer token outside a field', 'sent Bearer {abcdef0123456789}', 'abcdef0123456789'],
    ['a placeholder-looking shell variable', 'Authorization: Bearer ${API_KEY}x', 'API_KEY'],
    // other credential fields
    ['an x-api-key header', 'x-api-key: abcdef1234567890', 'abcdef1234567890'],
    ['an x-api-key header followed by words', 'x-api-key: abcdef1234567890 was refused', 'abcdef1234567890'],
    ['an api_key query parameter', 'GET /v1/models?api_key=abcdef1234567890xyz', 'abcdef1234567890xyz'],
    ['an api-key field', 'api-key=hunter2', 'hunter2'],
    ['an access_token field', '{"access_token": "ya29.a0AfH6"}', 'ya29'],
    ['an environment variable holding a key', 'OPENAI_API_KEY=hunter2pass', 'hunter2pass'],
    // a quoted value: everything up to its closing quote, or to the end of the line without one
    ['a quoted x-api-key of several words', 'x-api-key: "correct horse battery staple"', 'battery staple'],
    ['a quoted api-key of several words', 'api-key: "my secret key with spaces"', 'key with spaces'],
    ['a single-quoted api_key of several words', "api_key='open sesame please'", 'please'],
    ['a quoted value without its closing quote', 'x-api-key: "unterminated secret words', 'words'],
    ['a quoted JSON value of several words', '{"api_key": "sk-abc 123", "model": "x"}', '123'],
    // a scheme other than Bearer, Basic, Token or Bot: the rest of the field
    ['a Digest response', 'Authorization: Digest username="bob", response="6629fae49393a05397450978507c4ef1"', '6629fae49393a05397450978507c4ef1'],
    ['a Digest response in JSON, its quotes escaped', '{"authorization":"Digest username=\\"bob\\", response=\\"6629fae4\\""}', '6629fae4'],
    ['a Digest response after a quoted realm holding a colon', 'Authorization: Digest realm="Service: API", response="6629fae4"', '6629fae4'],
    ['a Negotiate blob', 'Authorization: Negotiate YIIBhwYGKwYBBQUCoIIBezCCAXeg', 'YIIBhwYGKwYBBQUCoIIBezCCAXeg'],
    ['the parameters of an unknown scheme', 'Authorization: Custom id=ops, sig=abc123def', 'abc123def'],
  ])('redacts %s', (_what, text, secret) => {
    const redacted = redactSecrets(text);
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain('[redacted]');
  });

  it.each([
    ['the scheme of a field', 'Authorization: Bearer token required', 'Authorization: Bearer [redacted] required'],
    ['the words after a field without a scheme', 'x-api-key: abcdef1234567890 was refused', 'x-api-key: [redacted] refused'],
    ['the words after the two a field without a scheme hides', 'Authorization: hunter2 is wrong Host: h.test', 'Authorization: [redacted] wrong Host: h.test'],
    ['the next header after a Digest field', 'Authorization: Digest realm="Service: API", response="6629fae4" Host: h.test', 'Authorization: Digest [redacted] Host: h.test'],
    ['the quotes around a quoted value and the fields after it', '{"api_key": "sk-abc 123", "model": "x"}', '{"api_key": "[redacted]", "model": "x"}'],
    ['the scheme inside a quoted value', '{"Authorization": "Bearer abc 123"}', '{"Authorization": "Bearer [redacted]"}'],
    ['the scheme Basic, whatever follows it', 'Authorization: Basic auth is not supported', 'Authorization: Basic [redacted] is not supported'],
    ['the words around a key', 'see https://h.test/sk-live0123456789 for more', 'see https://h.test/sk-[redacted] for more'],
    [
      'the sentence after a field named in words',
      'Access denied. The Authorization: header was empty or malformed, so the request was rejected before billing; check the key and retry.',
      'Access denied. The Authorization: [redacted] empty or malformed, so the request was rejected before billing; check the key and retry.',
    ],
    [
      'the words after the parameters of a Digest field',
      'Authorization: Digest realm="Service: API", response="6629fae4", then the server gave up (incident 7781)',
      'Authorization: Digest [redacted], then the server gave up (incident 7781)',
    ],
    ['the words after a Negotiate blob', 'Authorization: Negotiate YIIBhwYGKwYBBQUCoIIBezCCAXeg was refused', 'Authorization: Negotiate [redacted] was refused'],
    [
      'the page after a scheme named in an HTML page',
      '<p>Expected Authorization: Negotiate</p><p>This server could not verify your credentials (incident 7781).</p>',
      '<p>Expected Authorization: Negotiate</p><p>This server could not verify your credentials (incident 7781).</p>',
    ],
    ['the sentence after a stray quote', 'bad "api_key": " value; the key must start with sk-…', 'bad "api_key": "[redacted]; the key must start with sk-…'],
    ['the next line after an unclosed quote', 'x-api-key: "unterminated secret\nSee the docs for the key format', 'x-api-key: "[redacted]\nSee the docs for the key format'],
  ])('keeps the words outside a credential: %s', (_what, text, shown) => {
    expect(redactSecrets(text)).toBe(shown);
    expect(redactSecrets(shown), 'redacting twice hides nothing more').toBe(shown);
  });

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

  it('keeps connection_failed for what never reached the service', () => {
    expect(new ConnectionError('could not reach')).toMatchObject({ code: 'connection_failed' });
  });
});
