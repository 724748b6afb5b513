import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeInteraction, FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import { snowflake } from '../../fakes/discord/snowflake.js';
import { GORE_VARIANTS } from '../../helpers/blocked-word-variants.js';
import { INTAKE_REFUSALS } from '../../helpers/intake-cases.js';
import { COMMAND_NAMES, say, type Requester } from '../../../bots/runner/index.js';
import { answerOf, buttonId, DiscordHarness } from './harness.js';

const EPHEMERAL = 64;
const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** An admin changes a setting of the server; answers the private reply. */
async function set(harness: DiscordHarness, setting: string, value: string): Promise<FakeMessage> {
  const answer = await answerOf(harness, harness.discord.slashCommand('imagine-admin set', { setting, value }, { permissions: MANAGE_SERVER }));
  expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
  return answer;
}

/** A job the server's rules refuse: a private first answer, the code in the log, nothing sent to the service. */
async function expectRefusedPrivately(harness: DiscordHarness, ix: FakeInteraction, code: string): Promise<void> {
  const answer = await answerOf(harness, ix);
  expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
  // Logged once, by the runner that refused it (the bot that tells it logs nothing of it).
  expect(harness.logger.entries.filter((e) => (e.obj as { code?: string }).code === code)).toHaveLength(1);
  expect(harness.emulator.requests).toHaveLength(0);
}

describe('the rules of a server, on Discord', () => {
  it('refuses every job in a server the operator has not allowed, privately, and sends nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0, controls: { allowedScopes: [snowflake()] } });
    await expectRefusedPrivately(h, h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }), 'scope_not_allowed');
  });

  it('takes jobs only in the channels an admin chose; the chosen channel works', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const art = snowflake();
    expect((await set(h, 'channels', `<#${art}>`)).content).toMatch(/^✅/);
    await expectRefusedPrivately(h, h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }), 'channel_not_allowed');
    const done = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }, { channelId: art }));
    expect(done.attachments.length).toBeGreaterThan(0);
    expect(h.emulator.requests).toHaveLength(1);
  });

  it('takes jobs in a thread or forum post inside a chosen channel, and refuses one inside another channel', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const art = snowflake();
    expect((await set(h, 'channels', `<#${art}>`)).content).toMatch(/^✅/);
    await expectRefusedPrivately(h, h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }, { channelId: snowflake(), threadParentId: snowflake() }), 'channel_not_allowed');
    const done = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }, { channelId: snowflake(), threadParentId: art }));
    expect(done.attachments.length).toBeGreaterThan(0);
    expect(h.emulator.requests).toHaveLength(1);
  });

  it('lets only members with a chosen role generate', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const artists = snowflake();
    await set(h, 'who', `<@&${artists}>`);
    await expectRefusedPrivately(h, h.discord.slashCommand('imagine', { prompt: 'a heron', quality: 'low' }, { roles: [snowflake()] }), 'member_not_allowed');
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a heron', quality: 'low' }, { roles: [artists] }));
    expect(h.emulator.requests).toHaveLength(1);
  });

  it('refuses a blocked word privately, and keeps the rule across a restart', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    await set(h, 'blocked-words', 'kraken, red fox');
    await h.restart();
    await expectRefusedPrivately(h, h.discord.slashCommand('imagine', { prompt: 'A KRAKEN attacks', quality: 'low' }), 'blocked_word');
  });

  it('refuses every look-alike spelling of a blocked word (other scripts’ letters, fillers, invisible characters) privately, with nothing sent, and still runs ordinary prompts', async () => {
    h = await DiscordHarness.start({ partialImages: 0, controls: { blockedWords: ['gore'] } });
    const asked = GORE_VARIANTS.map(({ text }) => h!.discord.slashCommand('imagine', { prompt: `a ${text} scene`, quality: 'low' }));
    for (const ix of asked) expect((await answerOf(h, ix)).flags & EPHEMERAL).toBe(EPHEMERAL);
    const refusals = h.logger.entries.filter((e) => (e.obj as { code?: string }).code === 'blocked_word');
    expect(refusals).toHaveLength(GORE_VARIANTS.length);
    expect(h.emulator.requests).toHaveLength(0);
    const ordinary = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a gorge at sunset, Gregory in a modern cafeteria', quality: 'low' }));
    expect(ordinary.attachments).toHaveLength(1);
    expect(h.emulator.requests).toHaveLength(1);
  });

  it('refuses a blocked word in the prompt of an Edit button’s form privately, before anything is sent', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const result = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a harbour', quality: 'low' }));
    await set(h, 'blocked-words', 'kraken');
    const click = h.discord.clickButton(result, buttonId(result, 'Edit'));
    await h.discord.waitFor(() => click.modal, 'the edit modal');
    const before = h.emulator.requests.length;
    const submit = h.discord.submitModal(click, { prompt: 'add a kraken' });
    const answer = await answerOf(h, submit);
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(h.logger.entries.some((e) => (e.obj as { code?: string }).code === 'blocked_word')).toBe(true);
    expect(h.emulator.requests).toHaveLength(before);
  });

  it('holds a member to the most images per job an admin chose', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    await set(h, 'max-images', '1');
    await expectRefusedPrivately(h, h.discord.slashCommand('imagine', { prompt: 'boats', quality: 'low', count: 2 }), 'too_many_images');
  });

  it('shows an admin every setting and where it comes from; a member may neither see nor change them', async () => {
    h = await DiscordHarness.start({ partialImages: 0, controls: { maxImagesPerJob: 4 } });
    const admin = h.discord.newUser('ada');
    await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'blocked-words', value: 'kraken' }, { permissions: MANAGE_SERVER, user: admin }));
    const shown = await answerOf(h, h.discord.slashCommand('imagine-admin settings', {}, { permissions: MANAGE_SERVER }));
    expect(shown.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(shown.content).toContain('• max-images: 4 (operator)');
    expect(shown.content).toContain(`• blocked-words: kraken (admin: <@${admin.id}>,`);
    expect(shown.content).toContain('• channels: every channel (default)');
    expect(shown.allowedMentions).toEqual({ parse: [] });
    expect(h.logger.entries.some((e) => e.msg === 'a chat admin changed a setting' && (e.obj as { changedBy?: string }).changedBy === `discord:${admin.id}`)).toBe(true);

    const member = await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'blocked-words', value: 'clear' }));
    expect(member.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(member.content).toMatch(/^✋/);
    expect((await h.runner.policy.effective({ platform: 'discord', scopeId: h.discord.guildId })).blockedWords.value).toEqual(['kraken']);
  });

  it('clears, on /imagine-admin repair, only the settings that cannot be read, privately: a member is refused, an admin’s next job runs', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    await set(h, 'max-images', '2');
    const admin: Requester = { platform: 'discord', userId: 'an-admin', channelId: h.discord.channelId, scopeId: h.discord.guildId, isAdmin: true };
    await INTAKE_REFUSALS.find((r) => r.code === 'settings_unreadable')!.apply(h.runner, admin, 'elsewhere', h.state);
    await expectRefusedPrivately(h, h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }), 'settings_unreadable');
    // The admins' settings view warns of it, naming the repair.
    const warning = say('en', 'settings.unreadable_rules', { count: 1, scope: 'server', platform: 'discord', ...COMMAND_NAMES });
    expect((await answerOf(h, h.discord.slashCommand('imagine-admin settings', {}, { permissions: MANAGE_SERVER }))).content).toContain(warning);

    const member = await answerOf(h, h.discord.slashCommand('imagine-admin repair', {}));
    expect(member.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(member.content).toMatch(/^✋/);
    expect((await h.runner.policy.effective(admin)).unreadable).toEqual(['blocked']);

    const repaired = await answerOf(h, h.discord.slashCommand('imagine-admin repair', {}, { permissions: MANAGE_SERVER }));
    expect(repaired.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(repaired.content).toMatch(/^✅/);
    expect(repaired.content).toContain('blocked');
    const s = await h.runner.policy.effective(admin);
    expect(s.unreadable).toEqual([]);
    expect(s.maxImages).toMatchObject({ value: 2, source: 'admin' });
    expect((await answerOf(h, h.discord.slashCommand('imagine-admin settings', {}, { permissions: MANAGE_SERVER }))).content).not.toContain(warning);
    const done = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }));
    expect(done.attachments.length).toBeGreaterThan(0);
    expect(h.emulator.requests).toHaveLength(1);
  });
});
