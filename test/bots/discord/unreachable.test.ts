import { describe, expect, it } from 'vitest';
import { main } from '../../../bots/discord/deploy-commands.js';
import { describeDiscordUnreachable } from '../../../bots/discord/unreachable.js';

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

describe('npm run discord:deploy without DISCORD_TOKEN', () => {
  it('exits 2, as every other settings error does, saying what to set', async () => {
    const { code, err } = await deploy({});
    expect(code).toBe(2);
    expect(err).toEqual([expect.stringContaining('Set DISCORD_TOKEN')]);
  });
});
