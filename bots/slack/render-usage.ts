import { describeUsage, type UsageSummary } from '../runner/index.js';

/** `/imagine usage` as one private message, in Slack mrkdwn. */
export function renderUsage(summary: UsageSummary): string {
  return describeUsage(summary, { bold: (text) => `*${text}*`, scopeWord: 'workspace' });
}
