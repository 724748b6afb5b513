import { Routes } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_DISCORD_CONNECTIONS, MAX_FIRST_ANSWER_CONNECTIONS } from '../../../bots/discord/rest-request.js';
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

  it('answers every interaction of a burst with a deferral, over a bounded set of connections rather than one per request', async () => {
    // Whether a burst is answered within 3 s on a given machine is a figure, measured by bench/discord-imagine.ts
    // (the clock of a shared CI machine decides nothing here); this checks that each is deferred and how.
    h = await DiscordHarness.start({ partialImages: 0, discord: { ackDeadlineMs: 120_000 } });
    const before = h.discord.connectionsAccepted;
    const size = MAX_FIRST_ANSWER_CONNECTIONS + MAX_DISCORD_CONNECTIONS + 40;
    const burst = Array.from({ length: size }, (_, i) => h.discord.slashCommand('imagine', { prompt: `burst ${i}` }));
    await h.discord.waitFor(() => burst.every((ix) => ix.ack || ix.callbackAttempts > 0), 'a first answer to every interaction');
    expect(burst.filter((ix) => ix.ack?.type === 5)).toHaveLength(size);
    // The first answers' own pool and the interaction webhooks' (the bot's other requests have a third, unused here).
    expect(h.discord.connectionsAccepted - before).toBeLessThanOrEqual(MAX_FIRST_ANSWER_CONNECTIONS + MAX_DISCORD_CONNECTIONS);
  });

  it('sends the first answers of a burst side by side, not a few connections’ worth at a time', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    h.discord.holdFirstAnswers();
    const size = MAX_DISCORD_CONNECTIONS * 3;
    const burst = Array.from({ length: size }, (_, i) => h.discord.slashCommand('imagine', { prompt: `side by side ${i}` }));
    // Every one is on its way to Discord at once: none waits for another's round trip.
    await h.discord.waitFor(() => h.discord.firstAnswersHeld === size, `${size} first answers in flight at once`);
    h.discord.releaseFirstAnswers();
    await h.discord.waitFor(() => burst.every((ix) => ix.ack), 'a first answer to every interaction');
  });

  it('is written while every connection of the bot’s other requests is taken: first answers have a path of their own', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    // Discord slow to take the bot's posts to channels (uploads, say): enough of them to hold every connection of its REST client.
    const posts = h.discord.holdRequests((method, path) => method === 'POST' && /\/channels\/\d+\/messages$/.test(path));
    const size = MAX_DISCORD_CONNECTIONS + 8;
    // Each to a channel of its own: discord.js sends one request at a time per channel.
    const channels = Array.from({ length: size }, (_, i) => String(BigInt(h.discord.channelId) + BigInt(i))).map((id) => (id === h.discord.foreignChannelId ? `${id}0` : id));
    const sent = Promise.allSettled(channels.map((channelId, i) => h.bot.rest.post(Routes.channelMessages(channelId), { body: { content: `post ${i}` } })));
    await h.discord.waitFor(() => posts.held === MAX_DISCORD_CONNECTIONS, 'every connection of the bot’s REST client held by a post');
    const ix = h.discord.slashCommand('imagine', { prompt: 'answered first' });
    await h.discord.waitFor(() => ix.ack, 'the first answer, while the posts are held');
    expect(ix.ack?.type).toBe(5);
    expect(posts.held).toBe(MAX_DISCORD_CONNECTIONS);
    posts.release();
    expect((await sent).map((post) => (post.status === 'rejected' ? String(post.reason) : 'posted'))).toEqual(channels.map(() => 'posted'));
    await h.finalReply(ix);
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
