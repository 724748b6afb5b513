import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { answerOf, buttonId, buttonsOf, DiscordHarness } from './harness.js';

const EPHEMERAL = 64;
const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Waits until the member's ended job is in their history (it is kept once the job's reply is final). */
async function inHistory(harness: DiscordHarness, userId: string): Promise<void> {
  const requester = { platform: 'discord' as const, userId, channelId: '', scopeId: harness.discord.guildId };
  await vi.waitFor(async () => expect((await harness.runner.history!.mine(requester)).length).toBeGreaterThan(0), { timeout: 15_000 });
  // Kept for the server's view too: the writes under way are done.
  await harness.runner.history!.settled();
}

describe('/imagine-history', () => {
  it('links a DM job’s entry through @me and a user-install job’s through the server it was asked in (not the member’s budget scope)', async () => {
    h = await DiscordHarness.start({ partialImages: 0, bot: { userInstalls: true }, dmCaps: { dailyUsd: 5 } });
    const ada = h.discord.newUser('ada');
    const inDm = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a dm fox', quality: 'low' }, { user: ada, place: 'dm' }));
    const installed = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a heron', quality: 'low' }, { user: ada, place: 'user-install' }));
    const requester = { platform: 'discord' as const, userId: ada.id, channelId: '', scopeId: h.discord.guildId };
    await vi.waitFor(async () => expect(await h!.runner.history!.mine(requester)).toHaveLength(2), { timeout: 15_000 });
    await h.runner.history!.settled();

    const links = (await h.runner.history!.mine(requester)).map((e) => e.link).sort();
    expect(links).toEqual(
      [`https://discord.com/channels/@me/${inDm.channelId}/${inDm.id}`, `https://discord.com/channels/${h.discord.foreignGuildId}/${installed.channelId}/${installed.id}`].sort(),
    );
  });

  it('shows a member their own jobs privately with a link and a Reroll, lets admins see the server’s, and forgets a member’s on request', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const ada = h.discord.newUser('ada');
    const bo = h.discord.newUser('bo');
    const done = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a lighthouse at dusk', quality: 'low' }, { user: ada }));
    await inHistory(h, ada.id);

    const mine = await answerOf(h, h.discord.slashCommand('imagine-history', {}, { user: ada }));
    expect(mine.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(mine.content).toMatch(/“a lighthouse at dusk” · 1 × 1024x1024, low · \$\d/);
    expect(mine.content).toContain(`(https://discord.com/channels/${h.discord.guildId}/${done.channelId}/${done.id})`);
    expect(buttonsOf(mine).map((b) => b.label)).toEqual(['Reroll 1']);

    const others = await answerOf(h, h.discord.slashCommand('imagine-history', {}, { user: bo }));
    expect(others.content).toContain('Nothing yet.');
    const refused = await answerOf(h, h.discord.slashCommand('imagine-history', { show: 'server' }, { user: bo }));
    expect(refused.content).toMatch(/^✋ Only an admin/);
    const server = await answerOf(h, h.discord.slashCommand('imagine-history', { show: 'server' }, { user: bo, permissions: MANAGE_SERVER }));
    expect(server.content).toContain(`<@${ada.id}> “a lighthouse at dusk”`);
    expect(server.allowedMentions).toEqual({ parse: [] });

    const forgot = await answerOf(h, h.discord.slashCommand('imagine-history', { show: 'forget' }, { user: ada }));
    expect(forgot.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(forgot.content).toMatch(/^🧹 Erased your history \(1 job\)/);
    expect((await answerOf(h, h.discord.slashCommand('imagine-history', {}, { user: ada }))).content).toContain('Nothing yet.');
  });
});

describe('the Delete button of a result', () => {
  it('deletes the message and its images for the member who asked, after a restart too', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a kite', quality: 'low' }));
    expect(result.attachments.length).toBeGreaterThan(0);
    await h.restart();
    const click = h.discord.clickButton(result, buttonId(result, 'Delete'));
    await h.discord.waitFor(() => !h!.discord.messages.has(result.id), 'the result to be deleted');
    expect(click.ack?.type).toBe(6);
  });

  it('lets an admin delete another member’s result, and tells anyone else privately who may', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const ada = h.discord.newUser('ada');
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a kite', quality: 'low' }, { user: ada }));
    const refused = h.discord.clickButton(result, buttonId(result, 'Delete'), { user: h.discord.newUser('bo') });
    const answer = await answerOf(h, refused);
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(answer.content).toBe(`✋ Only <@${ada.id}> or an admin can delete this message.`);
    expect(h.discord.messages.has(result.id)).toBe(true);

    h.discord.clickButton(result, buttonId(result, 'Delete'), { user: h.discord.newUser('mod'), permissions: String(PermissionFlagsBits.Administrator) });
    await h.discord.waitFor(() => !h!.discord.messages.has(result.id), 'the result to be deleted');
  });

  it('takes a double-clicked Delete as one: the message is deleted once, and the second click finding it gone is no error', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a kite', quality: 'low' }));
    const clicks = [h.discord.clickButton(result, buttonId(result, 'Delete')), h.discord.clickButton(result, buttonId(result, 'Delete'))];
    const handled = () => h!.logger.entries.filter((e) => e.msg === 'a result message was deleted' || e.msg === 'an interaction handler failed');
    await h.discord.waitFor(() => handled().length === 2, 'both clicks to be handled');
    // A handler logs before its answer reaches Discord, and the two clicks race: wait for the answer of the one that
    // deleted the message, whichever it was.
    await h.discord.waitFor(() => clicks.some((click) => click.ack), 'the deleting click’s answer');
    expect(h.discord.messages.has(result.id)).toBe(false);
    // The click that deletes answers by updating the message; the other too, unless the message was gone already (nothing to update).
    const answers = clicks.map((click) => click.ack?.type);
    expect(answers).toContain(6);
    for (const answer of answers) expect([6, undefined]).toContain(answer);
    expect(handled().map((e) => e.level)).toEqual(['info', 'info']);
    expect(h.logger.entries.filter((e) => e.level === 'error')).toEqual([]);
  });

  it('takes a Delete pressed on a result already deleted (a client that did not refresh) as done: logged as a deletion, no error', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a kite', quality: 'low' }));
    h.discord.clickButton(result, buttonId(result, 'Delete'));
    await h.discord.waitFor(() => !h!.discord.messages.has(result.id), 'the result to be deleted');
    const deletions = () => h!.logger.entries.filter((e) => e.msg === 'a result message was deleted' || e.msg === 'an interaction handler failed');
    await h.discord.waitFor(() => deletions().length === 1, 'the first click to be handled');
    h.discord.clickButton(result, buttonId(result, 'Delete'));
    await h.discord.waitFor(() => deletions().length === 2, 'the second click to be handled');
    expect(deletions().map((e) => [e.level, (e.obj as { alreadyGone?: boolean }).alreadyGone])).toEqual([['info', undefined], ['info', true]]);
    expect(h.logger.entries.filter((e) => e.level === 'error')).toEqual([]);
  });
});
