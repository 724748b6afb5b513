import { priceOfImages, type PriceQuote } from '../core/pricing.js';
import { BadResponseError, StreamBrokenError } from '../core/errors.js';
import { EVENT_TYPES } from '../spec/constants.js';
import {
  IMAGE_EVENT_LABELS,
  isCompletedEvent,
  WireImageEventSchema,
  WireImageResultSchema,
  type CompletedEvent,
  type ImageStreamEvent,
  type Usage,
} from '../spec/result-schemas.js';
import { checkImage, checkImages, type Expected, type LabelledImage } from './check-result.js';
import { carryImageBytes, imageBytes, keepImageBytes } from './image-bytes.js';

/** A finished generation or edit. */
export interface ImageJobResult {
  operation: 'generate' | 'edit';
  created: number;
  /**
   * One entry per image, base64 as the service sent it; its bytes, decoded once, through `imageBytes(entry)` or
   * `decodeImages(result)`. `output_format`: the image's real format (told by its bytes, `imageFormatOf`), set on every
   * image the client checked: an answer may mix formats, so each image is named and typed by its own.
   */
  data: ResultImage[];
  usage: Usage | undefined;
  /** As the service reported them (quality `auto` resolves to a tier), else as requested. */
  size: string;
  quality: string;
  background: string;
  /** The first image's real format (each image's own is on its `data` entry), else as the service reported it, else as requested. */
  output_format: string;
  requestId: string | undefined;
  cost: PriceQuote;
  /** Labels the service left out of its answer (taken from the request instead); only when some were. */
  missing?: string[] | undefined;
  /** The size or quality the service sent that the spec does not list (`size` and `quality` are the ones asked; `cost` is the job's estimate); only when some were. */
  unlisted?: ('size' | 'quality')[] | undefined;
}

/** One image of a result: its base64 and, once checked, its real format. */
export type ResultImage = LabelledImage;

/** The images of a result as bytes: the ones the client decoded when it checked them (see `imageBytes`), never decoded again. */
export function decodeImages(result: Pick<ImageJobResult, 'data'>): Buffer[] {
  return result.data.map(imageBytes);
}

/** What was asked, to check and price an answer. */
export interface RequestedJob extends Expected {
  operation: 'generate' | 'edit';
  size: string;
  quality: string;
  background: string;
}

/**
 * Builds a finished result from the parsed JSON body of a 200 answer, checking
 * that it holds exactly the images asked for (else BadResponseError, with
 * whatever images came attached as `partial`). `readJsonResult` reads the body and calls it.
 */
export function resultFromJson(json: unknown, request: RequestedJob, requestId: string | undefined): ImageJobResult {
  const parsed = WireImageResultSchema.safeParse(json);
  if (!parsed.success) {
    throw new BadResponseError('the service answered 200 with an unexpected result shape', { requestId, cause: parsed.error });
  }
  const body = parsed.data;
  const size = body.size ?? request.size;
  const quality = body.quality ?? request.quality;
  const missing = (['created', 'size', 'quality', 'background', 'output_format', 'usage'] as const).filter((key) => body[key] === undefined);
  const answer: UnpricedResult = {
    operation: request.operation,
    created: body.created ?? nowSeconds(),
    // An entry without an image is checked as an empty one: it fails the answer, never the other images.
    data: body.data.map((d) => ({ b64_json: d.b64_json })),
    usage: body.usage,
    size,
    quality,
    background: body.background ?? request.background,
    output_format: body.output_format ?? request.output_format,
    requestId,
    ...(missing.length > 0 && { missing }),
    ...(body.unlisted && { unlisted: body.unlisted }),
  };
  // Each good image comes back labelled with the format its check found; the result takes the first one's.
  const { good, problem } = checkImages(answer.data, request);
  if (good[0]?.output_format !== undefined) answer.output_format = good[0].output_format;
  // A bad answer keeps its good images (they may be paid for), to be handed over with the error, priced for them alone.
  if (problem) {
    const kept = good.slice(0, request.n);
    throw new BadResponseError(`${problem} (${kept.length} of the ${request.n} image${request.n === 1 ? '' : 's'} asked for came whole)`, {
      requestId,
      partial: withImages(answer, kept, request),
    });
  }
  return priced(answer, request);
}

/**
 * The whole images of a 200 body that is not JSON (cut off, or damaged after
 * them): every complete `"b64_json": "…"` string that decodes to an image, read
 * as leniently as a whole answer's (`checkImage`: wrapped in lines or spaces,
 * JSON escapes such as `\n` or `\/`, unpadded, URL-safe; of any format, each
 * labelled with its own), as a result, for the error to carry.
 */
export function salvageResult(text: string, request: RequestedJob, requestId: string | undefined): ImageJobResult | undefined {
  const images: ResultImage[] = [];
  for (const b64 of b64Strings(text)) {
    if (images.length >= request.n) break;
    const checked = checkImage(b64, request.output_format);
    if (checked.bytes) {
      const image: ResultImage = { b64_json: b64, output_format: checked.format };
      keepImageBytes(image, checked.bytes);
      images.push(image);
    }
  }
  if (images.length === 0) return undefined;
  const answer: UnpricedResult = {
    operation: request.operation,
    created: nowSeconds(),
    data: [],
    usage: undefined,
    size: request.size,
    quality: request.quality,
    background: request.background,
    output_format: request.output_format,
    requestId,
  };
  return withImages(answer, images, request);
}

/**
 * The values of the complete `"b64_json": "…"` strings of a text that may not be JSON, in order, unescaped as JSON
 * would (a string whose escapes are not JSON's is skipped). Each string's end is found with `indexOf` and a count of the
 * backslashes before its quote, so a 32 MiB image is read in linear time, never by a regular expression's backtracking.
 */
function* b64Strings(text: string): Generator<string> {
  const key = /"b64_json"\s*:\s*"/g;
  while (key.exec(text) !== null) {
    const start = key.lastIndex;
    let end = start;
    for (;;) {
      end = text.indexOf('"', end);
      // Cut off before its closing quote: not a whole image.
      if (end < 0) return;
      let run = 0;
      while (end - run > start && text.charCodeAt(end - run - 1) === BACKSLASH) run++;
      if (run % 2 === 0) break;
      end++;
    }
    key.lastIndex = end + 1;
    const raw = text.slice(start, end);
    if (!raw.includes('\\')) {
      yield raw;
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(`"${raw}"`);
    } catch {
      continue;
    }
    yield value as string;
  }
}

const BACKSLASH = 0x5c;

/** A result before it is priced: what the answer said, and the images it is priced for. */
type UnpricedResult = Omit<ImageJobResult, 'cost'>;

/** The result priced once, for its images, as the labels it carries say they were made. */
function priced(result: UnpricedResult, request: RequestedJob): ImageJobResult {
  return { ...result, cost: priceOfImages(request, result, result.data.length).cost };
}

/** The result with only `data` of its images (the first one's format its own), priced for them. */
function withImages(result: UnpricedResult, data: ResultImage[], request: RequestedJob): ImageJobResult {
  return priced({ ...result, data, ...(data[0]?.output_format !== undefined && { output_format: data[0].output_format }) }, request);
}

/** The images of a result as completed events, one per image (its usage rides on the first one). */
export function completedEventsOf(result: ImageJobResult): CompletedEvent[] {
  return result.data.map((image, i) => withBytesOf(image, {
    type: result.operation === 'edit' ? EVENT_TYPES.editCompleted : EVENT_TYPES.generationCompleted,
    b64_json: image.b64_json,
    created_at: result.created,
    size: result.size,
    quality: result.quality,
    background: result.background,
    // Each image its own real format: an answer may mix them.
    output_format: image.output_format ?? (result.output_format as CompletedEvent['output_format']),
    usage: i === 0 ? result.usage : undefined,
    ...(result.unlisted && { unlisted: result.unlisted }),
  }));
}

/** `to`, carrying the same image as `from`, with the bytes kept for `from`. */
function withBytesOf<T extends object>(from: object, to: T): T {
  carryImageBytes(from, to);
  return to;
}

/**
 * The good images that came with a failure (a 200 whose body was not the
 * whole result, or broke off: the error's `partial`, on a `bad_response`,
 * `stream_broken`, `timeout` or `aborted`): they may have been paid for, so
 * they are handed over too. Read by the property, so an error of another copy
 * of this module counts as well.
 */
export function imagesOfFailure(error: unknown): CompletedEvent[] {
  const partial = resultOfFailure(error);
  return partial ? completedEventsOf(partial) : [];
}

/** The result a failure carries (its `partial`, priced for its images, which may be none), read as `imagesOfFailure` reads it. */
export function resultOfFailure(error: unknown): ImageJobResult | undefined {
  const partial = error instanceof Error ? (error as { partial?: unknown }).partial : undefined;
  return isJobResult(partial) ? partial : undefined;
}

function isJobResult(value: unknown): value is ImageJobResult {
  return typeof value === 'object' && value !== null && Array.isArray((value as ImageJobResult).data) && typeof (value as ImageJobResult).operation === 'string';
}

/**
 * A streamed image event read leniently: only the image is required, the rest
 * is taken from the request when missing, and `missing` names what was.
 * `unknown`: an event type we do not know (skipped); `unindexed`: a partial
 * whose `partial_image_index` is missing or not a whole number from 0 (a
 * preview that cannot be placed: skipped, never failing the paid job);
 * `malformed`: not an image event at all.
 */
export function imageEventFromWire(
  parsed: unknown,
  eventName: string | undefined,
  request: RequestedJob,
): { event: ImageStreamEvent; missing: string[] } | 'unknown' | 'unindexed' | 'malformed' {
  const read = WireImageEventSchema.safeParse(parsed);
  const declared = read.success ? (read.data.type ?? eventName) : eventName;
  if (declared !== undefined && !declared.endsWith('.partial_image') && !declared.endsWith('.completed')) return 'unknown';
  if (!read.success) return 'malformed';
  const wire = read.data;
  // Untyped, an event that sends an index at all (readable or not) is a partial: an odd one never passes for a final image.
  const sentIndex = (parsed as Record<string, unknown>).partial_image_index;
  const partial = declared === undefined ? sentIndex !== undefined && sentIndex !== null : declared.endsWith('.partial_image');
  if (partial && wire.partial_image_index === undefined) return 'unindexed';
  const missing = IMAGE_EVENT_LABELS.filter((key) => wire[key] === undefined && (key !== 'usage' || !partial));
  const edit = request.operation === 'edit';
  const type = partial ? (edit ? EVENT_TYPES.editPartial : EVENT_TYPES.generationPartial) : edit ? EVENT_TYPES.editCompleted : EVENT_TYPES.generationCompleted;
  const fields = {
    ...wire,
    type,
    b64_json: wire.b64_json,
    created_at: wire.created_at ?? nowSeconds(),
    size: wire.size ?? request.size,
    quality: wire.quality ?? request.quality,
    background: wire.background ?? request.background,
    output_format: wire.output_format ?? (request.output_format as CompletedEvent['output_format']),
  };
  const event = (partial ? { ...fields, partial_image_index: wire.partial_image_index! } : { ...fields, usage: wire.usage }) as ImageStreamEvent;
  if (!partial && !isCompletedEvent(event)) return 'malformed';
  return { event, missing };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

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
    data: completed.map((e) => withBytesOf(e, { b64_json: e.b64_json, output_format: e.output_format })),
    usage,
    size: first.size,
    quality: first.quality,
    background: first.background,
    output_format: first.output_format,
    requestId,
    cost: priceOfImages(request, first, completed.length).cost,
    ...(first.unlisted && { unlisted: first.unlisted }),
  };
}

function addUsage(a: Usage | undefined, b: Usage | undefined): Usage | undefined {
  if (!b) return a;
  if (!a) return { ...b };
  return {
    total_tokens: a.total_tokens + b.total_tokens,
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
  };
}
