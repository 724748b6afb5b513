import { formatUsd } from '../../src/index.js';
import { describeReset, type CapStatus, type UsageSummary } from '../runner/index.js';

const WHOSE: Record<CapStatus['whose'], string> = { user: 'Your', scope: 'This server’s', account: 'The whole account’s' };

/** `/imagine-usage` as one ephemeral message: the member's spend, each cap that applies, and for admins the server's totals and top users. */
export function renderUsage(summary: UsageSummary): string {
  const lines = [`**Your spend** (UTC): ${formatUsd(summary.user.todayUsd)} today · ${formatUsd(summary.user.monthUsd)} this month`];
  if (summary.caps.length === 0) {
    lines.push('No budget applies to you: the bot’s operator set none.');
  } else {
    lines.push('**Budgets**');
    for (const cap of summary.caps) lines.push(`• ${describeCapStatus(cap, summary.now)}`);
  }
  if (summary.scope) {
    lines.push('', `**This server** (UTC): ${formatUsd(summary.scope.todayUsd)} today · ${formatUsd(summary.scope.monthUsd)} this month`);
    if (summary.scope.topUsers.length === 0) lines.push('No finished jobs this month yet.');
    else {
      lines.push('Top users this month:');
      summary.scope.topUsers.forEach((u, i) => lines.push(`${i + 1}. <@${u.userId}> ${formatUsd(u.usd)} (${u.jobs} ${u.jobs === 1 ? 'job' : 'jobs'})`));
    }
  }
  return lines.join('\n');
}

function describeCapStatus(cap: CapStatus, now: number): string {
  const period = cap.period === 'day' ? 'daily' : 'monthly';
  const setBy = cap.setBy === 'chat' ? ' (set by a server admin)' : '';
  const resets = `resets ${describeReset(cap.resetsAt, now)}`;
  return `${WHOSE[cap.whose]} ${period} budget${setBy}: ${formatUsd(cap.leftUsd)} left of ${formatUsd(cap.limitUsd)} (spent ${formatUsd(cap.spentUsd)}); ${resets}`;
}
