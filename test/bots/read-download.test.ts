import { describe, expect, it } from 'vitest';
import { DownloadTooLargeError, expectedSize, readDownload } from '../../bots/read-download.js';

async function* chunksOf(...sizes: number[]): AsyncGenerator<Uint8Array> {
  let n = 0;
  for (const size of sizes) yield new Uint8Array(size).fill(++n);
}

describe('readDownload', () => {
  it('fills one buffer of the announced size as the chunks arrive: the bytes are held once, not as chunks then a copy', async () => {
    const data = await readDownload(chunksOf(3000, 4000, 5000), { announced: [12_000, undefined], maxBytes: 100_000 });
    expect([data[0], data[2999], data[3000], data[6999], data[7000], data[11_999]]).toEqual([1, 1, 2, 2, 3, 3]);
    // One allocation of exactly the announced size, all of it the image.
    expect(data.byteOffset === 0 && data.byteLength === 12_000 && data.buffer.byteLength === 12_000).toBe(true);
  });

  it('takes the smaller of the platform’s size and the content-length, and refuses a body past it (reading stops there)', async () => {
    expect(expectedSize({ announced: [20, 12], maxBytes: 100 })).toBe(12);
    await expect(readDownload(chunksOf(10, 10), { announced: [20, 12], maxBytes: 100 })).rejects.toEqual(new DownloadTooLargeError(20, 12));
  });

  it('hands on only what arrived when the body is shorter than announced', async () => {
    const data = await readDownload(chunksOf(5), { announced: [8], maxBytes: 100 });
    expect(data.byteLength).toBe(5);
  });

  it('gathers a body whose size nobody announced, up to under maxBytes', async () => {
    expect((await readDownload(chunksOf(30, 30), { announced: [undefined, null], maxBytes: 100 })).byteLength).toBe(60);
    await expect(readDownload(chunksOf(60, 60), { announced: [], maxBytes: 100 })).rejects.toBeInstanceOf(DownloadTooLargeError);
  });
});
