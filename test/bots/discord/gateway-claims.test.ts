import { afterEach, describe, expect, it } from 'vitest';
import { startDiscordBot, type DiscordBot } from '../../../bots/discord/index.js';
import { DiscordHarness } from './harness.js';

let h: DiscordHarness | undefined;
let second: DiscordBot | undefined;
afterEach(async () => {
  await second?.stop({ graceMs: 0 });
  await h?.close();
  h = second = undefined;
});

describe('an interaction the gateway delivers to two sessions of the bot at once (two replicas on the gateway for a moment)', () => {
  it('is taken once in the bots’ state: answered once and sent to the service once; the session that lost the claim does nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    // A second process of the bot on the same state, connected too: Discord sends every interaction to both sessions.
    second = await startDiscordBot({ token: h.discord.botToken, apiBaseUrl: h.discord.apiBaseUrl, runner: h.runner, state: h.state, allowedAttachmentHosts: [h.discord.cdnHost], logger: h.logger });
    expect(h.discord.openGatewaySessions).toBe(2);
    const interactions = [0, 1, 2].map((i) => h!.discord.slashCommand('imagine', { prompt: `a kite ${i}`, quality: 'low' }));
    for (const ix of interactions) await h.finalReply(ix);
    expect(interactions.map((ix) => ix.callbackAttempts)).toEqual([1, 1, 1]);
    expect(h.emulator.requests.filter((r) => r.path === '/v1/images/generations')).toHaveLength(3);
    expect(h.logger.entries.filter((e) => e.msg === 'refused an interaction received before (a replay, a retry by a proxy, or another replica took it)')).toHaveLength(3);
  });
});
