import { describe, expect, it } from 'vitest';
import { checkUserInstalls, readDiscordConfig } from '../../../bots/discord/index.js';

const TOKEN = 'MTA0NTY3ODkwMTIzNDU2Nzg5MA.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB';

describe('readDiscordConfig', () => {
  it('is off (undefined) when DISCORD_TOKEN is not set or blank', () => {
    expect(readDiscordConfig({})).toBeUndefined();
    expect(readDiscordConfig({ DISCORD_TOKEN: '  ' })).toBeUndefined();
  });

  it('defaults to Discord’s own API and CDN hosts', () => {
    expect(readDiscordConfig({ DISCORD_TOKEN: TOKEN })).toEqual({
      token: TOKEN,
      applicationId: undefined,
      apiBaseUrl: 'https://discord.com/api',
      guildId: undefined,
      adminRoleIds: [],
      allowedAttachmentHosts: ['cdn.discordapp.com', 'media.discordapp.net'],
      interactions: undefined,
      userInstalls: false,
    });
  });

  it('takes DMs and user installs only with DISCORD_USER_INSTALLS=1, and names the variable for anything but 1 or 0', () => {
    expect(readDiscordConfig({ DISCORD_TOKEN: TOKEN, DISCORD_USER_INSTALLS: '1', PICTOR_DM_DAILY_USD: '1' })?.userInstalls).toBe(true);
    expect(readDiscordConfig({ DISCORD_TOKEN: TOKEN, DISCORD_USER_INSTALLS: '1', PICTOR_DM_MONTHLY_USD: '5' })?.userInstalls).toBe(true);
    expect(readDiscordConfig({ DISCORD_TOKEN: TOKEN, DISCORD_USER_INSTALLS: '0' })?.userInstalls).toBe(false);
    expect(() => readDiscordConfig({ DISCORD_TOKEN: TOKEN, DISCORD_USER_INSTALLS: 'maybe' })).toThrow(/DISCORD_USER_INSTALLS/);
  });

  it('refuses user installs without a DM budget, naming the variable to set: strangers would spend the account', () => {
    expect(() => checkUserInstalls(true, {})).toThrow(expect.objectContaining({ code: 'validation_error', param: 'PICTOR_DM_DAILY_USD' }));
    expect(() => checkUserInstalls(true, { monthlyUsd: 5 })).not.toThrow();
    expect(() => checkUserInstalls(false, {})).not.toThrow();
  });

  it('reads no cap itself: the DM budget is read once, by the runner’s config (npm start) or the deploy script', () => {
    expect(readDiscordConfig({ DISCORD_TOKEN: TOKEN, DISCORD_USER_INSTALLS: '1', PICTOR_DM_DAILY_USD: 'abc' })?.userInstalls).toBe(true);
  });

  it('takes interactions over HTTP when DISCORD_INTERACTIONS_PORT is set with the application’s public key', () => {
    const publicKey = 'AB'.repeat(32);
    expect(readDiscordConfig({ DISCORD_TOKEN: TOKEN, DISCORD_PUBLIC_KEY: publicKey, DISCORD_INTERACTIONS_PORT: '8443', DISCORD_INTERACTIONS_HOST: '127.0.0.1' })?.interactions).toEqual({
      publicKey: publicKey.toLowerCase(),
      port: 8443,
      host: '127.0.0.1',
    });
  });

  it('refuses an HTTP endpoint without a public key, a key or host without a port, and a key that is not 64 hex digits', () => {
    expect(() => readDiscordConfig({ DISCORD_TOKEN: TOKEN, DISCORD_INTERACTIONS_PORT: '8443' })).toThrow(/DISCORD_PUBLIC_KEY must be set/);
    expect(() => readDiscordConfig({ DISCORD_TOKEN: TOKEN, DISCORD_PUBLIC_KEY: 'ab'.repeat(32) })).toThrow(/DISCORD_INTERACTIONS_PORT must be set/);
    expect(() => readDiscordConfig({ DISCORD_TOKEN: TOKEN, DISCORD_INTERACTIONS_HOST: '0.0.0.0' })).toThrow(/DISCORD_INTERACTIONS_PORT must be set/);
    expect(() => readDiscordConfig({ DISCORD_TOKEN: TOKEN, DISCORD_PUBLIC_KEY: 'xyz', DISCORD_INTERACTIONS_PORT: '8443' })).toThrow(/DISCORD_PUBLIC_KEY/);
    expect(() => readDiscordConfig({ DISCORD_TOKEN: TOKEN, DISCORD_PUBLIC_KEY: 'ab'.repeat(32), DISCORD_INTERACTIONS_PORT: '70000' })).toThrow(/DISCORD_INTERACTIONS_PORT/);
  });

  it('reads a proxy base URL, admin roles, a test server and extra attachment hosts', () => {
    const config = readDiscordConfig({
      DISCORD_TOKEN: TOKEN,
      DISCORD_API_BASE_URL: 'http://127.0.0.1:8080/api/v10/',
      DISCORD_APPLICATION_ID: '104567890123456789',
      DISCORD_GUILD_ID: '204567890123456789',
      DISCORD_ADMIN_ROLE_IDS: '304567890123456789, 404567890123456789',
      DISCORD_ALLOWED_ATTACHMENT_HOSTS: 'cdn.discordapp.com,127.0.0.1:9000',
    });
    expect(config).toMatchObject({
      apiBaseUrl: 'http://127.0.0.1:8080/api',
      applicationId: '104567890123456789',
      guildId: '204567890123456789',
      adminRoleIds: ['304567890123456789', '404567890123456789'],
      allowedAttachmentHosts: ['cdn.discordapp.com', '127.0.0.1:9000'],
    });
  });

  it('names the variable at fault and never repeats the token', () => {
    const wrong = (env: Record<string, string>) => {
      try {
        readDiscordConfig({ DISCORD_TOKEN: TOKEN, ...env });
      } catch (error) {
        return error as { code: string; param: string; message: string };
      }
      throw new Error('expected a refusal');
    };
    expect(wrong({ DISCORD_API_BASE_URL: 'ftp://example.com' })).toMatchObject({ code: 'validation_error', param: 'DISCORD_API_BASE_URL' });
    expect(wrong({ DISCORD_ADMIN_ROLE_IDS: 'admins' })).toMatchObject({ param: 'DISCORD_ADMIN_ROLE_IDS' });
    expect(wrong({ DISCORD_ALLOWED_ATTACHMENT_HOSTS: 'https://cdn.example.com/x' })).toMatchObject({ param: 'DISCORD_ALLOWED_ATTACHMENT_HOSTS' });
    const short = (() => {
      try {
        readDiscordConfig({ DISCORD_TOKEN: 'abc123' });
      } catch (error) {
        return error as Error & { param: string };
      }
    })();
    expect(short?.param).toBe('DISCORD_TOKEN');
    expect(short?.message).not.toContain('abc123');
  });
});
