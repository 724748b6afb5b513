import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { isPictorError, makeAPIError, StreamBrokenError, type PictorError } from '../core/errors.js';
import {
  ImageStreamEventSchema,
  isCompletedEvent,
  type CompletedEvent,
  type ImageStreamEvent,
} from '../spec/result-schemas.js';
import type { RawResponse } from './transport.js';
import { resultFromCompleted, type ImageJobResult } from './job-result.js';
import { createUtf8Decoder } from './utf8-decoder.js';

/** What the client hands a stream once the service has answered 200. */
export interface OpenedStream {
  response: RawResponse;
  /** Frees the limiter slot; called exactly once when the stream ends, breaks or is abandoned. */
  release: () => void;
}

export interface StreamContext {
  open: () => Promise<OpenedStream>;
  controller: AbortController;
  /** Maps an error thrown while reading the body to our tree. */
  classifyBodyError: (error: unknown) => PictorError;
  /** What was asked, to price the result. */
  meta: { operation: 'generate' | 'edit'; size?: string | undefined; quality?: string | undefined };
}

/**
 * An SSE response as an async iterable of typed events. It can be read once;
 * leaving the loop early aborts the request. Parsing is linear in the stream's
 * size and puts no cap on one event (a whole image is one event).
 */
export class ImageEventStream implements AsyncIterable<ImageStreamEvent> {
  readonly #ctx: StreamContext;
  #used = false;
  #requestId: string | undefined;

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

  /** Reads the stream to its end (skipping partials) and gives the finished result. */
  async finalResult(): Promise<ImageJobResult> {
    const completed: CompletedEvent[] = [];
    for await (const event of this) {
      if (isCompletedEvent(event)) completed.push(event);
    }
    return resultFromCompleted(completed, this.#ctx.meta, this.#requestId);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<ImageStreamEvent> {
    if (this.#used) throw new TypeError('an ImageEventStream can be read only once');
    this.#used = true;
    const { controller } = this.#ctx;
    const opened = await this.#ctx.open();
    const { response } = opened;
    this.#requestId = response.requestId;
    const pending: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (message) => pending.push(message) });
    const decoder = createUtf8Decoder();
    const completed: CompletedEvent[] = [];
    let finished = false;
    let done = false;
    try {
      try {
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
          parser.feed(decoder.push(chunk));
          while (pending.length) {
            const event = this.#toEvent(pending.shift()!, response);
            if (event === 'done') {
              done = true;
              break;
            }
            if (event === null) continue;
            if (isCompletedEvent(event)) completed.push(event);
            yield event;
          }
          if (done) break;
        }
        if (!done) {
          parser.feed(decoder.end());
          parser.feed('\n\n');
          for (const message of pending.splice(0)) {
            const event = this.#toEvent(message, response);
            if (event === 'done') break;
            if (event === null) continue;
            if (isCompletedEvent(event)) completed.push(event);
            yield event;
          }
        }
      } catch (error) {
        if (isPictorError(error)) throw error;
        throw this.#ctx.classifyBodyError(error);
      }
      if (completed.length === 0) {
        throw new StreamBrokenError('the stream ended before the final image arrived', { requestId: response.requestId });
      }
      finished = true;
    } finally {
      if (!finished && !controller.signal.aborted) controller.abort(new StreamBrokenError('the stream was closed before it ended'));
      if (!finished) response.body.destroy();
      opened.release();
    }
  }

  #toEvent(message: EventSourceMessage, response: RawResponse): ImageStreamEvent | 'done' | null {
    const data = message.data;
    if (data === '[DONE]') return 'done';
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch (cause) {
      throw new StreamBrokenError(`the service sent an event that is not JSON (${message.event ?? 'message'})`, {
        cause,
        requestId: response.requestId,
      });
    }
    if (message.event === 'error' || (parsed && typeof parsed === 'object' && 'error' in parsed)) {
      throw makeAPIError({ status: undefined, body: parsed, headers: response.headers, requestId: response.requestId });
    }
    const result = ImageStreamEventSchema.safeParse(parsed);
    if (!result.success) {
      const type = (parsed as { type?: unknown } | null)?.type;
      // Event types we do not know are skipped, so a newer service does not break the stream.
      if (typeof type === 'string' && !type.endsWith('.partial_image') && !type.endsWith('.completed')) return null;
      throw new StreamBrokenError(`the service sent a malformed ${String(type ?? message.event ?? 'event')} event`, {
        cause: result.error,
        requestId: response.requestId,
      });
    }
    return result.data;
  }
}
