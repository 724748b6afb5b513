import sharp from 'sharp';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createEmulator, type Emulator } from '../../src/emulator/index.js';
import { CompletedEventSchema, ImageStreamEventSchema, PartialImageEventSchema } from '../../src/spec/index.js';
import { bytesOf, edit, generate, meanDifference, metadataOf, readEvents, solidImage } from './emulator-helpers.js';

const emulator = createEmulator();
afterAll(() => emulator.close());

const streamed = (fields: Record<string, unknown> = {}) => ({ prompt: 'a paper boat', quality: 'low', stream: true, ...fields });

describe('streamed generations', () => {
  it('answers text/event-stream with event and data lines whose JSON repeats the event name in type', async () => {
    const response = await generate(emulator, streamed({ partial_images: 1 }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const text = await response.text();
    expect(text).toMatch(/^event: image_generation\.partial_image\ndata: \{"type":"image_generation\.partial_image",/);
    expect(text.endsWith('\n\n')).toBe(true);
    for (const event of await readEvents(new Response(text))) {
      expect(event.json.type).toBe(event.event);
      ImageStreamEventSchema.parse(event.json);
    }
  });

  it('sends the documented fields on partial and completed events', async () => {
    const events = await readEvents(await generate(emulator, streamed({ partial_images: 1, size: '1024x1536', output_format: 'webp' })));
    const partial = PartialImageEventSchema.parse(events[0]!.json);
    expect(Object.keys(partial).sort()).toEqual(
      ['b64_json', 'background', 'created_at', 'output_format', 'partial_image_index', 'quality', 'size', 'type'].sort(),
    );
    expect(partial).toMatchObject({ partial_image_index: 0, size: '1024x1536', quality: 'low', background: 'opaque', output_format: 'webp' });
    const completed = CompletedEventSchema.parse(events[1]!.json);
    expect(completed.type).toBe('image_generation.completed');
    expect(completed).not.toHaveProperty('partial_image_index');
    expect(Object.keys(completed.usage!).sort()).toEqual(['input_tokens', 'input_tokens_details', 'output_tokens', 'total_tokens']);
    expect(completed.usage!.input_tokens_details).toEqual({ text_tokens: 3, image_tokens: 0 });
    const meta = await metadataOf(completed.b64_json);
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 1024, 1536]);
  });

  it.each([0, 1, 2, 3])('sends %i partials when partial_images says so', async (count) => {
    const events = await readEvents(await generate(emulator, streamed({ partial_images: count })));
    expect(events.map((e) => e.event)).toEqual([...Array(count).fill('image_generation.partial_image'), 'image_generation.completed']);
    expect(events.slice(0, count).map((e) => e.json.partial_image_index)).toEqual([...Array(count).keys()]);
  });

  it('sends defaultPartialImages partials (2 by default) when the request does not say', async () => {
    const events = await readEvents(await generate(emulator, streamed()));
    expect(events.map((e) => e.event)).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);
    const custom = createEmulator({ defaultPartialImages: 3 });
    expect(await readEvents(await generate(custom, streamed()))).toHaveLength(4);
    custom.configure({ defaultPartialImages: 0 });
    expect(await readEvents(await generate(custom, streamed()))).toHaveLength(1);
    await custom.close();
  });

  it('streams n images one after another: each image’s partials, then its completed event', async () => {
    const events = await readEvents(await generate(emulator, streamed({ n: 3, partial_images: 2 })));
    const shape = events.map((e) => (e.event === 'image_generation.completed' ? 'C' : `P${e.json.partial_image_index}`));
    expect(shape).toEqual(['P0', 'P1', 'C', 'P0', 'P1', 'C', 'P0', 'P1', 'C']);
    const finals = events.filter((e) => e.event === 'image_generation.completed').map((e) => e.json.b64_json as string);
    expect(new Set(finals).size).toBe(3);
  });

  it('sends partials that get closer to the final image', async () => {
    const events = await readEvents(await generate(emulator, streamed({ partial_images: 3, prompt: 'progressive detail' })));
    const final = bytesOf(events.at(-1)!.json.b64_json);
    const diffs: number[] = [];
    for (const e of events.slice(0, 3)) {
      const partial = bytesOf(e.json.b64_json);
      expect((await sharp(partial).metadata()).width).toBe(1024);
      diffs.push(await meanDifference(partial, final));
    }
    expect(diffs[0]).toBeGreaterThan(diffs[1]!);
    expect(diffs[1]).toBeGreaterThan(diffs[2]!);
    expect(diffs[2]).toBeGreaterThan(0);
  });

  it('spreads latencyMs across the partials and the completed event', async () => {
    const slow = createEmulator({ latencyMs: 300 });
    const started = performance.now();
    const response = await generate(slow, streamed({ partial_images: 2 }));
    const reader = response.body!.getReader();
    const arrivals: number[] = [];
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
      arrivals.push(performance.now() - started);
    }
    expect(arrivals).toHaveLength(3);
    expect(arrivals[0]).toBeGreaterThanOrEqual(80);
    expect(arrivals[0]).toBeLessThan(arrivals[2]! - 100);
    expect(arrivals[2]).toBeGreaterThanOrEqual(280);
    await slow.close();
  });

  it('stops producing when the reader cancels the body', async () => {
    const slow = createEmulator({ latencyMs: 2000 });
    const response = await generate(slow, streamed({ partial_images: 3 }));
    expect(slow.stats().openStreams).toBe(1);
    await response.body!.cancel();
    expect(slow.stats().openStreams).toBe(0);
    expect(slow.stats().imagesGenerated).toBe(0);
    await slow.close();
  });

  it('counts images and partials sent in the stats', async () => {
    const counting = createEmulator();
    await (await generate(counting, streamed({ n: 2, partial_images: 1 }))).text();
    expect(counting.stats()).toMatchObject({ imagesGenerated: 2, partialImagesSent: 2, openStreams: 0 });
    await counting.close();
  });

  it('can send a single event of about 30 MB', async () => {
    const big = createEmulator({ padImageBytes: 22_500_000 });
    const response = await generate(big, streamed({ partial_images: 0 }));
    const text = await response.text();
    expect(text.length).toBeGreaterThan(30_000_000);
    const [event] = await readEvents(new Response(text));
    expect(event!.event).toBe('image_generation.completed');
    expect((await metadataOf(event!.json.b64_json)).format).toBe('png');
    await big.close();
  });
});

describe('streamed edits', () => {
  it('streams image_edit events when the multipart field stream is true', async () => {
    const response = await edit(emulator, [{ bytes: await solidImage('#0088ff') }], {
      prompt: 'add stars',
      quality: 'high',
      stream: 'true',
      partial_images: '2',
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readEvents(response);
    expect(events.map((e) => e.event)).toEqual(['image_edit.partial_image', 'image_edit.partial_image', 'image_edit.completed']);
    const completed = CompletedEventSchema.parse(events[2]!.json);
    expect(completed.quality).toBe('high');
    expect(completed.usage!.input_tokens_details?.image_tokens).toBeGreaterThan(0);
  });

  it('answers JSON for an edit when stream is false', async () => {
    const response = await edit(emulator, [{ bytes: await solidImage('#0088ff') }], { prompt: 'add stars', quality: 'low', stream: 'false' });
    expect(response.headers.get('content-type')).toBe('application/json');
  });
});

/** Waits until the emulator has read the last request it got: its answer now waits out the latency. */
async function waitingAnswer(emulator: Emulator): Promise<void> {
  // Bounded by the test's time, not vi.waitFor's default second: reading the body can wait on a busy machine.
  await vi.waitFor(() => expect(emulator.requests.at(-1)?.fields).toBeDefined(), { interval: 5, timeout: 15_000 });
}

describe('waiting answers', () => {
  it('rejects an in-process fetch with the abort reason when the caller aborts during latency', async () => {
    const slow = createEmulator({ latencyMs: 5000 });
    const controller = new AbortController();
    const pending = generate(slow, { prompt: 'slow', quality: 'low' }, { signal: controller.signal });
    await waitingAnswer(slow);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    expect(slow.requests.at(-1)?.status).toBe(0);
    await slow.close();
  });

  it('emulator.close() ends an answer that is still waiting', async () => {
    const slow = createEmulator({ latencyMs: 5000 });
    const pending = generate(slow, { prompt: 'slow', quality: 'low' });
    await waitingAnswer(slow);
    await slow.close();
    await expect(pending).rejects.toThrow(TypeError);
  });
});
