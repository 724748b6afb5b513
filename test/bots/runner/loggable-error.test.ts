import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { webApi } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { JobRefusedError, loggableError, words } from '../../../bots/runner/index.js';
import { PictorError } from '../../../src/index.js';

/** An error as a platform's client throws it: its code, its status and the request it made, URL, headers and body. */
function platformError(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

describe('loggableError', () => {
  it('keeps an error’s name, message, code and status, never the request it carries', () => {
    const error = platformError('Unknown interaction', { code: 10062, status: 404, url: 'https://discord.com/api/v10/interactions/1/t', requestBody: { files: ['x'.repeat(10_000)] } });
    expect(loggableError(error)).toEqual({ name: 'Error', message: 'Unknown interaction', code: 10062, status: 404 });
  });

  it('takes the tokens out of Discord’s interaction and webhook URLs and a Slack response_url', () => {
    const discord = loggableError(new Error('POST https://discord.com/api/v10/interactions/123456/aW50ZXJhY3Rpb24.token/callback failed; then /webhooks/987/wh-token-xyz/messages/@original'));
    expect(discord.message).toBe('POST https://discord.com/api/v10/interactions/123456/[token] failed; then /webhooks/987/[token]');
    const slack = loggableError(new Error('could not reach https://hooks.slack.com/actions/T0TEAM/123/AbCdEfSecretPart (ECONNRESET)'));
    expect(slack.message).toBe('could not reach https://hooks.slack.com/actions/[token] (ECONNRESET)');
  });

  it('takes the token out of a GovSlack response_url too', () => {
    const govSlack = loggableError(new Error('could not reach https://hooks.slack-gov.com/actions/T1/2/secretPart (ECONNRESET)'));
    expect(govSlack.message).toBe('could not reach https://hooks.slack-gov.com/actions/[token] (ECONNRESET)');
    expect(JSON.stringify(govSlack)).not.toContain('secretPart');
  });

  it('hides a Bearer token and an sk- key in the message and the stack', () => {
    const logged = loggableError(new TypeError('sent Authorization: Bearer tok_9f8e7d6c5b4a3210ffee with sk-live-4f3e2d1c0b9a8f7e6d5c'));
    expect(JSON.stringify(logged)).not.toMatch(/tok_9f8e7d6c5b4a3210ffee|4f3e2d1c0b9a8f7e6d5c/);
    expect(logged.message).toContain('[redacted]');
    expect(logged.stack).toContain('[redacted]');
  });

  it('gives the stack of a bug of ours, and bounds message and stack', () => {
    const bug = loggableError(new TypeError('x'.repeat(5000)));
    expect((bug.message as string).length).toBe(500);
    expect((bug.stack as string).length).toBe(2000);
  });

  it.each([
    ['a TypeError Node gave a code', Object.assign(new TypeError('The "path" argument must be of type string'), { code: 'ERR_INVALID_ARG_TYPE' }), 'ERR_INVALID_ARG_TYPE'],
    ['an abort', Object.assign(new Error('The operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR' }), 'ABORT_ERR'],
    ['a file it may not read', platformError('EACCES: permission denied, open ./data/x.json', { code: 'EACCES', errno: -13 }), 'EACCES'],
  ])('keeps the stack of %s: its code does not say where our code failed', (_, error, code) => {
    expect(loggableError(error)).toMatchObject({ code, stack: expect.stringContaining(error.name) });
  });

  it('leaves out the stack of an expected error, whose code says it all: a project error, a chat platform’s API answer', () => {
    expect(loggableError(new PictorError('ledger_busy', 'the spend ledger is busy'))).toEqual({ name: 'PictorError', message: 'the spend ledger is busy', code: 'ledger_busy' });
    expect(loggableError(new JobRefusedError('restarting', words('refusal.restarting')))).not.toHaveProperty('stack');
    expect(loggableError(platformError('Missing Permissions', { code: 50013, status: 403 }))).not.toHaveProperty('stack');
    // A numeric code with no HTTP status is no platform's answer.
    expect(loggableError(platformError('odd', { code: 7 }))).toHaveProperty('stack');
  });

  it.each([
    ['an ok: false answer', 200, { ok: false, error: 'channel_not_found' }, 'slack_webapi_platform_error'],
    ['a 429', 429, { ok: false, error: 'ratelimited' }, 'slack_webapi_rate_limited_error'],
    ['a status that is no success', 403, { ok: false }, 'slack_webapi_http_error'],
  ])('leaves out the stack of a Slack Web API answer as its own client throws it: %s', async (_, status, body, code) => {
    const slack = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '1' }).end(JSON.stringify(body)));
    });
    await new Promise<void>((resolve) => slack.listen(0, '127.0.0.1', resolve));
    try {
      const client = new webApi.WebClient('xoxb-test', {
        slackApiUrl: `http://127.0.0.1:${(slack.address() as AddressInfo).port}/api/`,
        retryConfig: { retries: 0 },
        rejectRateLimitedCalls: true,
        logLevel: webApi.LogLevel.ERROR,
      });
      const thrown = await client.chat.postMessage({ channel: 'C0GONE', text: 'hi' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(loggableError(thrown)).toMatchObject({ code });
      expect(loggableError(thrown)).not.toHaveProperty('stack');
    } finally {
      await new Promise((resolve) => slack.close(resolve));
    }
  });

  it('keeps the HTTP status of a Slack Web API call answered with one (its client’s `statusCode`), never the request’s URL, headers or token', async () => {
    const slack = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(503, { 'content-type': 'text/html', 'x-slack-req-id': 'abc' }).end('<html>Service Unavailable</html>'));
    });
    await new Promise<void>((resolve) => slack.listen(0, '127.0.0.1', resolve));
    try {
      const token = 'xoxb-0000-1111-secretpart';
      const apiUrl = `http://127.0.0.1:${(slack.address() as AddressInfo).port}/api/`;
      const client = new webApi.WebClient(token, { slackApiUrl: apiUrl, retryConfig: { retries: 0 }, logLevel: webApi.LogLevel.ERROR });
      const thrown = await client.chat.postMessage({ channel: 'C0BUSY', text: 'hi' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(thrown).toMatchObject({ code: 'slack_webapi_http_error', statusCode: 503 });
      expect(loggableError(thrown)).toEqual({ name: 'Error', message: 'An HTTP protocol error occurred: statusCode = 503', code: 'slack_webapi_http_error', status: 503 });
      expect(JSON.stringify(loggableError(thrown))).not.toMatch(/secretpart|127\.0\.0\.1|x-slack-req-id|Service Unavailable/);
    } finally {
      await new Promise((resolve) => slack.close(resolve));
    }
  });

  it('keeps the stack of a Slack client error that is no answer of Slack’s (a network failure, an argument of ours)', () => {
    expect(loggableError(platformError('A request error occurred: connect ECONNREFUSED', { code: 'slack_webapi_request_error' }))).toHaveProperty('stack');
    expect(loggableError(platformError('invalid arguments', { code: 'slack_webapi_file_upload_invalid_args_error' }))).toHaveProperty('stack');
  });

  it('names only the type of what is thrown that is no error', () => {
    expect(loggableError('a string with Bearer tok_9f8e7d6c5b4a3210ffee')).toEqual({ type: 'string' });
  });
});
