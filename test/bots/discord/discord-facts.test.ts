import { describe, expect, it } from 'vitest';
import { attachmentLimitOf, DISCORD_LIMITS, REQUEST_ROOM_BYTES, uploadLimitOf } from '../../../bots/discord/discord-facts.js';

const MiB = 1024 * 1024;

describe('the upload limit of an interaction or of what it left (attachmentLimitOf)', () => {
  it('is the attachment_size_limit Discord sent, in bytes', () => {
    expect(attachmentLimitOf({ attachmentSizeLimit: 50 * MiB })).toBe(50 * MiB);
    expect(attachmentLimitOf({ attachmentSizeLimit: 1 })).toBe(1);
  });

  it('is Discord’s default for a bot where none was sent or kept, or what was is no size (0, negative, not finite)', () => {
    const noSizes = [undefined, {}, { attachmentSizeLimit: undefined }, { attachmentSizeLimit: 0 }, { attachmentSizeLimit: -1 }, { attachmentSizeLimit: Number.NaN }, { attachmentSizeLimit: Number.POSITIVE_INFINITY }];
    for (const source of noSizes) expect(attachmentLimitOf(source), JSON.stringify(source)).toBe(DISCORD_LIMITS.defaultAttachmentBytes);
    expect(DISCORD_LIMITS.defaultAttachmentBytes).toBe(10 * MiB);
  });
});

describe('the most bytes of one file the bot uploads (uploadLimitOf): what its images are fitted to and packed by', () => {
  it('is the attachment_size_limit where a request that sends a message takes a file that size (10 MiB, 24 MiB)', () => {
    expect(uploadLimitOf({ attachmentSizeLimit: 10 * MiB })).toBe(10 * MiB);
    expect(uploadLimitOf({ attachmentSizeLimit: 24 * MiB })).toBe(24 * MiB);
    expect(uploadLimitOf({})).toBe(DISCORD_LIMITS.defaultAttachmentBytes);
  });

  it('is a request’s 25 MiB less the room for the rest of it in a boosted server (50 MiB, 100 MiB): a larger file is certain to be refused', () => {
    for (const attachmentSizeLimit of [25 * MiB, 50 * MiB, 100 * MiB]) {
      expect(uploadLimitOf({ attachmentSizeLimit }), String(attachmentSizeLimit)).toBe(DISCORD_LIMITS.requestBytes - REQUEST_ROOM_BYTES);
    }
    expect(DISCORD_LIMITS.requestBytes).toBe(25 * MiB);
    expect(REQUEST_ROOM_BYTES).toBeGreaterThan(0);
    expect(REQUEST_ROOM_BYTES).toBeLessThan(MiB);
  });
});
