import sharp from 'sharp';

/** A real image of the given format and size, for tests that need input bytes. */
export async function makeImage(format: 'png' | 'jpeg' | 'webp' = 'png', width = 64, height = 64, color = { r: 200, g: 80, b: 40 }): Promise<Uint8Array> {
  const img = sharp({ create: { width, height, channels: 3, background: color } });
  const buf = format === 'png' ? await img.png().toBuffer() : format === 'jpeg' ? await img.jpeg().toBuffer() : await img.webp().toBuffer();
  return new Uint8Array(buf);
}

/** Format, width, height and alpha of encoded image bytes. */
export async function describeImage(bytes: Uint8Array | Buffer): Promise<{ format: string | undefined; width: number | undefined; height: number | undefined; hasAlpha: boolean | undefined }> {
  const meta = await sharp(bytes).metadata();
  return { format: meta.format, width: meta.width, height: meta.height, hasAlpha: meta.hasAlpha };
}
