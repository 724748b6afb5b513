import { LIMITS, MODERATIONS, QUALITIES, SIZES } from 'pictor';
import { anyOf, say } from './words.js';
import { parseWordList } from './blocked-words.js';
import { isListSetting, type ScopeSettings, type SettingName, type StoredSettingName } from './scope-settings.js';
import type { Platform } from './types.js';

/**
 * How chat admins name and write the settings (`/imagine-admin set`,
 * `/imagine admin set`): the names, and values read from what they type —
 * channel, user and role mentions as Discord and Slack send them, words,
 * numbers — with `clear` for the default and `add …`/`remove …` for lists.
 */
export const SETTING_WORDS = {
  channels: 'channels',
  who: 'allowed',
  blocked: 'blocked',
  'blocked-words': 'blockedWords',
  'max-images': 'maxImages',
  qualities: 'qualities',
  sizes: 'sizes',
  'high-quality': 'highQualityFor',
  moderation: 'moderation',
  'default-size': 'defaultSize',
  'default-quality': 'defaultQuality',
  'default-previews': 'defaultPreviews',
  'private-results': 'privateResults',
} as const satisfies Record<string, SettingName>;

export type SettingWord = keyof typeof SETTING_WORDS;
/** The settings `set` changes by name: every one but the audit channel (`audit …`) and the role budgets (`budget …`). */
export type WordedSettingName = (typeof SETTING_WORDS)[SettingWord];

/** The chat name of a setting (`blocked-words` for `blockedWords`). */
export const WORD_OF: Record<WordedSettingName, SettingWord> = Object.fromEntries(Object.entries(SETTING_WORDS).map(([word, name]) => [name, word])) as Record<WordedSettingName, SettingWord>;

/**
 * How a stored setting is named to an admin, in `locale`: as it is typed (`blocked-words`; `audit` for the audit
 * channel, its command's word), the role budgets, which have no one word, in words.
 */
export function settingLabel(name: StoredSettingName, locale?: string): string {
  if (name === 'roleBudgets') return say(locale, 'settings.role_budgets');
  if (name === 'auditChannel') return 'audit';
  return WORD_OF[name];
}

export function settingOfWord(word: string): WordedSettingName | undefined {
  return (SETTING_WORDS as Record<string, WordedSettingName>)[word.trim().toLowerCase()];
}

/** What each setting takes, in words (shown when a value cannot be read), in `locale`, for `platform`'s mentions. The values themselves stay the spec's. */
export function settingHint(name: SettingName, locale?: string, platform?: Platform): string {
  switch (name) {
    case 'allowed':
    case 'highQualityFor':
      // Slack has no roles, and these lists do not take its user groups: members only.
      return say(locale, platform === 'slack' ? `settings.hint.slack.${name}` : `settings.hint.${name}`);
    case 'qualities':
    case 'sizes':
      return say(locale, 'settings.hint.someOf', { values: anyOf(name === 'qualities' ? QUALITIES : SIZES) });
    case 'defaultSize':
    case 'defaultQuality':
      return say(locale, 'settings.hint.oneOf', { values: anyOf(name === 'defaultSize' ? SIZES : QUALITIES) });
    case 'moderation':
      return say(locale, 'settings.hint.moderation', { low: MODERATIONS[0], auto: MODERATIONS[1] });
    case 'maxImages':
      return say(locale, 'settings.hint.number', { min: 1, max: LIMITS.nMax });
    case 'defaultPreviews':
      return say(locale, 'settings.hint.number', { min: 0, max: LIMITS.partialImagesMax });
    case 'privateResults':
      return say(locale, 'settings.hint.onOff', { on: 'on', off: 'off' });
    default:
      return say(locale, `settings.hint.${name}`);
  }
}

export type ParsedSetting =
  | { ok: true; op: 'set' | 'add' | 'remove'; value: unknown[] | string | number | boolean }
  | { ok: true; op: 'clear' }
  | { ok: false };

/** A setting's whole value that puts it back to its default. */
export const CLEAR_VALUE = /^(clear|reset|default|none)$/i;
/** The word before a list's items that adds them to it or removes them from it. */
export const LIST_VERB = /^(add|remove)$/i;

/** Reads what an admin typed for one setting. */
export function parseSettingValue(name: SettingName, text: string): ParsedSetting {
  let rest = text.trim();
  if (CLEAR_VALUE.test(rest)) return { ok: true, op: 'clear' };
  let op: 'set' | 'add' | 'remove' = 'set';
  const verb = /^(\S+)\s+/.exec(rest);
  if (verb && LIST_VERB.test(verb[1]!) && isListSetting(name)) {
    op = verb[1]!.toLowerCase() as 'add' | 'remove';
    rest = rest.slice(verb[0].length);
  }
  const value = readValue(name, rest);
  return value === undefined ? { ok: false } : { ok: true, op, value };
}

/** `on`/`off` (and yes/no, true/false) as typed by a member or an admin, in every language; undefined for anything else. */
export function onOffOf(text: string): boolean | undefined {
  const word = text.trim().toLowerCase();
  if (['on', 'yes', 'true', 'allow', 'allowed'].includes(word)) return true;
  if (['off', 'no', 'false', 'forbid', 'forbidden'].includes(word)) return false;
  return undefined;
}

function readValue(name: SettingName, text: string): unknown[] | string | number | boolean | undefined {
  const words = text.split(/[\s,]+/).filter(Boolean);
  const nonEmpty = <T>(list: T[]) => (list.length > 0 ? list : undefined);
  switch (name) {
    case 'channels':
      return ids(words, (w) => /^<#([A-Za-z0-9]+)(\|[^>]*)?>$/.exec(w)?.[1] ?? (/^[A-Za-z0-9]+$/.test(w) ? w : undefined));
    case 'blocked':
      return ids(words, (w) => /^<@!?([A-Za-z0-9]+)(\|[^>]*)?>$/.exec(w)?.[1] ?? (/^[A-Za-z0-9]+$/.test(w) ? w : undefined));
    case 'allowed':
    case 'highQualityFor':
      return ids(words, principalOf);
    case 'blockedWords':
      return nonEmpty(parseWordList(text));
    case 'qualities':
      return oneOf(words, QUALITIES);
    case 'sizes':
      return oneOf(words, SIZES);
    case 'maxImages':
    case 'defaultPreviews':
      return /^\d{1,2}$/.test(text) ? Number(text) : undefined;
    case 'moderation':
      return (MODERATIONS as readonly string[]).includes(text.toLowerCase()) ? text.toLowerCase() : undefined;
    case 'defaultSize':
      return (SIZES as readonly string[]).includes(text) ? text : undefined;
    case 'defaultQuality':
      return (QUALITIES as readonly string[]).includes(text.toLowerCase()) ? text.toLowerCase() : undefined;
    case 'privateResults':
      return onOffOf(text);
  }
}

/** `<@&123>` → `role:123`; `<@123>`, `<@!123>`, `<@U123|sam>`, a bare id → `user:…`; `role:…`/`user:…` as written. */
function principalOf(word: string): string | undefined {
  const role = /^<@&([A-Za-z0-9]+)>$/.exec(word) ?? /^role:([A-Za-z0-9]+)$/.exec(word);
  if (role) return `role:${role[1]}`;
  const user = /^<@!?([A-Za-z0-9]+)(\|[^>]*)?>$/.exec(word) ?? /^(?:user:)?([A-Za-z0-9]+)$/.exec(word);
  return user ? `user:${user[1]}` : undefined;
}

function ids(words: string[], read: (word: string) => string | undefined): string[] | undefined {
  if (words.length === 0) return undefined;
  const out: string[] = [];
  for (const word of words) {
    const id = read(word);
    if (id === undefined) return undefined;
    if (!out.includes(id)) out.push(id);
  }
  return out;
}

function oneOf(words: string[], allowed: readonly string[]): string[] | undefined {
  const out = [...new Set(words.map((w) => w.toLowerCase()))];
  return out.length > 0 && out.every((w) => allowed.includes(w)) ? out : undefined;
}

/** The new value of a setting after `add`/`remove` (or `set`) of what an admin typed. */
export function mergeSetting<K extends SettingName>(name: K, current: unknown, parsed: Extract<ParsedSetting, { ok: true }>): ScopeSettings[K] | undefined {
  if (parsed.op === 'clear') return undefined;
  if (parsed.op === 'set') return parsed.value as ScopeSettings[K];
  const list = Array.isArray(current) ? [...(current as unknown[])] : [];
  const items = parsed.value as unknown[];
  const merged = parsed.op === 'add' ? [...list, ...items.filter((i) => !list.includes(i))] : list.filter((i) => !items.includes(i));
  // An empty list means "no rule" for every list setting: stored as cleared.
  return (merged.length > 0 ? merged : undefined) as ScopeSettings[K] | undefined;
}
