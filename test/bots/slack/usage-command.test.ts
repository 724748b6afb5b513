import { afterEach, describe, expect, it } from 'vitest';
import { formatUsd } from '../../../src/index.js';
import { budgetCommandOf } from '../../../bots/slack/listeners/budget-commands.js';
import { finishedJob, settledCosts, type Harness, privately, ADMIN, startWithAdmin } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const start = startWithAdmin;

async function drawLow(harness: Harness, channel: string, user = 'U0ALICE', index = 0): Promise<void> {
  await harness.fake.command({ command: '/imagine', text: 'a lighthouse --quality low', channel, user });
  await finishedJob(harness.fake, channel, index);
}


describe('/imagine usage', () => {
  it('tells a person privately what they spent today and this month — the sum of their settled jobs — and what is left of each cap that is set', async () => {
    h = await start({ limits: { userMonthlyUsd: 2, accountDailyUsd: 50 } });
    await drawLow(h, 'C0ONE');
    await drawLow(h, 'C0ONE', 'U0ALICE', 1);

    const text = await privately(h.fake, 'usage');
    const spent = (await settledCosts(h)).get('slack:U0ALICE')!;
    expect(spent).toBeGreaterThan(0);
    expect(text).toContain(`${formatUsd(spent)} today · ${formatUsd(spent)} this month`);
    expect(text).toContain(`Your monthly budget: ${formatUsd(2 - spent)} left of $2.00 (spent ${formatUsd(spent)})`);
    expect(text).toContain(`The whole account’s daily budget: ${formatUsd(50 - spent)} left of $50.00`);
    expect(text).not.toContain('Your daily budget');
    expect(text).not.toContain('workspace’s');
    // No workspace totals for someone who is no admin.
    expect(text).not.toContain('This workspace');
    expect(text).not.toContain('Top users');
  });

  it('shows an admin the workspace’s totals and top users by spend', async () => {
    h = await start();
    await drawLow(h, 'C0TWO', 'U0ALICE');
    await drawLow(h, 'C0TWO', 'U0BOB', 1);
    await drawLow(h, 'C0TWO', 'U0BOB', 2);

    const text = await privately(h.fake, 'usage', ADMIN);
    const costs = await settledCosts(h);
    const total = [...costs.values()].reduce((a, b) => a + b, 0);
    expect(text).toContain(`*This workspace* (UTC): ${formatUsd(total)} today · ${formatUsd(total)} this month`);
    expect(text).toContain(`1. <@U0BOB> ${formatUsd(costs.get('slack:U0BOB')!)} (2 jobs)`);
    expect(text).toContain(`2. <@U0ALICE> ${formatUsd(costs.get('slack:U0ALICE')!)} (1 job)`);
    // Nothing was posted for everyone to see.
    expect(h.fake.messages.filter((m) => m.text.includes('Top users'))).toEqual([]);
  });
});

describe('/imagine admin budget', () => {
  const scope = (harness: Harness) => `slack:${harness.fake.teamId}`;

  it('lets an admin lower the daily cap of each user: the next job is refused with budget_user_daily and nothing is sent', async () => {
    h = await start({ limits: { userDailyUsd: 1 } });
    await drawLow(h, 'C0CAP');
    const sent = h.emulator.requests.length;

    const text = await privately(h.fake, 'admin budget user-daily 0.005', ADMIN);
    expect(text).toContain('$0.0050');
    expect(await h.store.capOverrides(scope(h))).toEqual({ userDailyUsd: { usd: 0.005, by: `slack:${ADMIN}`, at: expect.any(Number) } });

    const refusal = await privately(h.fake, 'a second lighthouse --quality low');
    expect(refusal).toContain('$0.0050');
    expect(h.emulator.requests.length).toBe(sent);
    const requester = { platform: 'slack' as const, userId: 'U0ALICE', channelId: 'C0CAP', scopeId: h.fake.teamId };
    await expect(h.runner.submit({ kind: 'generate', prompt: 'a third', options: { quality: 'low' }, requester }, () => {})).rejects.toMatchObject({ code: 'budget_user_daily' });
  });

  it('keeps the change across a restart, and `clear` goes back to the operator’s cap', async () => {
    h = await start({ limits: { scopeMonthlyUsd: 40 } });
    expect(await privately(h.fake, 'admin budget workspace-monthly 12.50', ADMIN)).toContain('$12.50');
    const { fake, dataDir } = h;
    await h.close({ fake: true, dataDir: true });
    h = await start({ limits: { scopeMonthlyUsd: 40 }, fake, dataDir });

    expect(await privately(h.fake, 'usage')).toContain('This workspace’s monthly budget (set by a workspace admin): $12.50 left of $12.50');
    expect(await privately(h.fake, 'admin budget workspace-monthly clear', ADMIN)).toContain('$40.00');
    expect(await h.store.capOverrides(scope(h))).toEqual({});
  });

  it('refuses a cap above the operator’s, naming it, and changes nothing', async () => {
    h = await start({ limits: { userDailyUsd: 1 } });
    const text = await privately(h.fake, 'admin budget user-daily 2.50', ADMIN);
    expect(text).toContain('$1.00');
    expect(text).toContain('PICTOR_USER_DAILY_USD');
    expect(await h.store.capOverrides(scope(h))).toEqual({});
  });

  it('refuses someone who is not in SLACK_ADMIN_USER_IDS, and changes nothing', async () => {
    h = await start({ limits: { userDailyUsd: 1 } });
    expect(await privately(h.fake, 'admin budget user-daily 0', 'U0ALICE')).toContain('Only an admin');
    expect(await h.store.capOverrides(scope(h))).toEqual({});
  });

  it('explains the command to an admin who gets it wrong', async () => {
    h = await start();
    expect(await privately(h.fake, 'admin budget account-daily 5', ADMIN)).toContain('user-daily, user-monthly, workspace-daily or workspace-monthly');
    expect(await privately(h.fake, 'admin budget user-daily lots', ADMIN)).toContain('0 or more');
    expect(await h.store.capOverrides(scope(h))).toEqual({});
  });

  it('keeps a cap when an admin leaves the amount out: only `clear` lifts it', async () => {
    h = await start();
    await privately(h.fake, 'admin budget workspace-daily 0', ADMIN);

    expect(await privately(h.fake, 'admin budget workspace-daily', ADMIN)).toContain('0 or more');

    expect((await h.store.capOverrides(scope(h))).scopeDailyUsd?.usd).toBe(0);
  });
});

describe('which /imagine text is a budget command', () => {
  it('takes `usage` and every `admin budget …` (one that does not parse gets the usage), and leaves other prompts that merely start with those words alone', () => {
    expect(budgetCommandOf('usage')).toEqual({ kind: 'usage' });
    expect(budgetCommandOf(' Usage ')).toEqual({ kind: 'usage' });
    expect(budgetCommandOf('admin budget user-daily 2.50')).toEqual({ kind: 'admin', words: ['budget', 'user-daily', '2.50'] });
    expect(budgetCommandOf('usage statistics as an infographic')).toBeUndefined();
    expect(budgetCommandOf('admin panel, flat design')).toBeUndefined();
    expect(budgetCommandOf('admin budget meeting, flat icons')).toEqual({ kind: 'admin', words: ['budget', 'meeting,', 'flat', 'icons'] });
    expect(budgetCommandOf('admin budget account-daily 5')).toEqual({ kind: 'admin', words: ['budget', 'account-daily', '5'] });
  });
});
