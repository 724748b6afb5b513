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

/** Spec §2.3 plus wire-format.md: the body of a non-streamed generation or edit. */
export const ImageResultSchema = z.looseObject({
  created: z.number(),
  data: z.array(z.looseObject({ b64_json: z.string() })),
  usage: UsageSchema.optional(),
  background: z.enum(BACKGROUNDS).optional(),
  output_format: z.enum(OUTPUT_FORMATS).optional(),
  quality: z.enum(QUALITIES).optional(),
  size: z.enum(SIZES).optional(),
});

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
  usage: UsageSchema,
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
