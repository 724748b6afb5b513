/**
 * Decodes a stream of UTF-8 chunks into text, chunk by chunk, with the same
 * result as `new TextDecoder()` and `decode(chunk, { stream: true })`: a
 * byte-order mark at the very start is dropped, a character cut between two
 * chunks waits for its last bytes, bytes that are not UTF-8 become U+FFFD.
 *
 * Why not TextDecoder: in streaming mode it goes through ICU and makes
 * two-byte strings, about 5× the CPU of Buffer's one-shot decoding (which
 * makes one-byte strings for ASCII, cheaper for the SSE parser and JSON.parse
 * after it). An image event is megabytes of base64, so this is most of the
 * cost of reading a stream.
 */
export interface Utf8Decoder {
  /** The text of `chunk`, after any bytes held back from the chunk before; a character cut at its end is held back. */
  push(chunk: Uint8Array): string;
  /** The text of the bytes still held back (the stream ended): U+FFFD for an unfinished character. */
  end(): string;
}

export function createUtf8Decoder(): Utf8Decoder {
  /** The first bytes of a character cut at the end of the last chunk. */
  let held: Buffer | undefined;
  let started = false;

  const text = (bytes: Buffer, end: number): string => {
    let out = bytes.toString('utf8', 0, end);
    if (!started && out) {
      started = true;
      if (out.charCodeAt(0) === 0xfeff) out = out.slice(1);
    }
    return out;
  };

  return {
    push(chunk) {
      let bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (held) {
        bytes = Buffer.concat([held, bytes]);
        held = undefined;
      }
      const whole = wholeCharacters(bytes);
      if (whole < bytes.length) held = Buffer.from(bytes.subarray(whole));
      return text(bytes, whole);
    },
    end() {
      if (!held) return '';
      const bytes = held;
      held = undefined;
      return text(bytes, bytes.length);
    },
  };
}

/**
 * How many bytes of `bytes` end on a whole character: all of them, unless they
 * end with the valid start of a multi-byte character, which TextDecoder holds
 * back until its last bytes come (an invalid start becomes U+FFFD at once).
 */
function wholeCharacters(bytes: Buffer): number {
  const n = bytes.length;
  // An unfinished character is at most 3 bytes: its lead byte, then continuation bytes (0x80-0xBF).
  for (let i = n - 1; i >= 0 && i >= n - 3; i--) {
    const lead = bytes[i]!;
    if (lead < 0x80) return n;
    if (lead < 0xc0) continue;
    const length = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length === 0 || n - i >= length) return n;
    if (n - i > 1) {
      // The second byte's range depends on the lead (no overlong forms, surrogates or code points past U+10FFFF).
      const second = bytes[i + 1]!;
      const lowest = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
      const highest = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
      if (second < lowest || second > highest) return n;
    }
    return i;
  }
  return n;
}
