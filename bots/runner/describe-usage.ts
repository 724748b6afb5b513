import type { CapStatus, RoleBudgetView, UsageSummary } from './chat-budgets.js';
import { COMMAND_NAMES } from './command-words.js';
import { scopeWordOf, SURFACE_COMMAND } from './describe-refusal.js';
import { resetTime, say, usd, type Markup } from './words.js';

/** How a surface marks text up (Discord `**text**`, Slack mrkdwn `*text*`). */
export type UsageMarkup = Markup;

/**
 * The usage summary as one private message, in `locale`: the person's spend,
 * each cap that applies to them, and for admins the scope's totals and top
 * users (as `<@id>` mentions; the surface sends them so that nobody is pinged).
 * The wording is the runner's; a surface only gives its markup, and on Slack its
 * `/imagine` command as configured (`command`: the admins' how-to names it); on Discord the admin command as the
 * reader's Discord shows it (`COMMAND_NAMES`).
 */
export function describeUsage(summary: UsageSummary, markup: UsageMarkup, locale?: string, command = SURFACE_COMMAND): string {
  const scope = scopeWordOf(summary.platform, summary.scopeId);
  const lines = [say(locale, 'usage.your_spend', { today: usd(summary.user.todayUsd), month: usd(summary.user.monthUsd) }, markup)];
  if (summary.caps.length === 0) {
    lines.push(say(locale, 'usage.no_budget'));
  } else {
    lines.push(say(locale, 'usage.budgets', {}, markup));
    for (const cap of summary.caps) lines.push(describeCapStatus(cap, summary.now, scope, locale));
  }
  if (summary.scope) {
    lines.push('', say(locale, 'usage.scope_spend', { scope, today: usd(summary.scope.todayUsd), month: usd(summary.scope.monthUsd) }, markup));
    if (summary.scope.topUsers.length === 0) lines.push(say(locale, 'usage.no_jobs_yet'));
    else {
      lines.push(say(locale, 'usage.top_users'));
      summary.scope.topUsers.forEach((u, i) => lines.push(say(locale, 'usage.top_user', { rank: i + 1, user: `<@${u.userId}>`, usd: usd(u.usd), jobs: u.jobs })));
    }
    if (summary.scope.roleBudgetsUnreadable) lines.push('', say(locale, 'usage.role_budgets_unreadable', { scope, command, ...COMMAND_NAMES }, markup));
    if (summary.scope.roleBudgets.length > 0) {
      lines.push('', say(locale, 'usage.role_budgets', { scope }, markup));
      for (const role of summary.scope.roleBudgets) lines.push(describeRoleBudget(role, locale));
    }
  }
  return lines.join('\n');
}

function describeCapStatus(cap: CapStatus, now: number, scope: string, locale: string | undefined): string {
  if (cap.setBy === 'role' || cap.setBy === 'unknown_roles' || cap.setBy === 'unreadable_budgets') {
    // The member's own cap, from a role's budget: which role, or that their roles (or the roles' budgets) could not be read.
    return say(locale, 'usage.role_cap', {
      setBy: cap.setBy,
      scope,
      role: cap.role ?? '',
      period: cap.period,
      left: usd(cap.leftUsd),
      limit: usd(cap.limitUsd),
      spent: usd(cap.spentUsd),
      reset: resetTime(cap.resetsAt, now),
    });
  }
  return say(locale, 'usage.cap', {
    whose: cap.whose,
    scope,
    period: cap.period,
    setBy: cap.setBy,
    left: usd(cap.leftUsd),
    limit: usd(cap.limitUsd),
    spent: usd(cap.spentUsd),
    reset: resetTime(cap.resetsAt, now),
  });
}

function describeRoleBudget(role: RoleBudgetView, locale: string | undefined): string {
  return say(locale, 'usage.role_budget', {
    role: role.name,
    hasDaily: role.dailyUsd === undefined ? 'no' : 'yes',
    daily: role.dailyUsd === undefined ? '' : usd(role.dailyUsd),
    hasMonthly: role.monthlyUsd === undefined ? 'no' : 'yes',
    monthly: role.monthlyUsd === undefined ? '' : usd(role.monthlyUsd),
  });
}
