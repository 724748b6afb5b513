import { describeUsage, type UsageSummary } from '../runner/index.js';

/** `/imagine-usage` as one ephemeral message, in Discord markdown. */
export function renderUsage(summary: UsageSummary): string {
  return describeUsage(summary, { bold: (text) => `**${text}**`, scopeWord: 'server' });
}
