import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeImage } from '../../helpers/images.js';
import { editBeingFetched, requester } from '../../helpers/runner-harness.js';
import type { FakeInteraction } from '../../fakes/discord/FakeDiscord.js';
import { buttonId, buttonsOf, DiscordHarness, privateNoteOf, publicMessagesOf } from './harness.js';

describe('/edit, the “Edit image” menu and the Edit button', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    await h?.close();
  });

  it('downloads both attachments when the command arrives and sends them to the service as image[] parts', async () => {
    h = await DiscordHarness.start({ partialImages: 1 });
    const png = await makeImage('png', 40, 40);
    const jpeg = await makeImage('jpeg', 48, 32);
    const image1 = h.discord.hostFile({ filename: 'cat.png', bytes: png });
    const image2 = h.discord.hostFile({ filename: 'hat.jpg', bytes: jpeg });
    const ix = h.discord.slashCommand('edit', { prompt: 'put the hat on the cat', image1, image2, quality: 'low' });
    const final = await h.finalReply(ix);

    const edits = h.emulator.requests.filter((r) => r.route === 'edits');
    expect(edits).toHaveLength(1);
    expect(edits[0]!.images.map((p) => ({ field: p.field, filename: p.filename, contentType: p.contentType }))).toEqual([
      { field: 'image[]', filename: 'cat.png', contentType: 'image/png' },
      { field: 'image[]', filename: 'hat.jpg', contentType: 'image/jpeg' },
    ]);
    expect(Buffer.from(edits[0]!.images[0]!.bytes!).equals(Buffer.from(png))).toBe(true);
    expect(Buffer.from(edits[0]!.images[1]!.bytes!).equals(Buffer.from(jpeg))).toBe(true);
    expect(edits[0]!.fields).toMatchObject({ prompt: 'put the hat on the cat', quality: 'low' });
    expect(final.content.split('\n')[0]).toBe('✏️ **put the hat on the cat**');
    expect(final.content.split('\n')[1]).toMatch(/ · up to \$\d+\.\d+ \(estimate\) · /);
    expect(final.attachments).toHaveLength(1);
  });

  it('edits the images of a message from its Apps menu, asking for the prompt in a modal', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const source = h.discord.postUserMessage({
      content: 'look at this',
      files: [
        { filename: 'sunset.webp', bytes: await makeImage('webp', 30, 30) },
        { filename: 'notes.txt', bytes: Buffer.from('not an image'), contentType: 'text/plain' },
      ],
    });
    const menu = h.discord.messageCommand('Edit image', source);
    await h.discord.waitFor(() => menu.modal, 'the modal');
    expect(menu.ack?.type).toBe(9);
    expect(menu.modal!.title).toBe('Edit image');

    const submit = h.discord.submitModal(menu, { prompt: 'make it a sunrise' });
    const final = await h.finalReply(submit);
    const edits = h.emulator.requests.filter((r) => r.route === 'edits');
    expect(edits).toHaveLength(1);
    expect(edits[0]!.images.map((p) => [p.filename, p.contentType])).toEqual([['sunset.webp', 'image/webp']]);
    expect(edits[0]!.fields).toMatchObject({ prompt: 'make it a sunrise' });
    expect(final.content.split('\n')[0]).toBe('✏️ **make it a sunrise**');
    expect(buttonsOf(final).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
  });

  it('turns the Edit button of a result into an edit of that image, keeping its size and format', async () => {
    h = await DiscordHarness.start({ partialImages: 0 });
    const first = h.discord.slashCommand('imagine', { prompt: 'two boats', count: 2, size: '1024x1536', format: 'webp' });
    const result = await h.finalReply(first);
    const click = h.discord.clickButton(result, buttonId(result, 'Edit 2'));
    await h.discord.waitFor(() => click.modal, 'the edit modal');
    expect(click.modal!.title).toBe('Edit image 2');
    const submit = h.discord.submitModal(click, { prompt: 'add a storm' });
    const edited = await h.finalReply(submit);

    const edit = h.emulator.requests.filter((r) => r.route === 'edits').at(-1)!;
    expect(edit.fields).toMatchObject({ prompt: 'add a storm', size: '1024x1536', output_format: 'webp', n: 1 });
    expect(edit.images).toHaveLength(1);
    expect(Buffer.from(edit.images[0]!.bytes!).equals(h.discord.fileBytes(result.attachments[1]!))).toBe(true);
    expect(edited.attachments[0]!.filename).toMatch(/\.webp$/);
  });

  it('says so when the menu is used on a message without images, and opens no modal', async () => {
    h = await DiscordHarness.start();
    const source = h.discord.postUserMessage({ content: 'just words' });
    const menu = h.discord.messageCommand('Edit image', source);
    const reply = await h.discord.waitFor(() => h.discord.original(menu), 'the reply');
    expect(menu.modal).toBeUndefined();
    expect(reply.flags & 64).toBe(64);
    expect(reply.content).toContain('no images to edit');
  });
});

describe('input images are checked before anything is spent', () => {
  let h: DiscordHarness;
  let elsewhere: Server;
  let elsewhereHits = 0;
  let elsewhereUrl = '';
  beforeAll(async () => {
    elsewhere = createServer((_req, res) => {
      elsewhereHits++;
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.alloc(100));
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    h = await DiscordHarness.start({ bot: { maxInputImageBytes: 64_000 }, maxQueuedInputBytes: 100_000 });
  });
  afterAll(async () => {
    await h.close();
    await new Promise((resolve) => elsewhere.close(resolve));
  });

  /** Runs `/edit` with one attachment and answers the private note that refuses it; nothing public stays. */
  const refusal = async (image1: Parameters<typeof h.discord.hostFile>[0] | { url: string; filename: string; size: number }) => {
    const attachment = 'url' in image1 ? { id: '1', filename: image1.filename, size: image1.size, url: image1.url, proxy_url: image1.url, content_type: 'image/png' } : h.discord.hostFile(image1);
    return refusalOf(h.discord.slashCommand('edit', { prompt: 'brighter', image1: attachment }));
  };
  /** How many lines of the operator's log carry `code` (a refusal is logged once, before the member is told). */
  const logged = (code: string) => h.logger.entries.filter((e) => (e.obj as { code?: string }).code === code).length;
  const refusalOf = async (ix: FakeInteraction) => {
    const note = await privateNoteOf(h, ix);
    await h.discord.waitFor(() => publicMessagesOf(h, ix).length === 0, 'no public trace of the refused edit');
    return note;
  };

  it('refuses an attachment that is not on Discord’s CDN without downloading it', async () => {
    const reply = await refusal({ url: `${elsewhereUrl}/attachments/1/2/cat.png`, filename: 'cat.png', size: 100 });
    expect(reply.content).toContain('image1 is not hosted there');
    expect(elsewhereHits).toBe(0);
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('refuses an attachment Discord reports as too large before downloading it', async () => {
    const before = h.discord.requests.filter((r) => r.route === 'cdn').length;
    const tooLarge = logged('image_too_large');
    const image = h.discord.hostFile({ filename: 'huge.png', bytes: await makeImage('png', 8, 8) });
    const ix = h.discord.slashCommand('edit', { prompt: 'brighter', image1: { ...image, size: 80_000_000 } });
    const reply = await refusalOf(ix);
    expect(h.discord.original(ix)).toBe(reply);
    expect(logged('image_too_large')).toBe(tooLarge + 1);
    for (const fact of ['image1', '`huge.png`', '76.3 MB', '63 KB']) expect(reply.content).toContain(fact);
    expect(h.discord.requests.filter((r) => r.route === 'cdn').length).toBe(before);
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('refuses an edit at once, before downloading anything, when its reported size would take the queue past its bound for input images', async () => {
    const before = h.discord.requests.filter((r) => r.route === 'cdn').length;
    // Another edit's images hold 90 KB of the queue's 100 KB while they download.
    const other = editBeingFetched(h.runner, requester(), 90_000);
    expect(await other.admitted).toBeUndefined();
    const image = h.discord.hostFile({ filename: 'cat.png', bytes: await makeImage('png', 8, 8) });
    const ix = h.discord.slashCommand('edit', { prompt: 'brighter', image1: { ...image, size: 20_000 } });
    const reply = await refusalOf(ix);
    other.giveUp();
    await other.handle;

    // Refused before its first answer: that answer is the private note.
    expect(h.discord.original(ix)).toBe(reply);
    // Logged once, by the runner that refused it (at warn: the operator's capacity); the bot that told it only renders it.
    expect(h.logger.entries.filter((e) => (e.obj as { code?: string }).code === 'queue_full').map((e) => e.level)).toEqual(['warn']);
    expect(reply.content).toContain('The bot is busy');
    expect(h.discord.requests.filter((r) => r.route === 'cdn').length).toBe(before);
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('refuses an edit whose images alone pass the bound for input images, before downloading anything, as not worth retrying', async () => {
    const before = h.discord.requests.filter((r) => r.route === 'cdn').length;
    const bytes = await makeImage('png', 8, 8);
    const first = h.discord.hostFile({ filename: 'left.png', bytes });
    const second = h.discord.hostFile({ filename: 'right.png', bytes });
    // Each under the 63 KB an image may weigh here; together past the 100 KB the queue holds at once.
    const ix = h.discord.slashCommand('edit', { prompt: 'brighter', image1: { ...first, size: 60_000 }, image2: { ...second, size: 60_000 } });
    const reply = await refusalOf(ix);
    expect(h.logger.entries.some((e) => (e.obj as { code?: string }).code === 'input_too_large')).toBe(true);
    expect(reply.content).toContain('more than this bot takes at once');
    expect(buttonsOf(reply)).toEqual([]);
    expect(h.discord.requests.filter((r) => r.route === 'cdn').length).toBe(before);
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('refuses a file that is larger than it claimed while downloading it', async () => {
    const big = await makeImage('png', 400, 400);
    const tooLarge = logged('image_too_large');
    const image = h.discord.hostFile({ filename: 'big.png', bytes: Buffer.concat([Buffer.from(big), Buffer.alloc(70_000)]) });
    const reply = await refusalOf(h.discord.slashCommand('edit', { prompt: 'brighter', image1: { ...image, size: 1000 } }));
    expect(logged('image_too_large')).toBe(tooLarge + 1);
    for (const fact of ['image1', '`big.png`', '63 KB']) expect(reply.content).toContain(fact);
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('refuses a file whose bytes are not an image, whatever its name and type say', async () => {
    const notAnImage = logged('not_an_image');
    const reply = await refusal({ filename: 'photo.png', bytes: Buffer.from('GIF89a not really a png'), contentType: 'image/png' });
    expect(logged('not_an_image')).toBe(notAnImage + 1);
    for (const fact of ['image1', '`photo.png`']) expect(reply.content).toContain(fact);
    expect(buttonsOf(reply)).toEqual([]);
    expect(h.emulator.requests).toHaveLength(0);
  });
});
