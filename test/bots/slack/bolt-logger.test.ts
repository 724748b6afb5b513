import { LogLevel } from '@slack/bolt';
import { describe, expect, it } from 'vitest';
import { boltLoggerFor } from '../../../bots/slack/bolt-logger.js';

// Tokens are put together from pieces so that no complete one is written in the repository; these are this file's own
// (a token another test file registers as a secret would be hidden whole, prefix too, by the one redaction).
const botToken = ['xoxb', '28764783592', '20985709434', 'qeGALWfUvF9tl8pPdCsacrhz'].join('-');
const appToken = ['xapp', '1', 'A0456BCDEFA', '9081726354091', 'f3c9e1a7b5d2064f'].join('-');
const signingSecret = '8f742231b10e8888abcd99yyyzzz85a5';

/** A Bolt logger over a logger that keeps each line it is given. */
function boltLogger(secrets: readonly string[] = [signingSecret]) {
  const lines: string[] = [];
  const keep = (_fields: object, message?: string) => lines.push(message ?? '');
  const logger = boltLoggerFor({ debug: keep, info: keep, warn: keep, error: keep }, secrets);
  logger.setLevel(LogLevel.DEBUG);
  return { logger, lines };
}

describe('the Bolt logger', () => {
  it.each([
    ['a workspace bot token it was not told about', `An API error occurred: invalid_auth (token ${botToken})`, 'An API error occurred: invalid_auth (token xoxb-[redacted])'],
    ['an app-level token it was not told about', `Socket Mode: apps.connections.open with ${appToken} failed`, 'Socket Mode: apps.connections.open with xapp-[redacted] failed'],
    ['a Bearer token a web client echoed', 'request failed: Authorization: Bearer abc123def456ghi', 'request failed: Authorization: Bearer [redacted]'],
    ['a token field of a request body', 'POST https://slack.com/api/oauth.v2.access body token=abc123def456&code=1', 'POST https://slack.com/api/oauth.v2.access body token=[redacted]&code=1'],
    ['a secret it was told about', `verifying with ${signingSecret} failed`, 'verifying with [redacted] failed'],
  ])('hides %s', (_what, text, shown) => {
    const { logger, lines } = boltLogger();
    logger.warn(text);
    expect(lines).toEqual([shown]);
  });

  it('hides a token inside an error or an object it logs', () => {
    const { logger, lines } = boltLogger();
    logger.error(new Error(`invalid_auth for ${appToken}`), { token: botToken });
    expect(lines[0]).not.toContain(appToken);
    expect(lines[0]).not.toContain(botToken);
    expect(lines[0]).toContain('Error: invalid_auth for xapp-[redacted]');
  });

  it('keeps its own sentences about tokens as written', () => {
    const { logger, lines } = boltLogger();
    logger.info('the token was refused; check SLACK_BOT_TOKEN and set a password');
    expect(lines).toEqual(['the token was refused; check SLACK_BOT_TOKEN and set a password']);
  });
});
