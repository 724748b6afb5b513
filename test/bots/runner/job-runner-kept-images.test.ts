import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { JobSpec } from '../../../bots/runner/index.js';
import { estimatePrice, PRICE_TABLE } from '../../../src/index.js';
import { recordingSink, requester, useRunnerKit, waitUntil } from '../../helpers/runner-harness.js';
import { makeImage } from '../../helpers/images.js';
import { head, misbehavingServer, sse } from '../../client/misbehaving-server.js';

const kit = useRunnerKit();
const LOW = PRICE_TABLE['1024x1024'].low;
const ESTIMATE_PER_IMAGE = estimatePrice({ operation: 'generate', size: '1024x1024', quality: 'low', n: 1 }).perImageUsd;

function twoImages(): JobSpec {
  return { kind: 'generate', prompt: 'a windmill at dusk', options: { quality: 'low', n: 2 }, requester: requester() };
}

describe('JobRunner: images made before a job ends badly reach the user and are charged', () => {
  it('hands over image 1 of 2 with the failure when an error event follows it, and charges that image', async () => {
    const { runner, store } = await kit.runner({ partialImages: 0 });
    // Without partials (the runner then sends no partial_images): the first event is image 1.
    kit.emu.emulator.configure({ defaultPartialImages: 0 });
    kit.emu.emulator.injectFault('stream_error_event');

    const final = await (await runner.submit(twoImages(), recordingSink().sink)).done;

    expect(final).toMatchObject({ type: 'failed', code: 'server_error', formats: ['png'] });
    expect(final.type === 'failed' && final.images).toHaveLength(1);
    expect(await store.usage({})).toEqual([expect.objectContaining({ costUsd: LOW, basis: 'table' })]);
  });

  it('hands over image 1 of 2 with the failure when the connection resets after it, charging it and the estimate of the other', async () => {
    const { runner, store } = await kit.runner({ partialImages: 0 });
    // Without partials (the runner then sends no partial_images): the first event is image 1.
    kit.emu.emulator.configure({ defaultPartialImages: 0 });
    kit.emu.emulator.injectFault('reset_mid_stream');

    const final = await (await runner.submit(twoImages(), recordingSink().sink)).done;

    expect(final).toMatchObject({ type: 'failed', code: 'stream_broken' });
    expect(final.type === 'failed' && final.images).toHaveLength(1);
    expect(await store.usage({})).toEqual([expect.objectContaining({ costUsd: LOW + ESTIMATE_PER_IMAGE, basis: 'estimate' })]);
  });

  it('keeps the finished image of a job cancelled after 1 of 2', async () => {
    const { runner, store } = await kit.runner({ partialImages: 1 });
    const spec = twoImages();
    let id = '';
    // The preview of image 2 comes after image 1 finished: the requester cancels then.
    const rec = recordingSink({
      onUpdate: (update) => {
        if (update.type === 'partial' && update.imageIndex === 1) runner.cancel(id, spec.requester);
      },
    });
    const handle = await runner.submit(spec, rec.sink);
    id = handle.id;

    const final = await handle.done;

    expect(final.type).toBe('cancelled');
    expect(final.type === 'cancelled' && final.images).toHaveLength(1);
    await waitUntil(() => runner.activeJobs().length === 0, 'the job ended');
    // The cancel is shown before the ledger has charged the job: waits for the charge.
    await vi.waitFor(async () => expect(await store.usage({})).toEqual([expect.objectContaining({ costUsd: LOW + ESTIMATE_PER_IMAGE, basis: 'estimate' })]), { timeout: 15_000 });
  });

  it('keeps the estimate of a 200 with 1 of 2 images, and hands over that image', async () => {
    const { runner, store } = await kit.runner({ partialImages: 0 });
    kit.emu.emulator.injectFault('short_result');

    const final = await (await runner.submit(twoImages(), recordingSink().sink)).done;

    expect(final).toMatchObject({ type: 'failed', code: 'stream_broken' });
    expect(final.type === 'failed' && final.images).toHaveLength(1);
    expect(await store.spentToday('account', Date.now())).toBeCloseTo(LOW + ESTIMATE_PER_IMAGE, 9);
  });
});

describe('JobRunner: each image is labelled with its own real format', () => {
  it('labels a PNG and a JPEG of one answer png and jpeg, not both as the first', async () => {
    const [png, jpeg] = [Buffer.from(await makeImage('png', 8, 8)), Buffer.from(await makeImage('jpeg', 8, 8))];
    const events = [png, jpeg]
      .map((image) => sse('image_generation.completed', { type: 'image_generation.completed', b64_json: image.toString('base64'), created_at: 1, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', usage: { total_tokens: 3, input_tokens: 1, output_tokens: 2 } }))
      .join('');
    const service = await misbehavingServer(async (req) => {
      await req.body();
      req.socket.end(head(200, { 'content-type': 'text/event-stream', 'content-length': String(Buffer.byteLength(events)) }, events));
    });
    onTestFinished(() => service.close());
    const { runner } = await kit.runner({ partialImages: 0, clientOptions: { baseURL: service.url, maxRetries: 0 } });

    const final = await (await runner.submit(twoImages(), recordingSink().sink)).done;

    expect(final).toMatchObject({ type: 'completed', images: [png, jpeg], formats: ['png', 'jpeg'] });
  });
});
