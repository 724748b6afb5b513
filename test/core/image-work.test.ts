import { imageWorkNow, withImageWork } from 'pictor/internal';
import sharp from 'sharp';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { fitImage } from '../../bots/discord/fit-images.js';
import { PreviewEncoder } from '../../bots/runner/index.js';
import { FileStateStore, type SpaceDefinition } from '../../bots/state/index.js';
import { RecordingLogger } from '../bots/discord/harness.js';
import { testTempDir } from '../helpers/temp-dir.js';

const SEEN: SpaceDefinition = { name: 'seen', dir: 'seen', ttlMs: 60_000, maxValueBytes: 64 };

/** Bands with noise over them, so its PNG does not shrink to nothing and its JPEG is smaller. */
async function noisyPng(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  let seed = 1;
  for (let i = 0; i < raw.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    raw[i] = (((i / (width * 3)) | 0) + (seed >>> 27)) & 0xff;
  }
  return sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

describe('image work in a bot process', () => {
  it("leaves Node's thread pool room for the state: a claim answers while the bound is full and previews and fits wait their turn", async () => {
    const image = await noisyPng(1024, 1536);
    const store = new FileStateStore({ dataDir: await testTempDir('pictor-image-work-') });
    onTestFinished(() => store.close());
    const seen = store.space<unknown>(SEEN);
    await seen.claimOnce('warm-up');

    // Two pieces of image work already running (the bound docs/deploying.md promises), until the test lets them end.
    let letItEnd!: () => void;
    const running = new Promise<void>((resolve) => (letItEnd = resolve));
    const holders = [withImageWork(() => running), withImageWork(() => running)];
    // Let go however the test ends: the bound is the process's, shared with the files that run after this one.
    onTestFinished(() => letItEnd());

    // Several runners' previews (each encoder allows 2 at once) and Discord's fits of finals, all at once.
    const logger = new RecordingLogger();
    let finished = 0;
    const work = [
      ...Array.from({ length: 4 }, () => new PreviewEncoder({ logger })).flatMap((encoder) => [encoder.encode(image, 'png', 'job1'), encoder.encode(image, 'png', 'job2')]),
      ...Array.from({ length: 4 }, (_, i) => fitImage(image, 'png', `final-${i}`, image.length - 1)),
    ].map((job) => job.then(() => finished++));
    await vi.waitFor(() => expect(imageWorkNow()).toEqual({ running: 2, waiting: 12 }));

    const taken = await seen.claimOnce('a-request-signature');
    expect(taken).toBe(true);
    // The claim answered with the bound still full and every preview and fit still waiting.
    expect(imageWorkNow()).toEqual({ running: 2, waiting: 12 });
    expect(finished).toBe(0);

    letItEnd();
    await Promise.all([...holders, ...work]);
    expect(finished).toBe(12);
    expect(imageWorkNow()).toEqual({ running: 0, waiting: 0 });
  });
});

describe('image work whose caller gives up', () => {
  it('leaves the line when its signal aborts, with the signal reason, and never runs', async () => {
    let letItEnd!: () => void;
    const running = new Promise<void>((resolve) => (letItEnd = resolve));
    const holders = [withImageWork(() => running), withImageWork(() => running)];
    const caller = new AbortController();
    let ran = false;
    const waiting = withImageWork(async () => {
      ran = true;
    }, caller.signal);
    expect(imageWorkNow()).toEqual({ running: 2, waiting: 1 });

    caller.abort(new Error('the client went away'));
    await expect(waiting).rejects.toThrow('the client went away');
    expect(imageWorkNow()).toEqual({ running: 2, waiting: 0 });

    letItEnd();
    await Promise.all(holders);
    expect(ran).toBe(false);
    expect(imageWorkNow()).toEqual({ running: 0, waiting: 0 });
  });
});
