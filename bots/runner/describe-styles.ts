import { SCOPE_WORDS } from './describe-refusal.js';
import { HOUSE_STYLE_LIMITS, PROMPT_PLACEHOLDER, styleText, type HouseStyles, type NamedStyle, type StyleChangeResult, type StyleOptions } from './house-styles.js';
import type { SettingAnswer } from './describe-settings.js';
import { validationDetailWords } from './describe-failure.js';
import { nested, say, type Markup } from './words.js';
import type { FieldNames, Requester } from './types.js';

/** What an admin types as a style's text to remove it (as `clear` goes back to a setting's default). */
const REMOVE_WORDS = /^(clear|remove|delete|none)$/i;

/** The options of a style as members would type them (`size 1024x1536, n 2`): names and values are the spec's in every language. */
const OPTION_LABELS: Readonly<Record<keyof StyleOptions, string>> = { size: 'size', quality: 'quality', background: 'background', output_format: 'format', n: 'n' };

/**
 * An admin's `style NAME TEXT` from chat: defines (or replaces) the style, or
 * removes it when the text is `clear`; answers in words, in the admin's
 * language. `how` names how members pick a style on this surface; `fieldNames` its options as the surface calls them
 * (`format`, `--format`), for a refusal naming them.
 */
export async function changeStyle(
  styles: HouseStyles,
  requester: Requester,
  name: string,
  text: string,
  options: StyleOptions,
  how: string,
  fieldNames: FieldNames = {},
): Promise<SettingAnswer> {
  const result = REMOVE_WORDS.test(text.trim()) ? await styles.remove(requester, name) : await styles.define(requester, name, text, options);
  return answerOf(result, requester, how, fieldNames);
}

function answerOf(result: StyleChangeResult, requester: Requester, how: string, fieldNames: FieldNames): SettingAnswer {
  const { locale } = requester;
  const scope = SCOPE_WORDS[requester.platform];
  if (result.ok) {
    if (!result.style) return { ok: true, message: say(locale, 'styles.removed', { name: result.name }) };
    return { ok: true, message: say(locale, 'styles.defined', { name: result.name, replaced: result.previous ? 'yes' : 'no', ...shown(result.style), how }) };
  }
  const code = result.code;
  switch (code) {
    case 'not_admin':
      return { ok: false, code, message: say(locale, 'styles.not_admin', { scope }) };
    case 'invalid_name':
      return { ok: false, code, message: say(locale, 'styles.invalid_name', { name: result.name }) };
    case 'invalid_text':
      return { ok: false, code, message: say(locale, 'styles.invalid_text', { max: HOUSE_STYLE_LIMITS.textLength, placeholder: PROMPT_PLACEHOLDER }) };
    case 'too_many_styles':
      return { ok: false, code, message: say(locale, 'styles.too_many', { scope, max: HOUSE_STYLE_LIMITS.perScope }) };
    case 'unknown_style':
      return { ok: false, code, message: say(locale, 'styles.unknown', { name: result.name }) };
    case 'option_conflict': {
      // Worded as the request validation words the rule for a member, with the options as this surface calls them.
      const detail = validationDetailWords(result.conflict, fieldNames) ?? { key: 'failure.validation_english' as const, values: { sentence: result.conflict.message } };
      return { ok: false, code, message: say(locale, 'styles.option_conflict', { name: result.name, detail: nested(detail.key, detail.values) }) };
    }
  }
}

/**
 * The styles of a server/workspace, one line each (name, text, options), in
 * `locale`, within `maxChars` (the lines that do not fit are counted: "…and 3
 * more."); `how` names how members pick one, `define` the admins' command,
 * `markup` the surface's bold.
 */
export function describeStyles(styles: readonly NamedStyle[], how: string, define: string, locale?: string, options: { markup?: Markup | undefined; maxChars?: number | undefined } = {}): string {
  if (styles.length === 0) return say(locale, 'styles.none', { command: define });
  const lines = [say(locale, 'styles.title', { count: styles.length, max: HOUSE_STYLE_LIMITS.perScope, how }, options.markup)];
  const max = options.maxChars ?? Infinity;
  let length = lines[0]!.length;
  for (const [i, style] of styles.entries()) {
    const line = say(locale, 'styles.line', { name: style.name, ...shown(style) });
    const more = say(locale, 'styles.more', { count: styles.length - i });
    const last = i === styles.length - 1;
    if (length + 1 + line.length + (last ? 0 : 1 + more.length) > max) {
      lines.push(more);
      break;
    }
    lines.push(line);
    length += 1 + line.length;
  }
  return lines.join('\n');
}

/** A style as a choice of Discord's autocomplete (at most `max` characters). */
export function styleChoiceName(style: NamedStyle, max: number, locale?: string): string {
  const name = say(locale, 'styles.choice', { name: style.name, text: styleText(style) });
  return name.length <= max ? name : `${name.slice(0, max - 1)}…`;
}

function shown(style: Pick<NamedStyle, 'before' | 'after' | 'options'>): { text: string; hasOptions: 'yes' | 'no'; options: string } {
  const options = (Object.keys(OPTION_LABELS) as (keyof StyleOptions)[])
    .filter((key) => style.options[key] !== undefined)
    .map((key) => `${OPTION_LABELS[key]} ${String(style.options[key])}`)
    .join(', ');
  return { text: styleText(style), hasOptions: options ? 'yes' : 'no', options };
}
