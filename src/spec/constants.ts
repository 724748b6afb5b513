/**
 * Every value the service spec fixes, and every assumption taken from
 * docs/wire-format.md where the spec says "not shown". Change an assumption
 * here and the schemas, client, emulator, bots and node follow.
 */

export const MODEL = 'gpt-image-2' as const;
export const MODELS = [MODEL] as const;

export const SIZES = ['1024x1024', '1024x1536', '1536x1024'] as const;
export const QUALITIES = ['low', 'medium', 'high', 'auto'] as const;
export const BACKGROUNDS = ['transparent', 'opaque', 'auto'] as const;
export const OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;
export const MODERATIONS = ['low', 'auto'] as const;

/** Formats that can carry an alpha channel: the only ones allowed with `background: transparent`. */
export const TRANSPARENT_FORMATS = ['png', 'webp'] as const;
/** Formats for which `output_compression` means something. */
export const COMPRESSIBLE_FORMATS = ['jpeg', 'webp'] as const;

export type Size = (typeof SIZES)[number];
export type Quality = (typeof QUALITIES)[number];
export type Background = (typeof BACKGROUNDS)[number];
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
export type Moderation = (typeof MODERATIONS)[number];

export const DEFAULTS = {
  n: 1,
  size: '1024x1024',
  quality: 'auto',
  background: 'auto',
  output_format: 'png',
  moderation: 'auto',
  stream: false,
} as const satisfies {
  n: number;
  size: Size;
  quality: Quality;
  background: Background;
  output_format: OutputFormat;
  moderation: Moderation;
  stream: boolean;
};

export const LIMITS = {
  /** Spec §8: prompt length, counted in characters (Unicode code points). */
  promptMaxChars: 32000,
  nMin: 1,
  nMax: 10,
  compressionMin: 0,
  compressionMax: 100,
  /** Spec §8: input images of one edit. */
  editImagesMax: 16,
  /** Assumption (wire-format.md): each edit input file is under 50 MB. */
  editImageMaxBytes: 50 * 1024 * 1024,
  /** Assumption (wire-format.md): `partial_images` takes 0 to 3; it is not in the spec's table. */
  partialImagesMin: 0,
  partialImagesMax: 3,
} as const;

/**
 * Assumptions for edits, where the spec says "not shown": the same defaults and
 * sizes as generations, and the same prompt limit. An edit needs at least one image.
 */
export const EDIT_ASSUMPTIONS = {
  sameDefaultsAsGeneration: true,
  imagesMin: 1,
} as const;

/** Multipart field names (spec §2.2, wire-format.md): files go as `image[]`; a lone file may come as `image`. */
export const EDIT_FILE_FIELD = 'image[]' as const;
export const EDIT_FILE_FIELD_ALIASES = ['image[]', 'image', 'images', 'images[]'] as const;

export const PATHS = {
  generations: '/v1/images/generations',
  edits: '/v1/images/edits',
} as const;

/** SSE event names (wire-format.md). */
export const EVENT_TYPES = {
  generationPartial: 'image_generation.partial_image',
  generationCompleted: 'image_generation.completed',
  editPartial: 'image_edit.partial_image',
  editCompleted: 'image_edit.completed',
  error: 'error',
} as const;

export const MIME_TYPES = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
} as const satisfies Record<OutputFormat, string>;

export const FILE_EXTENSIONS = {
  png: 'png',
  jpeg: 'jpg',
  webp: 'webp',
} as const satisfies Record<OutputFormat, string>;

/** Parses "WxH" into numbers. */
export function parseSize(size: Size): { width: number; height: number } {
  const [w, h] = size.split('x');
  return { width: Number(w), height: Number(h) };
}
