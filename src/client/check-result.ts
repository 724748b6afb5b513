import { sniffImageType } from '../spec/image-type.js';
import { keepImageBytes } from './image-bytes.js';
import type { OutputFormat } from '../spec/constants.js';

/** What a request asked for, to check an answer against. */
export interface Expected {
  n: number;
  output_format: OutputFormat;
}

/** One image of an answer, decoded and checked: its bytes, or what is wrong with it. */
export type CheckedImage = { bytes: Buffer; problem?: undefined } | { bytes?: undefined; problem: string };

/**
 * Decodes one image of an answer and checks it: base64 that decodes to an
 * image of the requested format (told by its magic bytes). Node's decoder
 * skips characters that are not base64, so a string holding any decodes short
 * of the length its size promises; comparing the two checks every character
 * at native speed. The bytes are handed on, so the image is decoded once.
 */
export function checkImage(b64: string, format: OutputFormat): CheckedImage {
  if (b64.length === 0) return { problem: 'is empty' };
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  if (b64.length % 4 !== 0) return { problem: 'is not base64' };
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length !== (b64.length / 4) * 3 - padding) return { problem: 'is not base64' };
  const actual = sniffImageType(bytes.subarray(0, 16));
  if (actual === null) return { problem: `does not decode to an image (expected ${format})` };
  if (actual !== format) return { problem: `is ${actual}, not the ${format} asked for` };
  return { bytes };
}

/**
 * Checks the images of an answer against what was asked: exactly `n` images of
 * the requested format. Keeps the bytes of each good one (see image-bytes.ts)
 * and returns the good ones, in order, with the first problem found (none when
 * all is well).
 */
export function checkImages<T extends { b64_json: string }>(images: readonly T[], expected: Expected): { good: T[]; problem: string | undefined } {
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
      good.push(image);
    } else {
      problem ??= `image ${i + 1} of the answer ${checked.problem}`;
    }
  }
  return { good, problem };
}
