import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { formatUsd } from '../../../src/index.js';
import { snowflake } from '../../fakes/discord/snowflake.js';
import { answerOf, DiscordHarness } from './harness.js';

const EPHEMERAL = 64;
const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function drawLow(harness: DiscordHarness, prompt: string, as: Parameters<DiscordHarness['discord']['slashCommand']>[2] = {}): Promise<void> {
  await harness.finalReply(harness.discord.slashCommand('imagine', { prompt, quality: 'low' }, as));
}

/** What the ledger's usage records say the scope's jobs cost, per user key. */
async function settledCosts(harness: DiscordHarness): Promise<Map<string, number>> {
  const costs = new Map<string, number>();
  for (const r of await harness.quotaStore.usage({})) costs.set(r.userKey, (costs.get(r.userKey) ?? 0) + r.costUsd);
  return costs;
}

describe('/imagine-usage', () => {
  it('tells a member privately what they spent today and this month — the sum of their settled jobs — and what is left of each cap that is set', async () => {
    h = await DiscordHarness.start({ partialImages: 0, limits: { userDailyUsd: 1, scopeMonthlyUsd: 5 } });
    await drawLow(h, 'a red fox');
    await drawLow(h, 'a blue heron');

    const answer = await answerOf(h, h.discord.slashCommand('imagine-usage', {}));
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    const spent = (await settledCosts(h)).get(`discord:${h.discord.user.id}`)!;
    expect(spent).toBeGreaterThan(0);
    expect(answer.content).toContain(`${formatUsd(spent)} today · ${formatUsd(spent)} this month`);
    expect(answer.content).toContain(`Your daily budget: ${formatUsd(1 - spent)} left of $1.00 (spent ${formatUsd(spent)}); resets 00:00 UTC`);
    expect(answer.content).toContain(`This server’s monthly budget: ${formatUsd(5 - spent)} left of $5.00`);
    // Only the caps that are set; and a member who is no admin sees no server totals.
    expect(answer.content).not.toMatch(/monthly budget: .* of \$1\.00|account/);
    expect(answer.content).not.toContain('This server** ');
    expect(answer.content).not.toContain('Top users');
  });

  it('shows a server admin the server’s totals and its top users by spend, as mentions that ping nobody', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const bob = h.discord.newUser('bob');
    await drawLow(h, 'a lighthouse');
    await drawLow(h, 'a harbour');
    await drawLow(h, 'a gull', { user: bob });

    const answer = await answerOf(h, h.discord.slashCommand('imagine-usage', {}, { permissions: MANAGE_SERVER }));
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    const costs = await settledCosts(h);
    const total = [...costs.values()].reduce((a, b) => a + b, 0);
    expect(answer.content).toContain(`**This server** (UTC): ${formatUsd(total)} today · ${formatUsd(total)} this month`);
    const alice = `<@${h.discord.user.id}> ${formatUsd(costs.get(`discord:${h.discord.user.id}`)!)} (2 jobs)`;
    const bobs = `<@${bob.id}> ${formatUsd(costs.get(`discord:${bob.id}`)!)} (1 job)`;
    expect(answer.content).toContain(`1. ${alice}`);
    expect(answer.content).toContain(`2. ${bobs}`);
    expect(answer.allowedMentions).toEqual({ parse: [] });
  });

  it('counts a member with a configured admin role as a server admin', async () => {
    const role = snowflake();
    h = await DiscordHarness.start({ partialImages: 0, bot: { adminRoleIds: [role] } });
    await drawLow(h, 'a kite');
    const admin = await answerOf(h, h.discord.slashCommand('imagine-usage', {}, { roles: [role] }));
    expect(admin.content).toContain('Top users this month');
    const member = await answerOf(h, h.discord.slashCommand('imagine-usage', {}, { roles: [snowflake()] }));
    expect(member.content).not.toContain('Top users this month');
  });
});

describe('/imagine-admin budget', () => {
  const scopeKey = (harness: DiscordHarness) => `discord:${harness.discord.guildId}`;

  it('lets a server admin lower the daily cap of each user: the next job is refused with budget_user_daily, before anything is sent', async () => {
    h = await DiscordHarness.start({ partialImages: 0, limits: { userDailyUsd: 1 } });
    await drawLow(h, 'a first picture');
    const sentBefore = h.emulator.requests.length;

    const set = await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-daily', usd: '0.005' }, { permissions: MANAGE_SERVER }));
    expect(set.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(set.content).toContain('$0.0050');
    expect(await h.quotaStore.capOverrides(scopeKey(h))).toEqual({ userDailyUsd: { usd: 0.005, by: `discord:${h.discord.user.id}`, at: expect.any(Number) } });

    // Through the chat command: the member is told, and the service sees nothing.
    const reply = await answerOf(h, h.discord.slashCommand('imagine', { prompt: 'a second picture', quality: 'low' }));
    expect(reply.content).toContain('$0.0050');
    expect(h.emulator.requests.length).toBe(sentBefore);
    // The refusal's code, from the runner the bot uses.
    const requester = { platform: 'discord' as const, userId: h.discord.user.id, channelId: h.discord.channelId, scopeId: h.discord.guildId };
    await expect(h.runner.submit({ kind: 'generate', prompt: 'a third picture', options: { quality: 'low' }, requester }, () => {})).rejects.toMatchObject({
      code: 'budget_user_daily',
      limit: 0.005,
    });
    // Another server keeps the operator's cap.
    const elsewhere = { ...requester, scopeId: snowflake() };
    expect(await h.runner.requestForm(elsewhere, { refuse: async () => {}, accept: async () => {} })).toBe(true);
  });

  it('keeps the change across a restart (a new ledger store on the same data folder), and `clear` goes back to the operator’s cap', async () => {
    h = await DiscordHarness.start({ partialImages: 0, limits: { scopeDailyUsd: 3 } });
    await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'server-daily', usd: '2' }, { permissions: MANAGE_SERVER }));
    await h.restart();

    const usage = await answerOf(h, h.discord.slashCommand('imagine-usage', {}));
    expect(usage.content).toContain('This server’s daily budget (set by a server admin): $2.00 left of $2.00');
    expect((await h.quotaStore.capOverrides(scopeKey(h))).scopeDailyUsd?.usd).toBe(2);

    const cleared = await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'server-daily', usd: 'clear' }, { permissions: MANAGE_SERVER }));
    expect(cleared.content).toContain('$3.00');
    expect(await h.quotaStore.capOverrides(scopeKey(h))).toEqual({});
    const after = await answerOf(h, h.discord.slashCommand('imagine-usage', {}));
    expect(after.content).toContain('This server’s daily budget: $3.00 left of $3.00');
  });

  it('refuses a cap above the operator’s, naming the operator’s cap, and changes nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0, limits: { userMonthlyUsd: 10 } });
    const answer = await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-monthly', usd: '25' }, { permissions: MANAGE_SERVER }));
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(answer.content).toContain('$10.00');
    expect(answer.content).toContain('PICTOR_USER_MONTHLY_USD');
    expect(await h.quotaStore.capOverrides(scopeKey(h))).toEqual({});
  });

  it('lets an admin set any amount where the operator set no cap', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const answer = await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'server-monthly', usd: '250' }, { permissions: MANAGE_SERVER }));
    expect(answer.content).toContain('$250.00');
    expect((await h.quotaStore.capOverrides(scopeKey(h))).scopeMonthlyUsd?.usd).toBe(250);
  });

  it('refuses a member who is no admin, privately and before anything else, and changes nothing', async () => {
    h = await DiscordHarness.start({ partialImages: 0, limits: { userDailyUsd: 1 } });
    const answer = await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'user-daily', usd: '0' }));
    expect(answer.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(answer.content).toContain('Only an admin');
    // Who may change budgets is told first, whatever else is wrong with the command.
    const unknownCap = await answerOf(h, h.discord.slashCommand('imagine-admin budget', { cap: 'account-daily', usd: '1' }));
    expect(unknownCap.content).toBe(answer.content);
    expect(await h.quotaStore.capOverrides(scopeKey(h))).toEqual({});
  });
});
