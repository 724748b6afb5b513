import { describe, expect, it } from 'vitest';
import { formatsOf } from '../../../bots/runner/types.js';

describe('formatsOf: each of a job’s images named by its own format', () => {
  it('reads each image’s own format from `formats`, in the order of the images', () => {
    expect(formatsOf({ formats: ['png', 'jpeg', 'webp'] }, 3)).toEqual(['png', 'jpeg', 'webp']);
  });

  it('takes the one `format` of a record kept before `formats` for all its images', () => {
    expect(formatsOf({ format: 'jpeg' }, 2)).toEqual(['jpeg', 'jpeg']);
  });

  it('takes an image `formats` does not name as the first image’s format', () => {
    expect(formatsOf({ formats: ['webp'] }, 2)).toEqual(['webp', 'webp']);
  });

  it('takes the images of an update that names no format as PNG, so a paid image still reaches its member', () => {
    expect(formatsOf({}, 2)).toEqual(['png', 'png']);
  });
});
