import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { PREVIEW_LONGEST_SIDE } from '../../../bots/runner/index.js';
import { streamedImages } from '../../helpers/service-images.js';
import { finishedJob, imageShares, previewByPreview, startHarness, statusOf, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('previews of a job in Slack', () => {
  it('are posted as JPEGs at display size, lighter than the partials, while the final image is the service’s PNG byte for byte', async () => {
    // Each partial image comes once the message shows the one before it: a preview still waiting to be posted is dropped
    // when the next update comes (the latest wins), and a loaded machine is slower than any latency chosen here.
    h = await startHarness({ emulator: { latencyMs: 1200 }, holdEvent: previewByPreview('C0ART') });
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a harbour at noon --size 1536x1024 --quality low', channel: 'C0ART' });
    const message = await finishedJob(fake, 'C0ART');

    const thread = fake.replies('C0ART', message.ts);
    const previews = thread.filter((m) => m.text.startsWith('Preview')).flatMap((m) => m.files ?? []);
    expect(previews.length).toBeGreaterThanOrEqual(1);
    const sent = h.emulator.requests.filter((r) => r.path === '/v1/images/generations');
    expect(sent).toHaveLength(1);
    const service = await streamedImages(h.emulator, sent[0]!.fields as Record<string, unknown>);
    for (const file of previews) {
      expect(file.name).toMatch(/-preview-\d\.jpg$/);
      expect(file.mimetype).toBe('image/jpeg');
      const meta = await sharp(file.bytes!).metadata();
      expect(meta.format).toBe('jpeg');
      expect(Math.max(meta.width!, meta.height!)).toBeLessThanOrEqual(PREVIEW_LONGEST_SIDE);
      const index = Number(/-preview-(\d)\.jpg$/.exec(file.name)![1]) - 1;
      expect(file.bytes!.length).toBeLessThan(service.partials[index]!.length);
    }
    // The final image is shared in the channel, after the job's message.
    const final = imageShares(fake, 'C0ART').at(-1)!;
    expect(final.files).toHaveLength(1);
    expect(final.files![0]!.name).toMatch(/\.png$/);
    expect(final.files![0]!.bytes!.equals(service.finals[0]!)).toBe(true);
  });

  it('post a partial that cannot be decoded as it came, and the job still goes on to its final image', async () => {
    h = await startHarness({ emulator: { latencyMs: 1200 }, holdEvent: previewByPreview('C0ART') });
    const { fake } = h;
    h.emulator.injectFault('corrupt_partials');
    await fake.command({ command: '/imagine', text: 'a harbour at dusk --quality low', channel: 'C0ART' });
    const message = await finishedJob(fake, 'C0ART');

    const thread = fake.replies('C0ART', message.ts);
    const previews = thread.filter((m) => m.text.startsWith('Preview')).flatMap((m) => m.files ?? []);
    expect(previews.length).toBeGreaterThanOrEqual(1);
    expect(previews.every((f) => f.name.endsWith('.png'))).toBe(true);
    expect(statusOf(message)).toMatch(/^:white_check_mark: Done · 1024x1024 · low · png · /);
    const final = imageShares(fake, 'C0ART').at(-1)!;
    expect((await sharp(final.files![0]!.bytes!).metadata()).format).toBe('png');
  });
});
