import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { BadResponseError, isPictorError, makeAPIError, sanitizeServiceText, StreamBrokenError, withoutPartial, withPartial, type PictorError } from '../core/errors.js';
import { checkImage } from './check-result.js';
import { keepImageBytes } from './image-bytes.js';
import type { OutputFormat } from '../spec/constants.js';
import { isCompletedEvent, isPartialEvent, type CompletedEvent, type ImageStreamEvent, type PartialImageEvent } from '../spec/result-schemas.js';
import { discardBody, type RawResponse } from './transport.js';
import type { LoggerLike } from './PictorClient.js';
import { completedEventsOf, imageEventFromWire, imagesOfFailure, resultFromCompleted, resultOfFailure, type ImageJobResult, type RequestedJob } from './job-result.js';
import { readJsonResult, tellOtherFormat } from './read-json-body.js';
import { blankAnswerError, EVENT_BYTE_BOUND, eventTooLargeError } from './answer-bound.js';
import { createUtf8Decoder } from './utf8-decoder.js';
import { bodyChunks, type BrokenOff } from './body-chunks.js';
import { EventBytes } from './event-bytes.js';
import { imageOfPartial, PartialBound } from './partial-bound.js';
import { endWatch, tellImage, type RequestEnding, type RequestWatch } from './request-hook.js';

/** What the client hands a stream once the service has answered 200. */
export interface OpenedStream {
  response: RawResponse;
  /** Frees the limiter slot; called exactly once when the stream ends, breaks or is abandoned. */
  release: () => void;
}

export interface StreamContext {
  /** Sends the request (with the watch, when there is one) and resolves once the service answered 200. */
  open: (watch: RequestWatch | undefined) => Promise<OpenedStream>;
  /** The client's request hook, asked once when the stream is first read, before it is opened (it may refuse it). */
  watch?: (() => Promise<RequestWatch | undefined>) | undefined;
  controller: AbortController;
  /** Maps an error thrown while reading the body to our tree. */
  classifyBodyError: (error: unknown) => PictorError;
  /** What was asked, to check and price the result. */
  meta: RequestedJob;
  /** The partial images asked for per image (`partial_images`); undefined: not sent. More are not handed on (see `PartialBound`). */
  partialImages?: number | undefined;
  /** Called once when the stream is done with, however it ended. */
  onEnd?: (() => void) | undefined;
  /** Told (once per stream) which labels the service left out of its image events, and when partials past the bound were skipped. */
  logger?: LoggerLike | undefined;
}

/**
 * An SSE response as an async iterable of typed events. It can be read once;
 * leaving the loop early aborts the request. Parsing is linear in the stream's
 * size. What it holds is the one event it is building (each is handed on once
 * it ends), so that is what is bounded: a whole image is one event, and no
 * event is cut short below `EVENT_BYTE_BOUND` (one image of the largest size and
 * a margin); a stream that sends more without ending an event is aborted there
 * (BadResponseError). How long a stream may go on is the request's timeout's.
 *
 * Partial images are handed on up to the `partial_images` asked for, per image
 * (see `PartialBound`); the ones past that are skipped (told once, at warn),
 * and the job goes on: a stream of nothing but such partials is read until the
 * request's timeout, each event within the bound above.
 *
 * The stream is over once `n` completed events have arrived: the connection is
 * closed then, whether or not the service ends the body, and more completed
 * events are not handed on (see `#tellExtra`). A service that
 * answers a streamed request with a plain JSON result is accepted too, told by
 * its content type or its first character (`answerOf`): its images come as
 * completed events.
 *
 * A body that breaks off (a reset, cut short, an idle or total timeout, a
 * cancel) fails with that failure's own code, after the images that came whole
 * before it are handed on: a JSON result's (`readJsonResult` salvages them), or
 * the event the body broke off in when its data came whole though its blank
 * line did not. When that was the last image asked for, the job is whole. No
 * error of a stream carries an image it handed on (`partial`): a reader gets
 * each once. `finalResult()`, which hands none on, gets them all on its error
 * (see `#failure`).
 */
export class ImageEventStream implements AsyncIterable<ImageStreamEvent> {
  readonly #ctx: StreamContext;
  #used = false;
  #requestId: string | undefined;
  #jsonResult: ImageJobResult | undefined;
  #toldMissing = false;
  #toldSkipped = false;
  #toldFormat = false;

  constructor(ctx: StreamContext) {
    this.#ctx = ctx;
  }

  /** The service's request id, once the stream has been opened. */
  get requestId(): string | undefined {
    return this.#requestId;
  }

  /** Cancels the request, queued or streaming. The loop reading the stream ends with AbortedError. */
  abort(reason?: unknown): void {
    this.#ctx.controller.abort(reason);
  }

  /**
   * Reads the stream to its end (skipping partials) and gives the finished result. It hands no event on, so when the
   * stream fails after some images came whole, they ride on its error (`stream_broken`, `timeout`, `aborted`,
   * `bad_response`) as `partial`, a result priced for them, as a plain request's do (`imagesOfFailure`).
   */
  async finalResult(): Promise<ImageJobResult> {
    const kept: CompletedEvent[] = [];
    // The read keeps each completed image in `kept`, and puts them on its error when it fails: nothing is left to do here.
    for await (const _event of this.#events(kept));
    return this.#jsonResult ?? resultFromCompleted(kept, this.#ctx.meta, this.#requestId);
  }

  [Symbol.asyncIterator](): AsyncIterator<ImageStreamEvent> {
    return this.#events(undefined);
  }

  /** The stream's events, for a reader who is handed each (`kept` undefined) or for `finalResult()` (see `#read`). */
  async *#events(kept: CompletedEvent[] | undefined): AsyncGenerator<ImageStreamEvent> {
    if (this.#used) throw new TypeError('an ImageEventStream can be read only once');
    this.#used = true;
    let watch: RequestWatch | undefined;
    try {
      watch = await this.#ctx.watch?.();
    } catch (error) {
      this.#ctx.onEnd?.();
      throw error;
    }
    if (!watch) return yield* this.#read(undefined, kept);
    // The watch is told of each finished image as it is handed on, and of how the stream ended.
    let ending: RequestEnding = { kind: 'cancelled' };
    try {
      for await (const event of this.#read(watch, kept)) {
        if (isCompletedEvent(event)) tellImage(watch, event, this.#requestId, this.#ctx.logger ?? SILENT);
        yield event;
      }
      ending = { kind: 'completed' };
    } catch (error) {
      ending = { kind: 'failed', error };
      throw error;
    } finally {
      // Left early by the reader (the request was aborted then): a cancel.
      endWatch(watch, { ...ending, requestId: this.#requestId ?? (ending.kind === 'failed' ? (ending.error as { requestId?: string }).requestId : undefined) }, this.#ctx.logger ?? SILENT);
    }
  }

  /**
   * Opens the stream and reads it. `kept`: the reader is `finalResult()`, which takes no image from an event; each
   * completed one is kept there, and a failure carries them (`#failure`).
   */
  async *#read(watch: RequestWatch | undefined, kept: CompletedEvent[] | undefined): AsyncGenerator<ImageStreamEvent> {
    let opened: OpenedStream;
    try {
      opened = await this.#ctx.open(watch);
    } catch (error) {
      this.#ctx.onEnd?.();
      throw error;
    }
    const { controller, meta } = this.#ctx;
    const { response } = opened;
    this.#requestId = response.requestId;
    const pending: EventSourceMessage[] = [];
    /** Bytes of each event as it arrives, counted before the parser is fed them: what it may be holding is the bytes since the last event ended. */
    const eventBytes = new EventBytes();
    const parser = createParser({ onEvent: (message) => pending.push(message) });
    const decoder = createUtf8Decoder();
    let completedCount = 0;
    let finished = false;
    const partials = new PartialBound(this.#ctx.partialImages, meta.n);
    /** A partial is handed on within the bound (told by the completed events so far which image it likely belongs to). */
    const passes = (event: ImageStreamEvent): boolean => !isPartialEvent(event) || this.#passPartial(event, partials, completedCount, response.requestId);
    /** Checks an event before it is handed on; true once all n images are in. */
    const accept = (event: ImageStreamEvent): boolean => {
      if (!isCompletedEvent(event)) return false;
      completedCount++;
      const checked = checkImage(event.b64_json, meta.output_format);
      if (!checked.bytes) throw new BadResponseError(`completed image ${completedCount} ${checked.problem}`, { requestId: response.requestId });
      // The bytes of the check are the image's (`imageBytes(event)`): decoded once.
      keepImageBytes(event, checked.bytes);
      this.#labelFormat(event, checked.format, response.requestId);
      kept?.push(event);
      return completedCount === meta.n;
    };
    try {
      const answer = await answerOf(response);
      if (answer.json) {
        let result: ImageJobResult;
        try {
          result = await readJsonResult(response, meta, { classify: this.#ctx.classifyBodyError, logger: this.#ctx.logger, body: answer.body, skipped: answer.skipped });
        } catch (error) {
          // Not the whole result: its good images are handed on first (they may be paid for; the watch is told of
          // them), then the error, which carries them only to `finalResult()` (see `#failure`).
          for (const event of imagesOfFailure(error)) yield event;
          throw this.#ctx.classifyBodyError(error);
        }
        this.#tellMissing(result.missing, response.requestId);
        this.#jsonResult = result;
        finished = true;
        // Each image comes labelled with its own real format (`imageFormatOf`, when the answer was checked).
        yield* completedEventsOf(result);
        return;
      }
      let done = false;
      /** How the body's read ended when it broke off (its error); undefined: it ended cleanly, or was let go. */
      let broke: BrokenOff | undefined;
      try {
        const reader = bodyChunks(answer.body);
        for (;;) {
          const step = await reader.next();
          if (step.done) {
            broke = step.value;
            break;
          }
          const chunk = step.value;
          // Past the last image, the rest of a body that has ended is read through, unparsed (see below).
          if (done) continue;
          // An event that never ends would grow in the parser: one that takes more than one image's bound (ended in this
          // chunk or not) is not read on, nor fed to the parser. The images handed on before it are the reader's already
          // (no stream error carries images).
          if (eventBytes.push(chunk) > EVENT_BYTE_BOUND) throw eventTooLargeError(response.requestId);
          parser.feed(decoder.push(chunk));
          while (pending.length && !done) {
            const event = this.#toEvent(pending.shift()!, response);
            if (event === 'done') {
              done = true;
              break;
            }
            if (event === null || !passes(event)) continue;
            const allIn = accept(event);
            // The last image is handed on before anything after it is looked at: nothing after it can cost it.
            if (allIn) finished = done = true;
            yield event;
            if (allIn) this.#tellExtra(pending.splice(0), response);
          }
          // A body whose end is already here is read to it, which ends it cleanly; one the service keeps open is
          // let go now (tearing it down costs an error object or two, and closes the connection).
          if (done && !response.ended()) break;
        }
        if (!done) {
          // The event the body ended in is ended here. When the body broke off, it is taken only if its data came whole
          // (JSON that parses): a completed image whose blank line never came may be paid for; one cut short is no event.
          parser.feed(decoder.end());
          parser.feed('\n\n');
          for (const message of pending.splice(0)) {
            const event = this.#toEvent(message, response, broke !== undefined);
            if (event === 'done') break;
            if (event === null || !passes(event)) continue;
            if (accept(event)) finished = true;
            yield event;
            if (finished) {
              this.#tellExtra(pending.splice(0), response);
              break;
            }
          }
        }
      } catch (error) {
        // Our own errors pass through as they are; a timeout is marked as striking after the request was sent.
        throw this.#ctx.classifyBodyError(error);
      }
      // Broken off before the last image: the failure as it came (the images before it were handed on). With all the
      // images in, the job is whole, however the body ended after them.
      if (broke && !finished) throw this.#ctx.classifyBodyError(broke.error);
      if (!finished) {
        throw new StreamBrokenError(
          completedCount === 0
            ? 'the stream ended before the final image arrived; the job may have been billed, so it was not sent again'
            : `the stream ended after ${completedCount} of ${meta.n} images; the job may have been billed, so it was not sent again`,
          { requestId: response.requestId },
        );
      }
    } catch (error) {
      throw this.#failure(error, kept);
    } finally {
      if (!finished && !controller.signal.aborted) controller.abort(new StreamBrokenError('the stream was closed before it ended'));
      // Closes the connection too when the service keeps it open after the last image.
      discardBody(response.body);
      opened.release();
      this.#ctx.onEnd?.();
    }
  }

  /**
   * The error a stream that broke off ends with, decided here once. A reader handed each whole image as an event gets
   * none on it (`withoutPartial`): each once. `finalResult()` (`kept`) hands none on, so its error carries every image
   * that came whole (`stream_broken`, `timeout`, `aborted`, `bad_response`), priced once for them: the result the
   * failure brought (a JSON answer's, `readJsonResult`), else the completed events kept, else none.
   */
  #failure(error: unknown, kept: CompletedEvent[] | undefined): unknown {
    if (!isPictorError(error)) return error;
    if (!kept) return withoutPartial(error);
    if ((resultOfFailure(error)?.data.length ?? 0) > 0) return error;
    return kept.length > 0 ? withPartial(error, resultFromCompleted(kept, this.#ctx.meta, this.#requestId), this.#requestId) : withoutPartial(error);
  }

  /**
   * The events that came with the last image, after it. The job is over at its `n`th image, whether more follow in
   * the same read or in a later one (never read): they are not handed on, and completed images among them are told
   * once, at warn (the service may bill them). One that cannot be read, or an error, is not needed.
   */
  #tellExtra(messages: EventSourceMessage[], response: RawResponse): void {
    let extra = 0;
    for (const message of messages) {
      try {
        const event = this.#toEvent(message, response);
        if (event === 'done') break;
        if (event !== null && isCompletedEvent(event)) extra++;
      } catch {
        // Not needed: it never costs the images already in.
      }
    }
    if (extra === 0) return;
    this.#ctx.logger?.warn(
      { requestId: response.requestId, n: this.#ctx.meta.n, extra },
      'the service sent more completed images than asked for: the ones past the number asked for are not handed on',
    );
  }

  /**
   * The event a message is, `done` at `[DONE]`, or null for one that is skipped. `cutOff`: the message is the one the
   * body broke off in, ended here: data that is not JSON was cut short, and it is no event (null).
   */
  #toEvent(message: EventSourceMessage, response: RawResponse, cutOff = false): ImageStreamEvent | 'done' | null {
    const data = message.data;
    if (data === '[DONE]') return 'done';
    const name = message.event;
    // Named events we do not know (`ping`, keep-alives) are skipped, whatever their data.
    if (name !== undefined && name !== 'error' && !isImageEventName(name)) return null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      if (cutOff) return null;
      throw new StreamBrokenError(`the service sent an event that is not JSON (${sanitizeServiceText(name ?? 'message', 60)}); the job may have been billed, so it was not sent again`, {
        requestId: response.requestId,
      });
    }
    const errorField = parsed && typeof parsed === 'object' ? (parsed as { error?: unknown }).error : undefined;
    if (name === 'error' || (errorField !== undefined && errorField !== null)) {
      throw makeAPIError({ status: undefined, body: parsed, headers: response.headers, requestId: response.requestId });
    }
    // Only the image is required: a label the service left out is taken from the request (and told once).
    const read = imageEventFromWire(parsed, name, this.#ctx.meta);
    // Event types we do not know are skipped, so a newer service does not break the stream.
    if (read === 'unknown') return null;
    // A partial whose index cannot be read is a preview we cannot place: skipped like one past the bound, never failing the paid job.
    if (read === 'unindexed') {
      this.#tellSkipped(response.requestId, { partialImageIndex: sanitizeServiceText(String(JSON.stringify((parsed as Record<string, unknown>).partial_image_index) ?? 'none'), 40) });
      return null;
    }
    if (read === 'malformed') {
      const type = (parsed as { type?: unknown } | null)?.type;
      throw new StreamBrokenError(
        `the service sent a malformed ${sanitizeServiceText(String(type ?? name ?? 'event'), 60)} event; the job may have been billed, so it was not sent again`,
        { requestId: response.requestId },
      );
    }
    this.#tellMissing(read.missing, response.requestId);
    return read.event;
  }

  /** Whether a partial is handed on; the first one skipped is told (its labels, never its image). */
  #passPartial(event: PartialImageEvent, partials: PartialBound, completedSoFar: number, requestId: string | undefined): boolean {
    if (partials.admits(event)) return true;
    this.#tellSkipped(requestId, { image: imageOfPartial(event, completedSoFar) + 1, partialImageIndex: event.partial_image_index, partialImages: partials.perImage });
    return false;
  }

  /** Told once per stream: the first partial skipped, past the ones asked for or with an index that cannot be read. */
  #tellSkipped(requestId: string | undefined, labels: { image?: number; partialImageIndex: unknown; partialImages?: number }): void {
    if (this.#toldSkipped) return;
    this.#toldSkipped = true;
    this.#ctx.logger?.warn(
      { requestId, ...labels, n: this.#ctx.meta.n },
      'the service sent a partial image past the ones asked for, or without a readable index: it and any more such are skipped',
    );
  }

  /** An image is labelled with its real format (told by its bytes); one that is not the format asked for is told once, at warn. */
  #labelFormat(event: CompletedEvent, format: OutputFormat, requestId: string | undefined): void {
    event.output_format = format;
    if (format === this.#ctx.meta.output_format || this.#toldFormat) return;
    this.#toldFormat = true;
    tellOtherFormat(this.#ctx.logger, { requestId, asked: this.#ctx.meta.output_format, sent: format });
  }

  #tellMissing(missing: string[] | undefined, requestId: string | undefined): void {
    if (!missing?.length || this.#toldMissing) return;
    this.#toldMissing = true;
    this.#ctx.logger?.warn({ requestId, missing }, 'the service left labels out of an image event: taken from the request');
  }
}

const SILENT: LoggerLike = { debug() {}, info() {}, warn() {}, error() {} };

function isImageEventName(name: string): boolean {
  return name.endsWith('.partial_image') || name.endsWith('.completed');
}

/**
 * What a 200 to a streamed request is, and its body to read from. Its content type tells when it says JSON
 * (`application/json`, `application/…+json`: a JSON result) or an event stream (`text/event-stream`: events). Any other
 * (none, `text/plain`, `text/json`, …) is a JSON result when its first character, after whitespace (and a byte-order
 * mark), is `{` — a plain request takes that same answer as its result, whatever its content type, and a paid image is
 * not lost to a label — else events.
 *
 * The whitespace before that character is counted, not kept (`skipped`): it is no part of a JSON result, nor of an event
 * (blank lines end no event; a first line it starts is read from its first character). So what is held while the answer
 * is told is the chunk its first character came in, and no more: an answer that sends more than `EVENT_BYTE_BOUND` of
 * whitespace (the most a stream may send without ending an event) is no answer, and is not read on
 * (`blankAnswerError`), rather than waiting for the request's timeout. `body` starts at the first character; a read
 * that broke off or ended before it comes as that body's end.
 */
async function answerOf(response: RawResponse): Promise<{ json: boolean; body: AsyncIterable<Uint8Array>; skipped: number }> {
  const type = response.headers['content-type'] ?? '';
  const body = response.body as AsyncIterable<Uint8Array>;
  if (/^application\/(.+\+)?json\b/i.test(type)) return { json: true, body, skipped: 0 };
  if (/^text\/event-stream\b/i.test(type)) return { json: false, body, skipped: 0 };
  const iterator = body[Symbol.asyncIterator]();
  let skipped = 0;
  for (;;) {
    let step: IteratorResult<Uint8Array>;
    try {
      step = await iterator.next();
    } catch (error) {
      return { json: false, body: replayed(undefined, iterator, { error }), skipped };
    }
    if (step.done) return { json: false, body: replayed(undefined, iterator, 'ended'), skipped };
    const chunk = step.value;
    const first = firstCharacterOf(chunk);
    skipped += first;
    if (skipped > EVENT_BYTE_BOUND) throw blankAnswerError(response.requestId);
    if (first < chunk.length) return { json: chunk[first] === OPEN_BRACE, body: replayed(chunk.subarray(first), iterator, undefined), skipped };
  }
}

/** Bytes a body may start with before its first character: whitespace, and a UTF-8 byte-order mark's. */
const LEADING = new Uint8Array(256);
for (const byte of [0x20, 0x09, 0x0a, 0x0d, 0xef, 0xbb, 0xbf]) LEADING[byte] = 1;
const OPEN_BRACE = 0x7b;

/** Where the first byte of `chunk` that is not `LEADING` is; its length when there is none. */
function firstCharacterOf(chunk: Uint8Array): number {
  let at = 0;
  while (at < chunk.length && LEADING[chunk[at]!] === 1) at++;
  return at;
}

/** `first` (the chunk from the body's first character), then the rest of the body that `iterator` reads; or the end the read came to before it. */
async function* replayed(first: Uint8Array | undefined, iterator: AsyncIterator<Uint8Array>, end: BrokenOff | 'ended' | undefined): AsyncGenerator<Uint8Array> {
  if (end === 'ended') return;
  if (end) throw end.error;
  if (first) yield first;
  yield* { [Symbol.asyncIterator]: () => iterator };
}
