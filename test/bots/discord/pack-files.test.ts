import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DISCORD_LIMITS, uploadLimitOf } from '../../../bots/discord/discord-facts.js';
import type { OutgoingFile } from '../../../bots/discord/fit-images.js';
import { packFiles } from '../../../bots/discord/pack-files.js';

const MiB = 1024 * 1024;

function files(count: number, bytes: number): OutgoingFile[] {
  return Array.from({ length: count }, (_, i) => ({ name: `pictor-k-${i + 1}.png`, data: Buffer.alloc(bytes), contentType: 'image/png' }));
}

const sizesOf = (packs: OutgoingFile[][]) => packs.map((pack) => pack.length);

describe('packing a job’s files into messages as Discord documents its limits (packFiles)', () => {
  it('keeps the files in their order, in as few messages as take them', () => {
    const all = files(13, 1024).map((file, i) => ({ ...file, data: randomBytes(16 + i) }));
    const packs = packFiles(all, 10 * MiB);
    expect(sizesOf(packs)).toEqual([10, 3]);
    expect(packs.flat()).toEqual(all);
  });

  it('puts at most 10 files in a message', () => {
    expect(sizesOf(packFiles(files(25, 1024), 10 * MiB))).toEqual([10, 10, 5]);
    expect(DISCORD_LIMITS.filesPerMessage).toBe(10);
  });

  it('keeps a message’s files within a request’s 25 MiB, with room for the rest of it: 10 of 3 MiB go in 2 messages', () => {
    const packs = packFiles(files(10, 3 * MiB), 10 * MiB);
    expect(sizesOf(packs)).toEqual([8, 2]);
    for (const pack of packs) expect(pack.reduce((sum, f) => sum + f.data.length, 0)).toBeLessThanOrEqual(uploadLimitOf({ attachmentSizeLimit: 50 * MiB }));
  });

  it('sends a file over the upload limit in a message of its own, so the files beside it are not refused with it', () => {
    const all = [...files(1, MiB), ...files(1, 3 * MiB), ...files(1, MiB)];
    expect(packFiles(all, 2 * MiB).map((pack) => pack.map((f) => f.data.length))).toEqual([[MiB], [3 * MiB], [MiB]]);
  });

  it('makes no message of no files', () => {
    expect(packFiles([], 10 * MiB)).toEqual([]);
  });
});
