import { EVENT_TYPES, type ImageRequest } from '../spec/index.js';
import { jsonResponse, serverError } from './error-response.js';
import { connectionResetError, type StreamFault } from './faults.js';
import { padImage } from './pad-image.js';
import type { ImageRenderer, RenderedImage } from './render-image.js';
import { sleep } from '../core/sleep.js';
import { untilAborted } from './sleep.js';
import { encodeEvent, encodeRawEvent, SSE_HEADERS } from './sse.js';
import { imageTimeMs } from './timing.js';
import { outputTokens, resolveBackground, resolveQuality, textTokens, usageOf } from './usage.js';

/** A validated request, ready to be answered with images. */
export interface ImageJob {
  kind: 'generation' | 'edit';
  request: ImageRequest;
  /** Edit inputs (bytes of each `image[]` part), first one is the base. */
  inputs?: readonly Uint8Array[];
  /** Tokens the input images count for (0 for a generation). */
  inputImageTokens: number;
}

export interface RespondContext {
  renderer: ImageRenderer;
  latencyMs: number;
  latencyScales: boolean;
  defaultPartialImages: number;
  padImageBytes: number;
  fault: StreamFault | undefined;
  /** For `missing_fields`: the labels to leave out. */
  missingFields?: readonly string[] | undefined;
  /** Aborts when the caller goes away or the emulator closes; the reason is what the body errors with. */
  signal: AbortSignal;
  /** Aborts `signal`: the reader cancelled the body. */
  cancel(reason: unknown): void;
  /** Answer when rendering fails (a bad input image for an edit, a bug for a generation). */
  renderFailed(err: unknown): Response;
  onPartialSent(): void;
  onImageSent(): void;
  /** A streamed body started (`open`) or finished in any way (`closed`). */
  onStream(state: 'open' | 'closed'): void;
}

interface StreamEvent {
  name: string;
  data: Record<string, unknown>;
  completed: boolean;
}

const now = () => Math.floor(Date.now() / 1000);

/** Answers a valid request: JSON with `n` images, or an SSE stream of partials and completed events. */
export async function respondWithImages(job: ImageJob, ctx: RespondContext): Promise<Response> {
  const req = job.request;
  const partialCount = req.stream ? (req.partial_images ?? ctx.defaultPartialImages) : 0;
  const render = (variant: number) =>
    ctx.renderer.render(
      {
        prompt: req.prompt,
        variant,
        size: req.size,
        transparent: req.background === 'transparent',
        format: req.output_format,
        compression: req.output_compression,
        inputs: job.inputs,
      },
      partialCount,
      ctx.signal,
    );
  return req.stream ? respondStreamed(job, ctx, render, partialCount) : respondJson(job, ctx, render);
}

async function respondJson(job: ImageJob, ctx: RespondContext, render: (variant: number) => Promise<RenderedImage>): Promise<Response> {
  const req = job.request;
  const rendering = Promise.all(Array.from({ length: req.n }, (_, i) => render(i)));
  rendering.catch(() => undefined);
  await sleep(imageTimeMs(ctx.latencyMs, ctx.latencyScales, req.size, req.quality) * req.n, ctx.signal);
  let images: RenderedImage[];
  try {
    images = await rendering;
  } catch (err) {
    return ctx.renderFailed(err);
  }

  if (ctx.fault === 'stream_error_event') return serverError();
  const body = {
    created: now(),
    data: images.map((image) => ({ b64_json: b64(image.final, job, ctx) })),
    usage: usageOf(inputOf(job), req.n * outputTokens(req.size, req.quality, 0)),
    background: resolveBackground(req.background),
    output_format: req.output_format,
    quality: resolveQuality(req.quality),
    size: req.size,
  };
  if (ctx.fault === 'short_result') body.data = body.data.slice(0, req.n - 1);
  if (ctx.fault === 'missing_fields') {
    const leave = new Set(ctx.missingFields ?? []);
    for (const key of ['size', 'quality', 'output_format', 'background', 'usage'] as const) if (leave.has(key)) delete (body as Partial<typeof body>)[key];
    if (leave.has('created_at')) delete (body as Partial<typeof body>).created;
  }
  // A non-streamed answer has no partials: `corrupt_partials` leaves it whole.
  if (!ctx.fault || ctx.fault === 'short_result' || ctx.fault === 'missing_fields' || ctx.fault === 'corrupt_partials') {
    for (let i = 0; i < body.data.length; i++) ctx.onImageSent();
    return jsonResponse(200, body);
  }
  if (ctx.fault === 'cut_off_body') {
    // Right after the first image's entry: a whole image, then nothing.
    const text = JSON.stringify(body);
    const second = text.indexOf('"b64_json"', text.indexOf('"b64_json"') + 1);
    const cut = text.slice(0, second > 0 ? second : Math.floor(text.length / 2));
    return new Response(cut, { status: 200, headers: { 'content-type': 'application/json' } });
  }
  // A fault breaks the JSON answer: half of it, then a reset, an early end, or nothing more.
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const half = bytes.subarray(0, Math.floor(bytes.length / 2));
  const fault = ctx.fault;
  async function* broken(): AsyncGenerator<Uint8Array> {
    yield half;
    if (fault === 'reset_mid_stream') throw connectionResetError('mid_stream');
    if (fault === 'stalled_stream') await untilAborted(ctx.signal);
  }
  return new Response(toStream(broken(), ctx), { status: 200, headers: { 'content-type': 'application/json' } });
}

async function respondStreamed(
  job: ImageJob,
  ctx: RespondContext,
  render: (variant: number) => Promise<RenderedImage>,
  partialCount: number,
): Promise<Response> {
  const req = job.request;
  let first: RenderedImage;
  try {
    first = await render(0);
  } catch (err) {
    return ctx.renderFailed(err);
  }
  const names =
    job.kind === 'generation'
      ? { partial: EVENT_TYPES.generationPartial, completed: EVENT_TYPES.generationCompleted }
      : { partial: EVENT_TYPES.editPartial, completed: EVENT_TYPES.editCompleted };
  const shared = {
    size: req.size,
    quality: resolveQuality(req.quality),
    background: resolveBackground(req.background),
    output_format: req.output_format,
  };
  const usage = usageOf(inputOf(job), outputTokens(req.size, req.quality, partialCount));
  const step = imageTimeMs(ctx.latencyMs, ctx.latencyScales, req.size, req.quality) / (partialCount + 1);

  async function* events(): AsyncGenerator<StreamEvent> {
    for (let variant = 0; variant < req.n; variant++) {
      const image = variant === 0 ? first : await render(variant);
      for (let index = 0; index < partialCount; index++) {
        await sleep(step, ctx.signal);
        const data = { b64_json: b64(image.partials[index]!, job, ctx), partial_image_index: index, created_at: now(), ...shared };
        yield { name: names.partial, data, completed: false };
      }
      await sleep(step, ctx.signal);
      yield { name: names.completed, data: { b64_json: b64(image.final, job, ctx), created_at: now(), ...shared, usage }, completed: true };
    }
  }

  const total = req.n * (partialCount + 1);
  const body = toStream(withFault(events(), ctx, total, req.n), ctx);
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS } });
}

/** What `corrupt_partials` sends as a partial's image: a PNG signature, then bytes that are no PNG chunk. */
const CORRUPT_IMAGE_B64 = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2048, 0x5a)]).toString('base64');

/** Encodes events as SSE, breaking the stream the way the injected fault says. */
async function* withFault(source: AsyncGenerator<StreamEvent>, ctx: RespondContext, total: number, images: number): AsyncGenerator<Uint8Array> {
  let sent = 0;
  let completedLeft = images;
  for await (const event of source) {
    if (ctx.fault === 'corrupt_partials') {
      yield encodeEvent(event.name, event.completed ? event.data : { ...event.data, b64_json: CORRUPT_IMAGE_B64 });
      if (event.completed) ctx.onImageSent();
      else ctx.onPartialSent();
      continue;
    }
    if (ctx.fault === 'missing_fields' || ctx.fault === 'short_result') {
      if (event.completed && --completedLeft === 0 && ctx.fault === 'short_result') {
        // The last completed event never comes: the stream just ends.
        return;
      }
      const bytes = ctx.fault === 'missing_fields' && event.completed ? withoutLabels(event, ctx.missingFields ?? []) : encodeEvent(event.name, event.data);
      yield bytes;
      if (event.completed) ctx.onImageSent();
      else ctx.onPartialSent();
      continue;
    }
    const bytes = encodeEvent(event.name, event.data);
    if (sent++ > 0 || !ctx.fault) {
      yield bytes;
      if (event.completed) ctx.onImageSent();
      else ctx.onPartialSent();
      continue;
    }
    switch (ctx.fault) {
      case 'cut_off_body':
        yield bytes.subarray(0, Math.floor(bytes.length / 2));
        return;
      case 'malformed_event': {
        const json = JSON.stringify({ type: event.name, ...event.data });
        yield encodeRawEvent(event.name, json.slice(0, Math.max(1, Math.floor(json.length / 2))));
        continue;
      }
      case 'reset_mid_stream':
        yield total > 1 ? bytes : bytes.subarray(0, Math.floor(bytes.length / 2));
        throw connectionResetError('mid_stream');
      case 'stalled_stream':
        if (!event.completed) {
          yield bytes;
          ctx.onPartialSent();
        }
        await untilAborted(ctx.signal);
        return;
      case 'stream_error_event':
        if (total > 1) {
          yield bytes;
          if (event.completed) ctx.onImageSent();
          else ctx.onPartialSent();
        }
        yield encodeEvent(EVENT_TYPES.error, {
          error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: 'server_error' },
        });
        return;
    }
  }
}

/** A completed event without the labels named (`type` goes from the data and from the SSE event name). */
function withoutLabels(event: StreamEvent, labels: readonly string[]): Uint8Array {
  const leave = new Set(labels);
  const data: Record<string, unknown> = { type: event.name, ...event.data };
  for (const key of leave) delete data[key];
  const text = `${leave.has('type') ? '' : `event: ${event.name}\n`}data: ${JSON.stringify(data)}\n\n`;
  return new TextEncoder().encode(text);
}

/**
 * A body that produces chunks only as they are read (no buffering ahead), ends
 * its producer when the reader cancels, and errors with the producer's error.
 */
function toStream(source: AsyncGenerator<Uint8Array>, ctx: RespondContext): ReadableStream<Uint8Array> {
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    ctx.onStream('closed');
  };
  ctx.onStream('open');
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // A caller that went away with the body unread (a fetch aborted after its headers): the stream ends here, its
        // request's place among those answered at once given back, as a reader's cancel would.
        const onAbort = () => {
          finish();
          try {
            controller.error(ctx.signal.reason);
          } catch {
            // already closed or cancelled
          }
          void source.return(undefined).catch(() => undefined);
        };
        if (ctx.signal.aborted) onAbort();
        else ctx.signal.addEventListener('abort', onAbort, { once: true });
      },
      async pull(controller) {
        try {
          const next = await source.next();
          if (next.done) {
            finish();
            controller.close();
          } else {
            controller.enqueue(next.value);
          }
        } catch (err) {
          finish();
          try {
            controller.error(err);
          } catch {
            // already cancelled
          }
        }
      },
      cancel(reason) {
        finish();
        ctx.cancel(reason);
        void source.return(undefined).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

function b64(image: Buffer, job: ImageJob, ctx: RespondContext): string {
  return padImage(image, job.request.output_format, ctx.padImageBytes).toString('base64');
}

function inputOf(job: ImageJob): { textTokens: number; imageTokens: number } {
  return { textTokens: textTokens(job.request.prompt), imageTokens: job.inputImageTokens };
}
