import { z } from 'zod';
import { BACKGROUNDS, EVENT_TYPES, OUTPUT_FORMATS, QUALITIES, SIZES } from './constants.js';

/**
 * Shapes of what the service sends back. Known fields are typed; anything else
 * the service adds is kept (loose objects), so a newer service does not break us.
 */

export const UsageSchema = z.looseObject({
  total_tokens: z.number(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  input_tokens_details: z
    .looseObject({
      text_tokens: z.number().optional(),
      image_tokens: z.number().optional(),
    })
    .optional(),
});

/** An optional label of a paid answer: one that is missing or not what we know reads as missing (taken from the request). */
const label = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

/**
 * Spec §2.3 plus wire-format.md: the body of a non-streamed generation or
 * edit. Only the images are required: a paid image is never dropped for a
 * missing label (what is missing is taken from the request).
 */
export const ImageResultSchema = z.looseObject({
  created: label(z.number()),
  data: z.array(z.looseObject({ b64_json: z.string() })),
  usage: label(UsageSchema),
  background: label(z.enum(BACKGROUNDS)),
  output_format: label(z.enum(OUTPUT_FORMATS)),
  quality: label(z.enum(QUALITIES)),
  size: label(z.enum(SIZES)),
});

/** The labels an image is priced by. */
const PRICED_LABELS = ['size', 'quality'] as const;

/**
 * Which of the priced labels the service sent (neither missing nor null) that the spec does not list, e.g. a quality
 * `ultra`: the image is kept, its label reads as the one asked, and it is priced at the job's estimate — the service may
 * have made something dearer.
 */
const UnlistedSchema = z.array(z.enum(PRICED_LABELS)).optional();

/**
 * Names in `unlisted` the priced labels of a wire object that were sent yet do not read as one the spec lists
 * (what the service itself sends as `unlisted` is dropped): the schema's own reading, carried on to the charge.
 */
function markUnlisted(input: unknown): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
  const raw = input as Record<string, unknown>;
  const unlisted = PRICED_LABELS.filter((key) => raw[key] !== undefined && raw[key] !== null && ImageResultSchema.shape[key].parse(raw[key]) === undefined);
  if (unlisted.length === 0 && !('unlisted' in raw)) return input;
  const { unlisted: _sent, ...rest } = raw;
  return unlisted.length > 0 ? { ...rest, unlisted } : rest;
}

/**
 * A result as the service may send it, read by the client: `ImageResultSchema`
 * whose `data` entries need not hold an image. Such an entry (`b64_json`
 * missing, null, not a string, or no object at all) reads as an empty image
 * (`b64_json: ''`): it still counts, so the answer is told short of the images
 * asked for, and the other entries' images are kept.
 */
export const WireImageResultSchema = z.preprocess(
  markUnlisted,
  ImageResultSchema.extend({
    data: z.array(z.looseObject({ b64_json: z.string().catch('') }).catch({ b64_json: '' })),
    unlisted: UnlistedSchema,
  }),
);

/**
 * A streamed image event as the service may send it: only the image (and a
 * partial's index) is required; `type` may be left to the SSE event's name;
 * a size or quality is read as in `ImageResultSchema`.
 * The stream fills what is missing from the request (`ImageStreamEvent`). A
 * `partial_image_index` that is not a whole number from 0 (-1, 1.5, "0", null)
 * reads as missing, and the stream skips such a partial (told once), so an odd
 * one never fails a paid job; it hands on only the partials asked for
 * (client/partial-bound.ts).
 */
export const WireImageEventSchema = z.preprocess(markUnlisted, z.looseObject({
  type: label(z.string()),
  b64_json: z.string(),
  partial_image_index: label(z.int().min(0)),
  created_at: label(z.number()),
  /** Read as a result's are: one the spec does not list reads as missing (the one asked, as its record keeps it) and is named in `unlisted`. */
  size: ImageResultSchema.shape.size,
  quality: ImageResultSchema.shape.quality,
  background: label(z.string()),
  output_format: label(z.enum(OUTPUT_FORMATS)),
  usage: label(UsageSchema),
  unlisted: UnlistedSchema,
}));

/** The labels of an image event that may be missing on the wire (and are then taken from the request). */
export const IMAGE_EVENT_LABELS = ['type', 'created_at', 'size', 'quality', 'background', 'output_format', 'usage'] as const;

const eventImageFields = {
  b64_json: z.string(),
  created_at: z.number(),
  size: z.string(),
  quality: z.string(),
  background: z.string(),
  output_format: z.enum(OUTPUT_FORMATS),
};

export const PartialImageEventSchema = z.looseObject({
  type: z.enum([EVENT_TYPES.generationPartial, EVENT_TYPES.editPartial]),
  partial_image_index: z.int().min(0),
  ...eventImageFields,
});

export const CompletedEventSchema = z.looseObject({
  type: z.enum([EVENT_TYPES.generationCompleted, EVENT_TYPES.editCompleted]),
  ...eventImageFields,
  /** Missing when the service did not report it. */
  usage: UsageSchema.optional(),
  /** The labels the service sent that the spec does not list (size and quality here read as the ones asked): the image is priced at the job's estimate. */
  unlisted: UnlistedSchema,
});

export const ImageStreamEventSchema = z.discriminatedUnion('type', [PartialImageEventSchema, CompletedEventSchema]);

/** wire-format.md: `{"error": {"message", "type", "param", "code"}}`. */
export const ErrorBodySchema = z.looseObject({
  error: z.looseObject({
    message: z.string(),
    type: z.string().nullish(),
    param: z.string().nullish(),
    code: z.string().nullish(),
  }),
});

export type Usage = z.output<typeof UsageSchema>;
export type ImageResult = z.output<typeof ImageResultSchema>;
export type WireImageEvent = z.output<typeof WireImageEventSchema>;
export type PartialImageEvent = z.output<typeof PartialImageEventSchema>;
export type CompletedEvent = z.output<typeof CompletedEventSchema>;
export type ImageStreamEvent = z.output<typeof ImageStreamEventSchema>;
export type ErrorBody = z.output<typeof ErrorBodySchema>;

export function isPartialEvent(event: ImageStreamEvent): event is PartialImageEvent {
  return event.type === EVENT_TYPES.generationPartial || event.type === EVENT_TYPES.editPartial;
}

export function isCompletedEvent(event: ImageStreamEvent): event is CompletedEvent {
  return event.type === EVENT_TYPES.generationCompleted || event.type === EVENT_TYPES.editCompleted;
}
