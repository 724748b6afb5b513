import { describe, expect, it } from 'vitest';
import { attachmentLimitOf, DISCORD_LIMITS } from '../../../bots/discord/discord-facts.js';

describe('the upload limit of an interaction or of what it left (attachmentLimitOf)', () => {
  it('is the attachment_size_limit Discord sent, in bytes', () => {
    expect(attachmentLimitOf({ attachmentSizeLimit: 50 * 1024 * 1024 })).toBe(50 * 1024 * 1024);
    expect(attachmentLimitOf({ attachmentSizeLimit: 1 })).toBe(1);
  });

  it('is Discord’s default for a bot where none was sent or kept, or what was is no size (0, negative, not finite)', () => {
    const noSizes = [undefined, {}, { attachmentSizeLimit: undefined }, { attachmentSizeLimit: 0 }, { attachmentSizeLimit: -1 }, { attachmentSizeLimit: Number.NaN }, { attachmentSizeLimit: Number.POSITIVE_INFINITY }];
    for (const source of noSizes) expect(attachmentLimitOf(source), JSON.stringify(source)).toBe(DISCORD_LIMITS.defaultAttachmentBytes);
    expect(DISCORD_LIMITS.defaultAttachmentBytes).toBe(10 * 1024 * 1024);
  });
});
