/**
 * Reads a downloaded file (an edit's input image) into one buffer of the size
 * announced for it — by the chat platform (Discord's attachment `size`,
 * Slack's file `size`) or the response's `content-length`, the smaller when
 * both are known — and never past it: each chunk is copied in as it arrives
 * and dropped, so the image is held once, from its download to the request
 * body that sends it (the client sends the buffer itself). Only a download
 * whose size nobody announced is gathered in chunks and joined at the end.
 */

/** The download sent more bytes than were announced for it, or than `maxBytes` (reading stopped there). */
export class DownloadTooLargeError extends Error {
  constructor(
    /** The bytes received when reading stopped. */
    readonly receivedBytes: number,
    readonly limitBytes: number,
  ) {
    super(`the download passed ${limitBytes} bytes`);
    this.name = 'DownloadTooLargeError';
  }
}

export interface DownloadBounds {
  /** The sizes announced for the file (the platform's, the response's `content-length`); unknown ones undefined. */
  announced: readonly (number | null | undefined)[];
  /** The file must be under this many bytes. */
  maxBytes: number;
}

/** The size a download may have: the smallest announced one that is a whole number, below `maxBytes`; undefined when none was. */
export function expectedSize(bounds: DownloadBounds): number | undefined {
  const known = bounds.announced.filter((n): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0);
  return known.length === 0 ? undefined : Math.min(...known);
}

/** The body's bytes in one buffer (see the module comment). Throws DownloadTooLargeError past the announced size or `maxBytes`; rethrows the body's own errors. */
export async function readDownload(body: AsyncIterable<Uint8Array>, bounds: DownloadBounds): Promise<Buffer> {
  const expected = expectedSize(bounds);
  const limit = expected === undefined ? bounds.maxBytes - 1 : Math.min(expected, bounds.maxBytes - 1);
  if (expected === undefined) return readUnannounced(body, limit);
  const data = Buffer.allocUnsafe(limit);
  let received = 0;
  for await (const chunk of body) {
    if (received + chunk.byteLength > limit) throw new DownloadTooLargeError(received + chunk.byteLength, limit);
    data.set(chunk, received);
    received += chunk.byteLength;
  }
  // Only what arrived is handed on (never the rest of the allocation, which was not written).
  return received === limit ? data : data.subarray(0, received);
}

async function readUnannounced(body: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let received = 0;
  for await (const chunk of body) {
    received += chunk.byteLength;
    if (received > limit) throw new DownloadTooLargeError(received, limit);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, received);
}
