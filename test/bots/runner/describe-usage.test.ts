import { describe, expect, it } from 'vitest';
import { describeUsage, say, type CapStatus, type UsageSummary } from '../../../bots/runner/index.js';
import { requester, useRunnerKit } from '../../helpers/runner-harness.js';
import { memorySpace } from '../../../bots/runner/memory-space.js';
import { scopeKeyOf } from '../../../bots/runner/member-keys.js';
import { settingsInState } from '../../../bots/runner/index.js';
import { stateKeyOf } from '../../../bots/state/index.js';
import type { ScopeSettingEntries } from '../../../src/internal.js';

const kit = useRunnerKit();
const NOW = Date.UTC(2030, 5, 15, 12, 0, 0);
const bold = { bold: (text: string) => `**${text}**` };

const roleCap = (overrides: Partial<CapStatus>): CapStatus => ({
  code: 'budget_user_daily',
  whose: 'user',
  period: 'day',
  limitUsd: 5,
  spentUsd: 1,
  leftUsd: 4,
  resetsAt: Date.UTC(2030, 5, 16),
  setBy: 'role',
  role: 'Designers',
  ...overrides,
});

const summary = (caps: CapStatus[], platform: 'discord' | 'slack' = 'discord', scope?: UsageSummary['scope']): UsageSummary => ({
  platform,
  userId: 'u-1',
  scopeId: 'g-1',
  now: NOW,
  user: { todayUsd: 1, monthUsd: 1 },
  caps,
  scope,
});

describe('describeUsage: the budget of a member’s role, in words', () => {
  it('says which role’s budget applies to the member', () => {
    expect(describeUsage(summary([roleCap({})]), bold)).toContain('• Your daily budget, from your role Designers: $4.00 left of $5.00 (spent $1.00); resets 00:00 UTC (in 12 h)');
    expect(describeUsage(summary([roleCap({ role: '@designers', period: 'month', code: 'budget_user_monthly' })], 'slack'), bold)).toContain('• Your monthly budget, from your user group @designers:');
    expect(describeUsage(summary([roleCap({})]), bold, 'de')).toMatch(/• Dein Tagesbudget, von deiner Rolle Designers: 4,00\s\$ von 5,00\s\$ übrig/);
  });

  it('says when the member’s roles could not be read and the least generous budget applies', () => {
    expect(describeUsage(summary([roleCap({ setBy: 'unknown_roles', role: '@interns', limitUsd: 0.5, leftUsd: 0 })], 'slack'), bold)).toContain(
      '• Your daily budget: $0.00 left of $0.500 (spent $1.00); resets 00:00 UTC (in 12 h). Your user groups could not be read just now, so the smallest budget that could be yours applies (that of @interns).',
    );
  });

  it('says when the budgets of the member’s server could not be read, so nothing may be spent', () => {
    expect(describeUsage(summary([roleCap({ setBy: 'unreadable_budgets', role: undefined, limitUsd: 0, leftUsd: 0 })]), bold)).toContain(
      '• Your daily budget: $0.00 left of $0.00 (spent $1.00); resets 00:00 UTC (in 12 h). The budgets of this server’s roles could not be read, so nothing may be spent until an admin sets them again.',
    );
  });

  it('warns an admin that the budgets of roles cannot be read, and says how to mend them, with the command as the app calls it', () => {
    const view = (platform: 'discord' | 'slack', command?: string) =>
      describeUsage(summary([], platform, { todayUsd: 0, monthUsd: 0, topUsers: [], roleBudgets: [], roleBudgetsUnreadable: true }), bold, undefined, command);
    expect(view('discord')).toContain(
      '⚠️ **The budgets of this server’s roles cannot be read** (their record in the bot’s storage is damaged): until they are set again, no member may spend anything. Set each role’s budget again (/imagine-admin budget cap:user-daily usd:… role:@role); the first one set starts a new list, in which the others have none until they are set.',
    );
    expect(view('slack')).toContain('(/imagine admin budget @group user-daily …)');
    expect(view('slack', '/paint')).toContain('(/paint admin budget @group user-daily …)');
  });

  it('names the admin command in that warning as the admin’s Discord shows it, in every language (/bild-admin)', () => {
    const view = (locale: string, platform: 'discord' | 'slack' = 'discord') =>
      describeUsage(summary([], platform, { todayUsd: 0, monthUsd: 0, topUsers: [], roleBudgets: [], roleBudgetsUnreadable: true }), bold, locale, platform === 'slack' ? '/paint' : undefined);
    expect(view('de')).toContain('(/bild-admin budget cap:user-daily usd:… role:@role)');
    for (const locale of ['de', 'fr', 'es', 'pt-BR', 'ja'] as const) {
      expect(view(locale)).toContain(`/${say(locale, 'discord.command.admin.name')} budget cap:user-daily`);
      expect(view(locale)).not.toContain('/imagine-admin');
      expect(view(locale, 'slack')).toContain('/paint admin budget @group user-daily');
    }
  });

  it('lists every role’s budget for an admin', () => {
    const text = describeUsage(
      summary([], 'discord', {
        todayUsd: 0,
        monthUsd: 0,
        topUsers: [],
        roleBudgets: [
          { roleId: 'r1', name: 'Designers', dailyUsd: 5, monthlyUsd: undefined },
          { roleId: 'r2', name: 'Interns', dailyUsd: 0.5, monthlyUsd: 4 },
        ],
      }),
      bold,
    );
    expect(text).toContain('**Budgets of roles** (each member gets the most generous of theirs, in place of the budget of each user):\n• Designers: $5.00 a day · the budget of each user a month\n• Interns: $0.500 a day · $4.00 a month');
  });
});

describe('ChatBudgets.setRoleBudget: the answer in words', () => {
  it('says what a role’s members now get, and what clearing it does', async () => {
    const { runner } = await kit.runner({ limits: { userDailyUsd: 10 } });
    const admin = requester({ isAdmin: true });
    expect((await runner.budgets.setRoleBudget(admin, { id: 'r1', name: 'Designers' }, 'userDailyUsd', 5)).message).toBe(
      'Members with the role Designers now have $5.00 a day each, in place of the budget of each user; a member with several gets the most generous (operator’s cap of each user: $10.00).',
    );
    expect((await runner.budgets.setRoleBudget(admin, { id: 'r1', name: 'Designers' }, 'userDailyUsd', undefined)).message).toBe(
      'The role Designers no longer has a daily budget: its members get the budget of each user again, unless another of their roles has one.',
    );
    // On budgets that cannot be read, the first one set starts a new list: the answer says what became of the others.
    const settings = memorySpace<ScopeSettingEntries>();
    const { runner: damaged } = await kit.runner({ limits: { userDailyUsd: 10 }, settings: settingsInState(settings) });
    await settings.update(stateKeyOf(scopeKeyOf(admin)), () => ({ roleBudgets: { value: 'a penny', by: 'discord:admin', at: 1 } }));
    expect((await damaged.budgets.setRoleBudget(admin, { id: 'r1', name: 'Designers' }, 'userDailyUsd', 5)).message).toBe(
      'Members with the role Designers now have $5.00 a day each, in place of the budget of each user; a member with several gets the most generous (operator’s cap of each user: $10.00). The budgets of this server’s roles could not be read (damaged in the bot’s storage), so this one starts a new list: every other role now has no budget, and its members have the budget of each user. Set again each one that had a budget.',
    );
    expect((await runner.budgets.setRoleBudget({ ...admin, platform: 'slack' }, { id: 'S1', name: '@designers' }, 'scopeDailyUsd', 5)).message).toBe(
      'A user group’s budget is what each of its members may spend: use user-daily or user-monthly.',
    );
  });
});
