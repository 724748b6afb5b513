import { describe, expect, it } from 'vitest';
import { ImageLimiter, priceOfResult, sniffImageType, BACKGROUNDS } from '../../../src/index.js';
import { makeImage } from '../../helpers/images.js';
import { expectOrderedSequence, recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();

describe('JobRunner updates', () => {
  it('reports queued, started, every partial in stream order, then the completed images with their cost', async () => {
    kit.emu.emulator.configure({ latencyMs: 300 });
    const { runner } = await kit.runner({ partialImages: 2, minUpdateIntervalMs: 0 });
    const rec = recordingSink();

    const handle = await runner.submit({ kind: 'generate', prompt: 'a red fox', options: { n: 2, quality: 'low' }, requester: requester() }, rec.sink);
    const final = await handle.done;

    expect(rec.types).toEqual(['queued', 'started', 'partial', 'partial', 'partial', 'partial', 'completed']);
    expectOrderedSequence(rec.received.map((r) => r.update));
    expect(final).toBe(rec.final);
    expect(rec.partials().map((p) => [p.imageIndex, p.partialIndex])).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
    ]);
    for (const partial of rec.partials()) expect(sniffImageType(partial.image)).toBe(partial.format);

    if (final.type !== 'completed') throw new Error(`expected completed, got ${final.type}`);
    expect(final.jobId).toBe(handle.id);
    expect(final.images).toHaveLength(2);
    for (const image of final.images) expect(sniffImageType(image)).toBe('png');
    expect(final).toMatchObject({ formats: ['png', 'png'], size: '1024x1024', quality: 'low' });
    expect(BACKGROUNDS).toContain(final.background);
    expect(final.usage?.total_tokens).toBeGreaterThan(0);
    expect(final.cost).toEqual(
      priceOfResult({ operation: 'generate', requested: { size: '1024x1024', quality: 'low' }, reported: { size: '1024x1024', quality: 'low' }, images: 2 }),
    );
    expect(final.elapsedMs).toBeGreaterThanOrEqual(0);

    const [sent] = kit.emu.emulator.requests;
    expect(sent?.parsed).toMatchObject({ stream: true, partial_images: 2, n: 2, quality: 'low' });
  });

  it('streams an edit the same way, with its input image sent as a real file part', async () => {
    const { runner } = await kit.runner({ partialImages: 1 });
    const rec = recordingSink();
    const input = Buffer.from(await makeImage('jpeg'));

    const handle = await runner.submit(
      { kind: 'edit', prompt: 'make it blue', options: { quality: 'low' }, images: [{ data: input, filename: 'photo.jpg' }], requester: requester() },
      rec.sink,
    );
    const final = await handle.done;

    expectOrderedSequence(rec.received.map((r) => r.update));
    expect(final.type).toBe('completed');
    const [sent] = kit.emu.emulator.requests;
    expect(sent?.route).toBe('edits');
    expect(sent?.images).toHaveLength(1);
    expect(sent?.images[0]?.contentType).toBe('image/jpeg');
  });

  it('sends no partial_images field when partials are turned off, and reports none even if the service streams some', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    const rec = recordingSink();

    const final = await (await runner.submit({ kind: 'generate', prompt: 'a lighthouse', options: { quality: 'low' }, requester: requester() }, rec.sink)).done;

    expect(final.type).toBe('completed');
    expect(rec.types).not.toContain('partial');
    expect(kit.emu.emulator.requests[0]?.parsed).not.toHaveProperty('partial_images');
  });

  it('paces progress updates at least minUpdateIntervalMs apart, dropping superseded partials, and still ends with the final update', async () => {
    kit.emu.emulator.configure({ latencyMs: 160 });
    const clock = () => Date.now();
    const interval = 400;
    const { runner } = await kit.runner({ partialImages: 3, minUpdateIntervalMs: interval, now: clock });
    const rec = recordingSink({ clock });

    const handle = await runner.submit({ kind: 'generate', prompt: 'a storm at sea', options: { n: 3, quality: 'low' }, requester: requester() }, rec.sink);
    const final = await handle.done;

    expectOrderedSequence(rec.received.map((r) => r.update));
    expect(final.type).toBe('completed');
    expect(rec.final).toBe(final);
    const paced = rec.received.slice(0, -1);
    expect(paced.map((r) => r.update.type)).toContain('started');
    for (let i = 1; i < paced.length; i++) expect(paced[i]!.at - paced[i - 1]!.at).toBeGreaterThanOrEqual(interval);
    expect(rec.partials().length).toBeLessThan(kit.emu.emulator.stats().partialImagesSent);
  });

  it('delivers the final update at once even while progress waits for its interval, and drops what waits', async () => {
    const { runner } = await kit.runner({ partialImages: 3, minUpdateIntervalMs: 60_000 });
    const rec = recordingSink();

    const final = await (await runner.submit({ kind: 'generate', prompt: 'a quiet pond', options: { quality: 'low' }, requester: requester() }, rec.sink)).done;

    // A 60 s interval would outlast this test's timeout if the final update waited for it.
    expect(rec.types).toEqual(['queued', 'completed']);
    expect(final.type).toBe('completed');
    expect(kit.emu.emulator.stats().partialImagesSent).toBe(3);
  }, 15_000);

  it('hands a slow sink one update at a time, in order, with the final update last', async () => {
    kit.emu.emulator.configure({ latencyMs: 100 });
    const { runner } = await kit.runner({ partialImages: 3, minUpdateIntervalMs: 0 });
    const rec = recordingSink({ delayMs: 150 });

    const final = await (await runner.submit({ kind: 'generate', prompt: 'a busy market', options: { n: 2, quality: 'low' }, requester: requester() }, rec.sink)).done;

    expect(rec.maxInFlight).toBe(1);
    expectOrderedSequence(rec.received.map((r) => r.update));
    expect(final.type).toBe('completed');
    expect(rec.final).toBe(final);
  });

  it('goes on delivering after the sink throws, and still settles with the final update', async () => {
    const { runner } = await kit.runner({ partialImages: 2 });
    const rec = recordingSink({
      onUpdate: (update) => {
        if (update.type !== 'completed') throw new Error('the chat service is down');
      },
    });

    const final = await (await runner.submit({ kind: 'generate', prompt: 'a paper boat', options: { quality: 'low' }, requester: requester() }, rec.sink)).done;

    expect(final.type).toBe('completed');
    expectOrderedSequence(rec.received.map((r) => r.update));
  });

  it('tells a queued job how many jobs are ahead of it as that number falls', async () => {
    kit.emu.emulator.configure({ latencyMs: 200 });
    const limiter = new ImageLimiter({ maxConcurrent: 1 });
    const { runner } = await kit.runner({ partialImages: 0, clientOptions: { limiter } });
    const sinks = [recordingSink(), recordingSink(), recordingSink()];

    const handles = await Promise.all(
      sinks.map((rec, i) => runner.submit({ kind: 'generate', prompt: `job ${i}`, options: { quality: 'low' }, requester: requester() }, rec.sink)),
    );
    await Promise.all(handles.map((h) => h.done));

    const last = sinks[2]!;
    expectOrderedSequence(last.received.map((r) => r.update));
    const aheads = last.received.flatMap((r) => (r.update.type === 'queued' ? [r.update.ahead] : []));
    expect(aheads[0]).toBeGreaterThanOrEqual(1);
    expect(aheads.at(-1)).toBe(0);
    for (let i = 1; i < aheads.length; i++) expect(aheads[i]).toBeLessThan(aheads[i - 1]!);
  });

  it('shows a job far back in a long queue its position in steps, each near the front, not once per job that leaves', async () => {
    kit.emu.emulator.configure({ latencyMs: 20 });
    const limiter = new ImageLimiter({ maxConcurrent: 1 });
    const { runner } = await kit.runner({ partialImages: 0, clientOptions: { limiter } });
    const sinks = Array.from({ length: 40 }, () => recordingSink());

    // One prompt for all: the stand-in renders its image once (it caches by request), so the queue is what takes time.
    const handles = await Promise.all(
      sinks.map((rec) => runner.submit({ kind: 'generate', prompt: 'a job in a long queue', options: { quality: 'low' }, requester: requester() }, rec.sink)),
    );
    await Promise.all(handles.map((h) => h.done));

    const last = sinks.at(-1)!;
    expectOrderedSequence(last.received.map((r) => r.update));
    const aheads = last.received.flatMap((r) => (r.update.type === 'queued' ? [r.update.ahead] : []));
    expect(aheads[0]).toBeGreaterThanOrEqual(30);
    expect(aheads.at(-1)).toBe(0);
    // Far back, a new position once a fifth of those ahead have left; near the front, every one.
    for (let i = 1; i < aheads.length; i++) expect(aheads[i]! < 10 || aheads[i]! <= aheads[i - 1]! * 0.8).toBe(true);
    expect(aheads.length).toBeLessThan(20);
  });
});

describe('JobRunner previews', () => {
  it('hands each partial with its light preview, made once however often a surface asks for it', async () => {
    kit.emu.emulator.configure({ latencyMs: 200 });
    const { runner } = await kit.runner({ partialImages: 2, minUpdateIntervalMs: 0 });
    const rec = recordingSink();
    await (await runner.submit({ kind: 'generate', prompt: 'a red fox', options: { size: '1536x1024', quality: 'low' }, requester: requester() }, rec.sink)).done;

    const [partial] = rec.partials();
    const first = partial!.preview();
    expect(partial!.preview()).toBe(first);
    const preview = await first;
    expect(preview.format).toBe('jpeg');
    expect(sniffImageType(preview.data)).toBe('jpeg');
    expect(preview.data.length).toBeLessThan(partial!.image.length);
  });

  it('hands the partial itself as the preview when light previews are off', async () => {
    kit.emu.emulator.configure({ latencyMs: 200 });
    const { runner } = await kit.runner({ partialImages: 1, minUpdateIntervalMs: 0, lightPreviews: false });
    const rec = recordingSink();
    await (await runner.submit({ kind: 'generate', prompt: 'a red fox', options: { quality: 'low' }, requester: requester() }, rec.sink)).done;

    const [partial] = rec.partials();
    const preview = await partial!.preview();
    expect(preview).toMatchObject({ format: 'png', light: false });
    expect(preview.data.equals(partial!.image)).toBe(true);
  });

  it('refuses a pace of updates no timer can wait (it would fire after 1 ms, every update unpaced), naming the option', async () => {
    await expect(kit.runner({ minUpdateIntervalMs: 2 ** 31 })).rejects.toMatchObject({ code: 'validation_error', param: 'minUpdateIntervalMs' });
    await expect(kit.runner({ minUpdateIntervalMs: -1 })).rejects.toMatchObject({ code: 'validation_error', param: 'minUpdateIntervalMs' });
  });
});
