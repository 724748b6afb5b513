import { afterEach, describe, expect, it } from 'vitest';
import type { OutgoingFile } from '../../../bots/discord/fit-images.js';
import type { OutgoingMessage } from '../../../bots/discord/render-job.js';
import { images, MiB, namesOf, Scene } from './reply-scene.js';

const TOO_LARGE = 40005;
const MAX_FOLLOW_UPS = 40094;
const INVALID_WEBHOOK_TOKEN = 50027;

let scene: Scene | undefined;
afterEach(async () => {
  await scene?.close();
  scene = undefined;
});

function end(files: OutgoingFile[]): OutgoingMessage {
  return { content: '🖌️ **herons**', components: [], files };
}

describe('a job’s final messages and the files that follow them (ReplyTarget.final)', () => {
  it('posts each image once when the interaction token dies between two of the messages that follow the end: the rest go to the channel', async () => {
    let firstFollowUp = true;
    let token = '';
    // The token dies as soon as the first follow-up is posted (a 15-minute token running out, a deleted webhook …).
    const s = (scene = await Scene.start({
      onRequest: (r) => {
        if (r.route === 'webhook-followup' && r.status === 200 && firstFollowUp) {
          firstFollowUp = false;
          s.discord.expireToken(token);
        }
      },
    }));
    const ix = await s.deferred();
    token = ix.token;
    // 7 images of 4 MiB: 28 MiB, more than Discord takes in one request, so they follow the end in more than one message.
    const files = images(7, 4 * MiB);
    const delivered = await s.targetOf(ix).final([end(files)]);

    expect(delivered).toEqual({ first: true, all: true });
    expect(s.uploadedNames()).toEqual(namesOf(files));
    expect(s.followUpsOf(ix).length).toBeGreaterThan(0);
    expect(s.discord.channelMessages().filter((m) => m.interactionId === undefined && m.attachments.length > 0).length).toBeGreaterThan(0);
    // Refused once with the token, and not tried with it again.
    expect(s.refusedWith(ix, INVALID_WEBHOOK_TOKEN)).toBe(1);
  });

  it('posts the end in the channel without its images when Discord refuses them together there, the images following it', async () => {
    const s = (scene = await Scene.start());
    const ix = await s.deferred();
    s.discord.expireToken(ix.token);
    const files = images(10, 3 * MiB);
    const delivered = await s.targetOf(ix).final([end(files)]);

    expect(delivered).toEqual({ first: true, all: true });
    const posted = s.discord.channelMessages().filter((m) => m.interactionId === undefined);
    expect(posted[0]!.content).toContain('they follow in separate messages');
    expect(posted[0]!.attachments).toEqual([]);
    expect(s.uploadedNames()).toEqual(namesOf(files));
  });

  it('packs the images of a message after the end into the member’s DM once Discord refuses its follow-up for the follow-up limit (40094), its words with the first', async () => {
    const s = (scene = await Scene.start());
    const ix = await s.deferred({ place: 'group-dm' });
    const first = end(images(1, 1024));
    // 10 images of 3 MiB: 30 MiB, more than one request to Discord takes.
    const more: OutgoingMessage = { content: 'More images (11–20 of 20)', components: [], files: images(10, 3 * MiB, 11) };
    s.discord.failNext({ route: 'webhook-followup', token: ix.token }, { status: 400, code: MAX_FOLLOW_UPS, message: 'This interaction has hit the maximum number of follow up messages' });
    const delivered = await s.targetOf(ix, { fallback: 'dm' }).final([first, more]);

    expect(delivered).toEqual({ first: true, all: true });
    const dm = s.discord.channelMessages(s.discord.dmChannelOf(ix.user.id));
    expect(dm.map((m) => m.attachments.length)).toEqual([8, 2]);
    expect(dm[0]!.content).toContain('More images (11–20 of 20)');
    expect(s.uploadedNames()).toEqual(namesOf([...first.files, ...more.files]));
    expect(s.refusedWith(ix, MAX_FOLLOW_UPS)).toBe(1);
    expect(s.discord.requests.filter((r) => r.route === 'webhook-followup' && r.code !== MAX_FOLLOW_UPS)).toEqual([]);
    expect(s.discord.requests.filter((r) => r.code === TOO_LARGE)).toEqual([]);
    expect(s.discord.channelMessages(s.discord.groupDmChannelId).filter((m) => m.id !== ix.originalMessageId)).toEqual([]);
  });
});

describe('packing the files that follow a job’s end as Discord documents its limits', () => {
  it('packs by the size of a request (25 MiB), not by the upload limit of one file: 10 images of 3 MiB Discord refused with the end follow in 2 messages', async () => {
    const s = (scene = await Scene.start());
    const ix = await s.deferred();
    const files = images(10, 3 * MiB);
    const delivered = await s.targetOf(ix, { attachmentSizeLimit: 10 * MiB }).final([end(files)]);

    expect(delivered).toEqual({ first: true, all: true });
    expect(s.discord.original(ix)!.content).toContain('they follow in separate messages');
    expect(s.followUpsOf(ix).map((m) => m.attachments.length)).toEqual([8, 2]);
    expect(s.uploadedNames()).toEqual(namesOf(files));
  });

  it('keeps a pack within a request’s 25 MiB where one file may be larger (a boosted server’s 50 MiB): nothing Discord refuses as too large after the end', async () => {
    const s = (scene = await Scene.start({ attachmentSizeLimit: 50 * MiB }));
    const ix = await s.deferred();
    const files = images(3, 12 * MiB);
    const delivered = await s.targetOf(ix, { attachmentSizeLimit: 50 * MiB }).final([end(files)]);

    expect(delivered).toEqual({ first: true, all: true });
    expect(s.followUpsOf(ix).map((m) => m.attachments.length)).toEqual([2, 1]);
    // The end's own edit, refused with its images (36 MiB), and nothing after it.
    expect(s.refusedWith(ix, TOO_LARGE)).toBe(1);
    expect(s.uploadedNames()).toEqual(namesOf(files));
  });

  it('sends a file larger than the upload limit of one file in a message of its own, so the files packed beside it are not refused with it', async () => {
    const s = (scene = await Scene.start({ attachmentSizeLimit: 2 * MiB }));
    const ix = await s.deferred();
    const [small1, large, small2] = [images(1, MiB, 1)[0]!, images(1, 3 * MiB, 2)[0]!, images(1, MiB, 3)[0]!];
    s.discord.failNext({ route: 'webhook-message', method: 'PATCH', token: ix.token }, { status: 413, code: TOO_LARGE, message: 'Request entity too large' });
    const delivered = await s.targetOf(ix, { attachmentSizeLimit: 2 * MiB }).final([end([small1, large, small2])]);

    // The large one is refused alone, and cannot be shrunk (it is no image): the two others reach Discord all the same.
    expect(delivered).toEqual({ first: true, all: false });
    expect(s.uploadedNames()).toEqual(namesOf([small1, small2]));
    expect(s.discord.requests.filter((r) => r.route === 'webhook-followup' && r.code === TOO_LARGE).map((r) => r.files.map((f) => f.filename))).toEqual([[large.name]]);
  });
});
