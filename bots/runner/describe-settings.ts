import type { EffectiveSetting, EffectiveSettings, ScopePolicy, SettingChangeResult } from './scope-policy.js';
import { SETTING_HINTS, WORD_OF, mergeSetting, parseSettingValue, settingOfWord, SETTING_WORDS } from './setting-words.js';
import type { SettingName } from './scope-settings.js';
import { SCOPE_NAMES } from './describe-refusal.js';
import type { Platform, Requester } from './types.js';

/** A chat admin's change as one answer: `ok` and a sentence for them. */
export interface SettingAnswer {
  ok: boolean;
  /** Stable: `not_admin`, `invalid_value`, `not_allowed_by_operator`, `unknown_setting`; undefined when it was changed. */
  code?: string | undefined;
  message: string;
}

/**
 * `set <setting> <value>` from chat: reads the value (`clear`, `add …`,
 * `remove …` for lists), changes the setting through the policy (which checks
 * who may and the operator's bounds, stores and logs it), and answers in words.
 */
export async function changeSetting(policy: ScopePolicy, requester: Requester, word: string, text: string): Promise<SettingAnswer> {
  if (!requester.isAdmin) return notAdmin(requester.platform);
  const name = settingOfWord(word);
  if (!name) return { ok: false, code: 'unknown_setting', message: `Choose one of ${Object.keys(SETTING_WORDS).join(', ')}.` };
  const parsed = parseSettingValue(name, text);
  if (!parsed.ok) return { ok: false, code: 'invalid_value', message: `${WORD_OF[name]} takes ${SETTING_HINTS[name]}.` };
  const current = (await policy.effective(requester))[name];
  const value = mergeSetting(name, current.value, parsed);
  return answerOf(await policy.set(requester, name, value), requester.platform);
}

const notAdmin = (platform: Platform): SettingAnswer => ({ ok: false, code: 'not_admin', message: `Only an admin of ${SCOPE_NAMES[platform]} can change its settings.` });

function answerOf(result: SettingChangeResult, platform: Platform): SettingAnswer {
  const word = WORD_OF[result.name];
  if (result.ok) {
    const now = result.value === undefined ? 'back to its default' : `now ${valueText(result.name, result.value, platform)}`;
    const was = result.previous === undefined ? 'the default' : valueText(result.name, result.previous, platform);
    return { ok: true, message: `${word} is ${now} (was ${was}).` };
  }
  switch (result.code) {
    case 'not_admin':
      return notAdmin(platform);
    case 'invalid_value':
      return { ok: false, code: result.code, message: `${word} takes ${SETTING_HINTS[result.name]}.` };
    case 'not_allowed_by_operator':
      return {
        ok: false,
        code: result.code,
        message: `The bot’s operator allows ${result.allowed} for ${word}; an admin can choose within that, not beyond. Ask the operator to change it.`,
      };
  }
}

/**
 * Every effective setting of a server/workspace and where it comes from, one
 * line each, in the markup both Discord and Slack read for mentions (`<#id>`,
 * `<@id>`, `<@&id>`). `howToChange` names the command for this surface.
 */
export function describeSettings(s: EffectiveSettings, howToChange: string): string {
  const p = s.platform;
  const line = (name: SettingName, setting: EffectiveSetting<unknown>, empty: string) => {
    const shown = Array.isArray(setting.value) && setting.value.length === 0 ? empty : valueText(name, setting.value, p);
    return `• ${WORD_OF[name]}: ${shown} (${sourceText(setting)})`;
  };
  const lines = [
    `Settings of ${SCOPE_NAMES[p]} — where each comes from: operator (the bot’s environment), admin (set here), default.`,
    `• bot allowed here: ${s.scopeAllowed ? 'yes' : `no — the operator has not allowed ${SCOPE_NAMES[p]}, so every job is refused`} (operator)`,
    line('channels', s.channels, 'every channel'),
    line('allowed', s.allowed, 'everyone'),
    line('blocked', s.blocked, 'nobody'),
    line('blockedWords', s.blockedWords, 'none'),
    `• operator’s blocked words (everywhere): ${s.operatorBlockedWords.length > 0 ? s.operatorBlockedWords.join(', ') : 'none'} (operator)`,
    line('maxImages', s.maxImages, ''),
    line('qualities', s.qualities, ''),
    line('sizes', s.sizes, ''),
    line('highQualityFor', s.highQualityFor, 'whoever may use it'),
    line('moderation', s.moderation, ''),
    line('defaultSize', s.defaultSize, ''),
    line('defaultQuality', s.defaultQuality, ''),
    line('defaultPreviews', s.defaultPreviews, ''),
    `Change one with ${howToChange} (clear for the default; add or remove for lists).`,
  ];
  return lines.join('\n');
}

function sourceText(setting: EffectiveSetting<unknown>): string {
  if (setting.source !== 'admin') return setting.source;
  const change = setting.change;
  if (!change) return 'admin';
  const [, userId] = change.by.split(':');
  return `admin: <@${userId}>, ${new Date(change.at).toISOString().slice(0, 10)}`;
}

/** A setting's value in words: mentions for channels, users and roles; lists joined by commas. */
function valueText(name: SettingName, value: unknown, platform: Platform): string {
  const list = Array.isArray(value) ? (value as string[]) : undefined;
  if (!list) return String(value);
  if (list.length === 0) return 'none';
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
