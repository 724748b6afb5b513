import { afterEach, describe, expect, it } from 'vitest';
import { MAX_DISCORD_CONNECTIONS } from '../../../bots/discord/rest-request.js';
import { DiscordHarness } from './harness.js';

/** Keeps this process (the bot and the fake Discord alike) busy, as a burst of work on one event loop does. */
function blockEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

describe('Discord’s 3 s rule for the first answer to an interaction from the gateway', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('is met by the bot when it is not held up: the interaction is acknowledged and the job runs', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const ix = h.discord.slashCommand('imagine', { prompt: 'in time' });
    await h.finalReply(ix);
    expect(ix.ack?.type).toBe(5);
    expect(h.discord.requests.filter((r) => r.route === 'interaction-callback' && r.token === ix.token).map((r) => r.status)).toEqual([204]);
  });

  it('is met for a burst of interactions, answered over a bounded set of connections rather than one per request', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const before = h.discord.connectionsAccepted;
    const burst = Array.from({ length: 120 }, (_, i) => h.discord.slashCommand('imagine', { prompt: `burst ${i}` }));
    await h.discord.waitFor(() => burst.every((ix) => ix.ack || ix.callbackAttempts > 0), 'a first answer to every interaction');
    expect(burst.filter((ix) => ix.ack?.type === 5)).toHaveLength(120);
    // The bot's two REST clients (bot token, interaction webhooks), each with its own pool.
    expect(h.discord.connectionsAccepted - before).toBeLessThanOrEqual(2 * MAX_DISCORD_CONNECTIONS);
  });

  it('is enforced by the fake Discord: a first answer after the deadline gets 10062 Unknown interaction and the bot starts nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0, discord: { ackDeadlineMs: 20 } });
    const late = h.discord.slashCommand('imagine', { prompt: 'too late' });
    blockEventLoop(40);
    await h.discord.waitFor(() => h.discord.requests.some((r) => r.route === 'interaction-callback' && r.token === late.token), 'the late answer');
    expect(h.discord.requests.filter((r) => r.route === 'interaction-callback' && r.token === late.token).map((r) => [r.status, r.code])).toEqual([[404, 10062]]);
    expect(late.ack).toBeUndefined();
    expect(h.emulator.requests).toHaveLength(0);
  });
});
