import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { CATALOGS } from '../../bots/runner/index.js';
import { makeAPIError, redactSecrets, registerSecret } from '../../src/internal.js';

// Tokens are put together from pieces so that no complete one is written in the repository.
// Their bodies are unlike any other test's (no runs such as 0123456789): the unit tests share one process, and a secret
// another file registered that shares 12 characters with one of these would hide it whole, its prefix too.
const slackBot = ['xoxb', '17653672481', '19874698323', 'pdFZKVeTuE8sk7oOcBrzbqgy'].join('-');
const slackUser = ['xoxp', '2', '3', '4', 'abcdef0123'].join('-');
const slackApp = ['xapp', '1', 'A07QH3K2M9Z', '8302716495038', 'b7e29c4f10d8a635'].join('-');
const slackWorkflow = ['xwfp', '1', 'T05RJ8W1N', '6150938274619', '93d0f6a2c81e7b54'].join('-');
const slackRotated = `xoxe.${['xoxp', '1', 'Mi0yLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5MDEyMw'].join('-')}`;
const slackRefresh = ['xoxe', '1', 'My0xLTEyMzQ1Njc4OTAtNDU2Nzg5MDEyMzQ1'].join('-');
const githubClassic = `ghp_${'A1b2C3d4E5f6'.repeat(3)}`;
const githubOAuth = `gho_${'16C7e42F292c6912E7710c838347Ae178B4a'}`;
const githubFineGrained = `github_pat_${'11AQ7Z3KX08f5Rw2Lm4_'}${'Wm5cYh2Qa8Ue3Ko7Sd1Fx9Bn4Pj6Lv'.repeat(2)}`;
const googleKey = `AIza${'SyD-8f3Kq2Lm9Xw4Rt7Vb1Nc6Hj0Gz5Py2E'}`;
const stripeSecret = `sk_live_${'51HxYzAbCdEf8302716495'}`;
const stripeRestricted = `rk_live_${'b7e29c4f10d8a635QhKzXw'}`;
const awsKeyId = `AKIA${'IOSFODNN7EXAMPLE'}`;
const jwt = ['eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9', 'eyJzdWIiOiIxMjM0NTY3ODkwIn0', 'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'].join('.');
/** A Discord bot token: the bot's user id in base64, a timestamp, an HMAC. */
const discordToken = [Buffer.from('123456789012345678').toString('base64url'), 'GhIjKl', 'abcdefghijklmnopqrstuvwxyz0123456789AB'].join('.');

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
});

describe('a token of a known service is hidden wherever it shows, and the words around it stay', () => {
  it.each([
    ['a Slack bot token in an error', `An API error occurred: invalid_auth (token ${slackBot} was revoked; incident 7781)`, 'An API error occurred: invalid_auth (token xoxb-[redacted] was revoked; incident 7781)'],
    ['a Slack user token in a URL', `GET https://slack.com/api/auth.test?token=${slackUser}&pretty=1 failed`, 'GET https://slack.com/api/auth.test?token=xoxp-[redacted]&pretty=1 failed'],
    ['a Slack app token in JSON', `{"app_token":"${slackApp}","ok":false}`, '{"app_token":"xapp-[redacted]","ok":false}'],
    ['a Slack workflow step token in an error', `functions.completeError failed with ${slackWorkflow} (token_expired)`, 'functions.completeError failed with xwfp-[redacted] (token_expired)'],
    ['a rotated Slack token ending a sentence', `refresh failed for ${slackRotated}. Try again.`, 'refresh failed for xoxe.xoxp-[redacted]. Try again.'],
    ['a Slack refresh token', `{"ok":false,"error":"invalid_refresh_token","refresh_token":"${slackRefresh}"}`, '{"ok":false,"error":"invalid_refresh_token","refresh_token":"xoxe-[redacted]"}'],
    ['a GitHub token in an error', `Bad credentials: ${githubClassic} is not valid (documentation_url https://docs.github.com/rest)`, 'Bad credentials: ghp_[redacted] is not valid (documentation_url https://docs.github.com/rest)'],
    ['a GitHub OAuth token', `oauth gave ${githubOAuth} back`, 'oauth gave gho_[redacted] back'],
    ['a GitHub fine-grained token before the next line', `GITHUB_TOKEN=${githubFineGrained}\nnext line`, 'GITHUB_TOKEN=github_pat_[redacted]\nnext line'],
    ['a Google API key in a URL', `https://h.test/v1/models?key=${googleKey}&alt=json returned 400`, 'https://h.test/v1/models?key=AIza[redacted]&alt=json returned 400'],
    ['a Stripe secret key in an error', `Invalid API Key provided: ${stripeSecret} (incident 7781)`, 'Invalid API Key provided: sk_live_[redacted] (incident 7781)'],
    ['a Stripe restricted key in a form body', `amount=2000&currency=usd&key=${stripeRestricted}&next=1`, 'amount=2000&currency=usd&key=rk_live_[redacted]&next=1'],
    ['an AWS access key id in an error', `The AWS Access Key Id ${awsKeyId} you provided does not exist in our records.`, 'The AWS Access Key Id AKIA[redacted] you provided does not exist in our records.'],
    ['an AWS temporary access key id', `AccessKeyId: ${`ASIA${'Y34FZKBOKMUTVV7A'}`} expired`, 'AccessKeyId: ASIA[redacted] expired'],
    ['a GitHub app installation token', `{"token":"${`ghs_${'16C7e42F292c6912E7710c838347Ae178B4a'}`}","expires_at":"2026-01-01T00:00:00Z"}`, '{"token":"ghs_[redacted]","expires_at":"2026-01-01T00:00:00Z"}'],
    ['a Stripe test key', `stripe.key=${`sk_test_${'4eC39HqLyjWDarjtT1zdp7dc'}`}; retrying`, 'stripe.key=sk_test_[redacted]; retrying'],
    ['an api key field before the next line', 'x-api-key: abcdef1234567890\nSee the docs for the key format', 'x-api-key: [redacted]\nSee the docs for the key format'],
    ['an AWS access key id in XML', `<AWSAccessKeyId>${awsKeyId}</AWSAccessKeyId>`, '<AWSAccessKeyId>AKIA[redacted]</AWSAccessKeyId>'],
    ['a JWT in JSON', `session echoed: {"jwt":"${jwt}"}`, 'session echoed: {"jwt":"[redacted]"}'],
    ['a JWT in a URL', `callback https://h.test/cb?id_token=${jwt}&state=abc failed`, 'callback https://h.test/cb?id_token=[redacted]&state=abc failed'],
    ['a Discord Bot token echoed from a header', `401: Unauthorized (sent "Bot ${discordToken}")`, '401: Unauthorized (sent "Bot [redacted]")'],
    ['a bare Discord bot token', `Logging in with ${discordToken} failed: An invalid token was provided.`, 'Logging in with [redacted] failed: An invalid token was provided.'],
    ['a Discord bot token in JSON', `{"token":"${discordToken}","intents":513}`, '{"token":"[redacted]","intents":513}'],
  ])('%s', (_what, text, shown) => {
    expect(redactSecrets(text)).toBe(shown);
    expect(redactSecrets(shown), 'redacting twice changes nothing').toBe(shown);
  });
});

describe('the value of a password or secret field is hidden, and the fields after it stay', () => {
  it.each([
    ['a password in a URL query', 'GET https://h.test/login?user=bob&password=hunter2&next=%2Fhome returned 500', 'GET https://h.test/login?user=bob&password=[redacted]&next=%2Fhome returned 500'],
    [
      'a client secret in a form body',
      'body: grant_type=client_credentials&client_id=abc&client_secret=s3cr3t-Value_9&scope=read',
      'body: grant_type=client_credentials&client_id=abc&client_secret=[redacted]&scope=read',
    ],
    ['a password in JSON', '{"username":"bob","password":"correct horse battery staple","remember":true}', '{"username":"bob","password":"[redacted]","remember":true}'],
    ['a client secret in JSON', '{"client_id":"abc","client_secret": "s3cr3t \\"quoted\\" value"}', '{"client_id":"abc","client_secret": "[redacted]"}'],
    ['a passwd field before the next line', 'db: host=db.internal passwd=hunter2\nretrying in 5 s', 'db: host=db.internal passwd=[redacted]\nretrying in 5 s'],
    ['a secret field before a comma', 'webhook secret=whsec_abc123DEF456, rejected', 'webhook secret=[redacted], rejected'],
    ['an AWS secret access key', 'aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n[default]', 'aws_secret_access_key=[redacted]\n[default]'],
    [
      'a field whose value is on the next line: nothing taken from that line',
      'errors:\n  password:\n    - is required\n  api_key =\n    - is too short',
      'errors:\n  password:\n    - is required\n  api_key =\n    - is too short',
    ],
    ['a password in a URL before the host', 'POST https://bob:hunter2@h.test/v1 refused', 'POST https://bob:[redacted]@h.test/v1 refused'],
    ['a password in a Redis URL', 'connect ECONNREFUSED redis://default:hunter2pass@host:6379 (retrying)', 'connect ECONNREFUSED redis://default:[redacted]@host:6379 (retrying)'],
    ['a password with an @ and no user name in a URL', 'rediss://:p@ss:w0rd@cache.internal:6380/0 refused', 'rediss://:[redacted]@cache.internal:6380/0 refused'],
    ['a password in a URL in JSON', '{"url":"postgres://app:s3cret@db.internal/app","ok":false}', '{"url":"postgres://app:[redacted]@db.internal/app","ok":false}'],
    ['a signing secret in an environment dump', 'SLACK_SIGNING_SECRET=8f742231b10e8888abcd99yyyzzz85a5', 'SLACK_SIGNING_SECRET=[redacted]'],
  ])('%s', (_what, text, shown) => {
    expect(redactSecrets(text)).toBe(shown);
    expect(redactSecrets(shown), 'redacting twice changes nothing').toBe(shown);
  });

  it('hides a password echoed in a service error and keeps the billing sentence after it', () => {
    const body = { error: { message: 'login refused for password=hunter2&user=bob; nothing was billed (incident 7781).' } };
    expect(makeAPIError({ status: 401, body }).message).toBe('401 login refused for password=[redacted]&user=bob; nothing was billed (incident 7781).');
  });
});

describe('a credential written another way is hidden too, and the words around it stay', () => {
  it.each([
    ['a quoted Bearer token with spaces in it', 'the service echoed Bearer "abc 123 def" back and refused', 'the service echoed Bearer "[redacted]" back and refused'],
    ['a quoted Bearer token in single quotes', "sent Bearer 'abc 123 def'; refused", "sent Bearer '[redacted]'; refused"],
    [
      'a Bearer token in URL-encoded text',
      'GET https://h.test/debug?header=Authorization%3A%20Bearer%20abc123def456&x=1 failed',
      'GET https://h.test/debug?header=Authorization%3A%20Bearer%20[redacted]&x=1 failed',
    ],
    ['a URL-encoded Bearer token with escaped base64 characters', 'h=Authorization%3A%20Bearer%20abc%2Bdef%2F123%3D%3D&x=1', 'h=Authorization%3A%20Bearer%20[redacted]&x=1'],
    ['Basic credentials in URL-encoded text', 'h=Authorization%3A%20Basic%20dXNlcjpwYXNz&x=1', 'h=Authorization%3A%20Basic%20[redacted]&x=1'],
    ['a camelCase api key in JSON', '{"apiKey":"abc123def456","model":"gpt-image-2"}', '{"apiKey":"[redacted]","model":"gpt-image-2"}'],
    ['a camelCase api token in JSON', '{"apiToken":"abc123def456","ok":false}', '{"apiToken":"[redacted]","ok":false}'],
    ['a camelCase access token in JSON', '{"accessToken": "abc123def456", "expiresIn": 3600}', '{"accessToken": "[redacted]", "expiresIn": 3600}'],
    ['a camelCase client secret in JSON', '{"clientId":"abc","clientSecret":"abc123def456"}', '{"clientId":"abc","clientSecret":"[redacted]"}'],
    ['a camelCase secret key in JSON', '{"secretKey":"abc123def456","region":"eu"}', '{"secretKey":"[redacted]","region":"eu"}'],
    ['a camelCase api key in an object echoed by a client', "options: { apiKey: 'abc123def456', model: 'gpt-image-2' }", "options: { apiKey: '[redacted]', model: 'gpt-image-2' }"],
    ['api_token and secret_key fields', 'api_token=abc123def456&secret_key=wJalrXUtnFEMI&x=1', 'api_token=[redacted]&secret_key=[redacted]&x=1'],
    ['a token in a query string', 'GET https://h.test/feed?token=abc123def456&page=2 failed', 'GET https://h.test/feed?token=[redacted]&page=2 failed'],
    ['a refresh token in JSON', '{"refresh_token":"1//0abcDEF-ghi","expires_in":3600}', '{"refresh_token":"[redacted]","expires_in":3600}'],
    ['a camelCase refresh token in JSON', '{"refreshToken": "rt.abc123", "ok": false}', '{"refreshToken": "[redacted]", "ok": false}'],
    ['a refresh token on an env-style line', 'REFRESH_TOKEN=rt_abc123XYZ', 'REFRESH_TOKEN=[redacted]'],
    ['a passphrase in a query string', 'POST /unlock?passphrase=hunter2hunter2&key=1 refused', 'POST /unlock?passphrase=[redacted]&key=1 refused'],
    ['a passphrase on an env-style line', 'PASSPHRASE=hunter2hunter2', 'PASSPHRASE=[redacted]'],
    ['a private key on an env-style line', 'PRIVATE_KEY=abcdef123456', 'PRIVATE_KEY=[redacted]'],
    [
      'a PEM private key in JSON',
      '{"private_key":"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n","client_email":"bot@h.test"}',
      '{"private_key":"[redacted]","client_email":"bot@h.test"}',
    ],
    ['a PEM private key over several lines', 'key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nq0Zb\n-----END RSA PRIVATE KEY-----\nloaded', 'key:\n[redacted]\nloaded'],
    ['an Azure subscription key header', 'Ocp-Apim-Subscription-Key: 0123456789abcdef0123456789abcdef\nHost: h.test', 'Ocp-Apim-Subscription-Key: [redacted]\nHost: h.test'],
    ['a URL-encoded api_key name', 'GET /v1?api%5Fkey=abcd1234efgh&b=2', 'GET /v1?api%5Fkey=[redacted]&b=2'],
    ['a URL-encoded client_secret name', 'client%5Fsecret=abcd1234efgh&grant_type=x', 'client%5Fsecret=[redacted]&grant_type=x'],
    ['an upper-case SK- key', 'key SK-abcdef1234567890XYZ refused', 'key SK-[redacted] refused'],
    ['a Bearer token after a colon', 'sent Bearer: xyzabc123 and was refused', 'sent Bearer: [redacted] and was refused'],
  ])('%s', (_what, text, shown) => {
    expect(redactSecrets(text)).toBe(shown);
    expect(redactSecrets(shown), 'redacting twice changes nothing').toBe(shown);
  });

  it.each([
    ['a quoted phrase after Bearer with no token in it', 'use the Bearer "scheme name" form'],
    ['a camelCase name that is not a credential field', '{"accessTokenExpiresAt":"2026-01-01","apiKeys":2}'],
  ])('leaves %s as written', (_what, text) => {
    expect(redactSecrets(text)).toBe(text);
  });
});

describe('our own sentences about tokens, secrets, passwords and keys pass unchanged', () => {
  it.each([
    'the password in REDIS_URL is hidden',
    'token expired',
    'SLACK_BOT_TOKEN must be a bot token (it starts with xoxb-)',
    'SLACK_APP_TOKEN must be an app-level token (it starts with xapp-) with the connections:write scope',
    'SLACK_BOT_TOKEN is set but SLACK_CLIENT_ID is not: set the bot token (xoxb-…, OAuth & Permissions → Bot User OAuth Token), or unset SLACK_CLIENT_ID to run without Slack',
    'Slack did not accept the bot token (invalid_auth); check SLACK_BOT_TOKEN',
    'DISCORD_TOKEN does not look like a bot token (too short)',
    'DISCORD_APPLICATION_ID does not match the bot token’s application',
    'Start Redis, correct the Redis URL (host, port, password), or empty it to limit this n8n process on its own. Nothing was sent to the image service; the next execution connects again.',
    'could not reach Redis at redis://***:***@cache:6379/0?username=***&password=*** (prefix pictor)',
    'REDIS_URL is redis://[user:password@]host[:port][/db] or rediss://… (TLS)',
    'set REDIS_URL=redis://default:<password>@host:6379 or redis://default:…@host',
    'a user name without a password stays: https://bob@h.test/v1',
    'The key the image service issued to you. It is sent as "Authorization: Bearer <key>".',
    'You did not provide an API key. Send it in the Authorization header as "Bearer <API_KEY>".',
    'Refused: this form is missing its security token (reload the page and try again).',
    'the console refused a change without its CSRF token',
    'refused an interaction made longer ago than its token lives (or stamped ahead)',
    'Log in: http://127.0.0.1:8787/login (a token made for this run; set PICTOR_CONSOLE_TOKEN to choose your own)',
    'a claim token is 8 to 64 of A-Z a-z 0-9 _ -',
    'SLACK_SIGNING_SECRET=…      # Basic Information → Signing Secret',
    'a Bot token from the Developer Portal (Bot → Reset Token)',
    'the token was refused',
    'set a password',
    'the refresh token expired; sign in again',
    'choose a passphrase and keep the private key safe',
    'max_tokens=100 and prompt_tokens=12 were sent',
    'Bearer: the scheme the service expects',
    'saved as out/a-lighthouse-at-dusk-20250101-120000-3f9a2c.png (request 01HZX4K9Q7ABCDEFGHJKMNPQ.b3f1c2.d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9)',
  ])('%s', (text) => {
    expect(redactSecrets(text)).toBe(text);
  });
});

describe('a registered key is hidden however the service echoes it, with the whole token it is part of', () => {
  // Keys are put together from pieces, as above; each test registers its own.
  it('hides the whole longer key a registered key begins, though the key rule no longer sees it once the prefix is gone', () => {
    registerSecret('sk-test');
    expect(redactSecrets('Incorrect API key provided:sk-test-0123456789')).toBe('Incorrect API key provided:[redacted]');
    registerSecret(['pfx', 'registered'].join('-'));
    expect(redactSecrets('key pfx-registered-0a1b2c refused; x-pfx-registered was sent')).toBe('key [redacted] refused; [redacted] was sent');
  });

  const key = ['pk_Zm9vYmFy', 'YmF6/cX-V4cXV1eA=='].join('+');
  it.each([
    ['as encodeURIComponent writes it', (k: string) => encodeURIComponent(k)],
    ['with lower-case hex', (k: string) => encodeURIComponent(k).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase())],
    ['with - written %2D', (k: string) => encodeURIComponent(k).replace(/-/g, '%2D')],
    ['with every character escaped', (k: string) => [...k].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')],
  ])('hides a key echoed URL-encoded %s', (_how, encode) => {
    registerSecret(key);
    expect(redactSecrets(`Incorrect API key provided: ${encode(key)}`)).toBe('Incorrect API key provided: [redacted]');
    expect(redactSecrets(`GET /v1/echo?k=${encode(key)}&next=%2Fhome failed`)).toBe('GET /v1/echo?k=[redacted]&next=%2Fhome failed');
  });

  it.each([
    ['alone', (k: string) => Buffer.from(k).toString('base64')],
    ['after two bytes (u:)', (k: string) => Buffer.from(`u:${k}`).toString('base64')],
    ['after four bytes (api:)', (k: string) => Buffer.from(`api:${k}`).toString('base64')],
    ['with a colon after it, URL-safe', (k: string) => Buffer.from(`${k}:`).toString('base64url')],
  ])('hides a key echoed in base64 %s, and the base64 text around it', (_how, encode) => {
    const plain = ['plain', 'b64', 'key', '0123456789'].join('-');
    registerSecret(plain);
    expect(redactSecrets(`the proxy forwarded X-Auth: ${encode(plain)} and was refused`)).toBe('the proxy forwarded X-Auth: [redacted] and was refused');
  });

  it('hides a run of 12 characters or more of a registered key, with the token around it: its first half, its end, a piece of its middle', () => {
    const partial = ['part', 'live', '7c6d5e4f3a2b1c0d9e8f7a6b'].join('_');
    registerSecret(partial);
    expect(redactSecrets(`Incorrect API key provided: ${partial.slice(0, partial.length / 2)}...`)).toBe('Incorrect API key provided: [redacted]...');
    expect(redactSecrets(`key ending ${partial.slice(-12)} refused`)).toBe('key ending [redacted] refused');
    expect(redactSecrets(`"key":"…${partial.slice(5, 20)}…"`)).toBe('"key":"…[redacted]…"');
    expect(redactSecrets(JSON.stringify({ message: `bad key ${partial.slice(0, 14)}` }))).toBe('{"message":"bad key [redacted]"}');
  });

  it('hides 12 characters or more of a registered key that holds other characters than letters, digits, - and _ (dots, letters beyond ASCII)', () => {
    const dotted = ['a1b', 'c2d', 'e3f', 'g4h', 'i5j', 'k6l', 'm7n'].join('.');
    registerSecret(dotted);
    expect(redactSecrets(`Incorrect API key provided: ${dotted.slice(0, 14)}, try again`)).toBe('Incorrect API key provided: [redacted], try again');
    const accented = ['pässwörd', 'über', 'lang', '0123'].join('-');
    registerSecret(accented);
    expect(redactSecrets(`echoed ${accented.slice(0, 15)}`)).toBe('echoed [redacted]');
  });

  it('keeps a piece of a registered key shorter than 12 characters, and a word of 12 letters or more the key holds: our own words stay', () => {
    const worded = ['Organization', 'scope', '0a1b2c3d4e5f'].join('-');
    registerSecret(worded);
    const text = `Organization settings: a1b2c3d4e5f is not a key; see the Organization page (scope-0a1b2)`;
    expect(redactSecrets(text)).toBe(text);
    expect(redactSecrets(`echoed ${worded.slice(0, 18)}`)).toBe('echoed [redacted]');
  });

  it('hides a key echoed in JSON, its quotes and backslashes escaped', () => {
    const odd = ['odd"key', 'with\\slash-42'].join('\\');
    registerSecret(odd);
    const body = JSON.stringify({ error: { message: `bad key ${odd}` } });
    expect(redactSecrets(body)).toBe('{"error":{"message":"bad key [redacted]"}}');
  });
});

describe('an environment variable holding a secret hides the rest of its line', () => {
  it.each([
    ['a passphrase of several words', 'PASSPHRASE=correct horse battery', 'PASSPHRASE=[redacted]'],
    ['an exported password with spaces around =, the next line kept', 'loaded .env\n  export DB_PASSWORD = correct horse battery  \nDB_HOST=db.internal', 'loaded .env\n  export DB_PASSWORD = [redacted]  \nDB_HOST=db.internal'],
    ['a value starting with a scheme name', 'API_TOKEN=token horse battery staple', 'API_TOKEN=[redacted]'],
    ['a value with & in it', 'CLIENT_SECRET=abc&def=ghi jkl', 'CLIENT_SECRET=[redacted]'],
  ])('%s', (_what, text, shown) => {
    expect(redactSecrets(text)).toBe(shown);
    expect(redactSecrets(shown), 'redacting twice changes nothing').toBe(shown);
  });

  it.each([
    ['a lower-case field in a sentence', 'login refused for password=hunter2 was wrong', 'login refused for password=[redacted] wrong'],
    ['a capitalised field after other words', 'see PASSWORD=one two three', 'see PASSWORD=[redacted] three'],
  ])('keeps the words after a field that starts no environment line: %s', (_what, text, shown) => {
    expect(redactSecrets(text)).toBe(shown);
  });
});

describe('a *_TOKEN setting with its value: the value is hidden, so our sentences name the setting as “check DISCORD_TOKEN (…)”', () => {
  it.each([
    ['a pasted .env line', `DISCORD_TOKEN=${discordToken}`, 'DISCORD_TOKEN=[redacted]'],
    ['a pasted .env line whose token has no known shape', 'DISCORD_TOKEN=notarealtokenbutsecret', 'DISCORD_TOKEN=[redacted]'],
    ['a compose file’s environment line', `    DISCORD_TOKEN: ${discordToken}`, '    DISCORD_TOKEN: [redacted]'],
    ['a compose file’s line whose token reads as a word', '    DISCORD_TOKEN: hunter', '    DISCORD_TOKEN: [redacted]'],
  ])('hides the token in %s', (_what, text, shown) => {
    expect(redactSecrets(text)).toBe(shown);
  });

  it('hides the words after “DISCORD_TOKEN:” in a sentence too, since a secret may read as a word: why ours never write it so', () => {
    expect(redactSecrets('check DISCORD_TOKEN: the gateway refused it')).toBe('check DISCORD_TOKEN: [redacted] refused it');
    expect(redactSecrets('the gateway refused it; check DISCORD_TOKEN (copy it again)')).toBe('the gateway refused it; check DISCORD_TOKEN (copy it again)');
  });

  it('keeps every word of every message of ours that names a *_TOKEN setting: the catalogs’, and every string in the sources', () => {
    const repo = fileURLToPath(new URL('../../', import.meta.url));
    const naming = /\b[A-Z][A-Z0-9]*_TOKEN\b/;
    const messages: { where: string; text: string }[] = [];
    for (const [locale, catalog] of Object.entries(CATALOGS)) {
      for (const [key, text] of Object.entries(catalog as Record<string, string>)) if (naming.test(text)) messages.push({ where: `${locale}: ${key}`, text });
    }
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
        else if (/\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
          const source = readFileSync(path, 'utf8');
          if (!naming.test(source)) continue;
          const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
          const visit = (node: ts.Node): void => {
            // What a `${…}` holds is not ours to judge: it stands as one plain word.
            const text = ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : ts.isTemplateExpression(node) ? node.head.text + node.templateSpans.map((span) => `value${span.literal.text}`).join('') : undefined;
            if (text !== undefined && naming.test(text)) messages.push({ where: `${relative(repo, path)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`, text });
            ts.forEachChild(node, visit);
          };
          visit(file);
        }
      }
    };
    for (const dir of ['src', 'bots', 'nodes/nodes', 'nodes/credentials']) walk(join(repo, dir));
    expect(messages.length).toBeGreaterThan(10);
    expect(messages.filter(({ text }) => redactSecrets(text) !== text)).toEqual([]);
  });
});

describe('the registry of secrets, the process’s own', () => {
  /**
   * Registers in a process of its own (the registry is the whole process's, and a test worker's is shared by its files):
   * `a` once, `b` through 5000 scrubs (a logger's way), 998 other keys, `a` again, and one more; answers what a text
   * echoing `a` and one echoing `b` show then. `b` has no 12 characters in a row in common with the others (a piece of a
   * key still registered is hidden wherever it is).
   */
  function registerInAProcessOfItsOwn(): { a: string; b: string; afterOthers: string } {
    const redaction = fileURLToPath(new URL('../../src/core/redact-secrets.ts', import.meta.url));
    const logger = fileURLToPath(new URL('../../src/core/logger.ts', import.meta.url));
    const script = `
      const { registerSecret, redactSecrets } = await import(${JSON.stringify(redaction)});
      const { scrubSecrets } = await import(${JSON.stringify(logger)});
      registerSecret('first-key-0123456789');
      for (let i = 0; i < 5000; i++) scrubSecrets('nothing to hide', ['busy-key-9876543210']);
      for (let i = 0; i < 998; i++) registerSecret('other-key-' + i + '-0123456789');
      const afterOthers = redactSecrets('echoed first-key-0123456789 and busy-key-9876543210');
      registerSecret('first-key-0123456789');
      registerSecret('one-more-key-0123456789');
      console.log(JSON.stringify({ a: redactSecrets('echoed first-key-0123456789'), b: redactSecrets('echoed busy-key-9876543210'), afterOthers }));
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.stderr).toBe('');
    return JSON.parse(child.stdout) as { a: string; b: string; afterOthers: string };
  }

  it('holds a secret registered again and again once, and keeps the 1000 most recently registered, forgetting the least recent past that', () => {
    const { a, b, afterOthers } = registerInAProcessOfItsOwn();
    // 1000 distinct secrets: 5000 registrations of one count once, and nothing is forgotten yet.
    expect(afterOthers).toBe('echoed [redacted] and [redacted]');
    // A thousand and one: registered again, `a` is among the most recent; `b`, the least recent, is forgotten.
    expect(a).toBe('echoed [redacted]');
    expect(b).toBe('echoed busy-key-9876543210');
  });
});
