import { describe, expect, it } from 'vitest';
import { createUtf8Decoder } from '../../src/client/utf8-decoder.js';

/** What TextDecoder gives for the same chunks, chunk by chunk: the reference. */
function viaTextDecoder(chunks: Uint8Array[]): string[] {
  const decoder = new TextDecoder();
  return [...chunks.map((c) => decoder.decode(c, { stream: true })), decoder.decode()];
}

function viaUtf8Decoder(chunks: Uint8Array[]): string[] {
  const decoder = createUtf8Decoder();
  return [...chunks.map((c) => decoder.push(c)), decoder.end()];
}

/** Every way of cutting `bytes` into 2 and 3 pieces. */
function splits(bytes: Buffer): Uint8Array[][] {
  const out: Uint8Array[][] = [];
  for (let i = 0; i <= bytes.length; i++) {
    out.push([bytes.subarray(0, i), bytes.subarray(i)]);
    for (let j = i; j <= bytes.length; j++) out.push([bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]);
  }
  return out;
}

describe('the UTF-8 stream decoder', () => {
  it('gives the same text as TextDecoder, chunk by chunk, wherever characters are cut', () => {
    const bytes = Buffer.from('data: é€𝄞 \r\n\n{"x":"ÿ\u0800\u{10FFFF}"}\n', 'utf8');
    for (const chunks of splits(bytes)) expect(viaUtf8Decoder(chunks)).toEqual(viaTextDecoder(chunks));
  });

  it('turns bytes that are not UTF-8 into U+FFFD as TextDecoder does, cut anywhere', () => {
    const invalid = [[0xff], [0xc0, 0x80], [0xe0, 0x80, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf0, 0x9f], [0x80, 0xbf], [0xc3, 0x28]];
    for (const sequence of invalid) {
      const bytes = Buffer.concat([Buffer.from('a\n'), Buffer.from(sequence), Buffer.from('b\r')]);
      for (const chunks of splits(bytes)) expect(viaUtf8Decoder(chunks)).toEqual(viaTextDecoder(chunks));
    }
  });

  it('drops a byte-order mark only at the very start of the stream', () => {
    const bytes = Buffer.from('\uFEFFdata: \uFEFF\n', 'utf8');
    for (const chunks of splits(bytes)) {
      expect(viaUtf8Decoder(chunks).join('')).toBe('data: \uFEFF\n');
      expect(viaUtf8Decoder(chunks)).toEqual(viaTextDecoder(chunks));
    }
  });

  it('reads chunks given as plain Uint8Arrays as well as Buffers', () => {
    const bytes = new Uint8Array(Buffer.from('€€', 'utf8'));
    const chunks = [bytes.subarray(0, 2), bytes.subarray(2)];
    expect(viaUtf8Decoder(chunks)).toEqual(['', '€€', '']);
  });
});
