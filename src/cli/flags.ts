import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestWord } from '../core/closest-word.js';
import { ValidationError } from '../core/errors.js';

export { closestWord };

/** CLI flag ↔ request field: the CLI speaks flags, the spec speaks fields; errors name both. */
export const FLAG_OF_FIELD: Record<string, string> = {
  prompt: '--prompt',
  n: '--n',
  size: '--size',
  quality: '--quality',
  background: '--background',
  output_format: '--format',
  output_compression: '--compression',
  moderation: '--moderation',
  user: '--user',
  partial_images: '--partial-images',
  image: '--image',
};

export const IMAGE_FLAGS = {
  prompt: { type: 'string' },
  n: { type: 'string' },
  size: { type: 'string' },
  quality: { type: 'string' },
  background: { type: 'string' },
  format: { type: 'string' },
  compression: { type: 'string' },
  moderation: { type: 'string' },
  user: { type: 'string' },
  stream: { type: 'boolean' },
  'partial-images': { type: 'string' },
  out: { type: 'string' },
  overwrite: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** `pictor edit`: the image flags and the input images. */
export const EDIT_FLAGS = { ...IMAGE_FLAGS, image: { type: 'string', multiple: true } } as const satisfies ParseArgsConfig['options'];

export const PRICE_FLAGS = {
  size: { type: 'string' },
  quality: { type: 'string' },
  n: { type: 'string' },
  edit: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export const USAGE_FLAGS = {
  since: { type: 'string' },
  until: { type: 'string' },
  by: { type: 'string' },
  json: { type: 'boolean' },
  csv: { type: 'boolean' },
  emulator: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export const EMULATOR_FLAGS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'api-key': { type: 'string', multiple: true },
  'latency-ms': { type: 'string' },
  'images-per-minute': { type: 'string' },
  fault: { type: 'string', multiple: true },
  'out-of-credit': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export const CONSOLE_FLAGS = {
  port: { type: 'string' },
  host: { type: 'string' },
  emulator: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/**
 * Every command, what it does and its flags: the one list the parser, `pictor --help`, "did you mean" and the shell
 * completion scripts (`pictor completion bash|zsh|fish`) are made from.
 */
export const COMMANDS = {
  generate: { summary: 'make images from a prompt', flags: IMAGE_FLAGS },
  edit: { summary: 'edit images with a prompt', flags: EDIT_FLAGS },
  price: { summary: 'what a request costs', flags: PRICE_FLAGS },
  usage: { summary: 'what the account spent, by day, user, scope or surface', flags: USAGE_FLAGS },
  console: { summary: 'a web page of what the account spends, its caps, jobs and alerts', flags: CONSOLE_FLAGS },
  emulator: { summary: 'run a local stand-in for the image service', flags: EMULATOR_FLAGS },
  completion: { summary: 'print a shell completion script: pictor completion bash|zsh|fish', flags: { help: { type: 'boolean', short: 'h' } } },
} as const satisfies Record<string, { summary: string; flags: NonNullable<ParseArgsConfig['options']> }>;

export type CommandName = keyof typeof COMMANDS;

/** Other names people give our flags (other tools' words for them). */
const FLAG_SYNONYMS: Record<string, string> = { output: 'out', count: 'n', number: 'n' };

/** "Did you mean --quality?" for an unknown flag, or '' when nothing is close. */
export function suggestFlag(flag: string, options: Readonly<Record<string, unknown>>): string {
  const name = flag.replace(/^-+/, '').split('=')[0]!;
  const names = Object.keys(options);
  const match = closestWord(name, names) ?? (FLAG_SYNONYMS[name.toLowerCase()] && names.includes(FLAG_SYNONYMS[name.toLowerCase()]!) ? FLAG_SYNONYMS[name.toLowerCase()] : undefined);
  return match ? ` Did you mean --${match}?` : '';
}

/** The values `parseFlags` gives for a set of flag definitions. */
export type FlagValues<O> = {
  [K in keyof O]?: O[K] extends { multiple: true } ? string[] : O[K] extends { type: 'boolean' } ? boolean : string;
};

/**
 * Parses a command's flags strictly: an unknown flag points to `--help`, and a
 * flag given twice is refused (the last one silently winning once billed
 * `high` after `low`); only flags declared `multiple` may repeat.
 */
export function parseFlags<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O, command?: string): FlagValues<O> {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: false, strict: true, tokens: true });
  } catch (error) {
    const message = (error as Error).message.replace(/\. To specify a positional argument.*$/s, '').replace(/\.$/, '');
    const flag = /'(--?[\w-]+)/.exec(message)?.[1] ?? 'arguments';
    const suggestion = /^Unknown option/.test(message) ? suggestFlag(flag, options) : '';
    throw new ValidationError(flag, `${message}.${suggestion} Run "pictor ${command ? `${command} ` : ''}--help" for the options`);
  }
  const seen = new Map<string, string[]>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || options[token.name]?.multiple) continue;
    seen.set(token.name, [...(seen.get(token.name) ?? []), token.value ?? 'on']);
  }
  for (const [name, values] of seen) {
    if (values.length > 1) {
      throw new ValidationError(`--${name}`, `--${name} was given ${values.length} times (${values.join(', then ')}): give it once`);
    }
  }
  return parsed.values as FlagValues<O>;
}

/** A number flag as the schema wants it; text that is not a number is passed on so the schema names the field. */
export function numberFlag(value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  return /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
}

/** The request fields set by image flags (only those given, so the spec's defaults apply to the rest). */
export function requestFieldsFromFlags(values: Partial<Record<keyof typeof IMAGE_FLAGS, string | boolean | undefined>>): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    prompt: values.prompt,
    n: numberFlag(values.n as string | undefined),
    size: values.size,
    quality: values.quality,
    background: values.background,
    output_format: values.format,
    output_compression: numberFlag(values.compression as string | undefined),
    moderation: values.moderation,
    user: values.user,
    partial_images: numberFlag(values['partial-images'] as string | undefined),
  };
  for (const key of Object.keys(fields)) if (fields[key] === undefined) delete fields[key];
  if (fields.prompt === undefined) throw new ValidationError('prompt', '--prompt is required: describe the image you want');
  return fields;
}

/** Rewrites a ValidationError so it names the CLI flag beside the field. */
export function withFlagName(error: ValidationError): ValidationError {
  const field = error.param.replace(/\[\d+\].*$/, '');
  const flag = FLAG_OF_FIELD[field];
  if (!flag || error.message.startsWith('--')) return error;
  return new ValidationError(error.param, `${flag}: ${error.message}`, {
    ...(error.allowed ? { allowed: error.allowed } : {}),
    issues: [...error.issues],
  });
}
