import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JobRecordStore } from '../../../bots/discord/JobRecordStore.js';
import { RUNNER_REFUSAL_CODES } from '../../../bots/runner/index.js';
import { formatUsd } from '../../../src/index.js';
import type { FakeInteraction } from '../../fakes/discord/FakeDiscord.js';
import { answerOf, buttonId, buttonsOf, DiscordHarness, EPHEMERAL, privateNoteOf, type HarnessOptions } from './harness.js';
import { keyOf } from './reply-scene.js';
import { jobStoreOf, spyOnInstance } from '../../helpers/instance-spy.js';

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const inGroup = { place: 'group-dm' as const };

function start(options: HarnessOptions = {}): Promise<DiscordHarness> {
  return DiscordHarness.start({ partialImages: 0, ...options, bot: { userInstalls: true, ...options.bot } });
}

function logged(harness: DiscordHarness, code: string): boolean {
  return harness.logger.entries.some((e) => (e.obj as { code?: string }).code === code);
}

/** Requests the bot made with its own token to post in a channel (not through an interaction's webhook). */
function channelPosts(harness: DiscordHarness, channelId: string): number {
  return harness.discord.requests.filter((r) => r.route === 'channel-message' && r.method === 'POST' && r.rawPath.includes(`/channels/${channelId}/`)).length;
}

/** The scopes the quota store charged, one per job. */
async function chargedScopes(harness: DiscordHarness): Promise<string[]> {
  return (await harness.quotaStore.usage({})).map((r) => r.scopeKey);
}

async function historyOf(harness: DiscordHarness, userId: string, length: number): Promise<void> {
  const requester = { platform: 'discord' as const, userId, channelId: '', scopeId: `dm:${userId}` };
  await vi.waitFor(async () => expect(await harness.runner.history!.mine(requester)).toHaveLength(length), { timeout: 15_000 });
  await harness.runner.history!.settled();
}

describe('Discord group DMs (a user-installed app used with friends: context 2, no server, the bot no recipient)', () => {
  it('refuses /imagine there privately while DMs and user installs are off, and sends nothing', async () => {
    h = await start({ bot: { userInstalls: false } });
    const answer = await answerOf(h, h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }, inGroup));
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(logged(h, 'dms_not_enabled')).toBe(true);
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('draws /imagine in the group through the webhook, charged to the member’s own scope — a server’s spent budget does not count', async () => {
    h = await start({ limits: { scopeDailyUsd: 0 } });
    const final = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a fox among friends', quality: 'low' }, inGroup));
    expect(final.channelId).toBe(h.discord.groupDmChannelId);
    expect(final.flags & EPHEMERAL).toBe(0);
    expect(final.attachments).toHaveLength(1);
    expect(buttonsOf(final).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    expect(channelPosts(h, h.discord.groupDmChannelId)).toBe(0);
    expect(await chargedScopes(h)).toEqual([`discord:dm:${h.discord.user.id}`]);
  });

  it('carries what Discord sends there: the app may attach files, embed links and mention everyone (no external emojis, unlike in its own DM)', async () => {
    h = await start();
    const inDm = h.discord.slashCommand('imagine-usage', {}, { place: 'dm' });
    const inGroupDm = h.discord.slashCommand('imagine-usage', {}, inGroup);
    await answerOf(h, inDm);
    await answerOf(h, inGroupDm);
    const bits = (ix: FakeInteraction) => BigInt(ix.payload!.app_permissions as string);
    const [attach, embed, everyone, emojis] = [PermissionFlagsBits.AttachFiles, PermissionFlagsBits.EmbedLinks, PermissionFlagsBits.MentionEveryone, PermissionFlagsBits.UseExternalEmojis];
    expect(bits(inGroupDm)).toBe(attach | embed | everyone);
    expect(bits(inDm)).toBe(attach | embed | everyone | emojis);
  });

  it('runs another member’s Reroll of that result on their own scope, never the asker’s, and refuses them its Delete privately', async () => {
    h = await start({ dmCaps: { dailyUsd: 5 } });
    const ada = h.discord.newUser('ada');
    const bo = h.discord.newUser('bo');
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a shared heron', quality: 'low' }, { ...inGroup, user: ada }));

    const reroll = h.discord.clickButton(result, buttonId(result, 'Reroll'), { ...inGroup, user: bo });
    // As Discord sends it: the press names who authorized the app there (ada, whose command made the message), not bo.
    expect(reroll.payload).toMatchObject({ user: { id: bo.id }, authorizing_integration_owners: { '1': ada.id } });
    const rerolled = await h.finalReply(reroll);
    expect(rerolled.channelId).toBe(h.discord.groupDmChannelId);
    expect(h.emulator.requests.at(-1)!.fields).toMatchObject({ prompt: 'a shared heron' });
    const byScope = (await h.quotaStore.usage({})).map((r) => [r.userKey, r.scopeKey]);
    expect(byScope).toEqual(
      expect.arrayContaining([
        [`discord:${ada.id}`, `discord:dm:${ada.id}`],
        [`discord:${bo.id}`, `discord:dm:${bo.id}`],
      ]),
    );
    expect(byScope).toHaveLength(2);

    const del = h.discord.clickButton(result, buttonId(result, 'Delete'), { ...inGroup, user: bo });
    const refused = await privateNoteOf(h, del);
    expect(refused.content).toMatch(/^✋/);
    expect(h.discord.messages.has(result.id)).toBe(true);
  });

  it('keeps a private /imagine private there: an ephemeral result, and past its token it goes to the member’s DM, never to the group', async () => {
    const harness = (h = await start({ emulator: { latencyMs: 600 } }));
    const quick = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a secret fox', quality: 'low', private: true }, inGroup));
    expect(quick.flags & EPHEMERAL).toBe(EPHEMERAL);

    const ix: FakeInteraction = harness.discord.slashCommand('imagine', { prompt: 'a long secret', quality: 'low', private: true }, inGroup);
    await harness.discord.waitFor(() => harness.discord.original(ix)?.content.includes('Drawing'), 'the job to start');
    harness.discord.expireToken(ix.token);
    const dm = harness.discord.dmChannelOf(harness.discord.user.id);
    const posted = await harness.discord.waitFor(() => harness.discord.channelMessages(dm).find((m) => m.attachments.length === 1), 'the result in the DM');
    expect(posted.content).toContain('a long secret');
    expect(harness.discord.channelMessages(harness.discord.groupDmChannelId).filter((m) => (m.flags & EPHEMERAL) === 0)).toEqual([]);
    expect(channelPosts(harness, harness.discord.groupDmChannelId)).toBe(0);
  });

  it('sends a public job’s result to the member’s DM once its token expired (the bot cannot post in the group)', async () => {
    const harness = (h = await start({ emulator: { latencyMs: 600 } }));
    const ix = harness.discord.slashCommand('imagine', { prompt: 'a very long group job', quality: 'low' }, inGroup);
    await harness.discord.waitFor(() => harness.discord.original(ix)?.content.includes('Drawing'), 'the job to start');
    harness.discord.expireToken(ix.token);
    const dm = harness.discord.dmChannelOf(harness.discord.user.id);
    const posted = await harness.discord.waitFor(() => harness.discord.channelMessages(dm).find((m) => m.attachments.length === 1), 'the result in the DM');
    expect(posted.content).toContain('a very long group job');
    expect(channelPosts(harness, harness.discord.groupDmChannelId)).toBe(0);
  });

  it('delivers every paid image of a result that needs more than the 5 follow-ups Discord allows a user-installed app (too large together): the rest go to the member’s DM', async () => {
    // The service's answer waits until the fault below is set, so the reply with the images is the PATCH it meets.
    let faultSet!: () => void;
    const fault = new Promise<void>((resolve) => (faultSet = resolve));
    const harness = (h = await start({ dmCaps: { dailyUsd: 5 }, holdEvent: (_, index) => (index === 0 ? fault : Promise.resolve()) }));
    const ix = harness.discord.slashCommand('imagine', { prompt: 'seven herons', quality: 'low', count: 7 }, inGroup);
    await harness.discord.waitFor(() => harness.discord.original(ix)?.content.includes('Drawing'), 'the job to start');
    // Discord refuses the images with the reply (413), then together in one follow-up: each follows on its own — 7 messages beside the reply.
    const tooLarge = { status: 413, code: 40005, message: 'Request entity too large' };
    harness.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, tooLarge);
    harness.discord.failNext({ route: 'webhook-followup', method: 'POST', token: ix.token }, tooLarge);
    faultSet();
    const final = await harness.finalReply(ix);
    expect(final.content).toContain('they follow in separate messages');
    const dm = harness.discord.dmChannelOf(harness.discord.user.id);
    const alone = () => [...harness.discord.messages.values()].filter((m) => (m.interactionId === ix.id || m.channelId === dm) && m.attachments.length === 1);
    await harness.discord.waitFor(() => alone().length === 7, 'all 7 images');
    const followUps = alone().filter((m) => m.interactionId === ix.id);
    expect(followUps.length).toBeLessThanOrEqual(5);
    expect(alone().filter((m) => m.channelId === dm).length).toBe(7 - followUps.length);
    // One follow-up refused (40094), and none tried with the token after it.
    expect(harness.discord.requests.filter((r) => r.token === ix.token && r.code === 40094)).toHaveLength(1);
    expect(channelPosts(harness, harness.discord.groupDmChannelId)).toBe(0);
  });

  it('keeps a reroll’s 7 images in the group when Discord refuses them with the reply, for a member who never installed the app (the bot cannot DM them): they follow together', async () => {
    // Each job's answer waits while `held` does: the reroll's until the fault below is set.
    let held: Promise<void> = Promise.resolve();
    const harness = (h = await start({ dmCaps: { dailyUsd: 5 }, holdEvent: (_, index) => (index === 0 ? held : Promise.resolve()) }));
    const ada = harness.discord.newUser('ada');
    const bo = harness.discord.newUser('bo');
    const result = await harness.finalReply(harness.discord.slashCommand('imagine', { prompt: 'seven herons', quality: 'low', count: 7 }, { ...inGroup, user: ada }));
    let release!: () => void;
    held = new Promise<void>((resolve) => (release = resolve));

    const reroll = harness.discord.clickButton(result, buttonId(result, 'Reroll'), { ...inGroup, user: bo });
    await harness.discord.waitFor(() => harness.discord.original(reroll)?.content.includes('Drawing'), 'the reroll to start');
    harness.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: reroll.token }, { status: 413, code: 40005, message: 'Request entity too large' });
    release();
    const final = await harness.finalReply(reroll);
    expect(final.content).toContain('they follow in separate messages');

    const inGroupDm = () => [...harness.discord.messages.values()].filter((m) => m.interactionId === reroll.id && m.id !== final.id).flatMap((m) => m.attachments);
    const refused = (code: number) => harness.discord.requests.filter((r) => r.code === code);
    await harness.discord.waitFor(() => inGroupDm().length === 7 || refused(50007).length > 0 || undefined, 'the 7 images, or a refused DM');
    expect(inGroupDm().map((a) => a.filename)).toHaveLength(7);
    expect(refused(40094)).toEqual([]);
    expect(refused(50007)).toEqual([]);
    expect(harness.discord.channelMessages(harness.discord.dmChannelOf(bo.id))).toEqual([]);
  });

  it('tells the member privately that /imagine’s result could not be sent by DM when Discord refuses the reply’s edit and the DM, and leaves no progress running', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const harness = (h = await start({ holdEvent: (_, index) => (index === 0 ? held : Promise.resolve()) }));
    const ix = harness.discord.slashCommand('imagine', { prompt: 'a fox nobody may DM', quality: 'low' }, inGroup);
    await harness.discord.waitFor(() => harness.discord.original(ix)?.content.includes('Drawing'), 'the job to start');
    harness.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    harness.discord.failNext({ route: 'dm-channel', method: 'POST' }, { status: 403, code: 50007, message: 'Cannot send messages to this user' });
    release();

    const note = await privateNoteOf(harness, ix);
    expect(keyOf(note.content)).toBe('discord.job.end_not_sent_by_dm');
    const reply = await harness.discord.waitFor(() => {
      const message = harness.discord.original(ix);
      return message && !message.content.includes('Drawing') ? message : undefined;
    }, 'the progress cleared');
    expect(keyOf(reply.content)).toBe('discord.job.end_not_delivered');
    expect(buttonsOf(reply)).toEqual([]);
  });

  it('tells no other member of a job’s undelivered end that its member’s DM refused it, on their Cancel of it after a restart: the job’s message says only that it could not be delivered', async () => {
    const harness = (h = await start({ emulator: { latencyMs: 20_000 } }));
    const ada = harness.discord.newUser('ada');
    const bo = harness.discord.newUser('bo');
    const ix = harness.discord.slashCommand('imagine', { prompt: 'a fox its process left', quality: 'low' }, { ...inGroup, user: ada });
    const running = await harness.discord.waitFor(() => (harness.discord.original(ix)?.content.includes('Drawing') ? harness.discord.original(ix) : undefined), 'the job to start');
    // The start's sweep claims nothing (its storage failing for a while): Bo's Cancel takes the job.
    const claim = spyOnInstance(JobRecordStore.prototype, 'claimInterrupted', jobStoreOf(harness)).mockRejectedValue(new Error('EIO: i/o error, scandir'));
    await harness.restart({ crash: true });
    await vi.waitFor(() => expect(claim).toHaveBeenCalled(), { timeout: 15_000 });
    claim.mockRestore();
    harness.discord.failNext({ route: 'webhook-message', method: 'PATCH' }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    harness.discord.failNext({ route: 'dm-channel', method: 'POST' }, { status: 403, code: 50007, message: 'Cannot send messages to this user' });

    const click = harness.discord.clickButton(running, buttonId(running, 'Cancel'), { ...inGroup, user: bo });
    const reply = await harness.discord.waitFor(() => {
      const message = harness.discord.messages.get(running.id);
      return message && !message.content.includes('Drawing') ? message : undefined;
    }, 'the progress cleared');
    expect(keyOf(reply.content)).toBe('discord.job.end_not_delivered');
    expect([...harness.discord.messages.values()].filter((m) => m.interactionId === click.id && (m.flags & EPHEMERAL) === EPHEMERAL)).toEqual([]);
  });

  it('tells a member who never installed the app privately that their Reroll’s result could not be sent by DM (50007) when Discord refuses the reply’s edit, and leaves no progress running', async () => {
    let held: Promise<void> = Promise.resolve();
    const harness = (h = await start({ dmCaps: { dailyUsd: 5 }, holdEvent: (_, index) => (index === 0 ? held : Promise.resolve()) }));
    const ada = harness.discord.newUser('ada');
    const bo = harness.discord.newUser('bo');
    const result = await harness.finalReply(harness.discord.slashCommand('imagine', { prompt: 'a heron', quality: 'low' }, { ...inGroup, user: ada }));
    let release!: () => void;
    held = new Promise<void>((resolve) => (release = resolve));

    const reroll = harness.discord.clickButton(result, buttonId(result, 'Reroll'), { ...inGroup, user: bo });
    await harness.discord.waitFor(() => harness.discord.original(reroll)?.content.includes('Drawing'), 'the reroll to start');
    harness.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: reroll.token }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    release();

    const note = await privateNoteOf(harness, reroll);
    expect(keyOf(note.content)).toBe('discord.job.end_not_sent_by_dm');
    expect(harness.discord.requests.filter((r) => r.code === 50007)).toHaveLength(1);
    const reply = await harness.discord.waitFor(() => {
      const message = harness.discord.original(reroll);
      return message && !message.content.includes('Drawing') ? message : undefined;
    }, 'the progress cleared');
    expect(keyOf(reply.content)).toBe('discord.job.end_not_delivered');
    expect(buttonsOf(reply)).toEqual([]);
  });

  it('shows /imagine-history there privately: the member’s own jobs, linked through @me, and none of another member’s', async () => {
    h = await start({ dmCaps: { dailyUsd: 5 } });
    const ada = h.discord.newUser('ada');
    const bo = h.discord.newUser('bo');
    const done = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a group lighthouse', quality: 'low' }, { ...inGroup, user: ada }));
    await historyOf(h, ada.id, 1);

    const mine = await answerOf(h, h.discord.slashCommand('imagine-history', {}, { ...inGroup, user: ada }));
    expect(mine.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(mine.content).toContain('“a group lighthouse”');
    expect(mine.content).toContain(`(https://discord.com/channels/@me/${h.discord.groupDmChannelId}/${done.id})`);
    expect(buttonsOf(mine).map((b) => b.label)).toEqual(['Reroll 1']);

    const others = await answerOf(h, h.discord.slashCommand('imagine-history', {}, { ...inGroup, user: bo }));
    expect(others.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(others.content).toContain('Nothing yet.');
    const scope = await answerOf(h, h.discord.slashCommand('imagine-history', { show: 'server' }, { ...inGroup, user: bo }));
    expect(scope.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(scope.content).toMatch(/^✋/);
    expect(scope.content).not.toContain('a group lighthouse');
    // Outside servers there is no server history (not that they are no admin of one).
    expect(logged(h, 'outside_servers')).toBe(true);
    expect(logged(h, 'not_admin')).toBe(false);
  });

  it('shows /imagine-usage there privately with the member’s budget outside servers, not a server’s', async () => {
    h = await start({ dmCaps: { dailyUsd: 1 }, limits: { scopeMonthlyUsd: 5 } });
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }, inGroup));
    const spent = await h.quotaStore.spentToday(`discord:dm:${h.discord.user.id}`, Date.now());
    const answer = await answerOf(h, h.discord.slashCommand('imagine-usage', {}, inGroup));
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(answer.content).toContain(`Your daily budget outside servers: ${formatUsd(1 - spent)} left of $1.00 (spent ${formatUsd(spent)})`);
    expect(answer.content).not.toContain('server’s');
  });

  it('refuses every /imagine-admin subcommand there privately, saying it is for a server’s admins in that server (it is never registered for group DMs), and changes nothing', async () => {
    h = await start();
    const asked = [
      ['imagine-admin budget', { cap: 'user-daily', usd: '5' }],
      ['imagine-admin settings', {}],
      ['imagine-admin set', { setting: 'max-images', value: '1' }],
      ['imagine-admin style', { name: 'ink', text: 'an ink drawing of {prompt}' }],
      ['imagine-admin styles', {}],
      ['imagine-admin audit', { off: true }],
    ] as const;
    for (const [name, options] of asked) {
      const answer = await answerOf(h, h.discord.slashCommand(name, options, inGroup));
      expect(answer.flags & EPHEMERAL, name).toBe(EPHEMERAL);
      expect(answer.content, name).toMatch(/^✋/);
    }
    const refusals = h.logger.entries.filter((e) => (e.obj as { code?: string }).code === 'outside_servers');
    expect(refusals).toHaveLength(asked.length);
    // A refusal's code from the runner's closed list, as the server history's refusal logs it too.
    expect(RUNNER_REFUSAL_CODES).toContain('outside_servers');
    expect(await h.quotaStore.capOverrides(`discord:dm:${h.discord.user.id}`)).toEqual({});
  });
});
