import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { fitImage } from '../../../bots/discord/fit-images.js';

/** A noisy image: hard to compress, so it really is big. */
async function noisy(width: number, height: number, alpha: boolean): Promise<Buffer> {
  const channels = alpha ? 4 : 3;
  const raw = randomBytes(width * height * channels);
  return sharp(raw, { raw: { width, height, channels } }).png().toBuffer();
}

describe('fitting images into Discord’s upload limit', () => {
  it('leaves an image that fits as it is', async () => {
    const png = await noisy(32, 32, false);
    const fitted = await fitImage(png, 'png', 'x', png.length);
    expect(fitted.file?.data).toBe(png);
    expect(fitted.file?.name).toBe('x.png');
    expect(fitted.reencodedAs).toBeUndefined();
  });

  it('re-encodes, then shrinks, until the image fits, keeping transparency', async () => {
    const png = await noisy(256, 256, true);
    const limit = Math.floor(png.length / 8);
    const fitted = await fitImage(png, 'png', 'x', limit);
    expect(fitted.file!.data.length).toBeLessThanOrEqual(limit);
    expect(fitted.reencodedAs).toBe('webp');
    const meta = await sharp(fitted.file!.data).metadata();
    expect(meta.format).toBe('webp');
    expect(meta.hasAlpha).toBe(true);
    expect(fitted.scale === undefined || meta.width === Math.round(256 * fitted.scale)).toBe(true);
  });

  it('gives up (no file) when nothing fits, so the caller can say so', async () => {
    const png = await noisy(64, 64, false);
    const fitted = await fitImage(png, 'png', 'x', 50);
    expect(fitted.file).toBeUndefined();
  });
});
