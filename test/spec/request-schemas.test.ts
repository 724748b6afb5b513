import { describe, expect, it } from 'vitest';
import { ALLOWED, editRequestOf, isParsedRequest, LIMITS, parseEditRequest, parseGenerationRequest, sniffImageType, ValidationError, type ValidationRule } from '../../src/index.js';
import { makeImage } from '../helpers/images.js';

function rejection(fn: () => unknown): ValidationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('a generation request', () => {
  it('fills in every default of the spec', () => {
    expect(parseGenerationRequest({ prompt: 'a fox' })).toEqual({
      model: 'gpt-image-2',
      prompt: 'a fox',
      n: 1,
      size: '1024x1024',
      quality: 'auto',
      background: 'auto',
      output_format: 'png',
      moderation: 'auto',
      stream: false,
    });
  });

  it('accepts every allowed value of every enum', () => {
    for (const size of ['1024x1024', '1024x1536', '1536x1024'] as const)
      for (const quality of ['low', 'medium', 'high', 'auto'] as const)
        for (const output_format of ['png', 'jpeg', 'webp'] as const)
          for (const moderation of ['low', 'auto'] as const)
            expect(parseGenerationRequest({ prompt: 'x', size, quality, output_format, moderation }).size).toBe(size);
  });

  it.each([
    ['model', { model: 'dall-e-3' }],
    ['size', { size: '512x512' }],
    ['size', { size: 'auto' }],
    ['quality', { quality: 'ultra' }],
    ['background', { background: 'white' }],
    ['output_format', { output_format: 'gif' }],
    ['moderation', { moderation: 'high' }],
    ['stream', { stream: 'yes' }],
    ['user', { user: '' }],
  ])('names %s when its value is not allowed', (param, extra) => {
    const error = rejection(() => parseGenerationRequest({ prompt: 'x', ...extra }));
    expect(error.code).toBe('validation_error');
    expect(error.param).toBe(param);
    expect(error.message).toContain(param);
    expect(error.allowed).toBe(ALLOWED[param]);
  });

  it('lists the allowed sizes in the message', () => {
    expect(rejection(() => parseGenerationRequest({ prompt: 'x', size: '1x1' })).message).toContain('1024x1024, 1024x1536, 1536x1024');
  });

  it.each([0, 11, 2.5, -1])('refuses n = %s (1 to 10 only)', (n) => {
    expect(rejection(() => parseGenerationRequest({ prompt: 'x', n })).param).toBe('n');
  });

  it.each([1, 10])('accepts n = %s', (n) => {
    expect(parseGenerationRequest({ prompt: 'x', n }).n).toBe(n);
  });

  it('requires a prompt', () => {
    expect(rejection(() => parseGenerationRequest({})).param).toBe('prompt');
    expect(rejection(() => parseGenerationRequest({ prompt: '   ' })).param).toBe('prompt');
  });

  it('accepts a prompt of exactly 32000 characters and refuses one more', () => {
    expect(parseGenerationRequest({ prompt: 'a'.repeat(LIMITS.promptMaxChars) }).prompt).toHaveLength(32000);
    expect(rejection(() => parseGenerationRequest({ prompt: 'a'.repeat(LIMITS.promptMaxChars + 1) })).param).toBe('prompt');
  });

  it('counts characters, not UTF-16 units, in the prompt', () => {
    const emoji = '🦊'.repeat(LIMITS.promptMaxChars);
    expect(emoji.length).toBe(64000);
    expect(parseGenerationRequest({ prompt: emoji }).prompt).toBe(emoji);
  });

  it('refuses background transparent with jpeg and explains why', () => {
    const error = rejection(() => parseGenerationRequest({ prompt: 'x', background: 'transparent', output_format: 'jpeg' }));
    expect(error.param).toBe('output_format');
    expect(error.message).toMatch(/png or webp when background is transparent/);
  });

  it.each(['png', 'webp'] as const)('accepts background transparent with %s', (output_format) => {
    expect(parseGenerationRequest({ prompt: 'x', background: 'transparent', output_format }).background).toBe('transparent');
  });

  it.each(['jpeg', 'webp'] as const)('accepts output_compression 0 and 100 with %s', (output_format) => {
    expect(parseGenerationRequest({ prompt: 'x', output_format, output_compression: 0 }).output_compression).toBe(0);
    expect(parseGenerationRequest({ prompt: 'x', output_format, output_compression: 100 }).output_compression).toBe(100);
  });

  it('refuses output_compression outside 0 to 100', () => {
    expect(rejection(() => parseGenerationRequest({ prompt: 'x', output_format: 'jpeg', output_compression: 101 })).param).toBe('output_compression');
    expect(rejection(() => parseGenerationRequest({ prompt: 'x', output_format: 'jpeg', output_compression: -1 })).param).toBe('output_compression');
  });

  it('refuses output_compression with png, where it means nothing', () => {
    const error = rejection(() => parseGenerationRequest({ prompt: 'x', output_compression: 50 }));
    expect(error.param).toBe('output_compression');
    expect(error.message).toContain('jpeg or webp');
  });

  it('takes partial_images from 0 to 3 and leaves it out unless asked', () => {
    expect(parseGenerationRequest({ prompt: 'x' })).not.toHaveProperty('partial_images');
    expect(parseGenerationRequest({ prompt: 'x', partial_images: 3 }).partial_images).toBe(3);
    expect(rejection(() => parseGenerationRequest({ prompt: 'x', partial_images: 4 })).param).toBe('partial_images');
  });

  it('names an unknown field instead of ignoring it', () => {
    const error = rejection(() => parseGenerationRequest({ prompt: 'x', qualty: 'high' }));
    expect(error.param).toBe('qualty');
    expect(error.message).toContain('not a field');
  });

  it('refuses response_format, which the image model does not support', () => {
    expect(rejection(() => parseGenerationRequest({ prompt: 'x', response_format: 'url' })).param).toBe('response_format');
  });
});

describe('an edit request', () => {
  it('takes PNG, JPEG and WebP images by their content, whatever their names', async () => {
    const image = [
      { data: await makeImage('png'), filename: 'photo.jpg' },
      { data: await makeImage('jpeg'), filename: 'no-extension' },
      { data: await makeImage('webp') },
    ];
    const request = parseEditRequest({ prompt: 'make it blue', image });
    expect(request.image.map((i) => sniffImageType(i.data))).toEqual(['png', 'jpeg', 'webp']);
    expect(request.size).toBe('1024x1024');
  });

  it('refuses a file that is not an image even when it is named .png, naming its position', async () => {
    const good = await makeImage('png');
    const error = rejection(() =>
      parseEditRequest({ prompt: 'x', image: [{ data: good }, { data: new TextEncoder().encode('GIF89a not really'), filename: 'cat.png' }] }),
    );
    expect(error.param).toBe('image[1]');
    expect(error.message).toContain('cat.png');
  });

  it('refuses a damaged image (truncated, or a PNG signature followed by text), naming its position', async () => {
    const good = await makeImage('png');
    const truncated = good.subarray(0, 40);
    const fake = new Uint8Array([...good.subarray(0, 8), ...new TextEncoder().encode('garbage')]);
    for (const [data, filename] of [[truncated, 'cut.png'], [fake, 'fake.png']] as const) {
      const error = rejection(() => parseEditRequest({ prompt: 'x', image: [{ data: good }, { data, filename }] }));
      expect(error).toMatchObject({ code: 'validation_error', param: 'image[1]' });
      expect(error.message).toContain(`image "${filename}" is a damaged PNG image`);
    }
  });

  it('needs at least one image and takes at most 16', async () => {
    const png = await makeImage('png', 8, 8);
    expect(rejection(() => parseEditRequest({ prompt: 'x', image: [] })).param).toBe('image');
    expect(parseEditRequest({ prompt: 'x', image: Array.from({ length: 16 }, () => ({ data: png })) }).image).toHaveLength(16);
    expect(rejection(() => parseEditRequest({ prompt: 'x', image: Array.from({ length: 17 }, () => ({ data: png })) })).param).toBe('image');
  });

  it('applies the cross-field rule to edits too', async () => {
    const data = await makeImage();
    const error = rejection(() => parseEditRequest({ prompt: 'x', image: [{ data }], background: 'transparent', output_format: 'jpeg' }));
    expect(error.param).toBe('output_format');
  });
});

describe('every rule the schemas raise', () => {
  // One request breaking each kind of rule (a kind without one here does not compile), and the fields it is about.
  const breaking: Record<ValidationRule['kind'], readonly [input: Record<string, unknown>, fields: readonly string[]]> = {
    empty: [{ prompt: '   ' }, ['prompt']],
    too_long: [{ prompt: 'x'.repeat(LIMITS.promptMaxChars + 1) }, ['prompt']],
    one_of: [{ prompt: 'x', size: '7x7' }, ['size']],
    integer_range: [{ prompt: 'x', n: 0 }, ['n']],
    transparent_format: [{ prompt: 'x', background: 'transparent', output_format: 'jpeg' }, ['background', 'output_format']],
    compression_format: [{ prompt: 'x', output_format: 'png', output_compression: 50 }, ['output_format', 'output_compression']],
  };

  it.each(Object.entries(breaking))('%s names the fields it is about, the field at fault among them', (kind, [input, fields]) => {
    const error = rejection(() => parseGenerationRequest(input));
    expect(error.rule).toEqual(expect.objectContaining({ kind, fields }));
    expect(fields).toContain(error.param);
  });

  it.each(['model', 'size', 'quality', 'background', 'output_format', 'moderation', 'n', 'output_compression', 'partial_images'])('a value %s does not take names that field alone', (field) => {
    const error = rejection(() => parseGenerationRequest({ prompt: 'x', output_format: 'webp', [field]: field === 'n' || field.endsWith('_compression') || field === 'partial_images' ? -1 : 'nope' }));
    expect(error.param).toBe(field);
    expect(error.rule?.fields).toEqual([field]);
  });
});

describe('a request parsed once', () => {
  it('is known as parsed, and frozen so it stays what was checked; a copy is not', () => {
    const request = parseGenerationRequest({ prompt: 'a fox', stream: true });
    expect(isParsedRequest(request)).toBe(true);
    expect(Object.isFrozen(request)).toBe(true);
    expect(isParsedRequest({ ...request })).toBe(false);
    expect(isParsedRequest({ prompt: 'a fox' })).toBe(false);
  });

  it('becomes an edit with its images checked alone, the fields as they were', async () => {
    const fields = parseGenerationRequest({ prompt: 'make it blue', quality: 'low', stream: true });
    const data = await makeImage('png');
    const edit = editRequestOf(fields, [{ data, filename: 'a.png' }]);
    expect(edit).toEqual({ ...fields, image: [{ data, filename: 'a.png' }] });
    expect(isParsedRequest(edit)).toBe(true);
    expect(rejection(() => editRequestOf(fields, [{ data: new Uint8Array([1, 2, 3]) }]))).toMatchObject({ param: 'image[0]' });
    expect(rejection(() => editRequestOf(fields, []))).toMatchObject({ param: 'image' });
  });

  it('parses fields that were not parsed before as a whole edit', () => {
    expect(rejection(() => editRequestOf({ prompt: 'x', size: '9x9' } as never, []))).toMatchObject({ param: 'size' });
  });
});
