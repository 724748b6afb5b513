import { InteractionContextType, PermissionFlagsBits, type BaseInteraction } from 'discord.js';
import { requesterOf } from '../../../bots/discord/requester.js';
import { afterEach, describe, expect, it } from 'vitest';
import { snowflake } from '../../fakes/discord/snowflake.js';
import { answerOf, DiscordHarness, EPHEMERAL } from './harness.js';

const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('/imagine-admin budget with a role', () => {
  it('holds a member of a role whose budget is spent, privately and before anything is sent, while a member of a more generous role draws', async () => {
    h = await DiscordHarness.start({ partialImages: 0, limits: { userDailyUsd: 1 } });
    const interns = { id: snowflake(), name: 'Interns' };
    const designers = { id: snowflake(), name: 'Designers' };
    const setInterns = await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-daily', usd: '0.001', role: { role: interns } }, { permissions: MANAGE_SERVER }));
    expect(setInterns.flags & EPHEMERAL).toBe(EPHEMERAL);
    // Above the operator's cap of each user: refused, as every chat admin's cap.
    await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-daily', usd: '5', role: { role: designers } }, { permissions: MANAGE_SERVER }));
    expect(await h.runner.budgets.limitsFor({ platform: 'discord', userId: 'u', channelId: 'c', scopeId: h.discord.guildId, roleIds: [designers.id] })).toMatchObject({ userDailyUsd: 1 });
    await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-daily', usd: '0.5', role: { role: designers } }, { permissions: MANAGE_SERVER }));
    // Kept with the server's settings (the bots' state), not as a cap of each user.
    expect(await h.quotaStore.capOverrides(`discord:${h.discord.guildId}`)).toEqual({});
    expect(await h.runner.budgets.limitsFor({ platform: 'discord', userId: 'u', channelId: 'c', scopeId: h.discord.guildId, roleIds: [interns.id, designers.id] })).toMatchObject({ userDailyUsd: 0.5 });

    const intern = h.discord.newUser('ivy');
    const refused = await answerOf(h, h.discord.slashCommand('imagine', { prompt: 'a red fox', quality: 'low' }, { user: intern, roles: [interns.id] }));
    expect(refused.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(refused.content).toContain('$0.0010');
    expect(h.emulator.requests).toHaveLength(0);
    await expect(
      h.runner.submit({ kind: 'generate', prompt: 'a red fox', options: { quality: 'low' }, requester: { platform: 'discord', userId: intern.id, channelId: h.discord.channelId, scopeId: h.discord.guildId, roleIds: [interns.id] } }, () => {}),
    ).rejects.toMatchObject({ code: 'budget_user_daily', limit: 0.001 });

    // Interns and Designers: the most generous.
    const designer = h.discord.newUser('dara');
    await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a blue heron', quality: 'low' }, { user: designer, roles: [interns.id, designers.id] }));
    expect(h.emulator.requests).toHaveLength(1);

    const usage = await answerOf(h, h.discord.slashCommand('imagine-usage', {}, { user: designer, roles: [interns.id, designers.id] }));
    expect(usage.flags & EPHEMERAL).toBe(EPHEMERAL);
    // The facts (which role, how much); the sentence is checked where it is written (describe-usage).
    expect(usage.content).toMatch(/Designers\b.*\$0\.500/);
    const admin = await answerOf(h, h.discord.slashCommand('imagine-usage', {}, { permissions: MANAGE_SERVER }));
    expect(admin.content).toMatch(/Interns\b.*\$0\.0010/);
    expect(admin.content).toMatch(/Designers\b.*\$0\.500/);
  });

  it('clears a role’s budget with clear, and takes @everyone as the cap of each user', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const designers = { id: snowflake(), name: 'Designers' };
    await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-monthly', usd: '20', role: { role: designers } }, { permissions: MANAGE_SERVER }));
    expect((await h.runner.policy.effective({ platform: 'discord', scopeId: h.discord.guildId })).scopeAllowed).toBe(true);
    const who = { platform: 'discord' as const, userId: 'u', channelId: 'c', scopeId: h.discord.guildId, roleIds: [designers.id] };
    expect(await h.runner.budgets.limitsFor(who)).toMatchObject({ userMonthlyUsd: 20 });
    await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-monthly', usd: 'clear', role: { role: designers } }, { permissions: MANAGE_SERVER }));
    expect((await h.runner.budgets.limitsFor(who)).userMonthlyUsd).toBeUndefined();

    await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-daily', usd: '3', role: { role: { id: h.discord.guildId, name: '@everyone' } } }, { permissions: MANAGE_SERVER }));
    expect((await h.quotaStore.capOverrides(`discord:${h.discord.guildId}`)).userDailyUsd?.usd).toBe(3);
  });

  it('refuses a role’s server cap and a member who is no admin, privately, and changes nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const designers = { id: snowflake(), name: 'Designers' };
    const serverCap = await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'server-daily', usd: '3', role: { role: designers } }, { permissions: MANAGE_SERVER }));
    expect(serverCap.flags & EPHEMERAL).toBe(EPHEMERAL);
    const member = await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-daily', usd: '3', role: { role: designers } }));
    expect(member.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(await h.runner.budgets.limitsFor({ platform: 'discord', userId: 'u', channelId: 'c', scopeId: h.discord.guildId, roleIds: [designers.id] })).toEqual({});
  });

  it('gives a member of a server whose interaction carries no roles the least generous role budget, not the server’s', async () => {
    h = await DiscordHarness.start({ partialImages: 0, limits: { userDailyUsd: 1 } });
    const interns = { id: snowflake(), name: 'Interns' };
    await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-daily', usd: '0.5', role: { role: interns } }, { permissions: MANAGE_SERVER }));
    const { guildId } = h.discord;
    const interaction = { context: InteractionContextType.Guild, guildId, authorizingIntegrationOwners: { guildId }, user: { id: 'u-1', username: 'ivy' }, channelId: 'c-1', locale: 'en-US', member: null, memberPermissions: null };
    const requester = requesterOf(interaction as unknown as BaseInteraction, []);
    expect(await h.runner.budgets.limitsFor(requester)).toMatchObject({ userDailyUsd: 0.5 });
  });

  it('drops the budgets of roles deleted from the server once its 25 places are full, as no admin can pick a deleted role to clear it', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const admin = { platform: 'discord' as const, userId: 'admin', channelId: 'c', scopeId: h.discord.guildId, isAdmin: true };
    const roles = Array.from({ length: 25 }, (_, i) => ({ id: snowflake(), name: `Team ${i}` }));
    for (const role of roles) await h.runner.budgets.setRoleBudget(admin, role, 'userDailyUsd', 1);
    const designers = { id: snowflake(), name: 'Designers' };
    h.discord.guildRoles.push(...roles, designers);
    const full = await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-daily', usd: '5', role: { role: designers } }, { permissions: MANAGE_SERVER }));
    expect(full.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect((await h.runner.budgets.summary(admin)).scope?.roleBudgets).toHaveLength(25);

    // Two roles deleted since: their budgets go, the new one is set.
    h.discord.guildRoles.splice(0, 2);
    await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-daily', usd: '5', role: { role: designers } }, { permissions: MANAGE_SERVER }));
    const kept = (await h.runner.budgets.summary(admin)).scope?.roleBudgets.map((r) => r.roleId);
    expect(kept).toEqual([...roles.slice(2).map((r) => r.id), designers.id]);
  });
});
