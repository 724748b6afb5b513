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
} from '../../src/index.js';
import { DISCORD_LIMITS } from './discord-facts.js';

/**
 * The choices of the commands' options, derived from the core's spec
 * constants: a new size or quality in the spec shows up here by itself.
 */

export interface Choice<T extends string> {
  name: string;
  value: T;
}

const marked = (value: string, fallback: string, label: string): string => (value === fallback ? `${label} (default)` : label);

function shapeOf(size: Size): string {
  const { width, height } = parseSize(size);
  return width === height ? 'square' : width > height ? 'landscape' : 'portrait';
}

export const SIZE_CHOICES: Choice<Size>[] = SIZES.map((size) => ({ name: marked(size, DEFAULTS.size, `${size} ${shapeOf(size)}`), value: size }));

export const QUALITY_CHOICES: Choice<Quality>[] = QUALITIES.map((q) => ({
  name: marked(q, DEFAULTS.quality, q === 'auto' ? 'auto (the service picks)' : q),
  value: q,
}));

export const BACKGROUND_CHOICES: Choice<Background>[] = BACKGROUNDS.map((b) => ({
  name: marked(b, DEFAULTS.background, b === 'transparent' ? `transparent (needs format ${TRANSPARENT_FORMATS.join(' or ')})` : b),
  value: b,
}));

export const FORMAT_CHOICES: Choice<OutputFormat>[] = OUTPUT_FORMATS.map((f) => ({
  name: marked(f, DEFAULTS.output_format, (TRANSPARENT_FORMATS as readonly string[]).includes(f) ? f : `${f} (no transparency)`),
  value: f,
}));

export const COUNT_RANGE = { min: LIMITS.nMin, max: LIMITS.nMax } as const;

/** Longest prompt a slash-command option or a modal text field can carry (Discord's cap or the spec's, whichever is lower). */
export const PROMPT_OPTION_MAX = Math.min(DISCORD_LIMITS.stringOptionMaxLength, LIMITS.promptMaxChars);
export const PROMPT_INPUT_MAX = Math.min(DISCORD_LIMITS.textInputMaxLength, LIMITS.promptMaxChars);

/** The /edit attachment options: image1 (required) … imageN, N = the spec's limit of input images. */
export const EDIT_IMAGE_OPTION_NAMES: string[] = Array.from({ length: LIMITS.editImagesMax }, (_, i) => `image${i + 1}`);

/** Our option names where they differ from the spec's field names (the runner's refusals use them). */
export const OPTION_NAME_OF_FIELD: Readonly<Record<string, string>> = { output_format: 'format', n: 'count', image: 'image' };
