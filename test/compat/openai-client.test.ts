import OpenAI, { toFile } from 'openai';
import { describe, expect, it } from 'vitest';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { EDIT_FILE_FIELD, EVENT_TYPES, MODEL } from '../../src/spec/index.js';
import { useEmulator } from '../helpers/emulator.js';
import { describeImage, makeImage } from '../helpers/images.js';

/**
 * The official `openai` npm client, unmodified, pointed at the emulator: what
 * works against the emulator works against anything that speaks the real wire.
 */
const emu = useEmulator({ recordImageBytes: true });

function openai(options: { maxRetries?: number; apiKey?: string } = {}): OpenAI {
  return new OpenAI({ apiKey: options.apiKey ?? DEV_API_KEY, baseURL: `${emu.url}/v1`, maxRetries: options.maxRetries ?? 0, timeout: 20_000 });
}

const bytesOf = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64');

describe('the official openai client against the emulator', () => {
  it('generates two 1536x1024 JPEGs and gets them as decodable base64 with usage', async () => {
    const response = await openai().images.generate({
      model: MODEL,
      prompt: 'a lighthouse at dusk',
      n: 2,
      output_format: 'jpeg',
      size: '1536x1024',
      quality: 'low',
    });

    expect(response.data).toHaveLength(2);
    for (const image of response.data ?? []) {
      expect(await describeImage(bytesOf(image.b64_json))).toMatchObject({ format: 'jpeg', width: 1536, height: 1024 });
    }
    expect(response).toMatchObject({ output_format: 'jpeg', size: '1536x1024', quality: 'low' });
    expect(response.usage?.output_tokens).toBeGreaterThan(0);
    expect(response.usage?.total_tokens).toBe((response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0));
    expect(response._request_id).toBe(emu.emulator.requests.at(-1)?.id);
    expect(emu.emulator.requests.at(-1)).toMatchObject({ route: 'generations', status: 200, parsed: { n: 2, output_format: 'jpeg', size: '1536x1024' } });
  });

  it('streams a generation as two partial events in order and then one completed event', async () => {
    const stream = await openai().images.generate({
      model: MODEL,
      prompt: 'a lighthouse at dusk',
      stream: true,
      partial_images: 2,
      size: '1024x1536',
      output_format: 'webp',
      quality: 'low',
    });

    const events = [];
    for await (const event of stream) events.push(event);

    expect(events.map((e) => e.type)).toEqual([EVENT_TYPES.generationPartial, EVENT_TYPES.generationPartial, EVENT_TYPES.generationCompleted]);
    const [first, second, completed] = events;
    expect(first).toMatchObject({ type: EVENT_TYPES.generationPartial, partial_image_index: 0, size: '1024x1536', output_format: 'webp' });
    expect(second).toMatchObject({ type: EVENT_TYPES.generationPartial, partial_image_index: 1 });
    expect(completed?.type === EVENT_TYPES.generationCompleted && completed.usage.output_tokens).toBeGreaterThan(0);
    for (const event of events) {
      expect(await describeImage(bytesOf(event.b64_json))).toMatchObject({ format: 'webp', width: 1024, height: 1536 });
    }
    expect(emu.emulator.stats()).toMatchObject({ partialImagesSent: 2, imagesGenerated: 1, openStreams: 0 });
  });

  it('sends an edit with two PNG files as two image[] parts of type image/png', async () => {
    const base = await makeImage('png', 96, 64, { r: 20, g: 120, b: 200 });
    const mask = await makeImage('png', 48, 48, { r: 240, g: 240, b: 240 });
    const response = await openai().images.edit({
      model: MODEL,
      prompt: 'put the second picture in the corner of the first',
      image: [await toFile(base, 'base.png', { type: 'image/png' }), await toFile(mask, 'corner.png', { type: 'image/png' })],
      size: '1024x1024',
      quality: 'low',
    });

    const received = emu.emulator.requests.at(-1);
    expect(received).toMatchObject({ route: 'edits', status: 200, fields: { model: MODEL, size: '1024x1024', quality: 'low' } });
    expect(received?.images.map((part) => [part.field, part.filename, part.contentType])).toEqual([
      [EDIT_FILE_FIELD, 'base.png', 'image/png'],
      [EDIT_FILE_FIELD, 'corner.png', 'image/png'],
    ]);
    expect(Buffer.from(received!.images[0]!.bytes!).equals(Buffer.from(base))).toBe(true);
    expect(Buffer.from(received!.images[1]!.bytes!).equals(Buffer.from(mask))).toBe(true);

    expect(response.data).toHaveLength(1);
    expect(await describeImage(bytesOf(response.data?.[0]?.b64_json))).toMatchObject({ format: 'png', width: 1024, height: 1024 });
    expect(response.usage?.input_tokens_details.image_tokens).toBeGreaterThan(0);
  });

  it('streams an edit as image_edit events', async () => {
    const stream = await openai().images.edit({
      model: MODEL,
      prompt: 'make it night',
      image: await toFile(await makeImage('png'), 'day.png', { type: 'image/png' }),
      stream: true,
      partial_images: 1,
      quality: 'low',
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual([EVENT_TYPES.editPartial, EVENT_TYPES.editCompleted]);
  });

  it('reads a refused prompt as a BadRequestError with code moderation_blocked', async () => {
    const error = await openai()
      .images.generate({ model: MODEL, prompt: 'something forbidden', quality: 'low' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, code: 'moderation_blocked' });
  });

  it('reads a wrong key as an AuthenticationError', async () => {
    const error = await openai({ apiKey: 'not-the-key' })
      .images.generate({ model: MODEL, prompt: 'a cat', quality: 'low' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error).toMatchObject({ status: 401 });
  });

  it('retries a 429 that advertises retry-after-ms and succeeds on the next attempt', async () => {
    emu.emulator.injectFault('rate_limited', { count: 1, retryAfterMs: 20 });
    const response = await openai({ maxRetries: 1 }).images.generate({ model: MODEL, prompt: 'a cat', quality: 'low' });
    expect(response.data).toHaveLength(1);
    expect(emu.emulator.requests.map((r) => r.status)).toEqual([429, 200]);
  });

  it('turns an error event in the middle of a stream into an APIError', async () => {
    emu.emulator.injectFault('stream_error_event');
    const stream = await openai().images.generate({ model: MODEL, prompt: 'a cat', stream: true, partial_images: 1, quality: 'low' });
    const types: string[] = [];
    const error = await (async () => {
      for await (const event of stream) types.push(event.type);
    })().catch((e: unknown) => e);
    expect(types).toEqual([EVENT_TYPES.generationPartial]);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ code: 'server_error' });
  });
});
