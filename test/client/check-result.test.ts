import { describe, expect, it } from 'vitest';
import { checkImages } from '../../src/client/check-result.js';

const png = () => ({ b64_json: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]).toString('base64') });

describe('checkImages: an answer short of or past the images asked for', () => {
  it('says one image the service sent in the singular', () => {
    expect(checkImages([png()], { n: 2, output_format: 'png' }).problem).toBe('the service sent 1 image, not the 2 asked for');
  });

  it('says several images in the plural, and keeps every good one', () => {
    const checked = checkImages([png(), png(), png()], { n: 2, output_format: 'png' });
    expect(checked.problem).toBe('the service sent 3 images, not the 2 asked for');
    expect(checked.good).toHaveLength(3);
  });
});
