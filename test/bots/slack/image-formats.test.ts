import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { makeImage } from '../../helpers/images.js';
import { head, misbehavingServer, sse } from '../../client/misbehaving-server.js';
import { finishedActions, finishedJob, startHarness, statusOf, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/**
 * An image service whose streamed answer holds a PNG and then a JPEG, both labelled `png` (as a careless service might):
 * each image's real format is told by its bytes. `asked` images were asked for; fewer than that ends the job failed,
 * its two images kept (made and charged).
 */
async function mixedService(): Promise<{ url: string; png: Buffer; jpeg: Buffer }> {
  const [png, jpeg] = [Buffer.from(await makeImage('png', 8, 8)), Buffer.from(await makeImage('jpeg', 8, 8))];
  const events = [png, jpeg]
    .map((image) => sse('image_generation.completed', { type: 'image_generation.completed', b64_json: image.toString('base64'), created_at: 1, size: '1024x1024', quality: 'low', background: 'opaque', output_format: 'png', usage: { total_tokens: 3, input_tokens: 1, output_tokens: 2 } }))
    .join('');
  const service = await misbehavingServer(async (req) => {
    await req.body();
    req.socket.end(head(200, { 'content-type': 'text/event-stream', 'content-length': String(Buffer.byteLength(events)) }, events));
  });
  onTestFinished(() => service.close());
  return { url: service.url, png, jpeg };
}

/** The files Slack was given for a job's images (previews left out), oldest first: their names and types. */
function sharedImages(harness: Harness, channel: string): { name: string; mimetype: string }[] {
  return harness.fake
    .messagesIn(channel)
    .flatMap((m) => m.files ?? [])
    .filter((f) => !f.name.includes('-preview-'))
    .map((f) => ({ name: f.name, mimetype: f.mimetype }));
}

describe('Slack names and types each image by its own format', () => {
  it('uploads a PNG and a JPEG of one answer as .png and .jpg, not both as the first image’s format', async () => {
    const service = await mixedService();
    h = await startHarness({ serviceUrl: service.url });
    await h.fake.command({ command: '/imagine', text: 'a windmill at dusk --n 2 --quality low', channel: 'C0MIXED' });
    await finishedActions(h.fake, 'C0MIXED');

    const files = sharedImages(h, 'C0MIXED');
    expect(files.map((f) => /\d+\.\w+$/.exec(f.name)?.[0])).toEqual(['1.png', '2.jpg']);
    expect(files.map((f) => f.mimetype)).toEqual(['image/png', 'image/jpeg']);
  });

  it('posts the PNG and JPEG a failed job kept as .png and .jpg', async () => {
    const service = await mixedService();
    h = await startHarness({ serviceUrl: service.url });
    // Three asked, two came: the job fails with the two it kept (made and charged).
    await h.fake.command({ command: '/imagine', text: 'a windmill at dawn --n 3 --quality low', channel: 'C0MIXKEPT' });
    const job = await finishedJob(h.fake, 'C0MIXKEPT');
    expect(statusOf(job)).toContain(':warning:');

    const files = await h.fake.waitFor(() => {
      const shared = sharedImages(h!, 'C0MIXKEPT');
      return shared.length === 2 ? shared : undefined;
    }, 'the kept images');
    expect(files.map((f) => /\d+\.\w+$/.exec(f.name)?.[0])).toEqual(['1.png', '2.jpg']);
    expect(files.map((f) => f.mimetype)).toEqual(['image/png', 'image/jpeg']);
  });
});
