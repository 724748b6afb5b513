import { AuditChannelError, type AuditEntry, type AuditLog, type AuditTrouble } from './audit-log.js';
import type { SettingAnswer } from './describe-settings.js';
import { SCOPE_WORDS } from './describe-refusal.js';
import type { ScopePolicy } from './scope-policy.js';
import type { Platform, Requester } from './types.js';
import { say, usd, usdAtMost } from './words.js';

/**
 * An audit entry in words, in `locale` (the admin who chose the channel reads it), for a surface to lay out: its
 * head (what happened, who, where: mentions both Discord and Slack read), the job's details, the prompt (the
 * surface escapes it in its own markup) or the erased marker, and notes (cost, reason, private or link).
 */
export interface AuditLines {
  head: string;
  details: string;
  /** The prompt as the member wrote it (to escape); undefined when erased or there was none. */
  prompt: string | undefined;
  /** The marker shown instead of an erased prompt. */
  erased: string | undefined;
  notes: string[];
}

export function auditLinesOf(entry: AuditEntry, locale: string | undefined): AuditLines {
  const who = `<@${entry.userId}>`;
  const where = entry.channelId ? `<#${entry.channelId}>` : '—';
  const options = [entry.size, entry.quality].filter((o) => o !== undefined).map((o) => ` · ${o}`).join('');
  const notes: string[] = [];
  let head: string;
  if (entry.type === 'job') {
    const [status, code] = entry.status.split(':');
    head = say(locale, 'audit.job', { status: status ?? 'cancelled', who, where });
    if (entry.costUsd !== undefined) notes.push(say(locale, 'audit.cost', { cost: usd(entry.costUsd) }));
    // Not settled as it was recorded (a job a stop cut off): at most that much.
    else if (entry.mayCostUsd !== undefined) notes.push(say(locale, 'audit.cost', { cost: usdAtMost(entry.mayCostUsd) }));
    if (code) notes.push(say(locale, 'audit.failure', { code }));
  } else {
    head = say(locale, 'audit.refusal', { reason: entry.status, who, where });
    if (entry.word !== undefined) notes.push(say(locale, 'audit.blocked_word', { word: entry.word }));
  }
  if (entry.private) notes.push(say(locale, 'audit.private'));
  else if (entry.link) notes.push(say(locale, 'audit.link', { link: entry.link }));
  return {
    head,
    details: say(locale, 'audit.details', { kind: entry.kind, n: entry.n ?? 1, options }),
    prompt: entry.erased || entry.prompt === '' ? undefined : entry.prompt,
    erased: entry.erased ? say(locale, 'audit.erased') : undefined,
    notes,
  };
}

/** Said at the top of a post after entries were dropped (the channel's queue was full); undefined when none were. */
export function auditSkippedNote(skipped: number, locale: string | undefined): string | undefined {
  return skipped > 0 ? say(locale, 'audit.skipped', { count: skipped }) : undefined;
}

/** The first post in a channel an admin chose. */
export function auditGreeting(platform: Platform, locale: string | undefined): string {
  return say(locale, 'audit.greeting', { scope: SCOPE_WORDS[platform] });
}

/** What a post's notification says (Slack's `text`). */
export function auditSummary(count: number, locale: string | undefined): string {
  return say(locale, 'audit.summary', { count });
}

/** The line of the admins' settings view when the scope's audit posts keep failing. */
export function describeAuditTrouble(trouble: AuditTrouble, locale: string | undefined): string {
  return say(locale, 'settings.audit_trouble', { failures: trouble.failures, channel: `<#${trouble.channelId}>`, code: trouble.code });
}

/**
 * An admin chooses the scope's audit channel (`channelId`), or turns it off (undefined): the bot first posts its
 * greeting there — proof it can post — and only then keeps the choice (the scope's settings, `auditChannel`, with
 * the admin's language, which the posts are written in). `invite` is how the surface invites the bot (Slack).
 */
export async function changeAuditChannel(
  runner: { policy: ScopePolicy; audit: AuditLog },
  requester: Requester,
  channelId: string | undefined,
  invite = '/invite',
): Promise<SettingAnswer> {
  const { locale } = requester;
  const scope = SCOPE_WORDS[requester.platform];
  if (!requester.isAdmin) return { ok: false, code: 'not_admin', message: say(locale, 'audit.not_admin', { scope }) };
  if (channelId === undefined) {
    const before = (await runner.policy.effective(requester)).auditChannel.value;
    if (!before) return { ok: true, message: say(locale, 'audit.already_off') };
    await runner.policy.set(requester, 'auditChannel', undefined);
    return { ok: true, message: say(locale, 'audit.off', { channel: `<#${before.channelId}>` }) };
  }
  const channel = `<#${channelId}>`;
  try {
    await runner.audit.greet(requester, channelId);
  } catch (error) {
    const problem = error instanceof AuditChannelError ? error.problem : 'failed';
    const code = error instanceof AuditChannelError ? String(error.platformCode ?? problem) : 'failed';
    if (problem === 'not_in_channel') return { ok: false, code: problem, message: say(locale, 'audit.not_in_channel', { channel, invite }) };
    if (problem === 'no_permission' || problem === 'not_found') return { ok: false, code: problem, message: say(locale, `audit.${problem}`, { channel }) };
    return { ok: false, code: 'failed', message: say(locale, 'audit.failed', { channel, code }) };
  }
  const result = await runner.policy.set(requester, 'auditChannel', { channelId, ...(locale && { locale }) });
  if (!result.ok) return { ok: false, code: result.code, message: say(locale, 'audit.failed', { channel, code: result.code }) };
  return { ok: true, message: say(locale, 'audit.set', { scope, channel }) };
}
