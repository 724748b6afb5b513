import { describeReset, formatUsd } from '../../src/index.js';
import type { CapStatus, UsageSummary } from './chat-budgets.js';
import { isDmScope } from './types.js';

/** How a surface marks text up, and what it calls a scope. */
export interface UsageMarkup {
  /** Discord `**text**`, Slack mrkdwn `*text*`. */
  bold(text: string): string;
  /** `server` (Discord) or `workspace` (Slack). */
  scopeWord: string;
}

/**
 * The usage summary as one private message: the person's spend, each cap that
 * applies to them, and for admins the scope's totals and top users (as
 * `<@id>` mentions; the surface sends them so that nobody is pinged). The
 * wording is the runner's; a surface only gives its markup.
 */
export function describeUsage(summary: UsageSummary, markup: UsageMarkup): string {
  const { bold, scopeWord } = markup;
  const lines = [`${bold('Your spend')} (UTC): ${formatUsd(summary.user.todayUsd)} today · ${formatUsd(summary.user.monthUsd)} this month`];
  if (summary.caps.length === 0) {
    lines.push('No budget applies to you: the bot’s operator set none.');
  } else {
    lines.push(bold('Budgets'));
    for (const cap of summary.caps) lines.push(`• ${describeCapStatus(cap, summary.now, scopeWord, isDmScope(summary.scopeId))}`);
  }
  if (summary.scope) {
    lines.push('', `${bold(`This ${scopeWord}`)} (UTC): ${formatUsd(summary.scope.todayUsd)} today · ${formatUsd(summary.scope.monthUsd)} this month`);
    if (summary.scope.topUsers.length === 0) lines.push('No finished jobs this month yet.');
    else {
      lines.push('Top users this month:');
      summary.scope.topUsers.forEach((u, i) => lines.push(`${i + 1}. <@${u.userId}> ${formatUsd(u.usd)} (${u.jobs} ${u.jobs === 1 ? 'job' : 'jobs'})`));
    }
  }
  return lines.join('\n');
}

function describeCapStatus(cap: CapStatus, now: number, scopeWord: string, dm: boolean): string {
  const whose: Record<CapStatus['whose'], string> = { user: 'Your', scope: `This ${scopeWord}’s`, account: 'The whole account’s' };
  const period = cap.period === 'day' ? 'daily' : 'monthly';
  // A person's own scope (DMs, user installs): its caps are the operator's DM caps.
  if (dm && cap.whose === 'scope') return `Your ${period} budget outside servers: ${formatUsd(cap.leftUsd)} left of ${formatUsd(cap.limitUsd)} (spent ${formatUsd(cap.spentUsd)}); resets ${describeReset(cap.resetsAt, now)}`;
  const setBy = cap.setBy === 'chat' ? ` (set by a ${scopeWord} admin)` : '';
  return `${whose[cap.whose]} ${period} budget${setBy}: ${formatUsd(cap.leftUsd)} left of ${formatUsd(cap.limitUsd)} (spent ${formatUsd(cap.spentUsd)}); resets ${describeReset(cap.resetsAt, now)}`;
}
