import type { PriceQuote } from '../core/pricing.js';
import { priceOfResult } from '../core/pricing.js';
import { StreamBrokenError } from '../core/errors.js';
import type { CompletedEvent, Usage } from '../spec/result-schemas.js';

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
