import { sniffImageType } from '../spec/image-type.js';
import { keepImageBytes } from './image-bytes.js';
import type { OutputFormat } from '../spec/constants.js';

/** What a request asked for, to check an answer against. */
export interface Expected {
  n: number;
  output_format: OutputFormat;
}

/** One image of an answer, decoded and checked: its bytes and real format (told by its magic bytes), or what is wrong with it. */
export type CheckedImage = { bytes: Buffer; format: OutputFormat; problem?: undefined } | { bytes?: undefined; format?: undefined; problem: string };

/**
 * Decodes one image of an answer and checks it: base64 that decodes to an
 * image (told by its magic bytes). A paid answer is read leniently: base64
 * wrapped in lines or spaces, without its `=` padding, or URL-safe is taken as
 * Node's decoder takes it, and an image of another format than the one asked
 * for is delivered as what it is (`format`; the caller tells it). Node's
 * decoder skips characters that are not base64, so a string holding any
 * decodes short of the length its size promises; comparing the two checks
 * every character at native speed. The bytes are handed on, so the image is
 * decoded once.
 */
export function checkImage(b64: string, format: OutputFormat): CheckedImage {
  const text = /\s/.test(b64) ? b64.replace(/\s+/g, '') : b64;
  if (text.length === 0) return { problem: 'is empty' };
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  // Unpadded, the last group of 2 or 3 characters holds 1 or 2 bytes; a group of 1 holds none.
  const rest = text.length % 4;
  if (rest === 1 || (rest !== 0 && padding > 0)) return { problem: 'is not base64' };
  const expected = Math.floor(text.length / 4) * 3 - padding + (rest === 0 ? 0 : rest - 1);
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== expected) return { problem: 'is not base64' };
  const actual = imageFormatOf(bytes);
  if (actual === null) return { problem: `does not decode to an image (expected ${format})` };
  return { bytes, format: actual };
}

/**
 * An image's real format, told by its magic bytes (null: not an image): the one
 * rule by which the client labels each image it hands over and every surface
 * names and types it, whatever format was asked for or the answer claims.
 */
export function imageFormatOf(bytes: Uint8Array): OutputFormat | null {
  return sniffImageType(bytes.subarray(0, 16));
}

/** An image of an answer as the client hands it on: its base64 and, once checked, its real format. */
export interface LabelledImage {
  b64_json: string;
  output_format?: OutputFormat | undefined;
}

/**
 * Checks the images of an answer against what was asked: exactly `n` images
 * (each of any format `checkImage` takes). Keeps the bytes of each good one
 * (see image-bytes.ts), labels it with the real format its check found
 * (`output_format`, the one decision of it), and returns the good ones, in
 * order, with the first problem found (none when all is well).
 */
export function checkImages<T extends LabelledImage>(images: readonly T[], expected: Expected): { good: T[]; problem: string | undefined } {
  let problem: string | undefined =
    images.length === expected.n
      ? undefined
      : images.length === 0
        ? 'the service answered 200 with no images'
        : `the service sent ${images.length} image${images.length === 1 ? '' : 's'}, not the ${expected.n} asked for`;
  const good: T[] = [];
  for (const [i, image] of images.entries()) {
    const checked = checkImage(image.b64_json, expected.output_format);
    if (checked.bytes) {
      keepImageBytes(image, checked.bytes);
      const labelled: LabelledImage = image;
      labelled.output_format = checked.format;
      good.push(image);
    } else {
      problem ??= `image ${i + 1} of the answer ${checked.problem}`;
    }
  }
  return { good, problem };
}
