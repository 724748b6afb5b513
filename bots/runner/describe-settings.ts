import { defaultQualityFor, type EffectiveSetting, type EffectiveSettings, type ScopePolicy, type SettingUpdateResult } from './scope-policy.js';
import { settingHint, settingLabel, WORD_OF, type WordedSettingName, mergeSetting, type ParsedSetting, parseSettingValue, settingOfWord, SETTING_WORDS } from './setting-words.js';
import { isFailClosed, isListSetting, type SettingName, type StoredSettingName } from './scope-settings.js';
import type { AuditTrouble } from './audit-log.js';
import { describeAuditTrouble } from './describe-audit.js';
import { SCOPE_WORDS, SURFACE_COMMAND } from './describe-refusal.js';
import { COMMAND_NAMES } from './command-words.js';
import { say, utcDate, type MessageKey } from './words.js';
import type { Platform, Requester } from './types.js';

/** A chat admin's change as one answer: `ok` and a sentence for them. */
export interface SettingAnswer {
  ok: boolean;
  /** Stable: `not_admin`, `invalid_value`, `not_allowed_by_operator`, `not_allowed_by_scope`, `unknown_setting`, `setting_unreadable`, `would_open`; undefined when it was changed. */
  code?: string | undefined;
  message: string;
  /** An answer that is `ok` and changed nothing (a repair that found nothing to clear): what the settings show stays as it was. */
  unchanged?: true;
}

/**
 * `set <setting> <value>` from chat: reads the value (`clear`, `add …`,
 * `remove …` for lists), changes the setting through the policy (which checks
 * who may and the operator's bounds, stores and logs it; `add` and `remove` as one
 * change of the value stored now, so two admins on two replicas lose neither), and answers in words,
 * in the admin's language. Setting names and values are typed the same in every
 * language (`max-images`, `low`): they are the command's words and the spec's.
 */
export async function changeSetting(policy: ScopePolicy, requester: Requester, word: string, text: string): Promise<SettingAnswer> {
  const { locale } = requester;
  if (!requester.isAdmin) return notAdmin(requester.platform, locale);
  const name = settingOfWord(word);
  if (!name) return { ok: false, code: 'unknown_setting', message: say(locale, 'settings.unknown', { names: Object.keys(SETTING_WORDS).join(', ') }) };
  const parsed = parseSettingValue(name, text);
  if (!parsed.ok) return { ok: false, code: 'invalid_value', message: say(locale, 'settings.takes', { setting: WORD_OF[name], hint: settingHint(name, locale, requester.platform) }) };
  const { op } = parsed;
  // A list that cannot be read is refused by the policy (`setting_unreadable`): adding to or removing from its default
  // would store a list the admins never chose and lift the refusal (`remove` from who opens the bot to everyone).
  const result =
    (op === 'add' || op === 'remove') && isListSetting(name)
      ? await policy.update(requester, name, (current) => mergeSetting(name, current, parsed))
      : await policy.set(requester, name, mergeSetting(name, undefined, parsed));
  return answerOf(result, op, requester.platform, locale);
}

/**
 * `repair` from chat: clears through the policy every setting of the admin's scope that cannot be read (each back to
 * its default; the readable ones stay), and answers which, in the admin's language — as they are typed (`audit` for
 * the audit channel), the role budgets in words — warning when a restriction or the role budgets are now unrestricted
 * (to set again; the role budgets with the budget command: Slack's is the app's own, `command` as `describeSettings`
 * takes it) — and which it left as they are (well-formed, a later version's: set or cleared by hand).
 */
export async function repairSettings(policy: ScopePolicy, requester: Requester, command = SURFACE_COMMAND): Promise<SettingAnswer> {
  const { locale, platform } = requester;
  // Who may repair is the policy's to decide (`not_admin`), once.
  const result = await policy.repair(requester);
  if (!result.ok) return notAdmin(platform, locale);
  const labels = (names: StoredSettingName[]) => names.map((name) => settingLabel(name, locale)).join(', ');
  const { cleared, left } = result;
  // A restriction or the role budgets back to their defaults lift what they held (nobody blocked, every channel, each member the cap of each user): said, not only "back to their defaults".
  const unrestricted = cleared.filter((name) => isFailClosed(name) || name === 'roleBudgets');
  const sentences = [
    // With some left as they are, "every setting can be read" would be false: they say it alone.
    ...(cleared.length > 0 || left.length === 0 ? [say(locale, 'settings.repaired', { count: cleared.length, settings: labels(cleared), scope: SCOPE_WORDS[platform] })] : []),
    ...(unrestricted.length > 0
      ? [say(locale, 'settings.repair_unrestricted', { settings: labels(unrestricted), budgets: unrestricted.includes('roleBudgets') ? 'yes' : 'no', scope: SCOPE_WORDS[platform], command, ...COMMAND_NAMES })]
      : []),
    ...(left.length > 0 ? [say(locale, 'settings.repair_left', { count: left.length, settings: labels(left) })] : []),
  ];
  return { ok: true, message: sentences.join(' '), ...(cleared.length === 0 && { unchanged: true as const }) };
}

type ParsedSettingOp = Extract<ParsedSetting, { ok: true }>['op'];

const notAdmin = (platform: Platform, locale: string | undefined): SettingAnswer => ({
  ok: false,
  code: 'not_admin',
  message: say(locale, 'settings.not_admin', { scope: SCOPE_WORDS[platform] }),
});

function answerOf(result: SettingUpdateResult, op: ParsedSettingOp, platform: Platform, locale: string | undefined): SettingAnswer {
  const setting = settingLabel(result.name, locale);
  if (result.ok) {
    const was = result.wasUnreadable
      ? { wasDefault: 'unreadable', was: '' }
      : result.previous === undefined
        ? { wasDefault: 'yes', was: '' }
        : { wasDefault: 'no', was: valueText(result.name, result.previous, platform) };
    if (result.value === undefined) return { ok: true, message: say(locale, 'settings.cleared', { setting, ...was }) };
    return { ok: true, message: say(locale, 'settings.changed', { setting, value: valueText(result.name, result.value, platform), ...was }) };
  }
  switch (result.code) {
    case 'not_admin':
      return notAdmin(platform, locale);
    case 'invalid_value':
      if (result.most !== undefined) return { ok: false, code: result.code, message: say(locale, 'settings.too_many', { setting, max: result.most }) };
      if (result.unmatchable !== undefined) {
        const entries = result.unmatchable.map((entry) => `“${entry}”`).join(', ');
        return { ok: false, code: result.code, message: say(locale, 'settings.unmatchable_words', { setting, entries, count: result.unmatchable.length }) };
      }
      return { ok: false, code: result.code, message: say(locale, 'settings.takes', { setting, hint: settingHint(result.name, locale, platform) }) };
    case 'setting_unreadable':
      return { ok: false, code: result.code, message: say(locale, 'settings.unreadable_merge', { setting, op }) };
    case 'would_open':
      return { ok: false, code: result.code, message: say(locale, 'settings.would_open', { setting }) };
    case 'not_allowed_by_operator': {
      const bound = result.allowed;
      const allowed = bound === undefined ? '' : 'atMost' in bound ? say(locale, 'settings.at_most', { max: bound.atMost }) : bound.oneOf.join(', ');
      return { ok: false, code: result.code, message: say(locale, 'settings.beyond_operator', { setting, allowed }) };
    }
    case 'not_allowed_by_scope': {
      const allowed = result.allowed !== undefined && 'oneOf' in result.allowed ? result.allowed.oneOf.join(', ') : '';
      const list = result.boundBy === undefined ? '' : settingLabel(result.boundBy, locale);
      return { ok: false, code: result.code, message: say(locale, 'settings.beyond_scope', { setting, allowed, list, scope: SCOPE_WORDS[platform] }) };
    }
  }
}

/**
 * Every effective setting of a server/workspace and where it comes from, one
 * line each, in the markup both Discord and Slack read for mentions (`<#id>`,
 * `<@id>`, `<@&id>`), in `locale`. `howToChange` names the command for this surface.
 * A setting that cannot be read says so on its line — a rule: every job is refused until it is set again or
 * cleared, said above the lines too, with the repair that clears them all (`{command} admin repair` on Slack, `command`
 * the surface's main command as configured, as `describeFailure` takes it; `/imagine-admin repair` on Discord, named
 * as the admin's Discord shows it: `COMMAND_NAMES`); another:
 * its default applies meanwhile. A default quality some members do not get (`high` where `high-quality` does not list
 * them) says what those members get instead, as the policy decides it for them.
 */
export function describeSettings(s: EffectiveSettings, howToChange: string, locale?: string, auditTrouble?: AuditTrouble, command = SURFACE_COMMAND): string {
  const p = s.platform;
  const scope = SCOPE_WORDS[p];
  const line = (name: WordedSettingName, setting: EffectiveSetting<unknown>, empty?: MessageKey) => {
    const shown = Array.isArray(setting.value) && setting.value.length === 0 && empty ? say(locale, empty) : valueText(name, setting.value, p);
    if (s.unreadable.includes(name)) return say(locale, 'settings.unreadable_line', { setting: WORD_OF[name], restriction: isFailClosed(name) ? 'yes' : 'no', value: shown });
    return say(locale, 'settings.line', { setting: WORD_OF[name], value: shown, source: sourceText(setting, locale) });
  };
  const unreadableRules = s.unreadable.filter(isFailClosed).length;
  const lines = [
    say(locale, 'settings.title', { scope }),
    say(locale, 'settings.allowed_here', { allowed: s.scopeAllowed ? 'yes' : 'no', scope }),
    ...(unreadableRules > 0 ? [say(locale, 'settings.unreadable_rules', { count: unreadableRules, scope, platform: p, command, ...COMMAND_NAMES })] : []),
    line('channels', s.channels, 'settings.empty.channels'),
    line('allowed', s.allowed, 'settings.empty.allowed'),
    line('blocked', s.blocked, 'settings.empty.blocked'),
    line('blockedWords', s.blockedWords, 'settings.empty.none'),
    say(locale, 'settings.operator_words', { words: s.operatorBlockedWords.length > 0 ? s.operatorBlockedWords.join(', ') : say(locale, 'settings.empty.none') }),
    line('maxImages', s.maxImages),
    line('qualities', s.qualities),
    line('sizes', s.sizes),
    line('highQualityFor', s.highQualityFor, 'settings.empty.highQualityFor'),
    line('moderation', s.moderation),
    line('defaultSize', s.defaultSize),
    defaultQualityLine(s, line('defaultQuality', s.defaultQuality), locale),
    line('defaultPreviews', s.defaultPreviews),
    line('privateResults', s.privateResults),
    s.unreadable.includes('auditChannel')
      ? say(locale, 'settings.audit_unreadable')
      : say(locale, 'settings.audit_line', {
          channel: s.auditChannel.value ? `<#${s.auditChannel.value.channelId}>` : say(locale, 'settings.audit_off'),
          source: sourceText(s.auditChannel, locale),
        }),
    // Audit posts that keep failing are said here, to the admins who look (the log says it too), while that channel is still the one chosen.
    ...(auditTrouble && auditTrouble.channelId === s.auditChannel.value?.channelId ? [describeAuditTrouble(auditTrouble, locale)] : []),
    say(locale, 'settings.how_to_change', { command: howToChange }),
  ];
  return lines.join('\n');
}

/**
 * The default-quality line, and where members `high-quality` does not list get another default, which: asked of the
 * policy for a member on no list (the line as it is when everyone gets the default).
 */
function defaultQualityLine(s: EffectiveSettings, line: string, locale: string | undefined): string {
  if (s.unreadable.includes('defaultQuality')) return line;
  const unlisted = defaultQualityFor({ platform: s.platform, scopeId: s.scopeId, userId: '', channelId: '', roleIds: [] }, s);
  if (unlisted === s.defaultQuality.value) return line;
  return say(locale, 'settings.default_quality_unlisted', { setting: WORD_OF.defaultQuality, value: s.defaultQuality.value, source: sourceText(s.defaultQuality, locale), list: WORD_OF.highQualityFor, quality: unlisted });
}

function sourceText(setting: EffectiveSetting<unknown>, locale: string | undefined): string {
  const change = setting.source === 'admin' ? setting.change : undefined;
  if (!change) return say(locale, 'settings.source', { source: setting.source });
  const [, userId] = change.by.split(':');
  return say(locale, 'settings.source_admin', { who: `<@${userId}>`, when: utcDate(change.at) });
}

/** A setting's value as written: mentions for channels, users and roles; lists joined by commas (the values are the spec's or ids, in every language). */
function valueText(name: SettingName, value: unknown, platform: Platform): string {
  const list = Array.isArray(value) ? (value as string[]) : undefined;
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (!list) return String(value);
  if (list.length === 0) return '—';
  switch (name) {
    case 'channels':
      return list.map((id) => `<#${id}>`).join(', ');
    case 'blocked':
      return list.map((id) => `<@${id}>`).join(', ');
    case 'allowed':
    case 'highQualityFor':
      return list.map((p) => (p.startsWith('role:') ? (platform === 'discord' ? `<@&${p.slice(5)}>` : p) : `<@${p.slice(5)}>`)).join(', ');
    default:
      return list.join(', ');
  }
}
