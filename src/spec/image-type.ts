import { MIME_TYPES, type OutputFormat } from './constants.js';

/**
 * Tells an image's real type from its first bytes (magic numbers), never from a
 * file name or a declared content type. Returns null for anything else. It
 * reads the signature only (a paid answer is read leniently); an input image
 * is also checked whole with `imageDamage`.
 */
export function sniffImageType(bytes: Uint8Array): OutputFormat | null {
  if (
    bytes.length >= 8 &&
    bytes[0] === 0x89 &&
    bytes[1] === 0x50 &&
    bytes[2] === 0x4e &&
    bytes[3] === 0x47 &&
    bytes[4] === 0x0d &&
    bytes[5] === 0x0a &&
    bytes[6] === 0x1a &&
    bytes[7] === 0x0a
  ) {
    return 'png';
  }
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) {
    return 'jpeg';
  }
  if (
    bytes.length >= 12 &&
    bytes[0] === 0x52 && // R
    bytes[1] === 0x49 && // I
    bytes[2] === 0x46 && // F
    bytes[3] === 0x46 && // F
    bytes[8] === 0x57 && // W
    bytes[9] === 0x45 && // E
    bytes[10] === 0x42 && // B
    bytes[11] === 0x50 // P
  ) {
    return 'webp';
  }
  return null;
}

/** How each format is named in a message. */
const FORMAT_NAMES: Record<OutputFormat, string> = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP' };

/**
 * What is wrong with the structure of an image whose type `sniffImageType`
 * told, or undefined when it is whole. Reads the container only, never the
 * pixels: a PNG's chunks from IHDR (13 bytes, non-zero width and height) to
 * the IEND that ends the file; a JPEG's segments from SOI to a readable frame
 * header (SOF) before the image data, and EOI at its end; a WebP's RIFF size
 * (the file's length) and its VP8/VP8L/VP8X chunk. A truncated file, or a
 * signature followed by anything else, is refused before it is sent.
 */
export function imageDamage(bytes: Uint8Array, format: OutputFormat): string | undefined {
  const problem = format === 'png' ? pngDamage(bytes) : format === 'jpeg' ? jpegDamage(bytes) : webpDamage(bytes);
  return problem === undefined ? undefined : `a damaged ${FORMAT_NAMES[format]} image: ${problem}`;
}

const u32be = (b: Uint8Array, at: number): number => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
const u16be = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!;
const u32le = (b: Uint8Array, at: number): number => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
const ascii = (b: Uint8Array, at: number, length: number): string => String.fromCharCode(...b.subarray(at, at + length));

function pngDamage(b: Uint8Array): string | undefined {
  // After the 8-byte signature, each chunk is length (4), type (4), data, CRC (4).
  if (b.length < 8 + 25 || u32be(b, 8) !== 13 || ascii(b, 12, 4) !== 'IHDR') return 'no IHDR chunk after the signature';
  if (u32be(b, 16) === 0 || u32be(b, 20) === 0) return 'its IHDR gives a width or height of 0';
  let at = 8;
  while (at + 12 <= b.length) {
    const type = ascii(b, at + 4, 4);
    const end = at + 12 + u32be(b, at);
    if (end > b.length) return `its ${type.replace(/[^\x21-\x7e]/g, '?')} chunk runs past the end of the file`;
    if (type === 'IEND') return end === b.length ? undefined : 'bytes follow its IEND chunk';
    at = end;
  }
  return 'it ends before its IEND chunk';
}

/** SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC). */
const isFrameMarker = (m: number): boolean => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

function jpegDamage(b: Uint8Array): string | undefined {
  let at = 2;
  let frame = false;
  while (!frame) {
    if (at >= b.length || b[at] !== 0xff) return 'no frame header (SOF) before its image data';
    while (at < b.length && b[at] === 0xff) at++; // a marker may be padded with 0xFF fill bytes
    const marker = b[at++];
    if (marker === undefined || marker === 0xda || marker === 0xd9) return 'no frame header (SOF) before its image data';
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // markers without a length
    if (at + 2 > b.length) return 'no frame header (SOF) before its image data';
    const length = u16be(b, at);
    if (length < 2 || at + length > b.length) return 'a segment runs past the end of the file';
    if (isFrameMarker(marker)) {
      // precision (1), height (2), width (2), components (1), then 3 bytes per component
      if (length < 8 || u16be(b, at + 5) === 0 || b[at + 7] === 0 || length < 8 + 3 * b[at + 7]!) return 'its frame header (SOF) is unreadable';
      frame = true;
    }
    at += length;
  }
  return b.length >= at + 2 && b[b.length - 2] === 0xff && b[b.length - 1] === 0xd9 ? undefined : 'it does not end with an EOI marker';
}

function webpDamage(b: Uint8Array): string | undefined {
  if (u32le(b, 4) !== b.length - 8) return `its RIFF header gives ${u32le(b, 4) + 8} bytes, the file has ${b.length}`;
  const chunk = b.length >= 20 ? ascii(b, 12, 4) : '';
  if (chunk !== 'VP8 ' && chunk !== 'VP8L' && chunk !== 'VP8X') return 'no VP8, VP8L or VP8X chunk after its header';
  if (20 + u32le(b, 16) > b.length) return `its ${chunk.trim()} chunk runs past the end of the file`;
  return undefined;
}

export function mimeTypeOf(format: OutputFormat): string {
  return MIME_TYPES[format];
}
