import { describe, expect, it } from 'vitest';
import { checkImages, type LabelledImage } from '../../src/client/check-result.js';

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

describe('checkImages: each good image labelled with the format its check found', () => {
  it('labels a PNG and a JPEG of one answer as a png and a jpeg, and leaves a bad one unlabelled', () => {
    const jpeg = { b64_json: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 0x01]).toString('base64') };
    const bad = { b64_json: Buffer.from('not an image at all').toString('base64') };
    const images: LabelledImage[] = [png(), jpeg, bad];
    const checked = checkImages(images, { n: 3, output_format: 'png' });
    expect(checked.good.map((image) => image.output_format)).toEqual(['png', 'jpeg']);
    expect(images[2]).not.toHaveProperty('output_format');
    expect(checked.problem).toBe('image 3 of the answer does not decode to an image (expected png)');
  });
});
