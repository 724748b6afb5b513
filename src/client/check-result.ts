import { BadResponseError } from '../core/errors.js';
import { sniffImageType } from '../spec/image-type.js';
import type { OutputFormat } from '../spec/constants.js';

/** What a request asked for, to check an answer against. */
export interface Expected {
  n: number;
  output_format: OutputFormat;
}

/**
 * Checks one image of an answer: base64 that decodes to an image of the
 * requested format (told by its magic bytes). Returns what is wrong, or
 * undefined when it is fine. Node's decoder skips characters that are not
 * base64, so a string holding any decodes short of the length its size
 * promises; comparing the two checks every character at native speed.
 */
export function problemWithImage(b64: string, format: OutputFormat): string | undefined {
  if (b64.length === 0) return 'is empty';
  const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
  if (b64.length % 4 !== 0) return 'is not base64';
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length !== (b64.length / 4) * 3 - padding) return 'is not base64';
  const actual = sniffImageType(bytes.subarray(0, 16));
  if (actual === null) return `does not decode to an image (expected ${format})`;
  if (actual !== format) return `is ${actual}, not the ${format} asked for`;
  return undefined;
}

/**
 * Throws a BadResponseError unless `images` are exactly the `n` images of the
 * requested format. `partial` is attached to the error so a caller can still
 * hand over whatever good images came (they may have been paid for).
 */
export function checkImages<T>(images: readonly string[], expected: Expected, requestId: string | undefined, partial?: () => T): void {
  let problem: string | undefined;
  if (images.length !== expected.n) {
    problem = images.length === 0 ? 'the service answered 200 with no images' : `the service sent ${images.length} images, not the ${expected.n} asked for`;
  } else {
    for (const [i, b64] of images.entries()) {
      const wrong = problemWithImage(b64, expected.output_format);
      if (wrong) {
        problem = `image ${i + 1} of the answer ${wrong}`;
        break;
      }
    }
  }
  if (problem) throw new BadResponseError(problem, { requestId, partial: partial?.() });
}
