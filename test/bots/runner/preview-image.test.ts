import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { PREVIEW_LONGEST_SIDE, PreviewEncoder } from '../../../bots/runner/index.js';
import { RecordingLogger } from '../discord/harness.js';

/** A noisy image, so its PNG is as large as a drawn one would be. */
async function noisyPng(width: number, height: number, channels: 3 | 4 = 3): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * channels);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 7919 + (i >> 5) * 31) % 251;
  if (channels === 4) for (let i = 3; i < raw.length; i += 4) raw[i] = (i >> 10) % 2 ? 255 : 90;
  return sharp(raw, { raw: { width, height, channels } }).png().toBuffer();
}

describe('PreviewEncoder', () => {
  it('turns an opaque partial into a JPEG at display size, a fraction of its bytes', async () => {
    const partial = await noisyPng(1536, 1024);
    const preview = await new PreviewEncoder({ logger: new RecordingLogger() }).encode(partial, 'png', 'job1');
    const meta = await sharp(preview.data).metadata();
    expect(preview).toMatchObject({ format: 'jpeg', light: true });
    expect(meta.format).toBe('jpeg');
    expect([meta.width, meta.height]).toEqual([PREVIEW_LONGEST_SIDE, Math.round((PREVIEW_LONGEST_SIDE * 1024) / 1536)]);
    expect(preview.data.length).toBeLessThan(partial.length / 4);
  });

  it('keeps the transparency of a partial that has some, as a smaller PNG', async () => {
    const partial = await noisyPng(1024, 1024, 4);
    const preview = await new PreviewEncoder({ logger: new RecordingLogger() }).encode(partial, 'png', 'job1');
    const meta = await sharp(preview.data).metadata();
    expect(preview).toMatchObject({ format: 'png', light: true });
    expect(meta.hasAlpha).toBe(true);
    expect(Math.max(meta.width!, meta.height!)).toBe(PREVIEW_LONGEST_SIDE);
    expect(preview.data.length).toBeLessThan(partial.length);
  });

  it('gives a partial that cannot be decoded back as it came, and logs it', async () => {
    const logger = new RecordingLogger();
    const corrupt = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2048, 0x5a)]);
    const preview = await new PreviewEncoder({ logger }).encode(corrupt, 'png', 'job1');
    expect(preview).toEqual({ data: corrupt, format: 'png', light: false });
    expect(logger.entries).toContainEqual(expect.objectContaining({ level: 'warn', obj: expect.objectContaining({ jobId: 'job1' }), msg: expect.stringContaining('could not re-encode a preview') }));
  });

  it('keeps a partial already smaller than its re-encoding', async () => {
    const tiny = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#336699' } }).png().toBuffer();
    const preview = await new PreviewEncoder({ logger: new RecordingLogger() }).encode(tiny, 'png', 'job1');
    expect(preview).toEqual({ data: tiny, format: 'png', light: false });
  });

  it('hands every partial over untouched when light previews are off', async () => {
    const partial = await noisyPng(640, 640);
    const preview = await new PreviewEncoder({ enabled: false, logger: new RecordingLogger() }).encode(partial, 'png', 'job1');
    expect(preview.data).toBe(partial);
    expect(preview).toMatchObject({ format: 'png', light: false });
  });

  it('re-encodes no more partials at once than it is allowed; the others wait their turn and are all made', async () => {
    const partial = await noisyPng(1536, 1024);
    const encoder = new PreviewEncoder({ logger: new RecordingLogger(), maxAtOnce: 1 });
    const all = Promise.all([1, 2, 3].map(() => encoder.encode(partial, 'png', 'job1')));
    await Promise.resolve();
    expect(encoder.waiting).toBe(2);
    const previews = await all;
    expect(encoder.waiting).toBe(0);
    expect(previews.map((p) => p.format)).toEqual(['jpeg', 'jpeg', 'jpeg']);
  });
});
