import type { Background, Quality, Size } from '../spec/index.js';

/**
 * What the emulator reports about an image, where the spec is silent. Every
 * such assumption of the emulator is here.
 */

export type ConcreteQuality = Exclude<Quality, 'auto'>;

/** `quality: auto` is reported as the tier the emulator "chose". */
export const AUTO_QUALITY: ConcreteQuality = 'medium';
/** `background: auto` is reported as opaque (the emulator never cuts out on its own). */
export const AUTO_BACKGROUND: Exclude<Background, 'auto'> = 'opaque';

export function resolveQuality(quality: Quality): ConcreteQuality {
  return quality === 'auto' ? AUTO_QUALITY : quality;
}

export function resolveBackground(background: Background): Exclude<Background, 'auto'> {
  return background === 'auto' ? AUTO_BACKGROUND : background;
}

/** Output tokens of one image by size and tier (the published gpt-image-1 figures). */
const OUTPUT_TOKENS: Record<Size, Record<ConcreteQuality, number>> = {
  '1024x1024': { low: 272, medium: 1056, high: 4160 },
  '1024x1536': { low: 408, medium: 1584, high: 6240 },
  '1536x1024': { low: 400, medium: 1568, high: 6208 },
};
/** Each partial image costs this many extra output tokens. */
const PARTIAL_IMAGE_TOKENS = 100;
/** Input image tokens: a base plus this much per 512-px tile of the image scaled to fit 2048 px. */
const IMAGE_BASE_TOKENS = 65;
const IMAGE_TILE_TOKENS = 129;

export function textTokens(prompt: string): number {
  let chars = 0;
  for (const _ of prompt) chars++;
  return Math.max(1, Math.ceil(chars / 4));
}

export function inputImageTokens(width: number, height: number): number {
  const scale = Math.min(1, 2048 / Math.max(width, height, 1));
  const tiles = Math.ceil((width * scale) / 512) * Math.ceil((height * scale) / 512);
  return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * Math.max(1, tiles);
}

export function outputTokens(size: Size, quality: Quality, partials: number): number {
  return OUTPUT_TOKENS[size][resolveQuality(quality)] + PARTIAL_IMAGE_TOKENS * partials;
}

/** The `usage` object of a result or a completed event. */
export interface UsageReport {
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
  input_tokens_details: { text_tokens: number; image_tokens: number };
}

/** Usage for a request's input (prompt and input images) and `output` output tokens. */
export function usageOf(input: { textTokens: number; imageTokens: number }, output: number): UsageReport {
  const inputTokens = input.textTokens + input.imageTokens;
  return {
    total_tokens: inputTokens + output,
    input_tokens: inputTokens,
    output_tokens: output,
    input_tokens_details: { text_tokens: input.textTokens, image_tokens: input.imageTokens },
  };
}
