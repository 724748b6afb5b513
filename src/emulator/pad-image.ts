import { crc32 } from 'node:zlib';
import type { OutputFormat } from '../spec/index.js';

/**
 * Makes an encoded image at least `minBytes` long with data every decoder
 * skips, so the picture stays valid: private ancillary chunks in a PNG, comment
 * segments in a JPEG, an unknown chunk at the end of a WebP.
 */
export function padImage(bytes: Buffer, format: OutputFormat, minBytes: number): Buffer {
  const missing = Math.ceil(minBytes) - bytes.length;
  if (missing <= 0) return bytes;
  switch (format) {
    case 'png':
      return padPng(bytes, missing);
    case 'jpeg':
      return padJpeg(bytes, missing);
    case 'webp':
      return padWebp(bytes, missing);
  }
}

/** Each PNG padding chunk carries at most this much, well under any decoder's chunk limit. */
const PNG_CHUNK_DATA_MAX = 1024 * 1024;
/** `emPd`: ancillary (lower case 1st), private (lower case 2nd), reserved bit clear, safe to copy. */
const PNG_PAD_TYPE = Buffer.from('emPd', 'latin1');

function padPng(png: Buffer, missing: number): Buffer {
  const iendAt = png.length - 12; // IEND is the last chunk: length(4) type(4) crc(4)
  const chunks: Buffer[] = [];
  let added = 0;
  while (added < missing) {
    const dataLength = Math.min(PNG_CHUNK_DATA_MAX, Math.max(0, missing - added - 12));
    const chunk = Buffer.alloc(12 + dataLength, 0x20);
    chunk.writeUInt32BE(dataLength, 0);
    PNG_PAD_TYPE.copy(chunk, 4);
    chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + dataLength)) >>> 0, 8 + dataLength);
    chunks.push(chunk);
    added += chunk.length;
  }
  return Buffer.concat([png.subarray(0, iendAt), ...chunks, png.subarray(iendAt)]);
}

const JPEG_SEGMENT_DATA_MAX = 65533;

function padJpeg(jpeg: Buffer, missing: number): Buffer {
  const segments: Buffer[] = [];
  let added = 0;
  while (added < missing) {
    const dataLength = Math.min(JPEG_SEGMENT_DATA_MAX, Math.max(0, missing - added - 4));
    const segment = Buffer.alloc(4 + dataLength, 0x20);
    segment[0] = 0xff;
    segment[1] = 0xfe; // COM
    segment.writeUInt16BE(dataLength + 2, 2);
    segments.push(segment);
    added += segment.length;
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...segments, jpeg.subarray(2)]);
}

function padWebp(webp: Buffer, missing: number): Buffer {
  let dataLength = Math.max(0, missing - 8);
  if (dataLength % 2 === 1) dataLength += 1; // RIFF chunks are padded to an even size
  const chunk = Buffer.alloc(8 + dataLength, 0x20);
  chunk.write('PADD', 0, 'latin1');
  chunk.writeUInt32LE(dataLength, 4);
  const out = Buffer.concat([webp, chunk]);
  out.writeUInt32LE(out.length - 8, 4);
  return out;
}
