import {
  BACKGROUNDS,
  DEFAULTS,
  LIMITS,
  OUTPUT_FORMATS,
  parseSize,
  QUALITIES,
  SIZES,
  TRANSPARENT_FORMATS,
  type Background,
  type OutputFormat,
  type Quality,
  type Size,
} from 'pictor';
import type { LocalizationMap } from 'discord.js';
import { anyOf, type MessageKey, type MessageValues } from '../runner/index.js';
import { namedChoice } from './command-words.js';
import { DISCORD_LIMITS } from './discord-facts.js';

/**
 * The choices of the commands' options, derived from the core's spec
 * constants: a new size or quality in the spec shows up here by itself.
 */

export interface Choice<T extends string> {
  name: string;
  /** The same in the other languages (the value stays the spec's). */
  name_localizations: LocalizationMap;
  value: T;
}

/** A choice named by the catalog message `key`, with `(default)` when it is the spec's default. */
function choice<T extends string>(key: MessageKey, value: T, fallback: string, values: MessageValues): Choice<T> {
  const all = { ...values, isDefault: value === fallback ? 'yes' : 'no' };
  return namedChoice(key, all, value);
}

function shapeOf(size: Size): string {
  const { width, height } = parseSize(size);
  return width === height ? 'square' : width > height ? 'landscape' : 'portrait';
}

export const SIZE_CHOICES: Choice<Size>[] = SIZES.map((size) => choice('discord.choice.size', size, DEFAULTS.size, { size, shape: shapeOf(size) }));

export const QUALITY_CHOICES: Choice<Quality>[] = QUALITIES.map((quality) => choice('discord.choice.quality', quality, DEFAULTS.quality, { quality }));

export const BACKGROUND_CHOICES: Choice<Background>[] = BACKGROUNDS.map((background) =>
  choice('discord.choice.background', background, DEFAULTS.background, { background, formats: anyOf(TRANSPARENT_FORMATS) }),
);

export const FORMAT_CHOICES: Choice<OutputFormat>[] = OUTPUT_FORMATS.map((format) =>
  choice('discord.choice.format', format, DEFAULTS.output_format, { format, transparent: (TRANSPARENT_FORMATS as readonly string[]).includes(format) ? 'yes' : 'no' }),
);

export const COUNT_RANGE = { min: LIMITS.nMin, max: LIMITS.nMax } as const;

/** Longest prompt a slash-command option or a modal text field can carry (Discord's cap or the spec's, whichever is lower). */
export const PROMPT_OPTION_MAX = Math.min(DISCORD_LIMITS.stringOptionMaxLength, LIMITS.promptMaxChars);
export const PROMPT_INPUT_MAX = Math.min(DISCORD_LIMITS.textInputMaxLength, LIMITS.promptMaxChars);

/** The /edit attachment options: image1 (required) … imageN, N = the spec's limit of input images. */
export const EDIT_IMAGE_OPTION_NAMES: string[] = Array.from({ length: LIMITS.editImagesMax }, (_, i) => `image${i + 1}`);

/** Our option names where they differ from the spec's field names (the runner's refusals use them). */
export const OPTION_NAME_OF_FIELD: Readonly<Record<string, string>> = { output_format: 'format', n: 'count', image: 'image' };
