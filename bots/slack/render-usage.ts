import { describeUsage, type UsageSummary } from '../runner/index.js';

/** `/imagine usage` as one private message, in Slack mrkdwn, in the member's language. */
export function renderUsage(summary: UsageSummary, locale: string | undefined): string {
  return describeUsage(summary, { bold: (text) => `*${text}*` }, locale);
}
