import { describe, expect, it } from 'vitest';
import { imageOfPartial, PartialBound } from '../../src/client/partial-bound.js';
import type { PartialImageEvent } from '../../src/spec/result-schemas.js';

/** A partial of index `index`, labelled with its image when `image` is given (under `label`). */
function partial(index: number, image?: number, label: 'image_index' | 'output_index' = 'image_index'): PartialImageEvent {
  return {
    type: 'image_generation.partial_image',
    b64_json: '',
    partial_image_index: index,
    created_at: 1,
    size: '1024x1024',
    quality: 'low',
    background: 'opaque',
    output_format: 'png',
    ...(image !== undefined && { [label]: image }),
  };
}

/** Which of `events` the bound hands on, as `p<index>` (and `@<image>` when labelled). */
function passed(bound: PartialBound, events: PartialImageEvent[]): string[] {
  return events.filter((event) => bound.admits(event)).map((event) => `p${event.partial_image_index}${'image_index' in event ? `@${String(event.image_index)}` : ''}`);
}

describe('imageOfPartial', () => {
  it('takes the image the service names, as image_index or output_index', () => {
    expect(imageOfPartial(partial(0, 1), 0)).toBe(1);
    expect(imageOfPartial(partial(0, 2, 'output_index'), 0)).toBe(2);
  });

  it('takes the image after the completed ones when the partial names none, or names one that is not a whole number from 0', () => {
    expect(imageOfPartial(partial(0), 1)).toBe(1);
    for (const odd of [-1, 1.5, '1', null]) expect(imageOfPartial({ ...partial(0), image_index: odd } as PartialImageEvent, 3)).toBe(3);
  });
});

describe('PartialBound', () => {
  it('hands on every partial asked for when unlabelled images are interleaved', () => {
    expect(passed(new PartialBound(2, 2), [partial(0), partial(0), partial(1), partial(1)])).toEqual(['p0', 'p0', 'p1', 'p1']);
  });

  it('hands on an unlabelled index at most n times, and no index past the ones asked for', () => {
    expect(passed(new PartialBound(2, 2), [partial(0), partial(0), partial(0), partial(2), partial(1), partial(1), partial(1)])).toEqual(['p0', 'p0', 'p1', 'p1']);
  });

  it('hands on a labelled partial once per image and index, for images below n, in any order', () => {
    const events = [partial(1, 1), partial(0, 1), partial(0, 0), partial(0, 0), partial(0, 2), partial(2, 0), partial(1, 0)];
    expect(passed(new PartialBound(2, 2), events)).toEqual(['p1@1', 'p0@1', 'p0@0', 'p1@0']);
  });

  it('hands on at most n × partial_images however labelled and unlabelled partials mix', () => {
    const events = [partial(0, 0), partial(0), partial(0, 1), partial(0), partial(0)];
    expect(passed(new PartialBound(1, 2), events)).toHaveLength(2);
  });

  it('hands on none when 0 were asked for, and up to 3 per image when the field was not sent', () => {
    expect(passed(new PartialBound(0, 1), [partial(0)])).toEqual([]);
    expect(passed(new PartialBound(undefined, 1), [partial(0), partial(1), partial(2), partial(3)])).toEqual(['p0', 'p1', 'p2']);
  });
});
