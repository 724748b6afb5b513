import type { PriceQuote } from '../core/pricing.js';
import { priceOfResult } from '../core/pricing.js';
import { BadResponseError, StreamBrokenError } from '../core/errors.js';
import { ImageResultSchema, type CompletedEvent, type Usage } from '../spec/result-schemas.js';
import { checkImages, type Expected } from './check-result.js';

/** A finished generation or edit. */
export interface ImageJobResult {
  operation: 'generate' | 'edit';
  created: number;
  /** One entry per image, base64 as the service sent it (see `decodeImages`). */
  data: { b64_json: string }[];
  usage: Usage | undefined;
  /** As the service reported them (quality `auto` resolves to a tier), else as requested. */
  size: string;
  quality: string;
  background: string;
  output_format: string;
  requestId: string | undefined;
  cost: PriceQuote;
}

/** The images of a result as bytes. */
export function decodeImages(result: Pick<ImageJobResult, 'data'>): Buffer[] {
  return result.data.map((d) => Buffer.from(d.b64_json, 'base64'));
}

/** What was asked, to check and price an answer. */
export interface RequestedJob extends Expected {
  operation: 'generate' | 'edit';
  size: string;
  quality: string;
  background: string;
}

/**
 * Builds a finished result from the JSON body of a 200 answer, checking that
 * it holds exactly the images asked for (else BadResponseError, with whatever
 * images came attached as `partial`).
 */
export function resultFromBody(text: string, request: RequestedJob, requestId: string | undefined): ImageJobResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // The parser's message quotes the body; it is left out (it may carry anything the server sent).
    throw new BadResponseError('the service answered 200 with a body that is not JSON', { requestId });
  }
  return resultFromJson(json, request, requestId);
}

/** `resultFromBody` for a body already parsed. */
export function resultFromJson(json: unknown, request: RequestedJob, requestId: string | undefined): ImageJobResult {
  const parsed = ImageResultSchema.safeParse(json);
  if (!parsed.success) {
    throw new BadResponseError('the service answered 200 with an unexpected result shape', { requestId, cause: parsed.error });
  }
  const body = parsed.data;
  const size = body.size ?? request.size;
  const quality = body.quality ?? request.quality;
  const result: ImageJobResult = {
    operation: request.operation,
    created: body.created,
    data: body.data.map((d) => ({ b64_json: d.b64_json })),
    usage: body.usage,
    size,
    quality,
    background: body.background ?? request.background,
    output_format: body.output_format ?? request.output_format,
    requestId,
    cost: priceOfResult({ operation: request.operation, requested: request, reported: { size, quality }, images: body.data.length }),
  };
  checkImages(
    result.data.map((d) => d.b64_json),
    request,
    requestId,
    () => result,
  );
  return result;
}

/** Builds a finished result from a stream's completed events. */
export function resultFromCompleted(
  completed: CompletedEvent[],
  request: { operation: 'generate' | 'edit'; size?: string | undefined; quality?: string | undefined },
  requestId: string | undefined,
): ImageJobResult {
  const first = completed[0];
  if (!first) throw new StreamBrokenError('the stream ended before the final image arrived', { requestId });
  const usage = completed.reduce<Usage | undefined>((sum, e) => addUsage(sum, e.usage), undefined);
  return {
    operation: request.operation,
    created: first.created_at,
    data: completed.map((e) => ({ b64_json: e.b64_json })),
    usage,
    size: first.size,
    quality: first.quality,
    background: first.background,
    output_format: first.output_format,
    requestId,
    cost: priceOfResult({
      operation: request.operation,
      requested: request,
      reported: { size: first.size, quality: first.quality },
      images: completed.length,
    }),
  };
}

function addUsage(a: Usage | undefined, b: Usage): Usage {
  if (!a) return { ...b };
  return {
    total_tokens: a.total_tokens + b.total_tokens,
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
  };
}
