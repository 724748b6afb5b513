import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JobRecordStore } from '../../../bots/discord/JobRecordStore.js';
import { say } from '../../../bots/runner/index.js';
import type { FakeInteraction, FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import { snowflake } from '../../fakes/discord/snowflake.js';
import { buttonId, buttonsOf, DiscordHarness, drawingReply, passTheAnswerBudget, takeTheTimers } from './harness.js';
import { jobRecords } from './sweep-scene.js';
import { jobStoreOf, spyOnInstance } from '../../helpers/instance-spy.js';

const EPHEMERAL = 64;

let h: DiscordHarness | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await h?.close();
  h = undefined;
});

function logged(harness: DiscordHarness, code: string): boolean {
  return harness.logger.entries.some((e) => (e.obj as { code?: string }).code === code);
}

/** The private answers to a press (its first answer or a follow-up). */
function answersTo(harness: DiscordHarness, click: FakeInteraction): FakeMessage[] {
  return [...harness.discord.messages.values()].filter((m) => m.interactionId === click.id);
}

/** The budget scopes the jobs so far were charged to. */
async function chargedScopes(harness: DiscordHarness): Promise<string[]> {
  return (await harness.quotaStore.usage({})).map((u) => u.scopeKey).sort();
}

/** A private job of `user` in the server (asked with `roles`), whose token expires while it draws: its result is sent to their DM. */
async function privateResultInDm(harness: DiscordHarness, user: { id: string }, roles: string[] = []): Promise<FakeMessage> {
  const job = harness.discord.slashCommand('imagine', { prompt: 'a private fox', quality: 'low', private: true }, { user: user as never, roles });
  await harness.discord.waitFor(() => (harness.discord.original(job)?.content.includes('Drawing') ? true : undefined), 'the job drawing');
  harness.discord.expireToken(job.token);
  return harness.discord.waitFor(() => harness.discord.channelMessages(harness.discord.dmChannelOf(user.id)).find((m) => m.attachments.length > 0), 'its result in the DM', 20_000);
}

describe('the buttons of a private server job sent to its member’s DM', () => {
  it.each([false, true])('run its Reroll in that server, on its budget, privately, and delete it for its member (DMs and user installs on: %s)', async (userInstalls) => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 1500 }, bot: { userInstalls }, dmCaps: { dailyUsd: 5 } });
    const ada = h.discord.newUser('ada');
    const posted = await privateResultInDm(h, ada);

    const reroll = h.discord.clickButton(posted, buttonId(posted, 'Reroll'), { user: ada, place: 'dm' });
    const again = await h.finalReply(reroll);
    expect(again.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(again.attachments).toHaveLength(1);
    expect(logged(h, 'dms_not_enabled')).toBe(false);
    expect(await chargedScopes(h)).toEqual([`discord:${h.discord.guildId}`, `discord:${h.discord.guildId}`]);

    h.discord.clickButton(posted, buttonId(posted, 'Delete'), { user: ada, place: 'dm' });
    await h.discord.waitFor(() => (h!.discord.messages.has(posted.id) ? undefined : true), 'the result deleted');
  });

  it('refuses the same buttons pressed by another member in their DM as before (DMs off: dms_not_enabled), and nothing runs', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 1500 } });
    const ada = h.discord.newUser('ada');
    const bo = h.discord.newUser('bo');
    const posted = await privateResultInDm(h, ada);
    const sent = h.emulator.requests.length;

    const reroll = h.discord.clickButton(posted, buttonId(posted, 'Reroll'), { user: bo, place: 'dm' });
    const note = await h.discord.waitFor(() => answersTo(h!, reroll)[0], 'the refusal');
    expect(note.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(logged(h, 'dms_not_enabled')).toBe(true);
    expect(h.emulator.requests).toHaveLength(sent);
  });

  it('opens its Edit form in the DM and runs the edit in that server, privately (DMs off)', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 1500 } });
    const ada = h.discord.newUser('ada');
    const posted = await privateResultInDm(h, ada);

    const edit = h.discord.clickButton(posted, buttonId(posted, 'Edit'), { user: ada, place: 'dm' });
    await h.discord.waitFor(() => edit.modal, 'the edit form');
    const sent = h.discord.submitModal(edit, { prompt: 'give it a hat' }, { place: 'dm' });
    const edited = await h.finalReply(sent);
    expect(edited.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(h.emulator.requests.filter((r) => r.route === 'edits')).toHaveLength(1);
    expect(await chargedScopes(h)).toEqual([`discord:${h.discord.guildId}`, `discord:${h.discord.guildId}`]);
  });
});

describe('a member’s press of their private server job’s message in their DM, read against who they are in that server now', () => {
  it('is refused privately once they are no longer a member of that server, and nothing runs; their Delete still deletes', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 1500 } });
    const ada = h.discord.newUser('ada');
    const posted = await privateResultInDm(h, ada);
    const sent = h.emulator.requests.length;
    // Kicked, banned or gone: Discord answers 10007 Unknown Member.
    h.discord.guildMembers.delete(ada.id);

    const reroll = h.discord.clickButton(posted, buttonId(posted, 'Reroll'), { user: ada, place: 'dm' });
    const note = await h.discord.waitFor(() => answersTo(h!, reroll)[0], 'the refusal');
    expect(note.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.not_member', { why: 'gone' })}`);
    expect(h.emulator.requests).toHaveLength(sent);
    expect(await chargedScopes(h)).toEqual([`discord:${h.discord.guildId}`]);

    // Their Delete spends nothing: the image in their DM is still theirs to delete.
    h.discord.clickButton(posted, buttonId(posted, 'Delete'), { user: ada, place: 'dm' });
    await h.discord.waitFor(() => (h!.discord.messages.has(posted.id) ? undefined : true), 'the result deleted');
  });

  it('runs under the roles they have there now: a role taken from them since the job refuses it by that server’s rules', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 1500 } });
    const artists = snowflake();
    await h.finalReply(h.discord.slashCommand('imagine-admin set', { setting: 'who', value: `<@&${artists}>` }, { permissions: String(PermissionFlagsBits.ManageGuild) }), (m) => m.content.length > 0);
    const ada = h.discord.newUser('ada');
    const posted = await privateResultInDm(h, ada, [artists]);
    const sent = h.emulator.requests.length;
    h.discord.guildMembers.set(ada.id, { user: ada, roles: [] });

    const reroll = h.discord.clickButton(posted, buttonId(posted, 'Reroll'), { user: ada, place: 'dm' });
    const note = await h.discord.waitFor(() => answersTo(h!, reroll)[0], 'the refusal');
    expect(note.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(logged(h, 'member_not_allowed')).toBe(true);
    expect(h.emulator.requests).toHaveLength(sent);
  });

  it('is refused privately when Discord cannot tell their roles there, rather than run on the roles the job was asked with', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 1500 } });
    const ada = h.discord.newUser('ada');
    const posted = await privateResultInDm(h, ada);
    const sent = h.emulator.requests.length;
    h.discord.failNext({ route: 'guild-member' }, { status: 500, code: 0, message: 'Internal Server Error', count: 10 });

    const retry = h.discord.clickButton(posted, buttonId(posted, 'Reroll'), { user: ada, place: 'dm' });
    const note = await h.discord.waitFor(() => answersTo(h!, retry)[0], 'the refusal');
    expect(note.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.not_member', { why: 'unknown' })}`);
    expect(h.emulator.requests).toHaveLength(sent);
  });
});

describe('a member’s press of their private server job’s message in their DM, while Discord does not say who they are there', () => {
  it.each([
    { what: 'a press made just now', madeAgoMs: 0, asked: 1 },
  ])('is refused privately within Discord’s deadline for $what, and nothing runs', async ({ madeAgoMs, asked }) => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 1500 } });
    const ada = h.discord.newUser('ada');
    const posted = await privateResultInDm(h, ada);
    const sent = h.emulator.requests.length;
    const members = h.discord.holdRequests((method, path) => method === 'GET' && path.includes(`/guilds/${h!.discord.guildId}/members/`));
    try {
      h.discord.staleness.madeAgoMs = madeAgoMs;
      takeTheTimers();
      const reroll = h.discord.clickButton(posted, buttonId(posted, 'Reroll'), { user: ada, place: 'dm' });
      await h.discord.waitFor(() => members.held === asked || undefined, 'the member lookup');
      await passTheAnswerBudget();
      // The fake takes a first answer only within its 3 s (later it answers 10062 Unknown interaction, as Discord does).
      const note = await h.discord.waitFor(() => answersTo(h!, reroll)[0], 'the refusal');
      expect(note.flags & EPHEMERAL).toBe(EPHEMERAL);
      expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.not_member', { why: 'unknown' })}`);
      expect(members.held).toBe(asked);
      expect(h.emulator.requests).toHaveLength(sent);
    } finally {
      h.discord.staleness.madeAgoMs = 0;
      members.release();
    }
  });
});

describe('a press whose id says it was made seconds before it reached the bot (a late delivery, or the host’s clock ahead of Discord’s)', () => {
  it.each([{ madeAgoMs: 1_600 }, { madeAgoMs: 2_600 }])('is claimed and answered as any other when made $madeAgoMs ms before, its deadline counted from its arrival: its member looked up, and nothing runs', async ({ madeAgoMs }) => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 1500 } });
    const ada = h.discord.newUser('ada');
    const posted = await privateResultInDm(h, ada);
    const sent = h.emulator.requests.length;
    const members = h.discord.holdRequests((method, path) => method === 'GET' && path.includes(`/guilds/${h!.discord.guildId}/members/`));
    try {
      h.discord.staleness.madeAgoMs = madeAgoMs;
      takeTheTimers();
      const reroll = h.discord.clickButton(posted, buttonId(posted, 'Reroll'), { user: ada, place: 'dm' });
      await h.discord.waitFor(() => members.held === 1 || undefined, 'the member lookup');
      await passTheAnswerBudget();
      // The bot cannot tell a late delivery from its own clock running ahead: it answers. (The fake, as Discord would
      // for a delivery that late, no longer takes that answer: 10062.)
      await h.discord.waitFor(() => (reroll.callbackAttempts > 0 ? true : undefined), 'the press answered');
      expect(members.held).toBe(1);
      expect(h.logger.entries.some((e) => e.msg === 'refused an interaction: could not check that no other replica took it')).toBe(false);
      expect(h.emulator.requests).toHaveLength(sent);
    } finally {
      h.discord.staleness.madeAgoMs = 0;
      members.release();
    }
  });
});

/** `/imagine-history` asked by `user` in their DM, after their private job in the server: the list, with its Reroll. */
async function historyInDmOfPrivateServerJob(harness: DiscordHarness, user: { id: string }): Promise<FakeMessage> {
  await harness.finalReply(harness.discord.slashCommand('imagine', { prompt: 'a private fox', quality: 'low', private: true }, { user: user as never }));
  const requester = { platform: 'discord' as const, userId: user.id, channelId: '', scopeId: harness.discord.guildId };
  await vi.waitFor(async () => expect(await harness.runner.history!.mine(requester)).toHaveLength(1), { timeout: 15_000 });
  await harness.runner.history!.settled();
  const list = harness.discord.slashCommand('imagine-history', {}, { user: user as never, place: 'dm' });
  return harness.discord.waitFor(() => {
    const shown = harness.discord.original(list);
    return shown && buttonsOf(shown).length > 0 ? shown : undefined;
  }, 'the history');
}

describe('a Reroll from /imagine-history asked in a DM, of the member’s private server job', () => {
  it('runs as a DM job, on the member’s own budget, not the server’s (DMs on)', async () => {
    h = await DiscordHarness.start({ partialImages: 0, bot: { userInstalls: true }, dmCaps: { dailyUsd: 5 } });
    const ada = h.discord.newUser('ada');
    const history = await historyInDmOfPrivateServerJob(h, ada);

    const again = await h.finalReply(h.discord.clickButton(history, buttonsOf(history)[0]!.custom_id, { user: ada, place: 'dm' }));
    expect(again.attachments).toHaveLength(1);
    expect(await chargedScopes(h)).toEqual([`discord:${h.discord.guildId}`, `discord:dm:${ada.id}`]);
  });

  it('is refused as any DM press once DMs are off (dms_not_enabled), and nothing runs', async () => {
    const bot = { userInstalls: true };
    h = await DiscordHarness.start({ partialImages: 0, bot, dmCaps: { dailyUsd: 5 } });
    const ada = h.discord.newUser('ada');
    const history = await historyInDmOfPrivateServerJob(h, ada);
    // The operator turns DMs off; the list stays in the DM.
    bot.userInstalls = false;
    await h.restart();
    const sent = h.emulator.requests.length;

    const reroll = h.discord.clickButton(history, buttonsOf(history)[0]!.custom_id, { user: ada, place: 'dm' });
    const note = await h.discord.waitFor(() => answersTo(h!, reroll)[0], 'the refusal');
    expect(note.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(logged(h, 'dms_not_enabled')).toBe(true);
    expect(h.emulator.requests).toHaveLength(sent);
  });
});

describe('a press in a DM while DMs are off, while the bots’ state does not answer', () => {
  it('is refused at once (dms_not_enabled) when it is another member’s press of a private server job’s message there', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 1500 } });
    const ada = h.discord.newUser('ada');
    const bo = h.discord.newUser('bo');
    const posted = await privateResultInDm(h, ada);
    const hung = spyOnInstance(JobRecordStore.prototype, 'get', jobStoreOf(h)).mockImplementation(() => new Promise(() => {}));
    try {
      takeTheTimers();
      const reroll = h.discord.clickButton(posted, buttonId(posted, 'Reroll'), { user: bo, place: 'dm' });
      await h.discord.waitFor(() => hung.mock.calls.length > 0 || undefined, 'the job record read');
      await passTheAnswerBudget();
      const note = await h.discord.waitFor(() => answersTo(h!, reroll)[0], 'the refusal', 10_000);
      expect(note.flags & EPHEMERAL).toBe(EPHEMERAL);
      expect(logged(h, 'dms_not_enabled')).toBe(true);
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe('the Retry of a private server job’s “stopped when the bot restarted” sent to its member’s DM', () => {
  it('runs the job again in that server, on its budget, privately, with DMs off', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 3000 } });
    const ada = h.discord.newUser('ada');
    const job = h.discord.slashCommand('imagine', { prompt: 'a private fox', quality: 'low', private: true }, { user: ada });
    await drawingReply(h, job);
    // Its token expired while it drew (issued 20 minutes ago): the next process's sweep can only tell the member by DM.
    h.discord.expireToken(job.token);
    const records = jobRecords(h);
    for await (const { key } of records.entries()) {
      await records.update(key, (record) => record && { ...record, reply: record.reply && { ...record.reply, issuedAt: Date.now() - 20 * 60_000 } });
    }
    await h.restart({ crash: true });
    const dm = h.discord.dmChannelOf(ada.id);
    const stopped = await h.discord.waitFor(() => h!.discord.channelMessages(dm).find((m) => buttonsOf(m).some((b) => b.label === 'Retry')), 'its “stopped” in the DM', 20_000);

    const retry = h.discord.clickButton(stopped, buttonId(stopped, 'Retry'), { user: ada, place: 'dm' });
    await h.discord.waitFor(() => (h!.emulator.requests.length === 2 ? true : undefined), 'the job sent again', 20_000);
    expect(logged(h, 'dms_not_enabled')).toBe(false);
    expect(answersTo(h, retry).every((m) => (m.flags & EPHEMERAL) === EPHEMERAL || m.channelId === dm)).toBe(true);
    await vi.waitFor(async () => expect(await chargedScopes(h!)).toHaveLength(2), { timeout: 20_000 });
    expect(await chargedScopes(h)).toEqual([`discord:${h.discord.guildId}`, `discord:${h.discord.guildId}`]);
  });
});

describe('a Reroll from /imagine-history of a job made elsewhere', () => {
  it('runs the member’s DM job again in the server where it is clicked, on that server’s budget', async () => {
    h = await DiscordHarness.start({ partialImages: 0, bot: { userInstalls: true }, dmCaps: { dailyUsd: 5 } });
    const ada = h.discord.newUser('ada');
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a dm fox', quality: 'low' }, { user: ada, place: 'dm' }));
    const requester = { platform: 'discord' as const, userId: ada.id, channelId: '', scopeId: h.discord.guildId };
    await vi.waitFor(async () => expect(await h!.runner.history!.mine(requester)).toHaveLength(1), { timeout: 15_000 });
    await h.runner.history!.settled();
    const list = h.discord.slashCommand('imagine-history', {}, { user: ada });
    const history = await h.discord.waitFor(() => (h!.discord.original(list)?.content ? h!.discord.original(list) : undefined), 'the history');

    const again = await h.finalReply(h.discord.clickButton(history, buttonsOf(history)[0]!.custom_id, { user: ada }));
    expect(again.channelId).toBe(h.discord.channelId);
    expect(again.attachments).toHaveLength(1);
    expect(await chargedScopes(h)).toEqual([`discord:${h.discord.guildId}`, `discord:dm:${ada.id}`]);
  });
});

describe('a user-install job’s buttons pressed by someone else, in a server the bot is not in', () => {
  it('run the Reroll on the presser’s own budget, and tell them privately that only its member may Delete it', async () => {
    h = await DiscordHarness.start({ partialImages: 0, bot: { userInstalls: true }, dmCaps: { dailyUsd: 5 } });
    const ada = h.discord.newUser('ada');
    const bo = h.discord.newUser('bo');
    const done = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a heron', quality: 'low' }, { user: ada, place: 'user-install' }));

    const again = await h.finalReply(h.discord.clickButton(done, buttonId(done, 'Reroll'), { user: bo, place: 'user-install' }));
    expect(again.attachments).toHaveLength(1);
    expect(await chargedScopes(h)).toEqual([`discord:dm:${ada.id}`, `discord:dm:${bo.id}`].sort());

    const del = h.discord.clickButton(done, buttonId(done, 'Delete'), { user: bo, place: 'user-install' });
    const note = await h.discord.waitFor(() => answersTo(h!, del)[0], 'the refusal');
    expect(note.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(note.content).toBe(`✋ ${say('en-US', 'discord.button.only_requester', { user: `<@${ada.id}>`, action: 'delete' })}`);
    expect(h.discord.messages.has(done.id)).toBe(true);
  });
});
