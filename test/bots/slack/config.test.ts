import { describe, expect, it } from 'vitest';
import { readSlackConfig, DEFAULT_FILE_HOSTS, parseFileHost } from '../../../bots/slack/index.js';
import { ValidationError } from '../../../src/index.js';

const bot = 'xoxb-1234-secret-bot-token';
const app = 'xapp-1-secret-app-token';

function refusal(env: NodeJS.ProcessEnv): ValidationError {
  try {
    readSlackConfig(env);
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error('accepted');
}

describe('readSlackConfig', () => {
  it('turns the Slack bot off when no bot token is set', () => {
    expect(readSlackConfig({})).toBeUndefined();
    expect(readSlackConfig({ SLACK_BOT_TOKEN: '  ' })).toBeUndefined();
  });

  it('defaults to Socket Mode with Slack’s API and file hosts', () => {
    expect(readSlackConfig({ SLACK_BOT_TOKEN: bot, SLACK_APP_TOKEN: app })).toEqual({
      botToken: bot,
      appToken: app,
      signingSecret: undefined,
      mode: 'socket',
      apiUrl: 'https://slack.com/api/',
      allowedFileHosts: DEFAULT_FILE_HOSTS.map(parseFileHost),
      adminUserIds: [],
    });
  });

  it('reads HTTP mode, port, API address, file hosts and admins', () => {
    expect(
      readSlackConfig({
        SLACK_BOT_TOKEN: bot,
        SLACK_SIGNING_SECRET: 'shh',
        SLACK_MODE: 'HTTP',
        SLACK_PORT: '8080',
        SLACK_API_URL: 'https://slack-gov.com/api/',
        SLACK_ALLOWED_FILE_HOSTS: 'files.slack-gov.com, http://127.0.0.1:9000',
        SLACK_ADMIN_USER_IDS: 'U1 U2',
      }),
    ).toMatchObject({
      mode: 'http',
      port: 8080,
      apiUrl: 'https://slack-gov.com/api/',
      allowedFileHosts: [
        { protocol: 'https:', host: 'files.slack-gov.com' },
        { protocol: 'http:', host: '127.0.0.1:9000' },
      ],
      adminUserIds: ['U1', 'U2'],
    });
  });

  it('names the missing variable of each mode without repeating any secret', () => {
    const socket = refusal({ SLACK_BOT_TOKEN: bot });
    expect(socket.param).toBe('SLACK_APP_TOKEN');
    const http = refusal({ SLACK_BOT_TOKEN: bot, SLACK_MODE: 'http' });
    expect(http.param).toBe('SLACK_SIGNING_SECRET');
    for (const error of [socket, http]) expect(error.message).not.toContain('secret-bot-token');
  });

  it.each([
    [{ SLACK_APP_TOKEN: app }, 'SLACK_APP_TOKEN'],
    [{ SLACK_SIGNING_SECRET: 'shh-signing', SLACK_MODE: 'http' }, 'SLACK_SIGNING_SECRET'],
  ])('names the missing SLACK_BOT_TOKEN when only %o is set, rather than turning Slack off', (env, given) => {
    const error = refusal(env);
    expect(error.param).toBe('SLACK_BOT_TOKEN');
    expect(error.message).toBe(`${given} is set but SLACK_BOT_TOKEN is not: set the bot token (xoxb-…, OAuth & Permissions → Bot User OAuth Token), or unset ${given} to run without Slack`);
    expect(error.message).not.toMatch(/secret-app-token|shh-signing/);
  });

  it('keeps its own words about the signing secret whole (Basic Information is not a credential)', () => {
    expect(refusal({ SLACK_BOT_TOKEN: bot, SLACK_MODE: 'http' }).message).toBe('SLACK_SIGNING_SECRET is needed when SLACK_MODE=http (Basic Information → Signing Secret)');
  });

  it('refuses a token of the wrong kind, a bad port and a bad file host, naming the variable', () => {
    const wrongKind = refusal({ SLACK_BOT_TOKEN: 'xoxp-user-token-secret', SLACK_APP_TOKEN: app });
    expect(wrongKind.param).toBe('SLACK_BOT_TOKEN');
    expect(wrongKind.message).not.toContain('user-token-secret');
    expect(refusal({ SLACK_BOT_TOKEN: bot, SLACK_APP_TOKEN: app, SLACK_PORT: 'eighty' }).param).toBe('SLACK_PORT');
    expect(refusal({ SLACK_BOT_TOKEN: bot, SLACK_APP_TOKEN: app, SLACK_ALLOWED_FILE_HOSTS: 'ftp://files.example.com' }).param).toBe('SLACK_ALLOWED_FILE_HOSTS');
    expect(refusal({ SLACK_BOT_TOKEN: bot, SLACK_APP_TOKEN: app, SLACK_MODE: 'webhook' }).param).toBe('SLACK_MODE');
  });
});

describe('readSlackConfig with OAuth (many workspaces)', () => {
  const oauth = { SLACK_CLIENT_ID: '1111.2222', SLACK_CLIENT_SECRET: 'client-secret-value', SLACK_STATE_SECRET: 'a-long-random-state-secret' };
  const http = { SLACK_MODE: 'http', SLACK_SIGNING_SECRET: 'signing-secret-value' };

  it('turns the Slack bot on without a bot token when the three OAuth settings are set over HTTP', () => {
    const config = readSlackConfig({ ...oauth, ...http });
    expect(config?.botToken).toBeUndefined();
    expect(config?.oauth).toEqual({ clientId: '1111.2222', clientSecret: 'client-secret-value', stateSecret: 'a-long-random-state-secret' });
    expect(config?.mode).toBe('http');
  });

  it('names the OAuth setting that is missing, without repeating a secret', () => {
    const error = refusal({ SLACK_CLIENT_ID: '1111.2222', SLACK_CLIENT_SECRET: 'client-secret-value', ...http });
    expect(error.param).toBe('SLACK_STATE_SECRET');
    expect(error.message).not.toContain('client-secret-value');
  });

  it('refuses a bot token together with OAuth, OAuth over Socket Mode, and a short state secret', () => {
    expect(refusal({ ...oauth, ...http, SLACK_BOT_TOKEN: bot }).param).toBe('SLACK_BOT_TOKEN');
    expect(refusal({ ...oauth, SLACK_APP_TOKEN: app }).param).toBe('SLACK_MODE');
    expect(refusal({ ...oauth, ...http, SLACK_STATE_SECRET: 'short' }).param).toBe('SLACK_STATE_SECRET');
  });

  it('still needs the signing secret over HTTP', () => {
    expect(refusal({ ...oauth, SLACK_MODE: 'http' }).param).toBe('SLACK_SIGNING_SECRET');
  });
});
