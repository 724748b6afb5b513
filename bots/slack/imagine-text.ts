import {
  ALLOWED,
  BACKGROUNDS,
  DEFAULTS,
  LIMITS,
  MODERATIONS,
  OUTPUT_FORMATS,
  QUALITIES,
  SIZES,
} from '../../src/index.js';
import type { FieldNames, JobOptions } from '../runner/index.js';
import { closestWord } from '../../src/core/closest-word.js';
import { SlackInputError } from './SlackInputError.js';
import { plainTextOf } from './slack-text.js';

type OptionField = Exclude<keyof JobOptions, never> & string;

interface FlagSpec {
  /** The request field the flag sets. */
  field: OptionField;
  /** The values it takes, from the core's constants; or an integer range. */
  values?: readonly string[];
  range?: readonly [number, number];
  /** Other spellings people use: `jpg` for `jpeg`. */
  aliases?: Readonly<Record<string, string>>;
  /** What it means, for the help text. */
  help: string;
}

/** The flags of `/imagine` and of a mention. Values and bounds come from the core's spec constants. */
export const FLAGS: Readonly<Record<string, FlagSpec>> = {
  size: { field: 'size', values: SIZES, aliases: { square: '1024x1024', portrait: '1024x1536', landscape: '1536x1024' }, help: 'width x height' },
  quality: { field: 'quality', values: QUALITIES, help: 'detail, time and price' },
  background: { field: 'background', values: BACKGROUNDS, help: 'transparent needs png or webp' },
  format: { field: 'output_format', values: OUTPUT_FORMATS, aliases: { jpg: 'jpeg' }, help: 'file type' },
  n: { field: 'n', range: [LIMITS.nMin, LIMITS.nMax], help: 'how many images' },
  compression: { field: 'output_compression', range: [LIMITS.compressionMin, LIMITS.compressionMax], help: 'for jpeg and webp' },
  moderation: { field: 'moderation', values: MODERATIONS, help: 'how strict the content filter is' },
};

/** Each request field as the flag that sets it (`output_format` → `--format`): the runner's refusals name it so. */
export const FLAG_NAMES: FieldNames = Object.fromEntries(Object.entries(FLAGS).map(([flag, spec]) => [spec.field, `--${flag}`]));

/** What a flag accepts, in words (the core's `ALLOWED`, plus aliases). */
export function allowedFor(flag: string): string {
  const spec = FLAGS[flag];
  if (!spec) return '';
  const base = ALLOWED[spec.field] ?? (spec.values ? spec.values.join(', ') : '');
  const aliases = spec.aliases ? Object.entries(spec.aliases).map(([alias, value]) => `${alias} (= ${value})`) : [];
  return aliases.length ? `${base}; also ${aliases.join(', ')}` : base;
}

export type ImagineText = { kind: 'help' } | { kind: 'request'; prompt: string; options: JobOptions };

const HELP_WORDS = new Set(['help', '--help', '-h', '?']);
/** `--size`, and `—size` / `–size` (Slack clients turn `--` into a dash). */
const FLAG_TOKEN = /^(?:--|—|–)([a-z][a-z_-]*)(?:=(.*))?$/i;

/**
 * Parses `PROMPT [--size WxH] [--quality Q] [--background B] [--format F] [--n N] …`,
 * flags in any order, each value one its flag takes. Throws SlackInputError
 * naming the flag and what it accepts. The spec's other rules (cross-field, the
 * prompt's length) are the runner's: its intake parses the request, once.
 */
export function parseImagineText(slackText: string, options: { promptRequired?: boolean; example?: string } = {}): ImagineText {
  const text = plainTextOf(slackText);
  if (HELP_WORDS.has(text.trim().toLowerCase()) || (text.trim() === '' && options.promptRequired !== false)) return { kind: 'help' };

  const tokens = [...text.matchAll(/\S+/g)];
  const jobOptions: Record<string, string | number> = {};
  const removed: [number, number][] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const match = FLAG_TOKEN.exec(token[0]);
    if (!match) continue;
    const name = match[1]!.toLowerCase().replace(/_/g, '-');
    const flag = name === 'output-format' ? 'format' : name === 'output-compression' ? 'compression' : name;
    const spec = FLAGS[flag];
    if (!spec) {
      const near = closestWord(name, Object.keys(FLAGS));
      const meant = near ? ` Did you mean \`--${near}\`?` : '';
      throw new SlackInputError('unknown_flag', `\`--${name}\` is not a flag.${meant} The flags are ${Object.keys(FLAGS).map((f) => `\`--${f}\``).join(', ')}.`, {
        flag: `--${name}`,
      });
    }
    let raw = match[2];
    let end = token.index + token[0].length;
    if (raw === undefined) {
      const next = tokens[i + 1];
      if (!next || FLAG_TOKEN.test(next[0])) {
        throw new SlackInputError('missing_flag_value', `\`--${flag}\` needs a value: ${allowedFor(flag)}.`, { flag: `--${flag}`, allowed: allowedFor(flag) });
      }
      raw = next[0];
      end = next.index + next[0].length;
      i++;
    }
    jobOptions[spec.field] = flagValue(flag, spec, raw);
    removed.push([token.index, end]);
  }

  const prompt = cut(text, removed);
  if (!prompt && options.promptRequired !== false) {
    throw new SlackInputError('missing_prompt', `Say what to draw, for example \`${options.example ?? '/imagine a lighthouse at dusk, watercolor --size 1536x1024'}\`.`);
  }
  return { kind: 'request', prompt, options: jobOptions as JobOptions };
}

function flagValue(flag: string, spec: FlagSpec, raw: string): string | number {
  const value = raw.trim().toLowerCase().replace(/×/g, 'x');
  if (spec.range) {
    const [min, max] = spec.range;
    if (/^\d+$/.test(value) && Number(value) >= min && Number(value) <= max) return Number(value);
  } else {
    const resolved = spec.aliases?.[value] ?? value;
    if (spec.values?.includes(resolved)) return resolved;
  }
  throw new SlackInputError('bad_flag_value', `\`--${flag} ${raw}\` is not allowed: --${flag} takes ${allowedFor(flag)}.`, {
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

/** The help of `/imagine`, built from the same flag table and the spec's defaults. */
export function usageText(commands: { imagine: string; edit: string }): string {
  const defaults: Record<string, unknown> = { ...DEFAULTS };
  const lines = Object.entries(FLAGS).map(([flag, spec]) => {
    const fallback = defaults[spec.field];
    return `• \`--${flag}\` ${allowedFor(flag)}${fallback !== undefined ? ` (default ${String(fallback)})` : ''}: ${spec.help}`;
  });
  return [
    `*Make images:* \`${commands.imagine} a lighthouse at dusk, watercolor --size 1536x1024 --quality high\``,
    'Flags go anywhere in the text:',
    ...lines,
    `*Edit images:* pick *Edit image* in the ⋯ menu of a message with images, run \`${commands.edit}\` to upload up to 10, or mention me in a message (or a thread) with images: _@Pictor make the sky purple_.`,
    'Progress shows in the message I post; images land in its thread, with *Reroll* and *Edit* buttons.',
    `*What you spent:* \`${commands.imagine} usage\` (today, this month, what is left of your budgets).`,
    `*Bot admins:* \`${commands.imagine} admin budget user-daily 2.50\` (user-daily, user-monthly, workspace-daily, workspace-monthly; \`clear\` for the operator’s setting).`,
  ].join('\n');
}
