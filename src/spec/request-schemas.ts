import { z } from 'zod';
import {
  BACKGROUNDS,
  COMPRESSIBLE_FORMATS,
  DEFAULTS,
  EDIT_ASSUMPTIONS,
  LIMITS,
  MODELS,
  MODERATIONS,
  OUTPUT_FORMATS,
  QUALITIES,
  SIZES,
  TRANSPARENT_FORMATS,
} from './constants.js';
import { imageDamage, sniffImageType } from './image-type.js';
import { INTEGER_RANGES, ruled } from './validation-rules.js';

/** What each field accepts, in words: used in every validation message. */
export const ALLOWED: Record<string, string> = {
  model: MODELS.join(', '),
  prompt: `text of 1 to ${LIMITS.promptMaxChars} characters`,
  n: `an integer from ${LIMITS.nMin} to ${LIMITS.nMax}`,
  size: SIZES.join(', '),
  quality: QUALITIES.join(', '),
  background: BACKGROUNDS.join(', '),
  output_format: OUTPUT_FORMATS.join(', '),
  output_compression: `an integer from ${LIMITS.compressionMin} to ${LIMITS.compressionMax}, only with output_format ${COMPRESSIBLE_FORMATS.join(' or ')}`,
  moderation: MODERATIONS.join(', '),
  stream: 'true, false',
  user: 'a non-empty end-user identifier',
  partial_images: `an integer from ${LIMITS.partialImagesMin} to ${LIMITS.partialImagesMax}`,
  image: `1 to ${LIMITS.editImagesMax} PNG, JPEG or WebP images, each under ${LIMITS.editImageMaxBytes / 1024 / 1024} MB`,
};

function oneOf<const T extends readonly [string, ...string[]]>(field: string, values: T) {
  return z.enum(values, { error: () => `${field} must be one of ${values.join(', ')}` });
}

function intBetween(field: keyof typeof INTEGER_RANGES) {
  const [min, max] = INTEGER_RANGES[field];
  const message = `${field} must be an integer from ${min} to ${max}`;
  return z.int({ error: () => message }).min(min, { error: () => message }).max(max, { error: () => message });
}

const codePointLength = (s: string): number => {
  let count = 0;
  for (const _ of s) count++;
  return count;
};

const prompt = z
  .string({ error: () => 'prompt must be text' })
  .refine((s) => s.trim().length > 0, { error: () => 'prompt must not be empty', params: ruled({ kind: 'empty', fields: ['prompt'] }) })
  .refine((s) => s.length <= LIMITS.promptMaxChars || codePointLength(s) <= LIMITS.promptMaxChars, {
    error: () => `prompt must be at most ${LIMITS.promptMaxChars} characters`,
    params: ruled({ kind: 'too_long', max: LIMITS.promptMaxChars, fields: ['prompt'] }),
  });

/** Fields shared by generations and edits, with the spec's defaults. */
const commonFields = {
  model: oneOf('model', MODELS).default(MODELS[0]),
  prompt,
  n: intBetween('n').default(DEFAULTS.n),
  size: oneOf('size', SIZES).default(DEFAULTS.size),
  quality: oneOf('quality', QUALITIES).default(DEFAULTS.quality),
  background: oneOf('background', BACKGROUNDS).default(DEFAULTS.background),
  output_format: oneOf('output_format', OUTPUT_FORMATS).default(DEFAULTS.output_format),
  output_compression: intBetween('output_compression').optional(),
  moderation: oneOf('moderation', MODERATIONS).default(DEFAULTS.moderation),
  stream: z.boolean({ error: () => 'stream must be true or false' }).default(DEFAULTS.stream),
  user: z
    .string({ error: () => 'user must be text' })
    .min(1, { error: () => 'user must not be empty' })
    .optional(),
  partial_images: intBetween('partial_images').optional(),
};

type CrossFieldInput = {
  background: string;
  output_format: string;
  output_compression?: number | undefined;
};

/** The spec's cross-field rules, explained rather than just refused. */
function checkCrossFieldRules(value: CrossFieldInput, ctx: z.core.$RefinementCtx<CrossFieldInput>): void {
  if (value.background === 'transparent' && !(TRANSPARENT_FORMATS as readonly string[]).includes(value.output_format)) {
    ctx.addIssue({
      code: 'custom',
      path: ['output_format'],
      message: `output_format must be ${TRANSPARENT_FORMATS.join(' or ')} when background is transparent (${value.output_format} has no transparency)`,
      params: ruled({ kind: 'transparent_format', formats: TRANSPARENT_FORMATS, given: value.output_format, fields: ['background', 'output_format'] }),
    });
  }
  if (value.output_compression !== undefined && !(COMPRESSIBLE_FORMATS as readonly string[]).includes(value.output_format)) {
    ctx.addIssue({
      code: 'custom',
      path: ['output_compression'],
      message: `output_compression applies only to output_format ${COMPRESSIBLE_FORMATS.join(' or ')}, not ${value.output_format}`,
      params: ruled({ kind: 'compression_format', formats: COMPRESSIBLE_FORMATS, given: value.output_format, fields: ['output_format', 'output_compression'] }),
    });
  }
}

const unknownKey = (kind: string) => ({
  error: (issue: { code?: string; keys?: string[] }) =>
    issue.code === 'unrecognized_keys'
      ? `${(issue.keys ?? []).join(', ')} ${issue.keys?.length === 1 ? 'is not a field' : 'are not fields'} of ${kind}`
      : undefined,
});

/** Spec §2.1: the body of `POST /v1/images/generations`. */
export const GenerationRequestSchema = z
  .strictObject(commonFields, unknownKey('a generation request'))
  .superRefine(checkCrossFieldRules);

/** One input image of an edit: its bytes, and optionally the file name it came with. */
export const EditImageSchema = z
  .object({
    data: z.custom<Uint8Array<ArrayBufferLike>>((v) => v instanceof Uint8Array, { error: () => 'image must be the bytes of a file' }),
    filename: z.string().optional(),
  })
  .superRefine((img, ctx) => {
    if (img.data.byteLength === 0) {
      ctx.addIssue({ code: 'custom', path: [], message: 'image is empty' });
    } else if (img.data.byteLength >= LIMITS.editImageMaxBytes) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `image is ${(img.data.byteLength / 1024 / 1024).toFixed(1)} MB; each must be under ${LIMITS.editImageMaxBytes / 1024 / 1024} MB`,
      });
    } else {
      const format = sniffImageType(img.data);
      const problem = format === null ? 'not a PNG, JPEG or WebP image' : imageDamage(img.data, format);
      if (problem !== undefined) {
        ctx.addIssue({ code: 'custom', path: [], message: `image${img.filename ? ` ${JSON.stringify(img.filename)}` : ''} is ${problem} (checked by its content)` });
      }
    }
  });

/** The images of an edit: 1 to 16, each checked by its content: its type and its structure (`imageDamage`). */
const editImages = z
  .array(EditImageSchema, { error: () => 'image must be a list of images' })
  .min(EDIT_ASSUMPTIONS.imagesMin, { error: () => 'an edit needs at least one image' })
  .max(LIMITS.editImagesMax, { error: () => `an edit takes at most ${LIMITS.editImagesMax} images` });

/** Spec §2.2: an edit. Sent as multipart, images as `image[]` file parts. */
export const EditRequestSchema = z.strictObject({ ...commonFields, image: editImages }, unknownKey('an edit request')).superRefine(checkCrossFieldRules);

/** The images of an edit alone (`image`): for a caller that parsed the other fields already, as a generation's. */
export const EditImagesSchema = z.strictObject({ image: editImages });

/** What a caller may pass: every field with a default may be left out. */
export type GenerationInput = z.input<typeof GenerationRequestSchema>;
/** A validated generation request with the spec's defaults filled in. */
export type GenerationRequest = z.output<typeof GenerationRequestSchema>;
export type EditInput = z.input<typeof EditRequestSchema>;
export type EditRequest = z.output<typeof EditRequestSchema>;
export type EditImage = z.output<typeof EditImageSchema>;
export type ImageRequest = GenerationRequest | EditRequest;

export function isEditRequest(request: ImageRequest): request is EditRequest {
  return 'image' in request;
}

/** The text fields of a request as they go on the wire (JSON body or multipart text parts). */
export function wireFields(request: ImageRequest): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(request)) {
    if (key === 'image' || value === undefined) continue;
    out[key] = value as string | number | boolean;
  }
  return out;
}

const INTEGER_FIELDS = new Set(['n', 'output_compression', 'partial_images']);
const BOOLEAN_FIELDS = new Set(['stream']);

/**
 * Turns multipart text parts (always strings on the wire) into the typed values
 * the schemas take. Values that do not convert are left as they are, so the
 * schema reports them with the field's name.
 */
export function fromFormFields(fields: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(fields)) {
    if (INTEGER_FIELDS.has(key) && /^-?\d+$/.test(raw.trim())) out[key] = Number(raw.trim());
    else if (BOOLEAN_FIELDS.has(key) && (raw === 'true' || raw === 'false')) out[key] = raw === 'true';
    else out[key] = raw;
  }
  return out;
}
