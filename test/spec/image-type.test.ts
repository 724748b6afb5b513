import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { OutputFormat } from '../../src/index.js';
import { imageDamage, sniffImageType } from '../../src/spec/image-type.js';

/** A PNG chunk: length, type, data and its CRC. */
function pngChunk(type: string, data: Uint8Array): Buffer {
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  chunk.set(data, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}

/** A one-frame animated PNG (APNG): `png` with acTL and fcTL chunks before its IDAT, as APNG encoders write them. */
function animatedPng(png: Buffer): Buffer {
  const actl = Buffer.alloc(8);
  actl.writeUInt32BE(1, 0); // one frame, played forever
  const fctl = Buffer.alloc(26);
  fctl.writeUInt32BE(0, 0); // sequence number
  fctl.writeUInt32BE(png.readUInt32BE(16), 4); // width and height of the IHDR
  fctl.writeUInt32BE(png.readUInt32BE(20), 8);
  fctl.writeUInt16BE(1, 20); // a delay of 1/10 s
  fctl.writeUInt16BE(10, 22);
  const ihdrEnd = 8 + 25;
  return Buffer.concat([png.subarray(0, ihdrEnd), pngChunk('acTL', actl), pngChunk('fcTL', fctl), png.subarray(ihdrEnd)]);
}

/**
 * Real small images, as encoders write them (plain, with alpha, lossless, progressive, with EXIF, animated); noisy,
 * so no file is tiny.
 */
async function encoded(): Promise<Array<{ name: string; format: OutputFormat; bytes: Uint8Array }>> {
  const noise = { type: 'gaussian', mean: 128, sigma: 40 } as const;
  const opaque = () => sharp({ create: { width: 32, height: 24, channels: 3, background: '#06f', noise } });
  const alpha = () => sharp({ create: { width: 32, height: 24, channels: 4, background: { r: 0, g: 99, b: 255, alpha: 0.5 }, noise } });
  const list: Array<[string, OutputFormat, Promise<Buffer>]> = [
    ['png', 'png', opaque().png().toBuffer()],
    ['png with alpha', 'png', alpha().png().toBuffer()],
    ['jpeg', 'jpeg', opaque().jpeg().toBuffer()],
    ['progressive jpeg', 'jpeg', opaque().jpeg({ progressive: true }).toBuffer()],
    ['jpeg with EXIF', 'jpeg', opaque().jpeg().withExif({ IFD0: { Copyright: 'Pictor' } }).toBuffer()],
    ['animated png (APNG)', 'png', opaque().png().toBuffer().then(animatedPng)],
    ['webp (VP8)', 'webp', opaque().webp().toBuffer()],
    ['lossless webp (VP8L)', 'webp', opaque().webp({ lossless: true }).toBuffer()],
    ['webp with alpha (VP8X)', 'webp', alpha().webp().toBuffer()],
    ['animated webp (VP8X)', 'webp', alpha().webp().toBuffer().then((frame) => sharp([frame, frame], { join: { animated: true } }).webp().toBuffer())],
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

  it('reads an image only to its end marker: padding, a motion photo\'s video or bytes past a WebP\'s RIFF size are left alone, as decoders leave them', async () => {
    // Zero padding, as some cameras and editors write, and an MP4 box, as a motion photo carries after its JPEG.
    const video = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), Buffer.alloc(12), garbage]);
    for (const { name, format, bytes } of await encoded()) {
      for (const [what, after] of [['zero padding', Buffer.alloc(1000)], ['a video', video], ['one byte', Buffer.alloc(1)]] as const) {
        const file = Buffer.concat([bytes, after]);
        await expect(sharp(file).stats(), `${name} with ${what} decodes`).resolves.toBeDefined();
        expect(imageDamage(file, format), `${name} with ${what}`).toBeUndefined();
      }
    }
  });

  it('says which part is missing', async () => {
    const [png, , jpeg, , , , webp] = await encoded();
    expect(imageDamage(png!.bytes.subarray(0, 40), 'png')).toBe('a damaged PNG image: it ends before its IEND chunk');
    expect(imageDamage(png!.bytes.subarray(0, png!.bytes.length - 20), 'png')).toBe('a damaged PNG image: its IDAT chunk runs past the end of the file');
    expect(imageDamage(png!.bytes.subarray(0, png!.bytes.length - 12), 'png')).toBe('a damaged PNG image: it ends before its IEND chunk');
    expect(imageDamage(jpeg!.bytes.subarray(0, jpeg!.bytes.length - 2), 'jpeg')).toBe('a damaged JPEG image: no EOI marker after its image data');
    expect(imageDamage(webp!.bytes.subarray(0, 40), 'webp')).toBe(`a damaged WebP image: its RIFF header gives ${webp!.bytes.length} bytes, the file has 40`);
  });

  it('finds a PNG whose IHDR gives a width of 0 damaged', async () => {
    const png = Buffer.from((await encoded())[0]!.bytes);
    png.writeUInt32BE(0, 16);
    expect(imageDamage(png, 'png')).toBe('a damaged PNG image: its IHDR gives a width or height of 0');
  });

  it('finds a PNG with no image data (no IDAT chunk before its IEND) damaged', async () => {
    const png = Buffer.from((await encoded())[0]!.bytes);
    const noData = Buffer.concat([png.subarray(0, 8 + 25), pngChunk('IEND', new Uint8Array())]);
    await expect(sharp(noData).stats()).rejects.toThrow();
    expect(imageDamage(noData, 'png')).toBe('a damaged PNG image: no IDAT chunk before its IEND chunk');
  });

  it('finds a JPEG that reaches its image data before a frame header damaged', () => {
    // SOI, a 4-byte APP0 segment, then SOS: no SOF anywhere.
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xda, 0x00, 0x02, 0x00, 0xff, 0xd9]);
    expect(imageDamage(jpeg, 'jpeg')).toBe('a damaged JPEG image: no frame header (SOF) before its image data');
  });

  it('passes a JPEG with stray bytes between its segments, as libjpeg skips them to the next marker and decodes it', async () => {
    const jpeg = Buffer.from((await encoded())[2]!.bytes);
    const dqt = jpeg.indexOf(Buffer.from([0xff, 0xdb]));
    const stray = Buffer.concat([jpeg.subarray(0, dqt), Buffer.from([0x00, 0x00]), jpeg.subarray(dqt)]);
    // libjpeg warns ("2 extraneous bytes before marker 0xdb") and decodes it; only a decoder told to fail on warnings refuses.
    await expect(sharp(stray, { failOn: 'truncated' }).stats()).resolves.toBeDefined();
    expect(imageDamage(stray, 'jpeg')).toBeUndefined();
  });

  it('passes a JPEG with an FF 00 pair between its segments, as libjpeg skips it as a stray byte and decodes it', async () => {
    const jpeg = Buffer.from((await encoded())[2]!.bytes);
    const dqt = jpeg.indexOf(Buffer.from([0xff, 0xdb]));
    const stray = Buffer.concat([jpeg.subarray(0, dqt), Buffer.from([0xff, 0x00]), jpeg.subarray(dqt)]);
    await expect(sharp(stray, { failOn: 'truncated' }).stats()).resolves.toBeDefined();
    expect(imageDamage(stray, 'jpeg')).toBeUndefined();
  });

  it('finds a JPEG whose frame header is followed by its end, with no image data (SOS) between, damaged', async () => {
    const jpeg = Buffer.from((await encoded())[2]!.bytes);
    const sos = jpeg.indexOf(Buffer.from([0xff, 0xda]));
    const noScan = Buffer.concat([jpeg.subarray(0, sos), Buffer.from([0xff, 0xd9])]);
    await expect(sharp(noScan).stats()).rejects.toThrow();
    expect(imageDamage(noScan, 'jpeg')).toBe('a damaged JPEG image: no image data (SOS) after its frame header');
  });
});
