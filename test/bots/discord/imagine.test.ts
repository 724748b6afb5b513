import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { buttonId, buttonsOf, DiscordHarness, previewByPreview } from './harness.js';

describe('/imagine through the real discord.js client and a fake Discord', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('defers, shows the queue, each preview replacing the last, then the final image with its facts and buttons', async () => {
    h = await DiscordHarness.start({ emulator: { latencyMs: 600 }, holdEvent: previewByPreview });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a lighthouse at dusk', quality: 'low' });
    const final = await h.finalReply(ix);

    expect(ix.ack?.type).toBe(5); // deferred
    const history = final.history.map((s) => ({ via: s.via, status: s.content.split('\n')[1], files: s.attachments.map((a) => a.filename) }));
    expect(history.slice(0, 5)).toEqual([
      { via: 'callback', status: undefined, files: [] },
      { via: 'webhook', status: '⏳ Next in line…', files: [] },
      { via: 'webhook', status: '🎨 Drawing the image…', files: [] },
      { via: 'webhook', status: '🎨 Drawing… preview 1', files: ['preview-1-1.jpg'] },
      { via: 'webhook', status: '🎨 Drawing… preview 2', files: ['preview-1-2.jpg'] },
    ]);
    expect(history).toHaveLength(6);
    // Progress carries a Cancel button; the final message Reroll and Edit instead.
    expect(final.history[3]!.components).toEqual([
      { type: 1, components: [expect.objectContaining({ type: 2, label: 'Cancel', custom_id: expect.stringMatching(/^pictor:cancel:/) })] },
    ]);
    expect(buttonsOf(final).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);

    const [headline, facts] = final.content.split('\n');
    expect(headline).toBe('🖌️ **a lighthouse at dusk**');
    expect(facts).toMatch(/^1024x1024 · low · png · \$0\.0064 · (\d+ ms|\d+(\.\d)? s)$/);
    expect(final.attachments).toHaveLength(1);
    const file = final.attachments[0]!;
    expect(file.filename).toMatch(/^pictor-[\w-]+-1\.png$/);
    expect((await sharp(file.bytes).metadata()).format).toBe('png');

    const sent = h.emulator.requests.filter((r) => r.route === 'generations');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.fields).toMatchObject({ prompt: 'a lighthouse at dusk', quality: 'low', stream: true, partial_images: 2 });
    expect(buttonId(final, 'Reroll')).toMatch(/^pictor:reroll:/);
  });

  it('sends every image of a count above one in the final message, with an Edit button each', async () => {
    h = await DiscordHarness.start({ partialImages: 1, emulator: { latencyMs: 50 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'three pears', count: 3, size: '1536x1024', quality: 'medium' });
    const final = await h.finalReply(ix);
    expect(final.attachments.map((a) => a.filename)).toEqual([1, 2, 3].map((i) => expect.stringMatching(new RegExp(`-${i}\\.png$`))));
    expect(final.content.split('\n')[1]).toMatch(/^1536x1024 · medium · png · \$0\.130 · /);
    expect(buttonsOf(final).map((b) => b.label)).toEqual(['Reroll', 'Edit 1', 'Edit 2', 'Edit 3', 'Delete']);
    expect(h.emulator.requests.at(-1)!.fields).toMatchObject({ n: 3, size: '1536x1024' });
  });

  it('explains that a transparent background needs png or webp, privately and before anything is spent', async () => {
    h = await DiscordHarness.start();
    const ix = h.discord.slashCommand('imagine', { prompt: 'a sticker of a fox', background: 'transparent', format: 'jpeg' });
    const reply = await h.discord.waitFor(() => h.discord.original(ix), 'the reply');
    expect(ix.ack?.type).toBe(4);
    expect(reply.flags & 64).toBe(64); // ephemeral
    // In the words of this surface's options (the sentence itself is the runner's: describe-failure.test.ts).
    expect(reply.content).toContain('The format option is not valid: format must be png or webp when background is transparent');
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('re-encodes a result that is larger than the interaction’s attachment size limit, and says so', async () => {
    h = await DiscordHarness.start({ partialImages: 0, emulator: { latencyMs: 10, padImageBytes: 300_000 } });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a detailed map' }, { attachmentSizeLimit: 200_000 });
    const final = await h.finalReply(ix);
    expect(final.attachments).toHaveLength(1);
    expect(final.attachments[0]!.size).toBeLessThanOrEqual(200_000);
    expect(final.attachments[0]!.filename).toMatch(/\.webp$/);
    expect(final.content).toContain('re-encoded as WEBP to fit the upload limit that applies here (195 KB per file)');
  });
});
