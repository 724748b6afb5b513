import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { OutputFormat } from '../../src/index.js';
import { imageDamage, sniffImageType } from '../../src/spec/image-type.js';

/** Real small images, as encoders write them (plain, with alpha, lossless, progressive); noisy, so no file is tiny. */
async function encoded(): Promise<Array<{ name: string; format: OutputFormat; bytes: Uint8Array }>> {
  const noise = { type: 'gaussian', mean: 128, sigma: 40 } as const;
  const opaque = () => sharp({ create: { width: 32, height: 24, channels: 3, background: '#06f', noise } });
  const alpha = () => sharp({ create: { width: 32, height: 24, channels: 4, background: { r: 0, g: 99, b: 255, alpha: 0.5 }, noise } });
  const list: Array<[string, OutputFormat, Promise<Buffer>]> = [
    ['png', 'png', opaque().png().toBuffer()],
    ['png with alpha', 'png', alpha().png().toBuffer()],
    ['jpeg', 'jpeg', opaque().jpeg().toBuffer()],
    ['progressive jpeg', 'jpeg', opaque().jpeg({ progressive: true }).toBuffer()],
    ['webp (VP8)', 'webp', opaque().webp().toBuffer()],
    ['lossless webp (VP8L)', 'webp', opaque().webp({ lossless: true }).toBuffer()],
    ['webp with alpha (VP8X)', 'webp', alpha().webp().toBuffer()],
  ];
  return Promise.all(list.map(async ([name, format, bytes]) => ({ name, format, bytes: new Uint8Array(await bytes) })));
}

const garbage = new TextEncoder().encode('garbage, not the rest of an image');

describe('imageDamage', () => {
  it('finds nothing wrong with whole images of every accepted kind', async () => {
    for (const { name, format, bytes } of await encoded()) {
      expect(sniffImageType(bytes), name).toBe(format);
      expect(imageDamage(bytes, format), name).toBeUndefined();
    }
  });

  it('finds a truncated image damaged, however short: its signature alone is not enough', async () => {
    for (const { name, format, bytes } of await encoded()) {
      expect(bytes.length, name).toBeGreaterThan(100);
      for (const length of [40, Math.floor(bytes.length / 2), bytes.length - 1]) {
        const cut = bytes.subarray(0, length);
        expect(sniffImageType(cut), `${name} cut to ${length}`).toBe(format);
        expect(imageDamage(cut, format), `${name} cut to ${length}`).toMatch(/^a damaged (PNG|JPEG|WebP) image: /);
      }
    }
  });

  it('finds a signature followed by anything else damaged', async () => {
    const signatures: Array<[OutputFormat, Uint8Array]> = [
      ['png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])],
      ['jpeg', new Uint8Array([0xff, 0xd8, 0xff])],
      ['webp', new TextEncoder().encode('RIFF\x00\x00\x00\x00WEBP')],
    ];
    for (const [format, signature] of signatures) {
      const fake = Buffer.concat([signature, garbage]);
      expect(sniffImageType(fake), format).toBe(format);
      expect(imageDamage(fake, format), format).toMatch(/^a damaged /);
    }
  });

  it('finds bytes after the end of a PNG or JPEG, and a WebP whose RIFF size is not its length, damaged', async () => {
    for (const { name, format, bytes } of await encoded()) {
      expect(imageDamage(Buffer.concat([bytes, garbage]), format), name).toMatch(/^a damaged /);
    }
  });

  it('says which part is missing', async () => {
    const [png, , jpeg, , webp] = await encoded();
    expect(imageDamage(png!.bytes.subarray(0, 40), 'png')).toBe('a damaged PNG image: it ends before its IEND chunk');
    expect(imageDamage(png!.bytes.subarray(0, png!.bytes.length - 20), 'png')).toBe('a damaged PNG image: its IDAT chunk runs past the end of the file');
    expect(imageDamage(png!.bytes.subarray(0, png!.bytes.length - 12), 'png')).toBe('a damaged PNG image: it ends before its IEND chunk');
    expect(imageDamage(jpeg!.bytes.subarray(0, jpeg!.bytes.length - 2), 'jpeg')).toBe('a damaged JPEG image: it does not end with an EOI marker');
    expect(imageDamage(webp!.bytes.subarray(0, 40), 'webp')).toBe(`a damaged WebP image: its RIFF header gives ${webp!.bytes.length} bytes, the file has 40`);
  });

  it('finds a PNG whose IHDR gives a width of 0 damaged', async () => {
    const png = Buffer.from((await encoded())[0]!.bytes);
    png.writeUInt32BE(0, 16);
    expect(imageDamage(png, 'png')).toBe('a damaged PNG image: its IHDR gives a width or height of 0');
  });

  it('finds a JPEG that reaches its image data before a frame header damaged', () => {
    // SOI, a 4-byte APP0 segment, then SOS: no SOF anywhere.
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xda, 0x00, 0x02, 0x00, 0xff, 0xd9]);
    expect(imageDamage(jpeg, 'jpeg')).toBe('a damaged JPEG image: no frame header (SOF) before its image data');
  });
});
