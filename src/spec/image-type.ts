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

/** How a person names each format (in a message). */
export const FORMAT_NAMES: Record<OutputFormat, string> = { png: 'PNG', jpeg: 'JPEG', webp: 'WebP' };

/**
 * What is wrong with the structure of an image whose type `sniffImageType`
 * told, or undefined when it is whole. Reads the container only, never the
 * pixels, and stops at the image's end marker: whatever follows it (zero
 * padding, the video of a motion photo) is left alone, as decoders leave it. A
 * PNG needs its IHDR first (13 bytes, non-zero width and height), at least one
 * IDAT, and an IEND; a JPEG, from its SOI, a readable frame header (SOF), then
 * a scan (SOS) and an EOI after the scan starts; a WebP, a RIFF size no larger
 * than the file and a VP8/VP8L/VP8X chunk inside it. A truncated file, or a
 * signature followed by anything else, is refused before it is sent.
 */
export function imageDamage(bytes: Uint8Array, format: OutputFormat): string | undefined {
  const problem = format === 'png' ? pngDamage(bytes) : format === 'jpeg' ? jpegDamage(bytes) : webpDamage(bytes);
  return problem === undefined ? undefined : `a damaged ${FORMAT_NAMES[format]} image: ${problem}`;
}

const u32be = (b: Uint8Array, at: number): number => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
const u16be = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!;
const u32le = (b: Uint8Array, at: number): number => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
/** A four-letter chunk type as it is named in a message (bytes outside printable ASCII as `?`); built only for a message. */
const chunkName = (b: Uint8Array, at: number): string =>
  String.fromCharCode(...b.subarray(at, at + 4)).replace(/[^\x20-\x7e]/g, '?');

/** PNG chunk types, as the big-endian number of their four letters (compared as numbers, never as strings). */
const IHDR = 0x49484452;
const IDAT = 0x49444154;
const IEND = 0x49454e44;

function pngDamage(b: Uint8Array): string | undefined {
  // After the 8-byte signature, each chunk is length (4), type (4), data, CRC (4).
  if (b.length < 8 + 25 || u32be(b, 8) !== 13 || u32be(b, 12) !== IHDR) return 'no IHDR chunk after the signature';
  if (u32be(b, 16) === 0 || u32be(b, 20) === 0) return 'its IHDR gives a width or height of 0';
  let at = 8;
  let data = false;
  while (at + 12 <= b.length) {
    const type = u32be(b, at + 4);
    const end = at + 12 + u32be(b, at);
    if (end > b.length) return `its ${chunkName(b, at + 4)} chunk runs past the end of the file`;
    if (type === IEND) return data ? undefined : 'no IDAT chunk before its IEND chunk';
    if (type === IDAT) data = true;
    at = end;
  }
  return 'it ends before its IEND chunk';
}

/** SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC). */
const isFrameMarker = (m: number): boolean => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
const SOS = 0xda;
const EOI = 0xd9;

function jpegDamage(b: Uint8Array): string | undefined {
  // The segments from SOI: a frame header (SOF) must come before the first scan (SOS).
  let at = 2;
  let frame = false;
  for (;;) {
    const missing = frame ? 'no image data (SOS) after its frame header' : 'no frame header (SOF) before its image data';
    // Stray bytes between segments are skipped up to the next 0xFF, as libjpeg does ("extraneous bytes before marker").
    at = b.indexOf(0xff, at);
    if (at === -1) return missing;
    while (at < b.length && b[at] === 0xff) at++; // a marker may be padded with 0xFF fill bytes
    const marker = b[at++];
    if (marker === undefined || marker === EOI || (marker === SOS && !frame)) return missing;
    if (marker === 0x00) continue; // FF 00 is no marker: libjpeg skips it as a stray byte
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // markers without a length
    if (at + 2 > b.length) return missing;
    const length = u16be(b, at);
    if (length < 2 || at + length > b.length) return 'a segment runs past the end of the file';
    if (marker === SOS) {
      at += length;
      break;
    }
    if (isFrameMarker(marker)) {
      // precision (1), height (2), width (2), components (1), then 3 bytes per component
      if (length < 8 || u16be(b, at + 5) === 0 || b[at + 7] === 0 || length < 8 + 3 * b[at + 7]!) return 'its frame header (SOF) is unreadable';
      frame = true;
    }
    at += length;
  }
  // Within the image data a 0xFF byte is followed by 0x00 (stuffing), a restart marker or the next segment, so the
  // first FF D9 from the scan on is the image's end; what follows it is not the image's.
  for (let ff = b.indexOf(0xff, at); ff !== -1 && ff + 1 < b.length; ff = b.indexOf(0xff, ff + 1)) {
    if (b[ff + 1] === EOI) return undefined;
  }
  return 'no EOI marker after its image data';
}

/** WebP chunk types, as the big-endian number of their four letters. */
const VP8 = 0x56503820; // "VP8 "
const VP8L = 0x5650384c;
const VP8X = 0x56503858;

function webpDamage(b: Uint8Array): string | undefined {
  // RIFF size (4, from byte 8 on), "WEBP", then the first chunk: type (4), size (4), data.
  const riffEnd = 8 + u32le(b, 4);
  if (riffEnd > b.length) return `its RIFF header gives ${riffEnd} bytes, the file has ${b.length}`;
  if (riffEnd < 20) return `its RIFF header gives ${riffEnd} bytes, too few for a chunk`;
  const type = u32be(b, 12);
  if (type !== VP8 && type !== VP8L && type !== VP8X) return 'no VP8, VP8L or VP8X chunk after its header';
  if (20 + u32le(b, 16) > riffEnd) return `its ${chunkName(b, 12).trim()} chunk runs past the end of the file`;
  return undefined;
}

export function mimeTypeOf(format: OutputFormat): string {
  return MIME_TYPES[format];
}
