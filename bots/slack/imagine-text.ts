import { BACKGROUNDS, DEFAULTS, MODERATIONS, OUTPUT_FORMATS, QUALITIES, SIZES } from 'pictor';
import { isRangeField, rangeValueOf, rangeWords, say, sayWords, words, type FieldNames, type JobOptions } from '../runner/index.js';
import { closestWord } from 'pictor/internal';
import { SlackInputError } from './SlackInputError.js';
import { plainTextOf } from './slack-text.js';

type OptionField = Exclude<keyof JobOptions, never> & string;

interface FlagSpec {
  /** The request field the flag sets. */
  field: OptionField;
  /** The values it takes, from the core's constants; none for a range field (the runner's `RANGE_FIELDS`, `rangeValueOf`). */
  values?: readonly string[];
  /** Other spellings people use: `jpg` for `jpeg`. */
  aliases?: Readonly<Record<string, string>>;
  /** What it means, for the help text (`slack.flag.help`). */
  help: 'size' | 'quality' | 'background' | 'format' | 'n' | 'compression' | 'moderation';
}

/** The flags of `/imagine` and of a mention. Values and bounds come from the core's spec constants. */
export const FLAGS: Readonly<Record<string, FlagSpec>> = {
  size: { field: 'size', values: SIZES, aliases: { square: '1024x1024', portrait: '1024x1536', landscape: '1536x1024' }, help: 'size' },
  quality: { field: 'quality', values: QUALITIES, help: 'quality' },
  background: { field: 'background', values: BACKGROUNDS, help: 'background' },
  format: { field: 'output_format', values: OUTPUT_FORMATS, aliases: { jpg: 'jpeg' }, help: 'format' },
  n: { field: 'n', help: 'n' },
  compression: { field: 'output_compression', help: 'compression' },
  moderation: { field: 'moderation', values: MODERATIONS, help: 'moderation' },
};

/** Each request field as the flag that sets it (`output_format` → `--format`): the runner's refusals name it so. */
export const FLAG_NAMES: FieldNames = Object.fromEntries(Object.entries(FLAGS).map(([flag, spec]) => [spec.field, `--${flag}`]));

/**
 * What a flag accepts, in words, in `locale`: its values (plus aliases), or its range of integers; the values, bounds
 * and the formats compression needs are the spec's in every language, and a rule between fields names the flag.
 */
export function allowedFor(flag: string, locale?: string): string {
  if (flag === STYLE_FLAG) return say(locale, 'slack.flag.style_value');
  const spec = FLAGS[flag];
  if (!spec) return '';
  const base = isRangeField(spec.field) ? sayWords(locale, rangeWords(spec.field, FLAG_NAMES)) : (spec.values ?? []).join(', ');
  const aliases = spec.aliases ? Object.entries(spec.aliases).map(([alias, value]) => `${alias} (= ${value})`) : [];
  return aliases.length ? say(locale, 'slack.flag.also', { base, aliases: aliases.join(', ') }) : base;
}

/** `--style NAME`: a house style of the workspace (the runner applies it; not a request field). */
export const STYLE_FLAG = 'style';

/** `private`: `--private` (only for the person) or `--public` (in the channel, whatever their default); undefined: their default. */
export type ImagineText =
  | { kind: 'help' }
  | { kind: 'request'; prompt: string; options: JobOptions; /** `--style NAME`, as typed. */ style?: string | undefined; private?: boolean | undefined };

/** The flags that take no value: who sees the job. */
export const VISIBILITY_FLAGS: Readonly<Record<string, boolean>> = { private: true, public: false };

/** Every flag `/imagine` has (its options, `--style`, who sees the job): any other is refused as unknown, naming the nearest. */
export const KNOWN_FLAGS: readonly string[] = [...Object.keys(FLAGS), STYLE_FLAG, ...Object.keys(VISIBILITY_FLAGS)];

const HELP_WORDS = new Set(['help', '--help', '-h', '?']);
/** `--size`, and `—size` / `–size` (Slack clients turn `--` into a dash). */
const FLAG_TOKEN = /^(?:--|—|–)([a-z][a-z_-]*)(?:=(.*))?$/i;

/** A word of `/imagine` text that is a flag: its name as typed (`output-format`), as the table calls it (`format`), and its `=value`. */
interface FlagWord {
  readonly name: string;
  readonly flag: string;
  readonly value: string | undefined;
}

/**
 * `/imagine` text read once into its words: the plain text, each word where it starts and the flag it is, if one (a
 * word that looks like a flag is one, never a value), and those flags in order as the table calls them (`format` for
 * `--output_format`, `previews` for a flag it does not have) — what a caller checks before `parseImagineText` reads the
 * values (a house style's flags).
 */
export interface ImagineScan {
  readonly text: string;
  readonly tokens: readonly { readonly word: string; readonly index: number; readonly flag: FlagWord | undefined }[];
  readonly flags: readonly string[];
}

export function scanImagineText(slackText: string): ImagineScan {
  const text = plainTextOf(slackText);
  const found = [...text.matchAll(/\S+/g)].map((m) => {
    const match = FLAG_TOKEN.exec(m[0]);
    return { word: m[0], index: m.index, flag: match ? { ...flagNamesOf(match), value: match[2] } : undefined };
  });
  return { text, tokens: found, flags: found.flatMap((w) => (w.flag ? [w.flag.flag] : [])) };
}

/**
 * Parses `PROMPT [--size WxH] [--quality Q] [--background B] [--format F] [--n N] …`,
 * flags in any order, each value one its flag takes. Throws SlackInputError
 * naming the flag and what it accepts. The spec's other rules (cross-field, the
 * prompt's length) are the runner's: its intake parses the request, once. Takes
 * the text, or the text as `scanImagineText` read it (not read again).
 */
export function parseImagineText(input: string | ImagineScan, options: { promptRequired?: boolean; example?: string; locale?: string | undefined } = {}): ImagineText {
  const { locale } = options;
  const scan = typeof input === 'string' ? scanImagineText(input) : input;
  const { text, tokens } = scan;
  if (HELP_WORDS.has(text.trim().toLowerCase()) || (text.trim() === '' && options.promptRequired !== false)) return { kind: 'help' };

  const jobOptions: Record<string, string | number> = {};
  let style: string | undefined;
  let privately: boolean | undefined;
  const removed: [number, number][] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (!token.flag) continue;
    const { name, flag, value } = token.flag;
    if (Object.hasOwn(VISIBILITY_FLAGS, flag) && value === undefined) {
      privately = VISIBILITY_FLAGS[flag];
      removed.push([token.index, token.index + token.word.length]);
      continue;
    }
    const spec = FLAGS[flag];
    if (!spec && flag !== STYLE_FLAG) {
      const near = closestWord(name, KNOWN_FLAGS);
      const flags = KNOWN_FLAGS.map((f) => `\`--${f}\``).join(', ');
      throw new SlackInputError('unknown_flag', words('slack.flag.unknown', { flag: `\`--${name}\``, near: near ? `\`--${near}\`` : '', meant: near ? 'yes' : 'no', flags }), {
        flag: `--${name}`,
      });
    }
    let raw = value;
    let end = token.index + token.word.length;
    if (raw === undefined) {
      const next = tokens[i + 1];
      if (!next || next.flag) {
        throw new SlackInputError('missing_flag_value', words('slack.flag.needs_value', { flag: `\`--${flag}\``, allowed: allowedFor(flag, locale) }), { flag: `--${flag}`, allowed: allowedFor(flag) });
      }
      raw = next.word;
      end = next.index + next.word.length;
      i++;
    }
    if (spec) jobOptions[spec.field] = flagValue(flag, spec, raw, locale);
    else style = raw.trim().toLowerCase();
    removed.push([token.index, end]);
  }

  const prompt = cut(text, removed);
  if (!prompt && options.promptRequired !== false) {
    throw new SlackInputError('missing_prompt', words('slack.imagine.missing_prompt', { example: `\`${options.example ?? say(locale, 'slack.imagine.example', { command: '/imagine' })}\`` }));
  }
  return { kind: 'request', prompt, options: jobOptions as JobOptions, ...(style === undefined ? {} : { style }), ...(privately !== undefined && { private: privately }) };
}

/** A flag token's name as typed (`output-format`) and as the table calls it (`format`). */
function flagNamesOf(match: RegExpExecArray): { name: string; flag: string } {
  const name = match[1]!.toLowerCase().replace(/_/g, '-');
  return { name, flag: name === 'output-format' ? 'format' : name === 'output-compression' ? 'compression' : name };
}

function flagValue(flag: string, spec: FlagSpec, raw: string, locale: string | undefined): string | number {
  const value = raw.trim().toLowerCase().replace(/×/g, 'x');
  if (isRangeField(spec.field)) {
    const n = rangeValueOf(spec.field, value);
    if (n !== undefined) return n;
  } else {
    const resolved = spec.aliases?.[value] ?? value;
    if (spec.values?.includes(resolved)) return resolved;
  }
  throw new SlackInputError('bad_flag_value', words('slack.flag.bad_value', { given: `\`--${flag} ${raw}\``, flag: `--${flag}`, allowed: allowedFor(flag, locale) }), {
    flag: `--${flag}`,
    allowed: allowedFor(flag),
  });
}

function cut(text: string, ranges: [number, number][]): string {
  let out = '';
  let at = 0;
  for (const [start, end] of ranges) {
    out += text.slice(at, start);
    at = end;
  }
  out += text.slice(at);
  return out
    .replace(/[ \t]{2,}/g, ' ')
    .replace(/[ \t]+\n/g, '\n')
    .trim();
}

/** The help of `/imagine`, built from the same flag table and the spec's defaults, in `locale`. */
export function usageText(commands: { imagine: string; edit: string }, locale?: string): string {
  const defaults: Record<string, unknown> = { ...DEFAULTS };
  const bold = { bold: (text: string) => `*${text}*` };
  const lines = Object.entries(FLAGS).map(([flag, spec]) => {
    const fallback = defaults[spec.field];
    return say(locale, 'slack.help.flag', {
      flag: `\`--${flag}\``,
      allowed: allowedFor(flag, locale),
      hasDefault: fallback === undefined ? 'no' : 'yes',
      fallback: String(fallback),
      help: say(locale, 'slack.flag.help', { flag: spec.help }),
    });
  });
  return [
    say(locale, 'slack.help.make', { example: `\`${say(locale, 'slack.imagine.example', { command: commands.imagine })} --quality high\`` }, bold),
    say(locale, 'slack.help.flags'),
    ...lines,
    say(locale, 'slack.help.style', { flag: '`--style NAME`', command: `\`${commands.imagine} styles\`` }, bold),
    say(locale, 'slack.help.private', { private: '`--private`', public: '`--public`' }, bold),
    say(locale, 'slack.help.edit', { command: `\`${commands.edit}\`` }, bold),
    say(locale, 'slack.help.progress', {}, bold),
    say(locale, 'slack.help.usage', { command: `\`${commands.imagine} usage\`` }, bold),
    say(locale, 'slack.help.settings', { command: `\`${commands.imagine} settings\`` }, bold),
    say(locale, 'slack.help.admins', { command: `\`${commands.imagine} admin budget user-daily 2.50\`` }, bold),
    say(locale, 'slack.help.audit', { command: `\`${commands.imagine} admin audit #channel\``, off: `\`${commands.imagine} admin audit off\`` }, bold),
  ].join('\n');
}
