import { BadResponseError, withPartial, type PictorError } from '../core/errors.js';
import { answerByteBound, answerTooLargeError } from './answer-bound.js';
import { bodyChunks } from './body-chunks.js';
import { resultFromJson, salvageResult, type ImageJobResult, type RequestedJob } from './job-result.js';
import type { RawResponse } from './transport.js';
import type { LoggerLike } from './PictorClient.js';
import type { OutputFormat } from '../spec/constants.js';

/** What `readJsonBody` needs besides the body: the response's request id and length, and how a failure of its read is told. */
export interface JsonBodyRead {
  requestId: string | undefined;
  /** The response's `content-length`, when it gave one. */
  contentLength?: number | undefined;
  /** Maps an error thrown by the body's read (a reset, a body cut short, an idle timeout, the abort's reason) to our tree. */
  classify: (error: unknown) => PictorError;
}

/**
 * The finished result of a 200 answer with a JSON body, to a plain request or a streamed one: its body read
 * (`readJsonBody`, with the response's length; `body` when part of it was read already, to tell what it is, starting
 * `skipped` bytes into the body: the whitespace before its first character) and judged
 * (`resultFromJson`). Either step's error carries the whole images that came: a BadResponseError's, or the read's own
 * failure as `classify` tells it (`stream_broken`, `timeout`, `aborted`).
 */
export async function readJsonResult(
  response: RawResponse,
  request: RequestedJob,
  options: { classify: (error: unknown) => PictorError; logger?: LoggerLike | undefined; body?: AsyncIterable<Uint8Array> | undefined; skipped?: number | undefined },
): Promise<ImageJobResult> {
  const length = contentLengthOf(response.headers);
  const json = await readJsonBody(options.body ?? response.body, request, {
    requestId: response.requestId,
    contentLength: length === undefined ? undefined : length - (options.skipped ?? 0),
    classify: options.classify,
  });
  const result = resultFromJson(json, request, response.requestId);
  // Each image is labelled with its real format (told by its bytes); one that is not the format asked for is told once, at warn.
  const other = result.data.find((image) => image.output_format !== undefined && image.output_format !== request.output_format)?.output_format;
  if (other !== undefined) tellOtherFormat(options.logger, { requestId: response.requestId, asked: request.output_format, sent: other });
  return result;
}

/** Tells that the service sent an image of another format than the one asked for: it is delivered as what it is. */
export function tellOtherFormat(logger: LoggerLike | undefined, labels: { requestId: string | undefined; asked: OutputFormat; sent: OutputFormat }): void {
  logger?.warn(labels, 'the service sent an image of another format than the one asked for: it is delivered as what it is, named and typed for its real format');
}

/**
 * Reads and parses a JSON result. It is done when the body ends, or as soon as
 * its top-level value closes (what follows it is not needed: a whole result
 * with other bytes after it is that result, so its paid images are kept): a server that
 * sends the result and then keeps the connection open does not hold it back,
 * whatever the result holds (`resultFromJson` judges its shape and images). A
 * body that is not JSON is a BadResponseError (with the whole images it holds
 * attached).
 *
 * The body is kept as bytes and turned into text once, when a parse is tried:
 * `Buffer#toString` makes a one-byte string of the base64 at native speed,
 * where a streaming `TextDecoder` went through ICU chunk by chunk and a
 * regular expression looked for the closing brace in every chunk.
 *
 * It is parsed once: when the body's top-level
 * object or array closes, as told by a `JsonDepth` that follows its brackets
 * outside strings and jumps over a string to its closing quote with
 * `Buffer#indexOf` (the base64 is never looked at byte by byte in JS). So the
 * work stays linear in the body (docs/wire-format.md): a brace inside a string
 * or at the end of every chunk no longer joins and parses all that came before.
 *
 * `contentLength` (the response's, when it gave one): once that many bytes
 * have arrived the body is whole and its end is already on its way, so it is
 * read to that end instead of being cut off at its last brace (cutting a body
 * off makes undici and Node build an abort error, stack and all, each time).
 *
 * A body longer than any JSON answer asking for `n` images can be
 * (`answerByteBound(n)`: a JSON answer has no previews, even to a streamed
 * request) is not read past the chunk that crosses it: a BadResponseError,
 * with the whole images that came before attached; leaving the loop lets go of
 * the connection. The chunks are let go of as they are joined (`takeText`), so
 * the body is held at most twice: its bytes and their text.
 *
 * A read that breaks off before the body is whole (a reset, a body cut short
 * of its content-length or of its last chunk, an idle timeout, the request's
 * timeout or cancel) is thrown as `classify` tells it, keeping its own code,
 * with the whole images that came before it attached (`withPartial`), found
 * as in a body that is not JSON (`salvageResult`): a paid image is not lost
 * to the way the answer ended.
 */
export async function readJsonBody(body: AsyncIterable<Uint8Array>, request: RequestedJob, read: JsonBodyRead): Promise<unknown> {
  const { n } = request;
  const { requestId, contentLength } = read;
  const bound = answerByteBound(n);
  const chunks: Buffer[] = [];
  let received = 0;
  const depth = new JsonDepth();
  const reader = bodyChunks(body);
  try {
    for (;;) {
      const step = await reader.next();
      if (step.done) {
        // Broken off before its top-level value closed (after it, the value is whole, and parsed below).
        if (step.value && depth.closedAt === undefined) throw withPartial(read.classify(step.value.error), salvageResult(takeText(chunks), request, requestId), requestId);
        break;
      }
      const chunk = step.value;
      chunks.push(chunk);
      received += chunk.length;
      if (received > bound) throw answerTooLargeError(n, requestId, salvageResult(takeText(chunks), request, requestId));
      // Only the chunk that closes the top-level value can finish it: try a parse only then,
      // and not when the body is whole by its length (it ends with the next step of the loop, and is parsed below).
      // Once it closed, the text is JSON now or never (its shape is `resultFromJson`'s to judge); what follows it is not read.
      if (depth.closesIn(chunk, received - chunk.length) && received !== contentLength) break;
    }
  } finally {
    // Left before the body's end (its value closed, or it went past its bound): lets go of the read.
    await reader.return(undefined);
  }
  return parseBody(takeBytes(chunks), depth.closedAt, request, requestId);
}

/**
 * The body's JSON: the whole body, or else its top-level value up to where it closed (`closedAt`, in bytes), whatever
 * follows it (a paid result with bytes after it is the result). A body that is not JSON is a BadResponseError with the
 * whole images it holds.
 */
function parseBody(bytes: Buffer, closedAt: number | undefined, request: RequestedJob, requestId: string | undefined): unknown {
  const text = textOf(bytes);
  try {
    return JSON.parse(text);
  } catch {
    if (closedAt !== undefined && closedAt < bytes.length) {
      try {
        return JSON.parse(textOf(bytes.subarray(0, closedAt)));
      } catch {
        // Not JSON up to there either.
      }
    }
    // The parser's message quotes the body; it is left out (it may carry anything the server sent). Whole images in it are kept.
    throw new BadResponseError('the service answered 200 with a body that is not JSON', { requestId, partial: salvageResult(text, request, requestId) });
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Follows the nesting of a JSON text chunk by chunk, to tell the chunk in
 * which its top-level object or array closes. Outside strings it looks at
 * each byte (a result's structure is small); inside one it jumps to the next
 * quote with `Buffer#indexOf` and counts the backslashes before it. Each byte
 * is looked at once or twice (a run of backslashes before a quote), so the
 * work is linear in the body. It does not check the JSON: the parse does.
 */
class JsonDepth {
  #depth = 0;
  #inString = false;
  /** Inside a string, the next byte is escaped (the last chunk ended in an odd run of backslashes). */
  #escaped = false;
  /** The top-level value has closed, or the text cannot be JSON: no chunk closes it any more. */
  #over = false;
  /** Where the top-level value closed: the body's bytes up to its last bracket. */
  closedAt: number | undefined;

  /** Whether the top-level value closes in `chunk`, which starts at byte `offset` of the body (true once, at most). */
  closesIn(chunk: Buffer, offset: number): boolean {
    let at = 0;
    while (at < chunk.length && !this.#over) {
      if (this.#inString) {
        if (this.#escaped) {
          this.#escaped = false;
          at++;
          continue;
        }
        const quote = chunk.indexOf(QUOTE, at);
        const end = quote < 0 ? chunk.length : quote;
        let run = 0;
        while (end - run > at && chunk[end - run - 1] === BACKSLASH) run++;
        if (quote < 0) this.#escaped = run % 2 === 1;
        else if (run % 2 === 0) this.#inString = false;
        at = end + 1;
        continue;
      }
      const byte = chunk[at++]!;
      if (byte === QUOTE) this.#inString = true;
      else if (byte === 0x7b || byte === 0x5b) this.#depth++;
      else if ((byte === 0x7d || byte === 0x5d) && --this.#depth <= 0) {
        // Its top-level value closed (0), or a bracket closed what never opened (below 0): either way, the last time.
        this.#over = true;
        if (this.#depth === 0) this.closedAt = offset + at;
        return this.#depth === 0;
      }
    }
    return false;
  }
}

/** The text of `chunks`, emptying the array: once the text is made, nothing holds their bytes. */
function takeText(chunks: Buffer[]): string {
  return textOf(takeBytes(chunks));
}

/** The bytes of `chunks` as one Buffer, emptying the array. */
function takeBytes(chunks: Buffer[]): Buffer {
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  chunks.length = 0;
  return bytes;
}

/** UTF-8 text as `TextDecoder` gives it: a leading byte-order mark dropped, bad bytes as U+FFFD. */
function textOf(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** A response's `content-length`, when it is a plain number. */
export function contentLengthOf(headers: Record<string, string>): number | undefined {
  const raw = headers['content-length'];
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : undefined;
}
