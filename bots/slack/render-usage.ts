import { describeUsage, type UsageSummary } from '../runner/index.js';

/** `/imagine usage` as one private message, in Slack mrkdwn, in the member's language; `command`: the app's `/imagine` as configured. */
export function renderUsage(summary: UsageSummary, locale: string | undefined, command?: string): string {
  return describeUsage(summary, { bold: (text) => `*${text}*` }, locale, command);
}
