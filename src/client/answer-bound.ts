import { BadResponseError } from '../core/errors.js';

/**
 * Base64 of one image an answer may carry, at most. The spec shows no file size limit; its largest size, 1536x1024,
 * holds 12.6 MB even as uncompressed 16-bit RGBA (16.8 MB of base64), and wire-format.md calls events of up to 30 MB
 * normal: 32 MiB is above both, so no image the service can make is cut off.
 */
export const MAX_IMAGE_BASE64_BYTES = 32 * 1024 * 1024;

/** What an answer may carry beside its images: the JSON or the event around them, labels, usage, keep-alives. */
export const ANSWER_MARGIN_BYTES = 1024 * 1024;

/**
 * The most bytes a streamed answer may send without ending an event: one image and the margin. What the client holds
 * of a stream is the event the parser is building (each one is handed on once it ends), so this bounds a stream's
 * memory whatever the number of images and previews asked for.
 */
export const EVENT_BYTE_BOUND = MAX_IMAGE_BASE64_BYTES + ANSWER_MARGIN_BYTES;

/**
 * The most bytes the JSON body of a 200 answer asking for `n` images may take: `MAX_IMAGE_BASE64_BYTES` for each image
 * and `ANSWER_MARGIN_BYTES` (a JSON answer carries no previews, even to a streamed request). A body that goes past it is
 * no answer to the request (a server that sends an image without end, say): the client stops reading it there, so no
 * server holds more of a process's memory than that.
 */
export function answerByteBound(n: number): number {
  return n * MAX_IMAGE_BASE64_BYTES + ANSWER_MARGIN_BYTES;
}

/** The error of a JSON answer that went past its bound, with the whole images it had brought (see `BadResponseError.partial`). */
export function answerTooLargeError(n: number, requestId: string | undefined, partial: unknown): BadResponseError {
  return new BadResponseError(
    `the service sent more than ${mibOf(answerByteBound(n))} MiB for ${n} image${n === 1 ? '' : 's'}, more than any answer to it can hold; the rest was not read`,
    { requestId, partial },
  );
}

/** The error of a stream that sent more than `EVENT_BYTE_BOUND` without ending an event (the images handed on before it are the reader's). */
export function eventTooLargeError(requestId: string | undefined): BadResponseError {
  return new BadResponseError(
    `the service sent more than ${mibOf(EVENT_BYTE_BOUND)} MiB without ending an event, more than any image can take; the rest was not read`,
    { requestId },
  );
}

/**
 * The error of an answer that sent more than `EVENT_BYTE_BOUND` of whitespace before its first character (JSON or an
 * event): no answer pads that much, and reading on would only wait for the request's timeout.
 */
export function blankAnswerError(requestId: string | undefined): BadResponseError {
  return new BadResponseError(`the service sent more than ${mibOf(EVENT_BYTE_BOUND)} MiB of whitespace before its answer began; the rest was not read`, { requestId });
}

const mibOf = (bytes: number) => Math.round(bytes / (1024 * 1024));
