import { describe, expect, it } from 'vitest';
import { decodeCustomId, encodeCustomId } from '../../../bots/discord/custom-ids.js';

describe('custom ids', () => {
  it('carry an action, a job key and an image number, and read back the same', () => {
    for (const data of [
      { action: 'reroll', key: 'aB3_-x9' },
      { action: 'cancel', key: 'k' },
      { action: 'retry', key: 'Q1w2E3r4T5y' },
      { action: 'edit', key: 'Q1w2E3r4T5y', index: 9 },
      { action: 'edit-result', key: 'abc', index: 0 },
      { action: 'edit-message', key: 'abc' },
    ] as const) {
      const id = encodeCustomId(data);
      expect(id.length).toBeLessThanOrEqual(100);
      expect(decodeCustomId(id)).toEqual(data);
    }
  });

  it('ignore ids that are not ours or not well formed', () => {
    for (const id of ['', 'reroll:abc', 'other:reroll:abc', 'pictor:explode:abc', 'pictor:edit:abc', 'pictor:reroll:abc:1', 'pictor:edit:abc:-1', 'pictor:edit:abc:01', 'pictor:reroll:a b']) {
      expect(decodeCustomId(id)).toBeUndefined();
    }
  });

  it('refuse a key that would not survive the round trip', () => {
    expect(() => encodeCustomId({ action: 'reroll', key: 'has:colon' })).toThrow(RangeError);
  });
});
