import { IMAGE_WORK_AT_ONCE, imageWorkNow } from 'pictor/internal';
import sharp from 'sharp';
import { describe, expect, it, onTestFinished } from 'vitest';
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
  it("leaves Node's thread pool room for the state: a claim answers while previews and fits are still being made", async () => {
    const image = await noisyPng(1024, 1536);
    const store = new FileStateStore({ dataDir: await testTempDir('pictor-image-work-') });
    onTestFinished(() => store.close());
    const seen = store.space<unknown>(SEEN);
    await seen.claimOnce('warm-up');

    // Several runners' previews (each encoder allows 2 at once) and Discord's fits of finals, all at once.
    const logger = new RecordingLogger();
    let finished = 0;
    const work = [
      ...Array.from({ length: 4 }, () => new PreviewEncoder({ logger })).flatMap((encoder) => [encoder.encode(image, 'png', 'job1'), encoder.encode(image, 'png', 'job2')]),
      ...Array.from({ length: 4 }, (_, i) => fitImage(image, 'png', `final-${i}`, image.length - 1)),
    ].map((job) => job.then(() => finished++));

    const taken = await seen.claimOnce('a-request-signature');
    const finishedBeforeTheClaim = finished;
    const atTheClaim = imageWorkNow();
    await Promise.all(work);

    expect(taken).toBe(true);
    // Two pieces of image work at a time: the claim cannot wait for a third to be made.
    expect(finishedBeforeTheClaim).toBeLessThan(IMAGE_WORK_AT_ONCE + 1);
    expect(atTheClaim).toEqual({ running: IMAGE_WORK_AT_ONCE, waiting: expect.any(Number) });
    expect(atTheClaim.waiting).toBeGreaterThan(0);
    expect(finished).toBe(12);
  });
});
