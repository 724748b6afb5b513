import { afterEach, describe, expect, it } from 'vitest';
import { DiscordHarness } from './harness.js';

describe('the gateway connection', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('identifies, heartbeats, and resumes after a dropped connection, then keeps answering commands', async () => {
    h = await DiscordHarness.start({ partialImages: 0, discord: { heartbeatIntervalMs: 100 } });
    await h.discord.waitFor(() => h.discord.gatewayStats.heartbeats >= 2, 'two heartbeats');
    h.discord.dropGatewayConnections();
    await h.discord.waitFor(() => h.discord.gatewayStats.resumes >= 1, 'the resume', 10_000);
    const ix = h.discord.slashCommand('imagine', { prompt: 'after the reconnect' });
    const final = await h.finalReply(ix);
    expect(final.attachments).toHaveLength(1);
    // One session throughout: never identified again. (On a busy machine a late heartbeat ACK can make discord.js
    // resume once more on its own, so the resumes are counted from one up.)
    expect(h.discord.gatewayStats.identifies).toBe(1);
    expect(h.discord.gatewayStats.resumes).toBeGreaterThanOrEqual(1);
  });
});
