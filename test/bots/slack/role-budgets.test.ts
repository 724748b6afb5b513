import { afterEach, describe, expect, it } from 'vitest';
import { budgetCommandOf } from '../../../bots/slack/listeners/budget-commands.js';
import { finishedJob, privately, type Harness, ADMIN, startWithAdmin } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const start = startWithAdmin;
const MISSING_SCOPE = { status: 200, error: 'missing_scope', extra: { needed: 'usergroups:read', provided: 'commands,chat:write' }, count: 1000 };

async function roleBudgetsOf(harness: Harness) {
  return (await harness.runner.budgets.summary({ platform: 'slack', userId: ADMIN, channelId: 'C0', scopeId: harness.fake.teamId, isAdmin: true })).scope?.roleBudgets;
}

describe('/imagine admin budget with a user group', () => {
  it('holds a member of a group whose budget is spent, privately and before anything is sent, while a member of a more generous group draws', async () => {
    h = await start({ limits: { userDailyUsd: 1 } });
    h.fake.setUserGroup({ id: 'S0INTERNS', handle: 'interns', users: ['U0IVY', 'U0DARA'] });
    h.fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', users: ['U0DARA'] });
    // As Slack sends a mention of a user group, and as a handle typed (looked up with usergroups.list).
    expect(await privately(h.fake, 'admin budget <!subteam^S0INTERNS|@interns> user-daily 0.001', ADMIN)).toContain('$0.0010');
    expect(await privately(h.fake, 'admin budget @designers user-daily 0.5', ADMIN)).toContain('$0.500');
    expect(await roleBudgetsOf(h)).toEqual([
      { roleId: 'S0INTERNS', name: '@interns', dailyUsd: 0.001, monthlyUsd: undefined },
      { roleId: 'S0DESIGN', name: '@designers', dailyUsd: 0.5, monthlyUsd: undefined },
    ]);
    // Kept with the workspace's settings, not as the cap of each user.
    expect(await h.store.capOverrides(`slack:${h.fake.teamId}`)).toEqual({});

    await privately(h.fake, 'a lighthouse --quality low', 'U0IVY', 'C0ROLES');
    expect(h.emulator.requests).toHaveLength(0);
    expect(h.fake.messages.filter((m) => m.channel === 'C0ROLES')).toEqual([]);
    const ivy = { platform: 'slack' as const, userId: 'U0IVY', channelId: 'C0ROLES', scopeId: h.fake.teamId };
    await expect(h.runner.submit({ kind: 'generate', prompt: 'a lighthouse', options: { quality: 'low' }, requester: ivy }, () => {})).rejects.toMatchObject({
      code: 'budget_user_daily',
      limit: 0.001,
    });

    await h.fake.command({ command: '/imagine', text: 'a harbour --quality low', channel: 'C0ROLES', user: 'U0DARA' });
    await finishedJob(h.fake, 'C0ROLES', 0);
    expect(h.emulator.requests).toHaveLength(1);
    expect(await privately(h.fake, 'usage', 'U0DARA')).toContain('@designers');
    // One look-up of the workspace's groups served the handle, both members and the usage.
    expect(h.fake.callsOf('usergroups.list').length).toBeLessThanOrEqual(2);
  });

  it('gives members the least generous group budget while their groups cannot be read, and says why an admin’s handle cannot be found', async () => {
    h = await start({ limits: { userDailyUsd: 1 } });
    h.fake.setUserGroup({ id: 'S0DESIGN', handle: 'designers', users: ['U0DARA'] });
    h.fake.failNext('usergroups.list', MISSING_SCOPE);
    expect(await privately(h.fake, 'admin budget <!subteam^S0INTERNS|@interns> user-daily 0', ADMIN)).toContain('@interns');
    expect(await privately(h.fake, 'admin budget <!subteam^S0DESIGN|@designers> user-daily 0.5', ADMIN)).toContain('@designers');
    // By handle: not found, and why.
    expect(await privately(h.fake, 'admin budget @leads user-daily 0.5', ADMIN)).toContain('usergroups:read');
    expect((await roleBudgetsOf(h))?.map((r) => r.roleId)).toEqual(['S0INTERNS', 'S0DESIGN']);

    // U0DARA is in @designers ($0.50), but Slack cannot say so: the least generous that could apply ($0) holds.
    await privately(h.fake, 'a harbour --quality low', 'U0DARA', 'C0DOWN');
    expect(h.emulator.requests).toHaveLength(0);
    const dara = { platform: 'slack' as const, userId: 'U0DARA', channelId: 'C0DOWN', scopeId: h.fake.teamId };
    await expect(h.runner.submit({ kind: 'generate', prompt: 'a harbour', options: { quality: 'low' }, requester: dara }, () => {})).rejects.toMatchObject({ code: 'budget_user_daily', limit: 0 });
    const summary = await h.runner.budgets.summary(dara);
    expect(summary.caps).toEqual([expect.objectContaining({ setBy: 'unknown_roles', role: '@interns', limitUsd: 0 })]);
  });
});

describe('which /imagine text names a user group’s budget', () => {
  it('takes a group as Slack’s mention or as a handle before the cap; what does not parse is the command (its usage), not a prompt', () => {
    expect(budgetCommandOf('admin budget <!subteam^S0123|@designers> user-daily 5')).toEqual({ kind: 'admin', words: ['budget', 'user-daily', '5'], group: { handle: '@designers', id: 'S0123' } });
    expect(budgetCommandOf('admin budget @designers user-monthly clear')).toEqual({ kind: 'admin', words: ['budget', 'user-monthly', 'clear'], group: { handle: '@designers' } });
    expect(budgetCommandOf('admin budget @designers user-daily')).toEqual({ kind: 'admin', words: ['budget', 'user-daily'], group: { handle: '@designers' } });
    expect(budgetCommandOf('admin budget @designers and their mood board')).toEqual({ kind: 'admin', words: ['budget', 'and', 'their', 'mood', 'board'], group: { handle: '@designers' } });
    expect(budgetCommandOf('admin budget user-daily 2.50')).toEqual({ kind: 'admin', words: ['budget', 'user-daily', '2.50'] });
  });
});
