import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ANSWER_MARGIN_BYTES, answerByteBound, MAX_IMAGE_BASE64_BYTES } from '../../src/client/answer-bound.js';
import { parseSize, SIZES } from '../../src/spec/index.js';

const root = resolve(import.meta.dirname, '../..');
const MIB = 1024 * 1024;

describe('the bound on what the client reads of an answer', () => {
  it('gives each image and each of its previews the largest base64 image, and a margin for the rest', () => {
    expect(answerByteBound({ n: 1 })).toBe(MAX_IMAGE_BASE64_BYTES + ANSWER_MARGIN_BYTES);
    expect(answerByteBound({ n: 3, partial_images: 2 })).toBe(9 * MAX_IMAGE_BASE64_BYTES + ANSWER_MARGIN_BYTES);
  });

  it('holds any image of the spec\'s sizes, even uncompressed 16-bit RGBA with a MiB of metadata', () => {
    for (const size of SIZES) {
      const { width, height } = parseSize(size);
      const bytes = width * height * 8 + height + MIB;
      expect(Math.ceil(bytes / 3) * 4).toBeLessThan(MAX_IMAGE_BASE64_BYTES);
    }
  });

  it.each(['README.md', 'docs/deploying.md'])('is the one %s states', async (file) => {
    const text = (await readFile(resolve(root, file), 'utf8')).replace(/\s+/g, ' ');
    expect(text).toContain(`${MAX_IMAGE_BASE64_BYTES / MIB} MiB of base64 for each image and each preview asked for, plus ${ANSWER_MARGIN_BYTES / MIB} MiB`);
  });
});
