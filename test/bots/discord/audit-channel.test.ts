import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import { snowflake } from '../../fakes/discord/snowflake.js';
import { auditGreeting, describeAuditTrouble, say } from '../../../bots/runner/index.js';
import { answerOf, DiscordHarness, EPHEMERAL } from './harness.js';

const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The text of a message's embeds, one per entry. */
const embedTexts = (message: FakeMessage): string[] => message.embeds.map((e) => String(e.description));

/** An admin chooses the audit channel; answers the private reply. */
async function chooseAuditChannel(harness: DiscordHarness, channelId: string): Promise<FakeMessage> {
  return answerOf(harness, harness.discord.slashCommand('imagine-admin audit', { channel: { channel: { id: channelId, name: 'audit' } } }, { permissions: MANAGE_SERVER }));
}

/** Waits for an audit post in the channel with an entry matching `text`. */
function auditEntry(harness: DiscordHarness, channelId: string, text: string): Promise<string> {
  return harness.discord.waitFor(() => harness.discord.channelMessages(channelId).flatMap(embedTexts).find((t) => t.includes(text)), `an audit entry with “${text}”`);
}

describe('the audit channel on Discord', () => {
  it('posts a public job (who, where, prompt, options, cost, link), a private one (no link) and a refusal (sent nowhere else)', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const audit = snowflake();
    const chosen = await chooseAuditChannel(h, audit);
    expect(chosen.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(chosen.content).toBe(`✅ ${say('en', 'audit.set', { scope: 'server', channel: `<#${audit}>` })}`);
    expect(h.discord.channelMessages(audit).map((m) => embedTexts(m))).toEqual([[auditGreeting('discord', 'en')]]);

    const ada = h.discord.newUser('ada');
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a public lighthouse', quality: 'low' }, { user: ada }));
    const entry = await auditEntry(h, audit, 'a public lighthouse');
    // Who, where, the job and its link (the words are describe-audit's).
    expect(entry).toContain(`<@${ada.id}>`);
    expect(entry).toContain(`<#${h.discord.channelId}>`);
    expect(entry).toContain('1024x1024 · low');
    expect(entry).toMatch(/\$0\.0\d+/);
    expect(entry).toContain(`https://discord.com/channels/${h.discord.guildId}/${result.channelId}/${result.id}`);
    // Nobody is pinged by an audit post.
    expect(h.discord.channelMessages(audit).at(-1)!.allowedMentions).toEqual({ parse: [] });

    const secret = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a private diary', quality: 'low', private: true }, { user: ada }));
    expect(secret.flags & EPHEMERAL).toBe(EPHEMERAL);
    const privateEntry = await auditEntry(h, audit, 'a private diary');
    expect(privateEntry).toContain(say('en', 'audit.private'));
    expect(privateEntry).not.toContain('https://');

    await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'blocked-words', value: 'kraken' }, { permissions: MANAGE_SERVER }));
    const sentBefore = h.emulator.requests.length;
    const refused = await answerOf(h, h.discord.slashCommand('imagine', { prompt: 'a kraken attack' }, { user: ada }));
    expect(refused.flags & EPHEMERAL).toBe(EPHEMERAL);
    const refusal = await auditEntry(h, audit, 'a kraken attack');
    expect(refusal).toContain('(blocked_word)');
    expect(refusal).toContain(say('en', 'audit.blocked_word', { word: 'kraken' }));
    expect(h.emulator.requests).toHaveLength(sentBefore);
    // The refusal was shown to Ada alone: nothing public but the public job's reply.
    expect(h.discord.channelMessages().filter((m) => (m.flags & EPHEMERAL) === 0).map((m) => m.id)).toEqual([result.id]);
  });

  it('greets a channel once though Discord made the greeting and failed on its answer (502): discord.js tries it again, its nonce keeps it one message', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 502, code: 0, message: 'Bad Gateway', applyFirst: true });
    const audit = snowflake();
    const answer = await chooseAuditChannel(h, audit);
    expect(answer.content).toBe(`✅ ${say('en', 'audit.set', { scope: 'server', channel: `<#${audit}>` })}`);
    expect(h.discord.channelMessages(audit).map((m) => embedTexts(m))).toEqual([[auditGreeting('discord', 'en')]]);
  });

  it('refuses a channel the bot cannot post in, naming the permissions, and keeps nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    h.discord.failNext({ route: 'channel-message', method: 'POST' }, { status: 403, code: 50013, message: 'Missing Permissions' });
    const channel = snowflake();
    const answer = await chooseAuditChannel(h, channel);
    expect(answer.content).toBe(`✋ ${say('en', 'audit.no_permission', { channel: `<#${channel}>` })}`);
    expect((await h.runner.policy.effective({ platform: 'discord', scopeId: h.discord.guildId })).auditChannel.value).toBeUndefined();
  });

  it('refuses a channel where the bot lacks Embed Links (Discord drops a bot’s embeds there), counts posts that lost theirs as failed, and posts the entry once it is given back', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const bare = snowflake();
    h.discord.withoutEmbedLinks.add(bare);
    const answer = await chooseAuditChannel(h, bare);
    expect(answer.content).toBe(`✋ ${say('en', 'audit.no_permission', { channel: `<#${bare}>` })}`);
    expect((await h.runner.policy.effective({ platform: 'discord', scopeId: h.discord.guildId })).auditChannel.value).toBeUndefined();

    // The permission is taken away later: the posts show no entry, they are tried again, and the admins are told.
    const audit = snowflake();
    await chooseAuditChannel(h, audit);
    h.discord.withoutEmbedLinks.add(audit);
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a faint kite', quality: 'low' }));
    const scope = { platform: 'discord' as const, scopeId: h.discord.guildId };
    await h.discord.waitFor(() => h!.runner.audit.trouble(scope), 'three failed tries of the audit post to be counted');
    // The next try is held (the count stays as it is) while the admins look at the settings view.
    const hold = h.discord.holdRequests((method, path) => method === 'POST' && path.includes(`/channels/${audit}/messages`));
    await h.discord.waitFor(() => hold.held > 0 || undefined, 'the next try of the audit post');
    const trouble = h.runner.audit.trouble(scope)!;
    expect(trouble).toMatchObject({ channelId: audit, code: '50006' });
    expect(trouble.failures).toBeGreaterThanOrEqual(3);
    const settings = await answerOf(h, h.discord.slashCommand('imagine-admin settings', {}, { permissions: MANAGE_SERVER }));
    expect(settings.content).toContain(describeAuditTrouble(trouble, 'en'));
    // Embed Links given back: that try lands, with the entry, once, and the trouble is gone.
    h.discord.withoutEmbedLinks.delete(audit);
    hold.release();
    await auditEntry(h, audit, 'a faint kite');
    // Discord's answer reaches the bot after the stand-in has shown the message.
    await h.discord.waitFor(() => h!.runner.audit.trouble(scope) === undefined || undefined, 'the trouble to be cleared');
    expect(h.discord.channelMessages(audit).flatMap(embedTexts).filter((t) => t.includes('a faint kite'))).toHaveLength(1);
  });

  it('leaves the job’s answer intact when audit posts fail (403, 500), and posts the entry at the next try; a channel deleted (404) drops it', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const audit = snowflake();
    await chooseAuditChannel(h, audit);
    const faults = [
      { status: 403, code: 50013, message: 'Missing Permissions' },
      // discord.js tries a 5xx again: every try of that post fails.
      { status: 500, code: 0, message: 'Internal Server Error', count: 4 },
      { status: 404, code: 10003, message: 'Unknown Channel' },
    ];
    for (const [i, fault] of faults.entries()) {
      const failedBefore = h.discord.requests.filter((r) => r.route === 'channel-message' && r.injected).length;
      h.discord.failNext({ route: 'channel-message', method: 'POST' }, fault);
      const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: `a sturdy kite ${i}`, quality: 'low' }));
      expect(result.attachments).toHaveLength(1);
      expect(result.content).not.toContain('audit');
      await h.discord.waitFor(() => h!.discord.requests.filter((r) => r.route === 'channel-message' && r.injected).length >= failedBefore + (fault.count ?? 1), 'the audit post to fail');
      // Tried again: the entry lands — but not in a channel Discord says is deleted (its entry dropped, said in the log).
      if (fault.code !== 10003) await auditEntry(h, audit, `a sturdy kite ${i}`);
    }
    await h.discord.waitFor(() => h!.logger.text().includes('its channel is gone') || undefined, 'the dropped entry to be logged');
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a sturdy kite 3', quality: 'low' }));
    await auditEntry(h, audit, 'a sturdy kite 3');
    expect(h.discord.channelMessages(audit).flatMap(embedTexts).filter((t) => t.includes('a sturdy kite')).map((t) => t.match(/a sturdy kite \d/)![0])).toEqual(['a sturdy kite 0', 'a sturdy kite 1', 'a sturdy kite 3']);
    expect(h.logger.text()).not.toContain(h.discord.botToken);
  });

  it('waits out a 429 on an audit post (discord.js keeps the route’s bucket) and posts it then', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const audit = snowflake();
    await chooseAuditChannel(h, audit);
    h.discord.rateLimitNext({ route: 'channel-message', method: 'POST' }, 500, 2);
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a patient heron', quality: 'low' }));
    expect(result.attachments).toHaveLength(1);
    await auditEntry(h, audit, 'a patient heron');
    expect(h.discord.requests.filter((r) => r.route === 'channel-message' && r.status === 429)).toHaveLength(2);
    expect(h.runner.audit.trouble({ platform: 'discord', scopeId: h.discord.guildId })).toBeUndefined();
  });

  it('on forget, writes the member’s audit entries again without their prompts', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const audit = snowflake();
    await chooseAuditChannel(h, audit);
    const ada = h.discord.newUser('ada');
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a quokkaflute sunrise', quality: 'low' }, { user: ada }));
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a plain tree', quality: 'low' }));
    await auditEntry(h, audit, 'a quokkaflute sunrise');
    await auditEntry(h, audit, 'a plain tree');

    const forgot = await answerOf(h, h.discord.slashCommand('imagine-history', { show: 'forget' }, { user: ada }));
    expect(forgot.content.endsWith(say('en', 'audit.forgotten', { count: 1 }))).toBe(true);
    const texts = h.discord.channelMessages(audit).flatMap(embedTexts);
    expect(texts.join('\n')).not.toContain('quokkaflute');
    expect(texts.find((t) => t.includes(`<@${ada.id}>`))).toContain(`*${say('en', 'audit.erased')}*`);
    expect(texts.some((t) => t.includes('a plain tree'))).toBe(true);
  });
});
