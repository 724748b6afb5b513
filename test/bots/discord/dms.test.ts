import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { formatUsd } from '../../../src/index.js';
import type { FakeInteraction, FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import { buttonsOf, DiscordHarness, previewByPreview, type HarnessOptions } from './harness.js';

const EPHEMERAL = 64;

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function start(options: HarnessOptions & { userInstalls: boolean }): Promise<DiscordHarness> {
  const { userInstalls, ...rest } = options;
  return DiscordHarness.start({ partialImages: 0, ...rest, bot: { ...rest.bot, userInstalls } });
}

/** The first answer of an interaction, once it has text. */
function answerOf(harness: DiscordHarness, ix: FakeInteraction): Promise<FakeMessage> {
  return harness.discord.waitFor(() => {
    const message = harness.discord.original(ix);
    return message && message.content ? message : undefined;
  }, `the answer to ${ix.name}`);
}

function logged(harness: DiscordHarness, code: string): boolean {
  return harness.logger.entries.some((e) => (e.obj as { code?: string }).code === code);
}

/** Requests the bot made with its own token to post in channels (not through an interaction's webhook). */
function channelPosts(harness: DiscordHarness): number {
  return harness.discord.requests.filter((r) => r.route === 'channel-message' && r.method === 'POST').length;
}

describe('DMs and user installs, off (the default)', () => {
  it('refuses /imagine in a DM privately with dms_not_enabled, and sends nothing to the image service', async () => {
    h = await start({ userInstalls: false });
    const answer = await answerOf(h, h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }, { place: 'dm' }));
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(logged(h, 'dms_not_enabled')).toBe(true);
    expect(h.emulator.requests).toHaveLength(0);
    expect(await h.quotaStore.usage({})).toHaveLength(0);
  });

  it('refuses /imagine in a server where only the user installed the app the same way', async () => {
    h = await start({ userInstalls: false });
    const answer = await answerOf(h, h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }, { place: 'user-install' }));
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(logged(h, 'dms_not_enabled')).toBe(true);
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('still takes /imagine in a server the bot is installed in', async () => {
    h = await start({ userInstalls: false });
    const final = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }));
    expect(final.attachments).toHaveLength(1);
    expect(logged(h, 'dms_not_enabled')).toBe(false);
  });
});

describe('DMs and user installs, on (DISCORD_USER_INSTALLS=1)', () => {
  it('draws /imagine in a DM through the interaction webhook — previews, then the result — charged to the user’s own DM scope', async () => {
    // The servers' budget is spent (0): it does not count in a DM.
    h = await start({ userInstalls: true, partialImages: 1, limits: { scopeDailyUsd: 0 }, emulator: { latencyMs: 300 }, holdEvent: previewByPreview });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a fox in the snow', quality: 'low' }, { place: 'dm' });
    const final = await h.finalReply(ix);

    expect(final.channelId).toBe(h.discord.dmChannelOf(h.discord.user.id));
    expect(final.history.map((s) => s.via)).toEqual(['callback', 'webhook', 'webhook', 'webhook', 'webhook']);
    expect(final.history.some((s) => s.attachments.some((a) => a.filename === 'preview-1-1.jpg'))).toBe(true);
    expect(final.attachments).toHaveLength(1);
    expect(buttonsOf(final).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    expect(channelPosts(h)).toBe(0);

    const [record, ...others] = await h.quotaStore.usage({});
    expect(others).toHaveLength(0);
    expect(record).toMatchObject({ userKey: `discord:${h.discord.user.id}`, scopeKey: `discord:dm:${h.discord.user.id}` });
    expect(record!.costUsd).toBeGreaterThan(0);
  });

  it('draws /imagine in a server the bot is not in (the user installed the app) through the webhook, on the same DM scope', async () => {
    h = await start({ userInstalls: true });
    const final = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a heron', quality: 'low' }, { place: 'user-install' }));
    expect(final.channelId).toBe(h.discord.foreignChannelId);
    expect(final.attachments).toHaveLength(1);
    expect(channelPosts(h)).toBe(0);
    const [record] = await h.quotaStore.usage({});
    expect(record).toMatchObject({ scopeKey: `discord:dm:${h.discord.user.id}` });
  });

  it('refuses a DM job once the user’s DM budget (PICTOR_DM_DAILY_USD) is spent, and nothing is sent', async () => {
    h = await start({ userInstalls: true, dmCaps: { dailyUsd: 0.02 } });
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a first fox', quality: 'low' }, { place: 'dm' }));
    const sent = h.emulator.requests.length;
    const spent = await h.quotaStore.spentToday(`discord:dm:${h.discord.user.id}`, Date.now());
    expect(spent).toBeGreaterThan(0);

    const second = h.discord.slashCommand('imagine', { prompt: 'a second fox', quality: 'low', count: 4 }, { place: 'dm' });
    await h.discord.waitFor(() => logged(h!, 'budget_scope_daily'), 'the refusal');
    const refused = await answerOf(h, second);
    expect(refused.content).toContain('budget');
    expect(buttonsOf(refused)).toEqual([]);
    expect(h.emulator.requests).toHaveLength(sent);
    // The same user in a server is not held to the DM budget.
    const inServer = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a third fox', quality: 'low', count: 4 }));
    expect(inServer.attachments).toHaveLength(4);
  });

  it('sends the result by DM when the token expired in a server the bot is not in (it cannot post in that channel)', async () => {
    const harness = (h = await start({ userInstalls: true, emulator: { latencyMs: 600 } }));
    const ix = harness.discord.slashCommand('imagine', { prompt: 'a very long job', quality: 'low' }, { place: 'user-install' });
    await harness.discord.waitFor(() => harness.discord.original(ix)?.content.includes('Drawing'), 'the job to start');
    harness.discord.expireToken(ix.token);
    const dm = harness.discord.dmChannelOf(harness.discord.user.id);
    const posted = await harness.discord.waitFor(() => harness.discord.channelMessages(dm).find((m) => m.attachments.length === 1), 'the result in the DM');
    expect(posted.content).toContain('a very long job');
    expect(h.discord.requests.filter((r) => r.route === 'dm-channel')).toHaveLength(1);
    expect(h.discord.channelMessages(h.discord.foreignChannelId).filter((m) => m.interactionId === undefined)).toHaveLength(0);
  });

  it('shows /imagine-usage in a DM with the user’s budget outside servers, not a server’s', async () => {
    h = await start({ userInstalls: true, dmCaps: { dailyUsd: 1 }, limits: { scopeMonthlyUsd: 5 } });
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }, { place: 'dm' }));
    const spent = await h.quotaStore.spentToday(`discord:dm:${h.discord.user.id}`, Date.now());
    const answer = await answerOf(h, h.discord.slashCommand('imagine-usage', {}, { place: 'dm' }));
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(answer.content).toContain(`Your daily budget outside servers: ${formatUsd(1 - spent)} left of $1.00 (spent ${formatUsd(spent)})`);
    expect(answer.content).not.toContain('server’s');
  });

  it('does not let anyone change budgets or settings from a DM', async () => {
    h = await start({ userInstalls: true });
    const asOwner = { place: 'user-install' as const, permissions: String(PermissionFlagsBits.Administrator | PermissionFlagsBits.ManageGuild) };
    const answer = await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-daily', usd: '5' }, asOwner));
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(answer.content).toMatch(/^✋/);
    expect(await h.quotaStore.capOverrides(`discord:${h.discord.foreignGuildId}`)).toEqual({});
    expect(await h.quotaStore.capOverrides(`discord:dm:${h.discord.user.id}`)).toEqual({});
  });
});
