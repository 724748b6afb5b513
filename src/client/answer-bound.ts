import { BadResponseError } from '../core/errors.js';

/**
 * Base64 of one image an answer may carry, at most. The spec shows no file size limit; its largest size, 1536x1024,
 * holds 12.6 MB even as uncompressed 16-bit RGBA (16.8 MB of base64), and wire-format.md calls events of up to 30 MB
 * normal: 32 MiB is above both, so no image the service can make is cut off.
 */
export const MAX_IMAGE_BASE64_BYTES = 32 * 1024 * 1024;

/** What an answer may carry beside its images: the JSON or the events around them, labels, usage, keep-alives. */
export const ANSWER_MARGIN_BYTES = 1024 * 1024;

/** What a request asked for, as far as the size of its answer goes. */
export interface AnswerShape {
  n: number;
  /** Previews streamed per image (a streamed request only). */
  partial_images?: number | undefined;
}

/**
 * The most bytes the body of a 200 answer to `request` may take: one image of at most `MAX_IMAGE_BASE64_BYTES` for
 * each image asked for and each preview of it, plus `ANSWER_MARGIN_BYTES`. A body that goes past it is no answer to
 * the request (a server that sends a line without end, say): the client stops reading it there, so no server holds
 * more of a process's memory than that.
 */
export function answerByteBound(request: AnswerShape): number {
  return request.n * (1 + (request.partial_images ?? 0)) * MAX_IMAGE_BASE64_BYTES + ANSWER_MARGIN_BYTES;
}

/** The error of an answer that went past its bound, with the whole images it had brought (see `BadResponseError.partial`). */
export function answerTooLargeError(request: AnswerShape, requestId: string | undefined, partial: unknown): BadResponseError {
  const mib = Math.round(answerByteBound(request) / (1024 * 1024));
  return new BadResponseError(
    `the service sent more than ${mib} MiB for ${request.n} image${request.n === 1 ? '' : 's'}, more than any answer to it can hold; the rest was not read`,
    { requestId, partial },
  );
}
