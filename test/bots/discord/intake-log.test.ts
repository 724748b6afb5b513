import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeImage } from '../../helpers/images.js';
import { editBeingFetched, requester } from '../../helpers/runner-harness.js';
import type { FakeInteraction } from '../../fakes/discord/FakeDiscord.js';
import { DiscordHarness, privateNoteOf } from './harness.js';

/**
 * What `/edit` did not start is one line in the operator's log, by the one rule: the runner's for what its intake
 * refused or could not start (with the job's id), the bot's for the images it refused itself before asking the
 * runner — never both. (Every entry point's refusal by a rule or a budget: intake.test.ts.)
 */
describe('an edit that did not start, in the operator’s log', () => {
  let h: DiscordHarness;
  beforeAll(async () => {
    h = await DiscordHarness.start({ partialImages: 0, maxQueuedInputBytes: 100_000 });
  });
  afterAll(async () => {
    await h.close();
  });

  /** The lines with `code`, once the member was told privately why their edit did not start. */
  async function linesOnceTold(ix: FakeInteraction, code: string) {
    await privateNoteOf(h, ix);
    return h.logger.entries.filter((e) => (e.obj as { code?: string }).code === code);
  }

  it('refused by a full queue: one warn line, with its id', async () => {
    // Another edit's images hold 90 KB of the queue's 100 KB while they download.
    const other = editBeingFetched(h.runner, requester(), 90_000);
    expect(await other.admitted).toBeUndefined();
    const image = h.discord.hostFile({ filename: 'cat.png', bytes: await makeImage('png', 8, 8) });
    const lines = await linesOnceTold(h.discord.slashCommand('edit', { prompt: 'brighter', image1: { ...image, size: 20_000 } }), 'queue_full');
    other.giveUp();
    await other.handle;
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', obj: expect.objectContaining({ jobId: expect.any(String), limit: 100_000 }) })]);
  });

  it('with an image the bot refused itself (not on Discord’s CDN): one info line, the member’s, naming who asked', async () => {
    const elsewhere = 'http://127.0.0.1:9/attachments/1/2/cat.png';
    const image1 = { id: '1', filename: 'cat.png', size: 100, url: elsewhere, proxy_url: elsewhere, content_type: 'image/png' };
    const lines = await linesOnceTold(h.discord.slashCommand('edit', { prompt: 'brighter', image1 }), 'host_not_allowed');
    expect(lines).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'discord', userId: h.discord.user.id }) })]);
  });

  it('admitted, then its image turned out not to be one: one info line, with the job’s id', async () => {
    const image1 = h.discord.hostFile({ filename: 'photo.png', bytes: Buffer.from('GIF89a not really a png'), contentType: 'image/png' });
    const lines = await linesOnceTold(h.discord.slashCommand('edit', { prompt: 'brighter', image1 }), 'not_an_image');
    expect(lines).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ jobId: expect.any(String), userId: h.discord.user.id }) })]);
  });
});
