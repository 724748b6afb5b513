import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeImages, imageBytes, imagesOfFailure, isCompletedEvent, type CompletedEvent } from '../../src/index.js';
import { useEmulator } from '../helpers/emulator.js';
import { describeImage, makeImage } from '../helpers/images.js';
import { resultFromJson } from '../../src/client/job-result.js';

const env = useEmulator();

/** Counts base64 decodes made while `run` runs. */
function base64DecodesDuring<T>(run: () => T): { value: T; decodes: number } {
  const from = vi.spyOn(Buffer, 'from');
  try {
    const value = run();
    const decodes = from.mock.calls.filter((args) => (args as unknown[])[1] === 'base64').length;
    return { value, decodes };
  } finally {
    from.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('the bytes of a non-streamed result', () => {
  it('are the ones the check decoded: handing them on decodes nothing again', async () => {
    const result = await env.client().generate({ prompt: 'two owls', n: 2, quality: 'low', output_format: 'webp' });
    const { value: images, decodes } = base64DecodesDuring(() => decodeImages(result));
    expect(decodes).toBe(0);
    expect(images).toHaveLength(2);
    expect(images[0]).toBe(imageBytes(result.data[0]!));
    expect(images[1]!.equals(Buffer.from(result.data[1]!.b64_json, 'base64'))).toBe(true);
    expect(await describeImage(images[0]!)).toMatchObject({ format: 'webp' });
  });

  it('stay with the good images of a bad answer, whose base64 is kept too', async () => {
    const good = Buffer.from(await makeImage('png')).toString('base64');
    const body = { created: 1, data: [{ b64_json: good }, { b64_json: 'bm90IGFuIGltYWdl' }] };
    const error = catchError(() => resultFromJson(body, { operation: 'generate', n: 2, output_format: 'png', size: '1024x1024', quality: 'low', background: 'auto' }, 'req_1'));
    expect(error).toMatchObject({ code: 'bad_response' });
    const arrived = imagesOfFailure(error);
    expect(arrived.map((e) => e.b64_json)).toEqual([good]);
    const { value, decodes } = base64DecodesDuring(() => imageBytes(arrived[0]!));
    expect(decodes).toBe(0);
    expect(value.equals(Buffer.from(good, 'base64'))).toBe(true);
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('the bytes of a stream', () => {
  it('of each completed event are the ones the check decoded, and its finished result hands on the same', async () => {
    const completed: CompletedEvent[] = [];
    for await (const event of env.client().generateStream({ prompt: 'three kites', n: 3, quality: 'low', partial_images: 1 })) {
      if (isCompletedEvent(event)) completed.push(event);
    }
    const { value: bytes, decodes } = base64DecodesDuring(() => completed.map(imageBytes));
    expect(decodes).toBe(0);
    const result = await env.client().generateStream({ prompt: 'finished', n: 2, quality: 'low' }).finalResult();
    const again = base64DecodesDuring(() => decodeImages(result));
    expect(again.decodes).toBe(0);
    expect(bytes).toHaveLength(3);
    expect((await describeImage(bytes[0]!)).format).toBe('png');
  });
});

describe('imageBytes of an image the client never checked', () => {
  it('decodes it once, however often it is asked', () => {
    const image = { b64_json: Buffer.from('not checked').toString('base64') };
    const { value: first, decodes } = base64DecodesDuring(() => [imageBytes(image), imageBytes(image)]);
    expect(decodes).toBe(1);
    expect(first[0]).toBe(first[1]);
    expect(first[0]!.toString()).toBe('not checked');
  });
});
