import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { uploadLimitOf } from '../../../bots/discord/discord-facts.js';
import type { JobRecordStore } from '../../../bots/discord/JobRecordStore.js';
import { JobView, type Completed } from '../../../bots/discord/JobView.js';
import type { ReplyTarget } from '../../../bots/discord/ReplyTarget.js';
import { fileSize, say } from '../../../bots/runner/index.js';
import { RecordingLogger } from './harness.js';
import { MiB, Scene } from './reply-scene.js';

const result: Completed = {
  type: 'completed',
  jobId: 'job-1',
  images: [Buffer.from('an image')],
  formats: ['png'],
  size: '1024x1024',
  quality: 'low',
  background: 'opaque',
  usage: undefined,
  cost: { totalUsd: 0.011, basis: 'table' } as Completed['cost'],
  elapsedMs: 1000,
};

/** A view whose final message always lands, and whose record store's `markEnded` (which tries again itself) answers `marked`. */
function viewWithStore(marked: () => Promise<void>) {
  const markEnded = vi.fn(marked);
  const final = vi.fn(async () => ({ first: true, all: true }));
  const logger = new RecordingLogger();
  const view = new JobView({
    target: { final, mode: 'webhook' } as unknown as ReplyTarget,
    header: { key: 'k1', kind: 'generate', prompt: 'a cat', n: 1, locale: 'en-US' },
    store: { markEnded, saveOutputs: async () => undefined, get: async () => undefined } as unknown as JobRecordStore,
    attachmentSizeLimit: 10 * 1024 * 1024,
    logger,
  });
  return { view, markEnded, final, logger };
}

describe('a job view marking its record ended', () => {
  it('marks the record completed through the store once the live result is shown, with the end the runner is to record', async () => {
    const { view, markEnded, final } = viewWithStore(async () => {});
    await view.sink(result);
    expect(final).toHaveBeenCalledTimes(1);
    expect(markEnded).toHaveBeenCalledExactlyOnceWith('k1', 'completed', { end: { type: 'completed', size: '1024x1024', quality: 'low', cost: { totalUsd: 0.011 } } });
    expect(final.mock.invocationCallOrder[0]).toBeLessThan(markEnded.mock.invocationCallOrder[0]!);
  });

  it('logs the mark’s last failure, the result shown all the same and its record left unmarked', async () => {
    const { view, logger } = viewWithStore(async () => {
      throw new Error('storage unavailable');
    });
    await view.sink(result);
    expect(view.resultShown).toBe(true);
    expect(logger.entries.map((e) => e.msg)).toContain('could not show a job update on Discord');
  });

  it('shows a result, with its facts or as kept images without them, and leaves its mark to the caller (the sweep)', async () => {
    const { view, markEnded, final } = viewWithStore(async () => {});
    await view.showResult(result);
    await view.showResult({ type: 'kept', images: result.images, formats: ['png'] }, { indices: [0], made: 1, notes: [] });
    expect(final).toHaveBeenCalledTimes(2);
    expect(markEnded).not.toHaveBeenCalled();
  });

  it('gives a cancellation that came with images their Edit and Delete buttons beside its Retry, as a failure has, and keeps them with that end', async () => {
    const final = vi.fn(async () => ({ first: true, all: true }));
    const saveOutputs = vi.fn(async () => undefined);
    const view = new JobView({
      target: { final, mode: 'webhook' } as unknown as ReplyTarget,
      header: { key: 'k1', kind: 'generate', prompt: 'a cat', n: 2, locale: 'en-US' },
      store: { markEnded: async () => undefined, saveOutputs, get: async () => undefined } as unknown as JobRecordStore,
      attachmentSizeLimit: 10 * 1024 * 1024,
      logger: new RecordingLogger(),
    });
    await view.sink({ type: 'cancelled', jobId: 'job-1', byUserId: 'u1', reason: 'requested', images: [Buffer.from('an image')], formats: ['png'] });
    const [messages] = final.mock.calls[0] as unknown as [{ components: { components: { label?: string }[] }[] }[]];
    expect(messages[0]!.components.flatMap((row) => row.components.map((b) => b.label))).toEqual(['Retry', 'Edit', 'Delete']);
    // Saved for its Edit button, with the cancellation it came with (a sweep shows that end with it, not a result).
    expect(saveOutputs).toHaveBeenCalledExactlyOnceWith('k1', [Buffer.from('an image')], ['png'], { final: { type: 'cancelled', byUserId: 'u1', reason: 'requested' } });
  });
});

let scene: Scene | undefined;
afterEach(async () => {
  await scene?.close();
  scene = undefined;
});

/** A finished job's result of these images (PNG). */
function completed(images: Buffer[]): Completed {
  return { ...result, images, formats: images.map(() => 'png' as const) };
}

/** A view of the job whose reply is `target`'s, in a server whose upload limit of one file is `attachmentSizeLimit`. */
function viewOn(target: ReplyTarget, attachmentSizeLimit: number, n: number): JobView {
  return new JobView({
    target,
    header: { key: 'k1', kind: 'generate', prompt: 'herons', n, locale: 'en-US' },
    store: { markEnded: async () => undefined, saveOutputs: async () => undefined, get: async () => undefined } as unknown as JobRecordStore,
    attachmentSizeLimit,
    logger: new RecordingLogger(),
  });
}

describe('a job view’s result in Discord, packed and fitted by the limits Discord documents', () => {
  it('carries as many of its images with the result as one request takes, the rest in a message after it: nothing is refused as too large', async () => {
    const s = (scene = await Scene.start());
    const ix = await s.deferred();
    // 4 images of 8 MiB: 32 MiB, more than one request to Discord takes (25 MiB), but no more than its 10 files.
    await viewOn(s.targetOf(ix), 10 * MiB, 4).showResult(completed(Array.from({ length: 4 }, () => randomBytes(8 * MiB))));

    expect(s.discord.requests.filter((r) => r.code === 40005).map((r) => r.route)).toEqual([]);
    expect(s.discord.original(ix)!.attachments.map((a) => a.filename)).toEqual(['pictor-k1-1.png', 'pictor-k1-2.png', 'pictor-k1-3.png']);
    const [more, ...others] = s.followUpsOf(ix);
    expect(more!.attachments.map((a) => a.filename)).toEqual(['pictor-k1-4.png']);
    expect(more!.content).toBe(say('en-US', 'discord.job.more_images', { from: 4, to: 4, of: 4 }));
    expect(others).toEqual([]);
  });

  it('fits an image to what one request takes in a boosted server (50 MiB a file), and the result says so: none is refused as too large', async () => {
    const s = (scene = await Scene.start({ attachmentSizeLimit: 50 * MiB }));
    const ix = await s.deferred();
    // 27 MiB of PNG: within the server’s 50 MiB a file, beyond the 25 MiB of a request that sends a message.
    const large = await sharp({ create: { width: 3200, height: 3000, channels: 3, background: { r: 40, g: 90, b: 160 } } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    expect(large.length).toBeGreaterThan(25 * MiB);
    await viewOn(s.targetOf(ix, { attachmentSizeLimit: 50 * MiB }), 50 * MiB, 1).showResult(completed([large]));

    expect(s.discord.requests.filter((r) => r.code === 40005).map((r) => r.route)).toEqual([]);
    const reply = s.discord.original(ix)!;
    expect(reply.attachments.map((a) => a.filename)).toEqual(['pictor-k1-1.webp']);
    const limit = fileSize(uploadLimitOf({ attachmentSizeLimit: 50 * MiB }));
    expect(reply.content).toContain(say('en-US', 'discord.job.reencoded', { images: 1, index: 1, format: 'WEBP', shrunk: 'no', percent: 100, limit }));
    expect(s.followUpsOf(ix)).toEqual([]);
  });
});

describe('a job’s many large images on the wire (packed once, by the view)', () => {
  /** 10 images of 5 MiB: 4 fit in one request (25 MiB), so they go 4, 4 and 2. */
  const tenLarge = () => Array.from({ length: 10 }, () => randomBytes(5 * MiB));
  const names = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `pictor-k1-${from + i}.png`);

  it('sends the result with its first 4 images and 2 messages after it, each with the images it names, each posted once', async () => {
    const s = (scene = await Scene.start());
    const ix = await s.deferred();
    await viewOn(s.targetOf(ix), 10 * MiB, 10).showResult(completed(tenLarge()));

    expect(s.discord.original(ix)!.attachments.map((a) => a.filename)).toEqual(names(1, 4));
    const followUps = s.followUpsOf(ix);
    expect(followUps.map((m) => m.attachments.map((a) => a.filename))).toEqual([names(5, 8), names(9, 10)]);
    expect(followUps.map((m) => m.content)).toEqual([say('en-US', 'discord.job.more_images', { from: 5, to: 8, of: 10 }), say('en-US', 'discord.job.more_images', { from: 9, to: 10, of: 10 })]);
    // One request for each message: none refused, none split again.
    expect(s.discord.requests.filter((r) => r.route === 'webhook-followup').map((r) => [r.status, r.files.length])).toEqual([
      [200, 4],
      [200, 2],
    ]);
    expect(s.postedInChannel()).toEqual([]);
  });

  it('keeps a message within a request’s 25 MiB in a boosted server (50 MiB a file): 3 images of 12 MiB go 2 and 1, none refused as too large', async () => {
    const s = (scene = await Scene.start({ attachmentSizeLimit: 50 * MiB }));
    const ix = await s.deferred();
    await viewOn(s.targetOf(ix, { attachmentSizeLimit: 50 * MiB }), 50 * MiB, 3).showResult(completed(Array.from({ length: 3 }, () => randomBytes(12 * MiB))));

    expect(s.discord.requests.filter((r) => r.code === 40005)).toEqual([]);
    expect(s.discord.original(ix)!.attachments.map((a) => a.filename)).toEqual(names(1, 2));
    expect(s.followUpsOf(ix).map((m) => m.attachments.map((a) => a.filename))).toEqual([names(3, 3)]);
  });

  it('sends the same messages to the channel once the interaction token is spent', async () => {
    const s = (scene = await Scene.start());
    const ix = await s.deferred();
    s.discord.expireToken(ix.token);
    await viewOn(s.targetOf(ix), 10 * MiB, 10).showResult(completed(tenLarge()));

    const posted = s.postedInChannel();
    expect(posted.map((m) => m.attachments.map((a) => a.filename))).toEqual([names(1, 4), names(5, 8), names(9, 10)]);
    expect(posted.slice(1).map((m) => m.content)).toEqual([
      `<@${ix.user.id}> ${say('en-US', 'discord.job.more_images', { from: 5, to: 8, of: 10 })}`,
      `<@${ix.user.id}> ${say('en-US', 'discord.job.more_images', { from: 9, to: 10, of: 10 })}`,
    ]);
    expect(s.discord.requests.filter((r) => r.route === 'channel-message').map((r) => [r.status, r.files.length])).toEqual([
      [200, 4],
      [200, 4],
      [200, 2],
    ]);
  });
});
