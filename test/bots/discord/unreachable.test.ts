import { DiscordAPIError, GatewayCloseCodes, HTTPError } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { main } from '../../../bots/discord/deploy-commands.js';
import { describeDiscordUnreachable, discordRefusedToken, refusedByStatus } from '../../../bots/discord/unreachable.js';

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });

async function deploy(env: NodeJS.ProcessEnv) {
  const err: string[] = [];
  const code = await main(env, { out: () => {}, err: (l) => err.push(l) });
  return { code, err };
}

describe('Discord out of reach', () => {
  it('names DISCORD_API_BASE_URL when it was set, as Slack names SLACK_API_URL', () => {
    expect(describeDiscordUnreachable(refused, 'http://127.0.0.1:9/api/')).toMatch(/^could not reach 127\.0\.0\.1:9: .*; check the network and DISCORD_API_BASE_URL \(http:\/\/127\.0\.0\.1:9\/api\)$/);
  });

  it("names only the network for Discord's own address", () => {
    expect(describeDiscordUnreachable(refused, 'https://discord.com/api')).toMatch(/^could not reach discord\.com: .*; check the network$/);
    expect(describeDiscordUnreachable(refused, undefined)).not.toContain('DISCORD_API_BASE_URL');
    expect(describeDiscordUnreachable(new Error('Unauthorized'), undefined)).toBeUndefined();
  });

  it('is said so by npm run discord:deploy, exit 1', async () => {
    const { code, err } = await deploy({ DISCORD_TOKEN: 'MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.abcdef.ghijklmnopqrstuvwxyz', DISCORD_API_BASE_URL: 'http://127.0.0.1:9/api' });
    expect(code).toBe(1);
    expect(err).toEqual([expect.stringMatching(/^Could not register the commands: could not reach 127\.0\.0\.1:9: .*DISCORD_API_BASE_URL \(http:\/\/127\.0\.0\.1:9\/api\)\.$/)]);
  });
});

describe('a bot token Discord refused (the one rule of npm start and npm run discord:deploy)', () => {
  const apiError = (status: number) => new DiscordAPIError({ code: 0, message: String(status) }, 0, status, 'GET', 'https://discord.com/api/v10/gateway/bot', {});
  const httpError = (status: number) => new HTTPError(status, String(status), 'GET', 'https://discord.com/api/v10/applications/@me', {});

  it('is a 401 from REST, as a Discord error or a bare HTTP one', () => {
    expect(discordRefusedToken(apiError(401))).toBe('401 Unauthorized');
    expect(discordRefusedToken(httpError(401))).toBe('401 Unauthorized');
  });

  it('is a REST answer’s 401 to a request made with the token, as the bot’s REST clients see it, in the words of the error’s', () => {
    expect(refusedByStatus(401)).toBe(discordRefusedToken(apiError(401)));
    expect(refusedByStatus(403)).toBeUndefined();
    expect(refusedByStatus(200)).toBeUndefined();
  });

  it('is discord.js’s TokenInvalid (its 401 at login)', () => {
    expect(discordRefusedToken(Object.assign(new Error('An invalid token was provided.'), { code: 'TokenInvalid' }))).toBe('401 Unauthorized');
  });

  it('is the gateway closing the login with 4004 Authentication failed, whatever error the login ended with', () => {
    expect(discordRefusedToken(new Error('Authentication failed'), GatewayCloseCodes.AuthenticationFailed)).toBe('gateway close 4004 Authentication failed');
    expect(discordRefusedToken(new Error('Discord did not send READY in time'), 4004)).toBe('gateway close 4004 Authentication failed');
  });

  it('is not another status, another close code, the network, or the same words without the close code', () => {
    expect(discordRefusedToken(apiError(403))).toBeUndefined();
    expect(discordRefusedToken(httpError(500))).toBeUndefined();
    expect(discordRefusedToken(new Error('Invalid shard'), GatewayCloseCodes.InvalidShard)).toBeUndefined();
    expect(discordRefusedToken(refused)).toBeUndefined();
    expect(discordRefusedToken(new Error('Authentication failed'))).toBeUndefined();
    expect(discordRefusedToken('TokenInvalid')).toBeUndefined();
    expect(discordRefusedToken(undefined)).toBeUndefined();
  });
});

describe('npm run discord:deploy without DISCORD_TOKEN', () => {
  it('exits 2, as every other settings error does, saying what to set', async () => {
    const { code, err } = await deploy({});
    expect(code).toBe(2);
    expect(err).toEqual([expect.stringContaining('Set DISCORD_TOKEN')]);
  });
});
