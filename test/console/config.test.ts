import { describe, expect, it } from 'vitest';
import { readAlertConfig } from '../../src/console/alerts/config.js';
import { isLoopbackHost, readConsoleConfig } from '../../src/console/config.js';
import { readBreakerSettings } from '../../src/spend/breaker.js';

describe('readConsoleConfig', () => {
  it('is off for npm start until PICTOR_CONSOLE_PORT is set, and listens on this machine only by default, read-only', () => {
    expect(readConsoleConfig({})).toBeUndefined();
    expect(readConsoleConfig({ PICTOR_CONSOLE_PORT: '8788' })).toEqual({ port: 8788, host: '127.0.0.1', token: undefined, allowChanges: false });
    expect(readConsoleConfig({}, { always: { port: 9000 } })).toMatchObject({ port: 9000, host: '127.0.0.1' });
  });

  it('refuses to listen beyond this machine without PICTOR_CONSOLE_TOKEN, naming it', () => {
    expect(() => readConsoleConfig({ PICTOR_CONSOLE_PORT: '0', PICTOR_CONSOLE_HOST: '0.0.0.0' })).toThrow(expect.objectContaining({ param: 'PICTOR_CONSOLE_TOKEN' }));
    expect(readConsoleConfig({ PICTOR_CONSOLE_PORT: '0', PICTOR_CONSOLE_HOST: '0.0.0.0', PICTOR_CONSOLE_TOKEN: 'a-long-enough-token-here' })).toMatchObject({ host: '0.0.0.0' });
    expect(readConsoleConfig({ PICTOR_CONSOLE_PORT: '0', PICTOR_CONSOLE_HOST: '::1' })).toMatchObject({ host: '::1' });
  });

  it('takes only a long token, and never repeats it in the error', () => {
    const error = (() => {
      try {
        readConsoleConfig({ PICTOR_CONSOLE_PORT: '0', PICTOR_CONSOLE_TOKEN: 'short-secret' });
      } catch (e) {
        return e as Error & { param: string };
      }
      return undefined;
    })();
    expect(error).toMatchObject({ param: 'PICTOR_CONSOLE_TOKEN' });
    expect(error!.message).not.toContain('short-secret');
    expect(() => readConsoleConfig({ PICTOR_CONSOLE_HOST: '127.0.0.1' })).toThrow(expect.objectContaining({ param: 'PICTOR_CONSOLE_PORT' }));
    expect(readConsoleConfig({ PICTOR_CONSOLE_PORT: '1', PICTOR_CONSOLE_ALLOW_CHANGES: '1' })).toMatchObject({ allowChanges: true });
  });

  it('takes PICTOR_CONSOLE_ORIGIN as an origin only, the address the owner opens through a TLS proxy, its default port written or not', () => {
    expect(readConsoleConfig({ PICTOR_CONSOLE_PORT: '1', PICTOR_CONSOLE_ORIGIN: 'https://Pictor.Example.com/' })).toMatchObject({ publicOrigin: 'https://pictor.example.com' });
    expect(readConsoleConfig({ PICTOR_CONSOLE_PORT: '1', PICTOR_CONSOLE_ORIGIN: 'https://pictor.example.com:8443' })).toMatchObject({ publicOrigin: 'https://pictor.example.com:8443' });
    // Its default port written out is the same origin, said without it.
    expect(readConsoleConfig({ PICTOR_CONSOLE_PORT: '1', PICTOR_CONSOLE_ORIGIN: 'https://pictor.example.com:443' })).toMatchObject({ publicOrigin: 'https://pictor.example.com' });
    expect(readConsoleConfig({ PICTOR_CONSOLE_PORT: '1', PICTOR_CONSOLE_ORIGIN: 'http://Pictor.Example.com:80/' })).toMatchObject({ publicOrigin: 'http://pictor.example.com' });
    for (const wrong of ['pictor.example.com', 'https://pictor.example.com/console', 'https://pictor.example.com/?a=1', 'https://pictor.example.com?', 'https://pictor.example.com/#top', 'ftp://pictor.example.com', 'https://user:pw@pictor.example.com']) {
      expect(() => readConsoleConfig({ PICTOR_CONSOLE_PORT: '1', PICTOR_CONSOLE_ORIGIN: wrong }), wrong).toThrow(expect.objectContaining({ param: 'PICTOR_CONSOLE_ORIGIN' }));
    }
  });

  it('knows the loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.2', 'example.com']) expect(isLoopbackHost(host), host).toBe(false);
  });
});

describe('readAlertConfig', () => {
  it('alerts at 50, 80 and 100 % of a cap and on the breaker by default, to nowhere until a destination is set', () => {
    expect(readAlertConfig({})).toEqual({ thresholds: [50, 80, 100], breaker: true, checkMs: 60_000, discord: undefined, slack: undefined, webhook: undefined });
    expect(readAlertConfig({ PICTOR_ALERT_THRESHOLDS: '90, 25,25', PICTOR_ALERT_BREAKER: '0', PICTOR_ALERT_CHECK_SECONDS: '30' })).toMatchObject({ thresholds: [25, 90], breaker: false, checkMs: 30_000 });
    expect(() => readAlertConfig({ PICTOR_ALERT_THRESHOLDS: '50,eighty' })).toThrow(expect.objectContaining({ param: 'PICTOR_ALERT_THRESHOLDS' }));
  });

  it('posts to Discord with the bot token, to Slack with the bot token or a workspace’s installation, to a webhook with its secret', () => {
    const discord = readAlertConfig({ PICTOR_ALERT_DISCORD_CHANNEL: '123456789012345678', DISCORD_TOKEN: 'token-of-the-bot-0123456789', DISCORD_API_BASE_URL: 'http://127.0.0.1:9/api/v10/' });
    expect(discord.discord).toEqual({ channelId: '123456789012345678', token: 'token-of-the-bot-0123456789', apiBaseUrl: 'http://127.0.0.1:9/api' });
    expect(() => readAlertConfig({ PICTOR_ALERT_DISCORD_CHANNEL: '123456789012345678' })).toThrow(expect.objectContaining({ param: 'DISCORD_TOKEN' }));
    expect(readAlertConfig({ PICTOR_ALERT_SLACK_CHANNEL: 'C0123', SLACK_BOT_TOKEN: 'xoxb-1' }).slack).toEqual({ channel: 'C0123', teamId: undefined, token: 'xoxb-1', apiUrl: 'https://slack.com/api/' });
    expect(readAlertConfig({ PICTOR_ALERT_SLACK_CHANNEL: 'T0999/C0123' }).slack).toMatchObject({ channel: 'C0123', teamId: 'T0999', token: undefined });
    expect(() => readAlertConfig({ PICTOR_ALERT_SLACK_CHANNEL: '#general', SLACK_BOT_TOKEN: 'xoxb-1' })).toThrow(expect.objectContaining({ param: 'PICTOR_ALERT_SLACK_CHANNEL' }));
    expect(() => readAlertConfig({ PICTOR_ALERT_WEBHOOK_URL: 'https://hooks.example.com/x' })).toThrow(expect.objectContaining({ param: 'PICTOR_ALERT_WEBHOOK_SECRET' }));
    expect(readAlertConfig({ PICTOR_ALERT_WEBHOOK_URL: 'https://hooks.example.com/x', PICTOR_ALERT_WEBHOOK_SECRET: 'sixteen-chars-or-more' }).webhook).toEqual({
      url: 'https://hooks.example.com/x',
      secret: 'sixteen-chars-or-more',
    });
  });

  it('refuses a webhook URL with user:password@ in it (no alert could be sent to it), naming the variable, not the URL', () => {
    for (const url of ['https://alerts:pa55word@hooks.example.com/T0/B0/sekrit', 'https://alerts@hooks.example.com/x']) {
      let error: unknown;
      try {
        readAlertConfig({ PICTOR_ALERT_WEBHOOK_URL: url, PICTOR_ALERT_WEBHOOK_SECRET: 'sixteen-chars-or-more' });
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ code: 'validation_error', param: 'PICTOR_ALERT_WEBHOOK_URL' });
      expect((error as Error).message).not.toMatch(/pa55word|sekrit|alerts@/);
    }
  });
});

describe('readBreakerSettings', () => {
  it('is off until both variables are set, and names the missing one', () => {
    expect(readBreakerSettings({})).toBeUndefined();
    expect(readBreakerSettings({ PICTOR_BREAKER_FACTOR: '5', PICTOR_BREAKER_FLOOR_USD: '2' })).toEqual({ factor: 5, floorUsd: 2 });
    expect(() => readBreakerSettings({ PICTOR_BREAKER_FACTOR: '5' })).toThrow(expect.objectContaining({ param: 'PICTOR_BREAKER_FLOOR_USD' }));
    expect(() => readBreakerSettings({ PICTOR_BREAKER_FLOOR_USD: '5' })).toThrow(expect.objectContaining({ param: 'PICTOR_BREAKER_FACTOR' }));
    expect(() => readBreakerSettings({ PICTOR_BREAKER_FACTOR: '0.5', PICTOR_BREAKER_FLOOR_USD: '1' })).toThrow(expect.objectContaining({ param: 'PICTOR_BREAKER_FACTOR' }));
  });
});
