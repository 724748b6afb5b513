import { describeUsage, type UsageSummary } from '../runner/index.js';

/** `/imagine-usage` as one ephemeral message, in Discord markdown, in the member's language. */
export function renderUsage(summary: UsageSummary, locale: string): string {
  return describeUsage(summary, { bold: (text) => `**${text}**` }, locale);
}
