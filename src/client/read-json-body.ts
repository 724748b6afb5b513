import { BadResponseError } from '../core/errors.js';
import { answerByteBound, answerTooLargeError } from './answer-bound.js';
import { salvageResult, type RequestedJob } from './job-result.js';
import type { RawResponse } from './transport.js';

/**
 * Reads and parses a JSON result. It is done when the body ends, or as soon as
 * what has arrived is a whole JSON object holding the `n` images: a server
 * that sends the result and then keeps the connection open does not hold it
 * back. A body that is not JSON is a BadResponseError (with the whole images
 * it holds attached).
 *
 * The body is kept as bytes and turned into text once, when a parse is tried:
 * `Buffer#toString` makes a one-byte string of the base64 at native speed,
 * where a streaming `TextDecoder` went through ICU chunk by chunk and a
 * regular expression looked for the closing brace in every chunk.
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
 */
export async function readJsonBody(
  body: RawResponse['body'],
  request: RequestedJob,
  requestId: string | undefined,
  contentLength?: number | undefined,
): Promise<unknown> {
  const { n } = request;
  const bound = answerByteBound(n);
  let chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    received += chunk.length;
    if (received > bound) throw answerTooLargeError(n, requestId, salvageResult(takeText(chunks), request, requestId));
    // Only a chunk that ends a JSON object can finish it (base64 never holds a brace): try a parse only then,
    // and not when the body is whole by its length (it ends with the next step of the loop, and is parsed below).
    if (lastSignificantByte(chunk) === CLOSING_BRACE && received !== contentLength) {
      const whole = chunks.length === 1 ? chunk : Buffer.concat(chunks);
      chunks = [whole];
      try {
        const json = JSON.parse(textOf(whole)) as { data?: unknown };
        if (Array.isArray(json.data) && json.data.length >= n) return json;
      } catch {
        // Not whole yet.
      }
    }
  }
  const text = takeText(chunks);
  try {
    return JSON.parse(text);
  } catch {
    // The parser's message quotes the body; it is left out (it may carry anything the server sent). Whole images in it are kept.
    throw new BadResponseError('the service answered 200 with a body that is not JSON', { requestId, partial: salvageResult(text, request, requestId) });
  }
}

const CLOSING_BRACE = 0x7d;

/** The last byte of `chunk` that is not JSON whitespace, or -1 when there is none. */
function lastSignificantByte(chunk: Buffer): number {
  for (let i = chunk.length - 1; i >= 0; i--) {
    const byte = chunk[i]!;
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return byte;
  }
  return -1;
}

/** The text of `chunks`, emptying the array: once the text is made, nothing holds their bytes. */
function takeText(chunks: Buffer[]): string {
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  chunks.length = 0;
  return textOf(bytes);
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
