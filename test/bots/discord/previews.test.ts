import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { PREVIEW_LONGEST_SIDE } from '../../../bots/runner/index.js';
import { streamedImages } from '../../helpers/service-images.js';
import { DiscordHarness, previewByPreview } from './harness.js';

describe('previews of a job on Discord', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('are uploaded as JPEGs at display size, lighter than the partials, while the final image is the service’s PNG byte for byte', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 600 }, holdEvent: previewByPreview });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a harbour at noon', size: '1536x1024', quality: 'low' });
    const final = await h.finalReply(ix);

    const previews = final.history.flatMap((s) => s.attachments.filter((a) => a.filename.startsWith('preview-')));
    expect(previews.map((a) => a.filename)).toEqual(['preview-1-1.jpg', 'preview-1-2.jpg']);
    const uploaded = h.discord.requests.flatMap((r) => r.files).filter((f) => f.filename.startsWith('preview-'));
    expect(uploaded.map((f) => f.contentType)).toEqual(['image/jpeg', 'image/jpeg']);

    const sent = h.emulator.requests.filter((r) => r.route === 'generations');
    expect(sent).toHaveLength(1);
    const service = await streamedImages(h.emulator, sent[0]!.fields as Record<string, unknown>);
    expect(service.partials).toHaveLength(2);
    for (const [i, preview] of previews.entries()) {
      const meta = await sharp(preview.bytes).metadata();
      expect(meta.format).toBe('jpeg');
      expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(PREVIEW_LONGEST_SIDE);
      expect(preview.bytes.length).toBeLessThan(service.partials[i]!.length);
    }
    expect(final.attachments).toHaveLength(1);
    expect(final.attachments[0]!.filename).toMatch(/\.png$/);
    expect(final.attachments[0]!.bytes.equals(service.finals[0]!)).toBe(true);
  });

  it('show a partial that cannot be decoded as it came, and the job still goes on to its final image', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 600 } });
    h.emulator.injectFault('corrupt_partials');
    const ix = h.discord.slashCommand('imagine', { prompt: 'a harbour at dusk', quality: 'low' });
    const final = await h.finalReply(ix);

    const statuses = final.history.map((s) => s.content.split('\n')[1]);
    expect(statuses).toContain('🎨 Drawing… preview 1');
    const previews = final.history.flatMap((s) => s.attachments.filter((a) => a.filename.startsWith('preview-')));
    expect(previews.length).toBeGreaterThanOrEqual(1);
    expect(previews.every((a) => a.filename.endsWith('.png'))).toBe(true);
    expect(final.content.split('\n')[1]).toMatch(/^1024x1024 · low · png · /);
    expect((await sharp(final.attachments[0]!.bytes).metadata()).format).toBe('png');
    expect(h.logger.entries.filter((e) => e.msg?.includes('could not re-encode a preview')).length).toBeGreaterThanOrEqual(1);
  });
});
