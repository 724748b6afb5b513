import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OutgoingFile } from '../../../bots/discord/fit-images.js';
import { allImages, cancelButtons, resultButtons, type OutgoingMessage } from '../../../bots/discord/render-job.js';
import type { FinalDelivery, ReplyTarget, ReplyTargetOptions } from '../../../bots/discord/ReplyTarget.js';
import { makeRequestWithEncodedForms } from '../../../bots/discord/rest-request.js';
import { say } from '../../../bots/runner/index.js';
import type { FakeInteraction, FaultMatch } from '../../fakes/discord/FakeDiscord.js';
import { images, keyOf, MiB, namesOf, notesOf, Scene, type SceneOptions } from './reply-scene.js';

const TOO_LARGE = 40005;
const MAX_FOLLOW_UPS = 40094;
const INVALID_WEBHOOK_TOKEN = 50027;
const UNKNOWN_WEBHOOK = 10015;
const INVALID_FORM_BODY = 50035;
const MISSING_PERMISSIONS = 50013;
const CANNOT_DM = 50007;
/** Discord's flag of a message only the member who asked sees. */
const EPHEMERAL = 64;
/**
 * Tries discord.js makes of a request that Discord fails on (5xx) or does not answer, when Discord makes nothing twice
 * of it (an edit, a DM's opening, a channel message with its nonce): the first and 3 more.
 */
const DISCORD_JS_TRIES = 4;
/** Sends of a follow-up Discord fails on or does not answer (no nonce there): one (`withPostsSentOnce`). */
const FOLLOW_UP_SENDS = 1;

let scene: Scene | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await scene?.close();
  scene = undefined;
});

function end(files: OutgoingFile[]): OutgoingMessage {
  return { content: '🖌️ **herons**', components: [], files };
}

/** A fresh Discord, and a member's /imagine there deferred as a job's is. */
async function deferredJob(options?: SceneOptions): Promise<{ s: Scene; ix: FakeInteraction }> {
  const s = (scene = await Scene.start(options));
  return { s, ix: await s.deferred() };
}

/**
 * Discord fails (500) the next `tries` requests matching `match` — by default each send of one request: one of a
 * follow-up, each of discord.js's tries of anything else; `madeFirst`: it carries out the first all the same.
 */
function failsEachTry(s: Scene, match: FaultMatch, { tries = match.route === 'webhook-followup' ? FOLLOW_UP_SENDS : DISCORD_JS_TRIES, madeFirst = false } = {}): void {
  s.discord.failNext(match, { status: 500, code: 0, message: 'Internal Server Error', count: tries, applyFirst: madeFirst });
}

/** The reply's edits with the interaction's token; its follow-ups; the bot's messages in a channel or DM. */
const replyEdits = (ix: FakeInteraction): FaultMatch => ({ route: 'webhook-message', method: 'PATCH', token: ix.token });
const followUps = (ix: FakeInteraction): FaultMatch => ({ route: 'webhook-followup', token: ix.token });
const CHANNEL_POSTS: FaultMatch = { route: 'channel-message', method: 'POST' };

/** Checks that `content` tells the member that `file` may be missing: by the line's key and the file's name, not its words. */
function saysMayBeMissing(content: string, file: string): void {
  expect(notesOf(content)).toEqual(['discord.job.files_may_be_missing']);
  expect(content).toContain(file);
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
    const { s, ix } = await deferredJob();
    s.discord.expireToken(ix.token);
    const files = images(10, 3 * MiB);
    const delivered = await s.targetOf(ix).final([end(files)]);

    expect(delivered).toEqual({ first: true, all: true });
    const posted = s.discord.channelMessages().filter((m) => m.interactionId === undefined);
    expect(notesOf(posted[0]!.content)).toEqual(['discord.job.upload_separately']);
    expect(posted[0]!.attachments).toEqual([]);
    expect(s.uploadedNames()).toEqual(namesOf(files));
  });

  it('logs the end it could deliver nowhere with its files’ names: the token is spent and the channel refuses it', async () => {
    const { s, ix } = await deferredJob();
    s.discord.expireToken(ix.token);
    s.discord.failNext(CHANNEL_POSTS, { status: 403, code: MISSING_PERMISSIONS, message: 'Missing Permissions' });
    const files = images(2, 1024);
    const delivered = await s.targetOf(ix).final([end(files)]);

    expect(delivered).toEqual({ first: false, all: false });
    const undelivered = s.logger.entries.filter((e) => e.msg?.startsWith('could not deliver a job result to Discord'));
    expect(undelivered.map((e) => e.obj)).toEqual([expect.objectContaining({ what: 'final', code: MISSING_PERMISSIONS, files: files.map((f) => f.name) })]);
  });

  it('sends the messages after the end to the member’s DM as they come once Discord refuses a follow-up for the follow-up limit (40094)', async () => {
    const s = (scene = await Scene.start());
    const ix = await s.deferred({ place: 'group-dm' });
    const first = end(images(1, 1024));
    // Two packs of 3 MiB images (24 and 6 MiB), as a job's view packs 10 of them after its end.
    const more: OutgoingMessage[] = [
      { content: 'More images (11–18 of 20)', components: [], files: images(8, 3 * MiB, 11) },
      { content: 'More images (19–20 of 20)', components: [], files: images(2, 3 * MiB, 19) },
    ];
    s.discord.failNext(followUps(ix), { status: 400, code: MAX_FOLLOW_UPS, message: 'This interaction has hit the maximum number of follow up messages' });
    const delivered = await s.targetOf(ix, { fallback: 'dm' }).final([first, ...more]);

    expect(delivered).toEqual({ first: true, all: true });
    const dm = s.discord.channelMessages(s.discord.dmChannelOf(ix.user.id));
    expect(dm.map((m) => m.attachments.length)).toEqual([8, 2]);
    expect(dm.map((m) => m.content)).toEqual([`<@${ix.user.id}> More images (11–18 of 20)`, `<@${ix.user.id}> More images (19–20 of 20)`]);
    expect(s.uploadedNames()).toEqual(namesOf([...first.files, ...more.flatMap((m) => m.files)]));
    expect(s.refusedWith(ix, MAX_FOLLOW_UPS)).toBe(1);
    expect(s.discord.requests.filter((r) => r.route === 'webhook-followup' && r.code !== MAX_FOLLOW_UPS)).toEqual([]);
    expect(s.discord.requests.filter((r) => r.code === TOO_LARGE)).toEqual([]);
    expect(s.discord.channelMessages(s.discord.groupDmChannelId).filter((m) => m.id !== ix.originalMessageId)).toEqual([]);
    // The refusal is logged with the mode its call was made in (the token's), not the one it switched to.
    expect(s.logger.entries.filter((e) => (e.obj as { code?: number } | undefined)?.code === MAX_FOLLOW_UPS).map((e) => (e.obj as { mode?: string }).mode)).toEqual(['webhook']);
  });
});

describe('the files a job’s end comes with, packed by its caller (each message is sent as it comes)', () => {
  it('sends the end’s images Discord refused with it as too large (413) in one message after it, as they were packed', async () => {
    const { s, ix } = await deferredJob();
    const files = images(3, 1024);
    s.discord.failNext(replyEdits(ix), { status: 413, code: TOO_LARGE, message: 'Request entity too large' });
    const delivered = await s.targetOf(ix).final([end(files)]);

    expect(delivered).toEqual({ first: true, all: true });
    expect(notesOf(s.discord.original(ix)!.content)).toEqual(['discord.job.upload_separately']);
    expect(s.followUpsOf(ix).map((m) => m.attachments.map((a) => a.filename))).toEqual([files.map((f) => f.name)]);
  });

  it('sends each of those images in a message of its own when Discord refuses them together again, one it refuses alone not keeping the others out', async () => {
    const { s, ix } = await deferredJob({ attachmentSizeLimit: 2 * MiB });
    const [small1, large, small2] = [images(1, MiB, 1)[0]!, images(1, 3 * MiB, 2)[0]!, images(1, MiB, 3)[0]!];
    s.discord.failNext(replyEdits(ix), { status: 413, code: TOO_LARGE, message: 'Request entity too large' });
    const delivered = await s.targetOf(ix, { attachmentSizeLimit: 2 * MiB }).final([end([small1, large, small2])]);

    // The large one is refused alone, and cannot be shrunk (it is no image): the two others reach Discord all the same.
    expect(delivered).toEqual({ first: true, all: false });
    expect(s.uploadedNames()).toEqual(namesOf([small1, small2]));
    expect(s.discord.requests.filter((r) => r.route === 'webhook-followup' && r.code === TOO_LARGE).map((r) => r.files.map((f) => f.filename))).toEqual([
      [small1.name, large.name, small2.name],
      [large.name],
    ]);
  });
});

/** A message after a job’s end: `files` with a line of words saying which they are. */
function more(files: OutgoingFile[], from: number): OutgoingMessage {
  return { content: `More images (${from}–${from + files.length - 1} of 9)`, components: [], files };
}

describe('which refusals of a follow-up leave the interaction token (each image posted in one place only)', () => {
  it.each([
    { code: INVALID_WEBHOOK_TOKEN, status: 401, why: 'the token expired' },
    { code: UNKNOWN_WEBHOOK, status: 404, why: 'the webhook is gone' },
    { code: MAX_FOLLOW_UPS, status: 400, why: 'the follow-ups are spent' },
  ])('sends the message after the end and every later one to the channel when Discord refuses its follow-up with $code ($why)', async ({ code, status }) => {
    const { s, ix } = await deferredJob();
    const [second, third] = [more(images(1, 1024, 2), 2), more(images(1, 1024, 3), 3)];
    s.discord.failNext(followUps(ix), { status, code, message: 'refused' });
    const delivered = await s.targetOf(ix).final([end(images(1, 1024)), second, third]);

    expect(delivered).toEqual({ first: true, all: true });
    expect(s.postedInChannel().map((m) => m.attachments.map((a) => a.filename))).toEqual([['pictor-k-2.png'], ['pictor-k-3.png']]);
    expect(s.followUpsOf(ix)).toEqual([]);
    expect(s.discord.requests.filter((r) => r.route === 'webhook-followup').map((r) => r.code)).toEqual([code]);
  });

  it('keeps a message Discord refused with the token for another reason (400, 50035) out of the channel — no public mention for it — and sends the next with the token', async () => {
    const { s, ix } = await deferredJob();
    const [second, third] = [more(images(1, 1024, 2), 2), more(images(1, 1024, 3), 3)];
    s.discord.failNext(followUps(ix), { status: 400, code: INVALID_FORM_BODY, message: 'Invalid Form Body' });
    const delivered = await s.targetOf(ix).final([end(images(1, 1024)), second, third]);

    expect(delivered).toEqual({ first: true, all: false });
    expect(s.postedInChannel()).toEqual([]);
    expect(s.followUpsOf(ix).map((m) => m.attachments.map((a) => a.filename))).toEqual([['pictor-k-3.png']]);
  });

  it('does not post again a message Discord failed on (5xx) — Discord may have made it — and sends the next with the token', async () => {
    const { s, ix } = await deferredJob();
    const [second, third] = [more(images(1, 1024, 2), 2), more(images(1, 1024, 3), 3)];
    failsEachTry(s, followUps(ix));
    const delivered = await s.targetOf(ix).final([end(images(1, 1024)), second, third]);

    expect(delivered).toEqual({ first: true, all: false });
    expect(s.postedInChannel()).toEqual([]);
    expect(s.followUpsOf(ix).map((m) => m.attachments.map((a) => a.filename))).toEqual([['pictor-k-3.png']]);
    expect(s.discord.requests.filter((r) => r.route === 'webhook-followup')).toHaveLength(FOLLOW_UP_SENDS + 1);
  });

  it('does not post again a message Discord did not answer (the request timed out), and sends the next with the token', async () => {
    let unanswered = 0;
    const s = (scene = await Scene.start({
      // The follow-up's request gets no answer in time: discord.js aborts it (AbortError), as its timeout does.
      webhookRequest: async (url, init) => {
        if (init.method === 'POST' && new URL(url).pathname.includes('/webhooks/') && unanswered < FOLLOW_UP_SENDS) {
          unanswered++;
          throw new DOMException('This operation was aborted', 'AbortError');
        }
        return makeRequestWithEncodedForms(url, init);
      },
    }));
    const ix = await s.deferred();
    const [second, third] = [more(images(1, 1024, 2), 2), more(images(1, 1024, 3), 3)];
    const delivered = await s.targetOf(ix).final([end(images(1, 1024)), second, third]);

    expect(unanswered).toBe(FOLLOW_UP_SENDS);
    expect(delivered).toEqual({ first: true, all: false });
    expect(s.postedInChannel()).toEqual([]);
    expect(s.followUpsOf(ix).map((m) => m.attachments.map((a) => a.filename))).toEqual([['pictor-k-3.png']]);
  });
});

describe('a file Discord refuses even made smaller', () => {
  it('posts the words and buttons it came with without it, saying it could not be sent', async () => {
    const { s, ix } = await deferredJob({ attachmentSizeLimit: 2 * MiB });
    // 3 MiB that are no image: Discord refuses them (over its 2 MiB a file), and they cannot be re-encoded smaller.
    const [large] = images(1, 3 * MiB, 2);
    const second: OutgoingMessage = { content: 'More images (2–2 of 2)', components: resultButtons('k1', allImages(2), 'en-US'), files: [large!] };
    const delivered = await s.targetOf(ix, { attachmentSizeLimit: 2 * MiB }).final([end(images(1, 1024)), second]);

    expect(delivered).toEqual({ first: true, all: false });
    const [posted, ...others] = s.followUpsOf(ix);
    expect(others).toEqual([]);
    expect(posted!.attachments).toEqual([]);
    expect(posted!.content).toContain('More images (2–2 of 2)');
    expect(posted!.content).toContain(say('en-US', 'discord.job.file_not_sent', { file: large!.name }));
    expect(posted!.components).toEqual(second.components);
  });
});

/** The channel messages the bot's token asked for: each request's nonce and whether it asked Discord to enforce it. */
function channelPosts(s: Scene): { nonce: unknown; enforce: unknown; status: number }[] {
  return s.discord.requests.filter((r) => r.route === 'channel-message' && r.method === 'POST').map((r) => ({ nonce: r.body?.nonce, enforce: r.body?.enforce_nonce, status: r.status }));
}

describe('a channel message Discord failed on or did not answer, sent again without showing twice (nonce, enforce_nonce)', () => {
  it('answers a second message with the nonce of one made a moment ago with that message, making none (Discord’s documented guard)', async () => {
    const s = (scene = await Scene.start());
    const body = { content: 'herons', nonce: 'pictor-nonce-1', enforce_nonce: true };
    const first = (await s.botRest.post(`/channels/${s.discord.channelId}/messages`, { body })) as { id: string };
    const second = (await s.botRest.post(`/channels/${s.discord.channelId}/messages`, { body })) as { id: string };
    const unenforced = (await s.botRest.post(`/channels/${s.discord.channelId}/messages`, { body: { ...body, enforce_nonce: false } })) as { id: string };

    expect(second.id).toBe(first.id);
    expect(unenforced.id).not.toBe(first.id);
    expect(s.postedInChannel().map((m) => m.id)).toEqual([first.id, unenforced.id]);
  });

  it('sends the end again with its nonce once discord.js’s tries of it failed (5xx) though Discord made it: the channel shows it once, delivered', async () => {
    const { s, ix } = await deferredJob();
    s.discord.expireToken(ix.token);
    failsEachTry(s, CHANNEL_POSTS, { madeFirst: true });
    const files = images(2, 1024);
    const delivered = await s.targetOf(ix, { retryDelaysMs: [0] }).final([end(files)]);

    expect(delivered).toEqual({ first: true, all: true });
    expect(s.postedInChannel().map((m) => m.attachments.map((a) => a.filename))).toEqual([files.map((f) => f.name)]);
    const posts = channelPosts(s);
    expect(posts).toHaveLength(DISCORD_JS_TRIES + 1);
    expect(new Set(posts.map((p) => p.nonce)).size).toBe(1);
    expect(posts.every((p) => typeof p.nonce === 'string' && p.nonce.length <= 25 && p.enforce === true)).toBe(true);
  });

  it('sends a message after the end again once Discord did not make it (5xx each try), and gives the next its own nonce', async () => {
    const { s, ix } = await deferredJob();
    s.discord.expireToken(ix.token);
    const [second, third] = [more(images(1, 1024, 2), 2), more(images(1, 1024, 3), 3)];
    const target = s.targetOf(ix, { retryDelaysMs: [0] });
    s.discord.failNext(CHANNEL_POSTS, { status: 503, code: 0, message: 'Service Unavailable', count: DISCORD_JS_TRIES + 1 });
    const delivered = await target.final([end(images(1, 1024)), second, third]);

    expect(delivered).toEqual({ first: true, all: true });
    expect(s.postedInChannel().map((m) => m.attachments.map((a) => a.filename))).toEqual([['pictor-k-1.png'], ['pictor-k-2.png'], ['pictor-k-3.png']]);
    expect(new Set(channelPosts(s).map((p) => p.nonce)).size).toBe(3);
  });
});

/** Resolves `done` while the fake clock runs a second at a time, Discord's answers (real I/O) coming between. */
async function onFakeClock<T>(done: Promise<T>): Promise<T> {
  let settled = false;
  const watched = done.finally(() => (settled = true));
  for (let i = 0; !settled && i < 1000; i++) {
    await vi.advanceTimersByTimeAsync(1000);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return watched;
}

/** Discord never answers a request with files: it stays on its way until discord.js gives up on it (its abort signal). */
function unansweredUploads(sentAt: number[]): NonNullable<Parameters<typeof Scene.start>[0]>['botRequest'] {
  return (url, init) => {
    if (!(init.body instanceof FormData)) return makeRequestWithEncodedForms(url, init);
    const signal = init.signal as AbortSignal;
    // As undici: a request whose signal is already aborted is not sent.
    if (signal.aborted) return Promise.reject(new DOMException('This operation was aborted', 'AbortError'));
    sentAt.push(Date.now());
    return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new DOMException('This operation was aborted', 'AbortError'))));
  };
}

/**
 * Each request with files waits for a connection of its pool that never comes free, until discord.js gives up on it (its
 * abort signal): taken by the pool (`dispatch`), never written to a connection, so Discord never receives it.
 */
function uploadsNeverWritten(taken: number[]): NonNullable<Parameters<typeof Scene.start>[0]>['botRequest'] {
  return (url, init) => {
    if (!(init.body instanceof FormData)) return makeRequestWithEncodedForms(url, init);
    const signal = init.signal as AbortSignal;
    taken.push(Date.now());
    // The pool takes it (its request hook is told so); this stand-in hands undici nothing it could write.
    try {
      (init.dispatcher as unknown as { dispatch: (options: unknown, handler: object) => boolean }).dispatch({}, {});
    } catch {
      // undici refuses the empty request: it is never written.
    }
    return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new DOMException('This operation was aborted', 'AbortError'))));
  };
}

describe('a channel message none of whose requests was written (given up on while it waited for a connection)', () => {
  it('is known as not posted, not as perhaps posted: the member is not told its image may be there', async () => {
    const taken: number[] = [];
    const s = (scene = await Scene.start({ botRequest: uploadsNeverWritten(taken) }));
    const ix = await s.deferred();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const files = images(1, 1024);
    const delivered = await onFakeClock(s.targetOf(ix, { issuedAt: 0 }).final([end(files)]));

    expect(delivered).toEqual({ first: false, all: false });
    expect(taken.length).toBeGreaterThan(0);
    expect(channelPosts(s).filter((p) => p.status === 200)).toEqual([]);
    for (const message of s.postedInChannel()) expect(notesOf(message.content)).not.toContain('discord.job.files_may_be_missing');
  });
});

describe('how long a channel message is sent again with its nonce (Discord keeps it "a few minutes")', () => {
  it('sends it — discord.js’s own tries included — only within 2 minutes of its first send, and then tells the member its image may be missing', async () => {
    const sentAt: number[] = [];
    const s = (scene = await Scene.start({ botRequest: unansweredUploads(sentAt) }));
    const ix = await s.deferred();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    // The token is past its use: the end goes to the channel.
    const files = images(1, 1024);
    const delivered = await onFakeClock(s.targetOf(ix, { issuedAt: 0 }).final([end(files)]));

    expect(delivered).toEqual({ first: false, all: false });
    expect(sentAt.length).toBeGreaterThan(0);
    expect(sentAt.filter((at) => at - sentAt[0]! >= 2 * 60_000)).toEqual([]);
    const [told, ...others] = s.postedInChannel();
    expect(others).toEqual([]);
    expect(told!.content.startsWith(`<@${ix.user.id}> `)).toBe(true);
    saysMayBeMissing(told!.content, files[0]!.name);
  });

  it('never lets a send of its nonce leave after its window, though discord.js waited out a rate limit past it: nothing left, so it goes again with a new nonce, shown once', async () => {
    const { s, ix } = await deferredJob();
    // Discord's answer to the first send: wait 3 minutes, longer than it keeps a nonce.
    s.discord.rateLimitNext(CHANNEL_POSTS, 3 * 60_000);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const files = images(1, 1024);
    const delivered = await onFakeClock(s.targetOf(ix, { issuedAt: 0 }).final([end(files)]));

    const [limited, ...later] = channelPosts(s);
    expect(limited!.status).toBe(429);
    // No request of the first nonce left after its window; the next try, with a nonce of its own, was made.
    expect(later.map((p) => [p.nonce === limited!.nonce, p.status])).toEqual([[false, 200]]);
    expect(delivered).toEqual({ first: true, all: true });
    const [posted, ...others] = s.postedInChannel();
    expect(others).toEqual([]);
    expect(notesOf(posted!.content)).toEqual([]);
    expect(posted!.attachments.map((a) => a.filename)).toEqual([files[0]!.name]);
  });

  it('does not cut off a send of its nonce that left within its window and is still on its way when the window ends: Discord’s answer to it counts', async () => {
    const { s, ix } = await deferredJob();
    failsEachTry(s, CHANNEL_POSTS);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    // The next try starts 118 s after the first try ended: a second or two before the window ends.
    const done = s.targetOf(ix, { issuedAt: 0, retryDelaysMs: [118_000] }).final([end(images(1, 1024))]);
    await s.discord.waitFor(() => channelPosts(s).length === DISCORD_JS_TRIES, 'the first try of the end in the channel');
    const slow = s.discord.holdRequests((method, path) => method === 'POST' && /\/channels\/\d+\/messages$/.test(path));
    // The wait before the next try passes, a second at a time, until that try is on its way.
    for (let second = 0; slow.held === 0 && second < 130; second++) {
      await vi.advanceTimersByTimeAsync(1000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await s.discord.waitFor(() => slow.held === 1, 'the second try to be on its way');
    // The window ends while Discord has not answered it yet.
    await vi.advanceTimersByTimeAsync(5_000);
    slow.release();

    expect(await done).toEqual({ first: true, all: true });
    const [posted, ...others] = s.postedInChannel();
    expect(others).toEqual([]);
    expect(notesOf(posted!.content)).toEqual([]);
    expect(new Set(channelPosts(s).map((p) => p.nonce)).size).toBe(1);
  });

  it('tells the member an image may be missing after three tries Discord failed on (5xx)', async () => {
    const { s, ix } = await deferredJob();
    failsEachTry(s, CHANNEL_POSTS, { tries: 3 * DISCORD_JS_TRIES });
    const files = images(1, 1024);
    const delivered = await s.targetOf(ix, { issuedAt: 0, retryDelaysMs: [0] }).final([end(files)]);

    expect(delivered).toEqual({ first: false, all: false });
    expect(new Set(channelPosts(s).map((p) => p.nonce)).size).toBe(2);
    const [told, ...others] = s.postedInChannel();
    expect(others).toEqual([]);
    expect(told!.content.startsWith(`<@${ix.user.id}> `)).toBe(true);
    saysMayBeMissing(told!.content, files[0]!.name);
  });

  it('stops waiting to send it again once the bot’s stop waits no longer for the replies being shown', async () => {
    const { s, ix } = await deferredJob();
    failsEachTry(s, CHANNEL_POSTS);
    const stop = new AbortController();
    // A wait between tries no test would sit through.
    const done = s.targetOf(ix, { issuedAt: 0, retryDelaysMs: [24 * 60 * 60_000], stop: stop.signal }).final([end(images(1, 1024))]);
    await s.discord.waitFor(() => channelPosts(s).length === DISCORD_JS_TRIES, 'the first try of the end in the channel');
    stop.abort();

    expect(await done).toEqual({ first: false, all: false });
    // The end was not tried again (the one message after it is the member told its image may be missing).
    const [endNonce] = channelPosts(s).map((p) => p.nonce);
    expect(channelPosts(s).filter((p) => p.nonce === endNonce)).toHaveLength(DISCORD_JS_TRIES);
  });
});

describe('a follow-up Discord failed on or did not answer (no nonce there): the member is told an image may be missing', () => {
  it('adds to the end’s own reply that the image of a follow-up Discord failed on (5xx) may be missing, its words and buttons kept', async () => {
    const { s, ix } = await deferredJob();
    const [second, third] = [more(images(1, 1024, 2), 2), more(images(1, 1024, 3), 3)];
    failsEachTry(s, followUps(ix));
    const first: OutgoingMessage = { ...end(images(1, 1024)), components: resultButtons('k1', allImages(3), 'en-US') };
    const delivered = await s.targetOf(ix).final([first, second, third]);

    expect(delivered).toEqual({ first: true, all: false });
    const reply = s.discord.original(ix)!;
    expect(reply.content.startsWith(`${first.content}\n`)).toBe(true);
    saysMayBeMissing(reply.content, 'pictor-k-2.png');
    expect(reply.attachments.map((a) => a.filename)).toEqual(['pictor-k-1.png']);
    expect(reply.components).toEqual(first.components);
    // Not sent again: it could show twice.
    expect(s.followUpsOf(ix).map((m) => m.attachments.map((a) => a.filename))).toEqual([['pictor-k-3.png']]);
    expect(s.postedInChannel()).toEqual([]);
  });

  it('tells the member in the fallback when the token is spent by then (the reply can no longer be edited)', async () => {
    const { s, ix } = await deferredJob();
    const [second, third] = [more(images(1, 1024, 2), 2), more(images(1, 1024, 3), 3)];
    failsEachTry(s, followUps(ix));
    s.discord.failNext(followUps(ix), { status: 401, code: INVALID_WEBHOOK_TOKEN, message: 'Invalid Webhook Token' });
    const delivered = await s.targetOf(ix).final([end(images(1, 1024)), second, third]);

    expect(delivered).toEqual({ first: true, all: false });
    const [next, told, ...others] = s.postedInChannel();
    expect(others).toEqual([]);
    expect(next!.content).toBe(`<@${ix.user.id}> ${third.content}`);
    expect(told!.content.startsWith(`<@${ix.user.id}> `)).toBe(true);
    saysMayBeMissing(told!.content, 'pictor-k-2.png');
  });
});

/**
 * A job whose end's edit passes and whose one follow-up after it Discord fails on (5xx), so a line naming that image is
 * added to the reply: `theLinesEdit` says how Discord answers the edits after the end's (the line's), `onRequest` sees
 * every request.
 */
async function lineAfterTheEnd(theLinesEdit: (s: Scene, edits: FaultMatch) => void, onRequest?: SceneOptions['onRequest']): Promise<{ s: Scene; ix: FakeInteraction; final: (options?: Partial<ReplyTargetOptions>) => Promise<FinalDelivery> }> {
  let endsEdit = true;
  const deferred: { ix?: FakeInteraction } = {};
  const s = (scene = await Scene.start({
    onRequest: (r) => {
      if (deferred.ix && endsEdit && r.route === 'webhook-message' && r.method === 'PATCH' && r.status === 200) {
        endsEdit = false;
        theLinesEdit(s, replyEdits(deferred.ix));
      }
      onRequest?.(r);
    },
  }));
  const ix = (deferred.ix = await s.deferred());
  failsEachTry(s, followUps(ix));
  return { s, ix, final: (options = {}) => s.targetOf(ix, { retryDelaysMs: [0], ...options }).final([end(images(1, 1024)), more(images(1, 1024, 2), 2)]) };
}

describe('the line saying an image may be missing, added to the end’s reply: shown once', () => {
  /** The reply as the end with the line naming the image after it. */
  const endWithTheLine = (content: string): void => {
    expect(content.startsWith(`${end([]).content}\n`)).toBe(true);
    saysMayBeMissing(content, 'pictor-k-2.png');
  };
  const linesNotAdded = (s: Scene) => s.logger.entries.filter((e) => e.msg?.startsWith('could not add to a job reply that some of its images may be missing')).map((e) => e.obj);

  it('edits the reply again when Discord failed on that edit (5xx) — an edit shows once however often it is made — and posts the line nowhere else', async () => {
    // The line's edit fails each of discord.js's tries, Discord making it all the same.
    const { s, ix, final } = await lineAfterTheEnd((s, edits) => failsEachTry(s, edits, { madeFirst: true }));
    const delivered = await final();

    expect(delivered).toEqual({ first: true, all: false });
    endWithTheLine(s.discord.original(ix)!.content);
    expect(s.followUpsOf(ix).map((m) => m.content)).toEqual([]);
    expect(s.postedInChannel()).toEqual([]);
  });

  it('posts the line nowhere else when Discord failed on every try of that edit (it may be there), and logs it', async () => {
    // Each try of the line's edit fails, Discord making it all the same.
    const { s, ix, final } = await lineAfterTheEnd((s, edits) => failsEachTry(s, edits, { tries: 2 * DISCORD_JS_TRIES, madeFirst: true }));
    const delivered = await final({ finalAttempts: 2 });

    expect(delivered).toEqual({ first: true, all: false });
    endWithTheLine(s.discord.original(ix)!.content);
    expect(s.followUpsOf(ix)).toEqual([]);
    expect(s.postedInChannel()).toEqual([]);
    expect(linesNotAdded(s)).toEqual([expect.objectContaining({ files: ['pictor-k-2.png'] })]);
  });

  it.each([
    { code: INVALID_WEBHOOK_TOKEN, status: 401, why: 'the token expired' },
    { code: UNKNOWN_WEBHOOK, status: 404, why: 'the webhook is gone' },
  ])('posts the line nowhere else when Discord failed on an edit of it (5xx) and the next try is refused because $why: it may be there', async ({ code, status }) => {
    // The line's edit fails each of discord.js's tries, Discord making it all the same; then the token is spent.
    const { s, ix, final } = await lineAfterTheEnd((s, edits) => {
      failsEachTry(s, edits, { madeFirst: true });
      s.discord.failNext(edits, { status, code, message: 'Token spent' });
    });
    const delivered = await final();

    expect(delivered).toEqual({ first: true, all: false });
    endWithTheLine(s.discord.original(ix)!.content);
    expect(s.followUpsOf(ix)).toEqual([]);
    expect(s.postedInChannel()).toEqual([]);
    expect(linesNotAdded(s)).toEqual([expect.objectContaining({ files: ['pictor-k-2.png'] })]);
  });

  it('posts the line nowhere else when Discord failed on an edit of it (5xx) and the token runs out in the wait before the next try', async () => {
    let now = 0;
    // The line's edit fails each of discord.js's tries, Discord making it all the same, and the 15 minutes of the token
    // are over before the next try.
    const { s, ix, final } = await lineAfterTheEnd(
      (s, edits) => failsEachTry(s, edits, { madeFirst: true }),
      (r) => {
        if (r.route === 'webhook-message' && r.method === 'PATCH' && r.status === 500) now += 15 * 60_000;
      },
    );
    now = ix.createdAt;
    await final({ now: () => now });

    endWithTheLine(s.discord.original(ix)!.content);
    expect(s.postedInChannel()).toEqual([]);
  });

  it('posts the line as a message of its own when Discord refuses the edit (4xx): no edit was made', async () => {
    const { s, ix, final } = await lineAfterTheEnd((s, edits) => s.discord.failNext(edits, { status: 400, code: INVALID_FORM_BODY, message: 'Invalid Form Body' }));
    const delivered = await final();

    expect(delivered).toEqual({ first: true, all: false });
    expect(s.discord.original(ix)!.content).toBe(end([]).content);
    const [told, ...others] = s.followUpsOf(ix);
    expect(others).toEqual([]);
    saysMayBeMissing(told!.content, 'pictor-k-2.png');
  });
});

describe('the end of a job whose reply was deleted: a follow-up takes its place, posted once', () => {
  it('does not post that follow-up again, nor in the channel, when Discord failed on it (5xx) — it may have made it', async () => {
    const { s, ix } = await deferredJob();
    s.discord.deleteMessage(ix.originalMessageId!);
    // Discord makes the follow-up, then fails its answer (500).
    failsEachTry(s, followUps(ix), { madeFirst: true });
    const files = images(1, 1024);
    const delivered = await s.targetOf(ix, { retryDelaysMs: [0] }).final([end(files)]);

    expect(delivered.first).toBe(false);
    expect(s.followUpsOf(ix).filter((m) => m.content === end([]).content).map((m) => m.attachments.map((a) => a.filename))).toEqual([[files[0]!.name]]);
    expect(s.postedInChannel().filter((m) => m.content.includes(end([]).content))).toEqual([]);
    expect(s.discord.requests.filter((r) => r.route === 'webhook-followup' && r.body?.content === end([]).content)).toHaveLength(FOLLOW_UP_SENDS);
  });
});

describe('the end of a job whose reply was deleted, words only (a failure, a cancellation): the member told when it may be missing', () => {
  it('says in a message of its own that the reply may be missing when Discord failed on the follow-up taking its place (5xx), and does not post that again', async () => {
    const { s, ix } = await deferredJob();
    s.discord.deleteMessage(ix.originalMessageId!);
    // Discord makes no follow-up.
    failsEachTry(s, followUps(ix));
    const delivered = await s.targetOf(ix, { retryDelaysMs: [0] }).final([end([])]);

    expect(delivered.first).toBe(false);
    expect(s.followUpsOf(ix).map((m) => m.content)).toEqual([`⚠️ ${say('en-US', 'discord.job.reply_may_be_missing')}`]);
    expect(s.postedInChannel()).toEqual([]);
    expect(s.discord.requests.filter((r) => r.route === 'webhook-followup' && r.body?.content === end([]).content)).toHaveLength(FOLLOW_UP_SENDS);
    expect(s.logger.entries.filter((e) => e.msg?.startsWith('could not deliver a job result to Discord')).map((e) => e.obj)).toEqual([
      expect.objectContaining({ what: 'final', files: [], toldMayBeMissing: true }),
    ]);
  });

  it('says it in the channel when the end failed there (5xx) each try with its nonce: the token spent', async () => {
    const { s, ix } = await deferredJob();
    s.discord.expireToken(ix.token);
    failsEachTry(s, CHANNEL_POSTS, { tries: 2 * DISCORD_JS_TRIES });
    const delivered = await s.targetOf(ix, { finalAttempts: 2, retryDelaysMs: [0] }).final([end([])]);

    expect(delivered.first).toBe(false);
    expect(s.postedInChannel().map((m) => m.content)).toEqual([`<@${ix.user.id}> ⚠️ ${say('en-US', 'discord.job.reply_may_be_missing')}`]);
  });
});

describe('the member’s DM Discord failed to open (5xx) for the end: nothing was posted there, and the member told so where the next message lands', () => {
  it('does not tell the member the end may be missing when opening the DM failed each try, opens it again for the next message, and says there that the reply could not be delivered', async () => {
    const { s, ix } = await deferredJob();
    s.discord.expireToken(ix.token);
    failsEachTry(s, { route: 'dm-channel', method: 'POST' });
    const delivered = await s.targetOf(ix, { fallback: 'dm', retryDelaysMs: [0] }).final([end([]), more(images(1, 1024, 2), 2)]);

    expect(delivered).toEqual({ first: false, all: false });
    const [next, told, ...others] = s.discord.channelMessages(s.discord.dmChannelOf(ix.user.id));
    expect(others).toEqual([]);
    expect(next!.content).toBe(`<@${ix.user.id}> More images (2–2 of 9)`);
    expect(told!.content.startsWith(`<@${ix.user.id}> `)).toBe(true);
    expect(notesOf(told!.content)).toEqual(['discord.job.reply_not_delivered']);
    expect(s.logger.entries.filter((e) => e.msg?.startsWith('could not deliver a job result to Discord')).map((e) => e.obj)).toEqual([
      expect.objectContaining({ what: 'final', where: 'dm', status: 500 }),
    ]);
    expect(s.logger.entries.some((e) => (e.obj as { toldMayBeMissing?: boolean } | undefined)?.toldMayBeMissing)).toBe(false);
  });

  it('names the end’s own images in that line: they are missing with it', async () => {
    const { s, ix } = await deferredJob();
    s.discord.expireToken(ix.token);
    failsEachTry(s, { route: 'dm-channel', method: 'POST' });
    const files = images(1, 1024);
    await s.targetOf(ix, { fallback: 'dm', retryDelaysMs: [0] }).final([end(files), more(images(1, 1024, 2), 2)]);

    const [, told] = s.discord.channelMessages(s.discord.dmChannelOf(ix.user.id));
    expect(notesOf(told!.content)).toEqual(['discord.job.reply_not_delivered']);
    expect(told!.content).toContain(files[0]!.name);
  });

  it('tells the member the end may be missing, not that it was not delivered, when its edit may have landed (Discord failed on it, then the reply could not be read)', async () => {
    const { s, ix } = await deferredJob();
    // Discord makes the first edit of the end though it fails on it; then reading the reply fails, and so does opening the DM.
    failsEachTry(s, replyEdits(ix), { tries: 2 * DISCORD_JS_TRIES, madeFirst: true });
    failsEachTry(s, { route: 'webhook-message', method: 'GET', token: ix.token });
    failsEachTry(s, { route: 'dm-channel', method: 'POST' });
    const delivered = await s.targetOf(ix, { fallback: 'dm', finalAttempts: 2, retryDelaysMs: [0] }).final([end([]), more(images(1, 1024, 2), 2)]);

    expect(delivered.first).toBe(false);
    expect(s.discord.original(ix)!.content).toBe(end([]).content);
    const [next, told, ...others] = s.discord.channelMessages(s.discord.dmChannelOf(ix.user.id));
    expect(others).toEqual([]);
    expect(next!.content).toBe(`<@${ix.user.id}> More images (2–2 of 9)`);
    expect(notesOf(told!.content)).toEqual(['discord.job.reply_may_be_missing']);
  });

  it('posts nothing more when the DM does not open for the messages after the end either', async () => {
    const { s, ix } = await deferredJob();
    s.discord.expireToken(ix.token);
    failsEachTry(s, { route: 'dm-channel', method: 'POST' }, { tries: 2 * DISCORD_JS_TRIES });
    const delivered = await s.targetOf(ix, { fallback: 'dm', retryDelaysMs: [0] }).final([end([]), more(images(1, 1024, 2), 2)]);

    expect(delivered).toEqual({ first: false, all: false });
    expect(s.discord.requests.filter((r) => r.route === 'dm-channel')).toHaveLength(2 * DISCORD_JS_TRIES);
    expect(s.discord.requests.filter((r) => r.route === 'channel-message' && r.method === 'POST')).toEqual([]);
  });
});

describe('the end’s own edit Discord failed on (5xx) every try: not shown twice', () => {
  it('counts the end delivered, and posts nothing in the channel, when the reply shows it after all (Discord made the edit though it failed)', async () => {
    const { s, ix } = await deferredJob();
    failsEachTry(s, replyEdits(ix), { tries: 2 * DISCORD_JS_TRIES, madeFirst: true });
    const files = images(1, 1024);
    const delivered = await s.targetOf(ix, { finalAttempts: 2, retryDelaysMs: [0] }).final([end(files), more(images(1, 1024, 2), 2)]);

    expect(delivered).toEqual({ first: true, all: true });
    expect(s.discord.original(ix)!.content).toBe(end(files).content);
    expect(s.postedInChannel()).toEqual([]);
    // The token still works: what follows the end is a follow-up, as before.
    expect(s.followUpsOf(ix).map((m) => m.attachments.map((a) => a.filename))).toEqual([['pictor-k-2.png']]);
  });

  it('posts the end in the channel when the reply does not show it (Discord made no edit)', async () => {
    const { s, ix } = await deferredJob();
    failsEachTry(s, replyEdits(ix), { tries: 2 * DISCORD_JS_TRIES });
    const delivered = await s.targetOf(ix, { finalAttempts: 2, retryDelaysMs: [0] }).final([end(images(1, 1024))]);

    expect(delivered).toEqual({ first: true, all: true });
    expect(s.postedInChannel().map((m) => m.content)).toEqual([`<@${ix.user.id}> ${end([]).content}`]);
  });
});

describe('the reply of a job whose end Discord would not take as its edit: no progress left behind', () => {
  /** The reply as a running job shows it: a progress line with a preview, and its Cancel button. */
  const running = (): OutgoingMessage => ({ content: '🎨 Drawing…', components: cancelButtons('k1', 'en-US'), files: images(1, 1024, 9) });

  /** A job whose reply shows it running, and its target. */
  async function runningJob(options: Partial<ReplyTargetOptions> = {}): Promise<{ s: Scene; ix: FakeInteraction; target: ReplyTarget }> {
    const { s, ix } = await deferredJob();
    const target = s.targetOf(ix, options);
    await target.progress(running());
    return { s, ix, target };
  }

  it('posts the end in the channel once, then edits the reply to say so, with no files and no Cancel, when Discord refuses the end’s edit (400)', async () => {
    const { s, ix, target } = await runningJob();
    s.discord.failNext(replyEdits(ix), { status: 400, code: INVALID_FORM_BODY, message: 'Invalid Form Body' });
    const delivered = await target.final([end(images(1, 1024))]);

    expect(delivered).toEqual({ first: true, all: true });
    expect(s.postedInChannel().map((m) => m.content)).toEqual([`<@${ix.user.id}> ${end([]).content}`]);
    const reply = s.discord.original(ix)!;
    expect(reply.content).toBe(say('en-US', 'discord.job.end_posted_elsewhere', { where: 'channel' }));
    expect(reply.components).toEqual([]);
    expect(reply.attachments).toEqual([]);
    expect(s.followUpsOf(ix)).toEqual([]);
  });

  it('says the end went by direct message when that is where it went', async () => {
    const { s, ix, target } = await runningJob({ fallback: 'dm' });
    s.discord.failNext(replyEdits(ix), { status: 400, code: INVALID_FORM_BODY, message: 'Invalid Form Body' });
    await target.final([end([])]);

    expect(s.discord.channelMessages(s.discord.dmChannelOf(ix.user.id)).map((m) => m.content)).toEqual([`<@${ix.user.id}> ${end([]).content}`]);
    expect(s.discord.original(ix)!.content).toBe(say('en-US', 'discord.job.end_posted_elsewhere', { where: 'dm' }));
    expect(s.discord.original(ix)!.components).toEqual([]);
  });

  it('edits the reply so when the end’s edit failed (5xx) every try and the reply does not show it', async () => {
    const { s, ix, target } = await runningJob({ finalAttempts: 2, retryDelaysMs: [0] });
    failsEachTry(s, replyEdits(ix), { tries: 2 * DISCORD_JS_TRIES });
    await target.final([end([])]);

    expect(s.postedInChannel().map((m) => m.content)).toEqual([`<@${ix.user.id}> ${end([]).content}`]);
    expect(s.discord.original(ix)!.components).toEqual([]);
  });

  it('edits the reply to say the end may be in the channel, unconfirmed, when Discord refused the end’s edit (400) and failed on it in the channel (5xx) every try', async () => {
    const { s, ix, target } = await runningJob({ finalAttempts: 2, retryDelaysMs: [0] });
    s.discord.failNext(replyEdits(ix), { status: 400, code: INVALID_FORM_BODY, message: 'Invalid Form Body' });
    failsEachTry(s, CHANNEL_POSTS, { tries: 2 * DISCORD_JS_TRIES });
    const delivered = await target.final([end([])]);

    expect(delivered.first).toBe(false);
    expect(s.postedInChannel().filter((m) => m.content.includes(end([]).content))).toEqual([]);
    const reply = s.discord.original(ix)!;
    expect(reply.content).toBe(say('en-US', 'discord.job.end_may_be_posted_elsewhere', { where: 'channel' }));
    expect(reply.components).toEqual([]);
    expect(reply.attachments).toEqual([]);
  });

  it('says the end may have gone by direct message, unconfirmed, when Discord failed on it in the DM (5xx) every try', async () => {
    const { s, ix, target } = await runningJob({ fallback: 'dm', finalAttempts: 2, retryDelaysMs: [0] });
    s.discord.failNext(replyEdits(ix), { status: 400, code: INVALID_FORM_BODY, message: 'Invalid Form Body' });
    failsEachTry(s, CHANNEL_POSTS, { tries: 2 * DISCORD_JS_TRIES });
    await target.final([end([])]);

    expect(s.discord.original(ix)!.content).toBe(say('en-US', 'discord.job.end_may_be_posted_elsewhere', { where: 'dm' }));
    expect(s.discord.original(ix)!.components).toEqual([]);
  });

  it('logs it and leaves it when Discord refuses that edit too, posting nothing more', async () => {
    const { s, ix, target } = await runningJob();
    s.discord.failNext(replyEdits(ix), { status: 400, code: INVALID_FORM_BODY, message: 'Invalid Form Body', count: 2 });
    const delivered = await target.final([end([])]);

    expect(delivered).toEqual({ first: true, all: true });
    expect(s.postedInChannel().map((m) => m.content)).toEqual([`<@${ix.user.id}> ${end([]).content}`]);
    expect(s.followUpsOf(ix)).toEqual([]);
    expect(s.discord.requests.filter((r) => r.route === 'webhook-message' && r.method === 'PATCH' && r.status === 400)).toHaveLength(2);
    expect(s.logger.entries.filter((e) => e.msg?.startsWith('could not clear the progress of a job reply')).map((e) => e.obj)).toEqual([
      expect.objectContaining({ code: INVALID_FORM_BODY, status: 400 }),
    ]);
  });

  it('tries that edit once: when Discord fails on it (5xx), only discord.js’s own tries of it are made, and the reply is left as it is', async () => {
    const { s, ix, target } = await runningJob({ finalAttempts: 3, retryDelaysMs: [0] });
    s.discord.failNext(replyEdits(ix), { status: 400, code: INVALID_FORM_BODY, message: 'Invalid Form Body' });
    failsEachTry(s, replyEdits(ix));
    await target.final([end([])]);

    const edits = s.discord.requests.filter((r) => r.route === 'webhook-message' && r.method === 'PATCH' && r.token === ix.token);
    // The progress, the end's refused edit, then the edit that clears the progress: each of discord.js's tries of it, no more.
    expect(edits.map((r) => r.status)).toEqual([200, 400, ...Array<number>(DISCORD_JS_TRIES).fill(500)]);
    expect(s.discord.original(ix)!.content).toBe(running().content);
    expect(s.logger.entries.filter((e) => e.msg?.startsWith('could not clear the progress of a job reply')).map((e) => e.obj)).toEqual([expect.objectContaining({ status: 500 })]);
  });

  it('does not try that edit once Discord said the token is spent (50027): it could not pass', async () => {
    const { s, ix, target } = await runningJob();
    s.discord.expireToken(ix.token);
    await target.final([end([])]);

    expect(s.postedInChannel().map((m) => m.content)).toEqual([`<@${ix.user.id}> ${end([]).content}`]);
    expect(s.discord.requests.filter((r) => r.route === 'webhook-message' && r.method === 'PATCH' && r.code === INVALID_WEBHOOK_TOKEN)).toHaveLength(1);
  });
});

describe('the end of a job Discord would not take as the reply’s edit, nor in the member’s DM: the member told privately, no progress left', () => {
  /** The reply as a running job shows it: a progress line with a preview, and its Cancel button. */
  const running = (): OutgoingMessage => ({ content: '🎨 Drawing…', components: cancelButtons('k1', 'en-US'), files: images(1, 1024, 9) });
  const DM_REFUSED = { status: 403, code: CANNOT_DM, message: 'Cannot send messages to this user' };
  const DM_OPENS: FaultMatch = { route: 'dm-channel', method: 'POST' };

  /** A job whose results go by DM, its reply showing it running, and its target; Discord refuses the end's edit (400). */
  async function refusedEnd(options: Partial<ReplyTargetOptions> = {}): Promise<{ s: Scene; ix: FakeInteraction; target: ReplyTarget }> {
    const { s, ix } = await deferredJob();
    const target = s.targetOf(ix, { fallback: 'dm', retryDelaysMs: [0], ...options });
    await target.progress(running());
    s.discord.failNext(replyEdits(ix), { status: 400, code: INVALID_FORM_BODY, message: 'Invalid Form Body' });
    return { s, ix, target };
  }

  /** The reply shows no progress: no Cancel, no preview, and the line `key`. */
  function clearedWith(s: Scene, ix: FakeInteraction, key: string): void {
    const reply = s.discord.original(ix)!;
    expect(keyOf(reply.content)).toBe(key);
    expect(reply.components).toEqual([]);
    expect(reply.attachments).toEqual([]);
  }

  it('says so in an ephemeral follow-up and clears the reply when Discord refuses the message in the DM (403, 50007)', async () => {
    const { s, ix, target } = await refusedEnd();
    s.discord.failNext(CHANNEL_POSTS, DM_REFUSED);
    const delivered = await target.final([end(images(1, 1024))]);

    expect(delivered.first).toBe(false);
    const [note, ...others] = s.followUpsOf(ix);
    expect(others).toEqual([]);
    expect(note!.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(keyOf(note!.content)).toBe('discord.job.end_not_sent_by_dm');
    clearedWith(s, ix, 'discord.job.end_not_delivered');
    expect(s.discord.channelMessages(s.discord.dmChannelOf(ix.user.id))).toEqual([]);
  });

  it('does the same when Discord refuses to open the DM (a 4xx on the DM channel’s creation)', async () => {
    const { s, ix, target } = await refusedEnd();
    s.discord.failNext(DM_OPENS, DM_REFUSED);
    await target.final([end([])]);

    expect(s.followUpsOf(ix).map((m) => [keyOf(m.content), m.flags & EPHEMERAL])).toEqual([['discord.job.end_not_sent_by_dm', EPHEMERAL]]);
    clearedWith(s, ix, 'discord.job.end_not_delivered');
  });

  it('does the same when the DM is refused for the messages after the end too (nothing reached it)', async () => {
    const { s, ix, target } = await refusedEnd();
    s.discord.failNext(DM_OPENS, { ...DM_REFUSED, count: 2 });
    const delivered = await target.final([end([]), more(images(1, 1024, 2), 2)]);

    expect(delivered).toEqual({ first: false, all: false });
    expect(s.followUpsOf(ix).map((m) => keyOf(m.content))).toEqual(['discord.job.end_not_sent_by_dm']);
    clearedWith(s, ix, 'discord.job.end_not_delivered');
  });

  it('says it in the reply itself when Discord refuses that follow-up too', async () => {
    const { s, ix, target } = await refusedEnd();
    s.discord.failNext(CHANNEL_POSTS, DM_REFUSED);
    s.discord.failNext(followUps(ix), { status: 400, code: INVALID_FORM_BODY, message: 'Invalid Form Body' });
    await target.final([end([])]);

    expect(s.followUpsOf(ix)).toEqual([]);
    clearedWith(s, ix, 'discord.job.end_not_sent_by_dm');
  });

  it('says it in the reply itself when Discord says the interaction can post no more follow-ups (40094): the reply still takes edits', async () => {
    const { s, ix, target } = await refusedEnd();
    s.discord.failNext(CHANNEL_POSTS, DM_REFUSED);
    s.discord.failNext(followUps(ix), { status: 400, code: MAX_FOLLOW_UPS, message: 'This interaction has hit the maximum number of follow up messages' });
    await target.final([end([])]);

    expect(s.followUpsOf(ix)).toEqual([]);
    clearedWith(s, ix, 'discord.job.end_not_sent_by_dm');
  });

  it('does the same when the end’s edit failed (5xx) every try and the reply does not show it', async () => {
    const { s, ix } = await deferredJob();
    const target = s.targetOf(ix, { fallback: 'dm', finalAttempts: 2, retryDelaysMs: [0] });
    await target.progress(running());
    failsEachTry(s, replyEdits(ix), { tries: 2 * DISCORD_JS_TRIES });
    s.discord.failNext(DM_OPENS, DM_REFUSED);
    await target.final([end([])]);

    expect(s.followUpsOf(ix).map((m) => keyOf(m.content))).toEqual(['discord.job.end_not_sent_by_dm']);
    clearedWith(s, ix, 'discord.job.end_not_delivered');
  });

  it('does the same when Discord failed to open the DM (5xx) each try and nothing follows', async () => {
    const { s, ix, target } = await refusedEnd();
    failsEachTry(s, DM_OPENS);
    await target.final([end([])]);

    expect(s.followUpsOf(ix).map((m) => keyOf(m.content))).toEqual(['discord.job.end_not_sent_by_dm']);
    clearedWith(s, ix, 'discord.job.end_not_delivered');
  });

  it('clears the reply, and posts no follow-up, when a later message reached the DM and said there that the reply could not be delivered', async () => {
    const { s, ix, target } = await refusedEnd();
    failsEachTry(s, DM_OPENS);
    await target.final([end([]), more(images(1, 1024, 2), 2)]);

    const [, told] = s.discord.channelMessages(s.discord.dmChannelOf(ix.user.id));
    expect(notesOf(told!.content)).toEqual(['discord.job.reply_not_delivered']);
    expect(s.followUpsOf(ix)).toEqual([]);
    clearedWith(s, ix, 'discord.job.end_not_delivered');
  });

  it('posts no follow-up when the line that the reply could not be delivered reached the DM, though the later message there went unconfirmed', async () => {
    const { s, ix, target } = await refusedEnd({ finalAttempts: 2 });
    failsEachTry(s, DM_OPENS);
    failsEachTry(s, CHANNEL_POSTS, { tries: 2 * DISCORD_JS_TRIES });
    await target.final([end([]), more(images(1, 1024, 2), 2)]);

    const [told, ...others] = s.discord.channelMessages(s.discord.dmChannelOf(ix.user.id));
    expect(others).toEqual([]);
    expect(notesOf(told!.content)).toEqual(['discord.job.reply_not_delivered', 'discord.job.files_may_be_missing']);
    expect(s.followUpsOf(ix)).toEqual([]);
    clearedWith(s, ix, 'discord.job.end_not_delivered');
  });

  it('says so in an ephemeral follow-up when a later message reached the DM but the line that the reply could not be delivered did not', async () => {
    const { s, ix, target } = await refusedEnd();
    failsEachTry(s, DM_OPENS);
    // The later message gets in; the line after it is refused there.
    const post = s.botRest.post.bind(s.botRest);
    vi.spyOn(s.botRest, 'post').mockImplementation(async (route, options) => {
      const answer = await post(route, options);
      if (route.endsWith('/messages')) s.discord.failNext(CHANNEL_POSTS, DM_REFUSED);
      return answer;
    });
    await target.final([end([]), more(images(1, 1024, 2), 2)]);

    expect(s.discord.channelMessages(s.discord.dmChannelOf(ix.user.id)).map((m) => notesOf(m.content))).toEqual([[]]);
    expect(s.followUpsOf(ix).map((m) => [keyOf(m.content), m.flags & EPHEMERAL])).toEqual([['discord.job.end_not_sent_by_dm', EPHEMERAL]]);
    clearedWith(s, ix, 'discord.job.end_not_delivered');
  });

  it('counts the ephemeral follow-up as told when Discord failed on it (5xx; it may have been made): the reply does not say it again', async () => {
    const { s, ix, target } = await refusedEnd();
    s.discord.failNext(CHANNEL_POSTS, DM_REFUSED);
    failsEachTry(s, followUps(ix), { madeFirst: true });
    await target.final([end([])]);

    expect(s.followUpsOf(ix).map((m) => keyOf(m.content))).toEqual(['discord.job.end_not_sent_by_dm']);
    clearedWith(s, ix, 'discord.job.end_not_delivered');
  });

  it('posts no ephemeral follow-up with a token that is another member’s (a Cancel someone else pressed), nor says in the reply that the DM refused it: only that it could not be delivered', async () => {
    const { s, ix, target } = await refusedEnd({ tokenUserId: 'someone-else' });
    s.discord.failNext(CHANNEL_POSTS, DM_REFUSED);
    await target.final([end([])]);

    expect(s.followUpsOf(ix)).toEqual([]);
    clearedWith(s, ix, 'discord.job.end_not_delivered');
  });

  it('posts no follow-up when Discord failed on the line in the DM that the reply could not be delivered (5xx each try; it may have been made)', async () => {
    const { s, ix, target } = await refusedEnd();
    failsEachTry(s, DM_OPENS);
    // The later message gets in; the line after it fails each try there.
    const post = s.botRest.post.bind(s.botRest);
    vi.spyOn(s.botRest, 'post').mockImplementation(async (route, options) => {
      const answer = await post(route, options);
      if (route.endsWith('/messages')) failsEachTry(s, CHANNEL_POSTS, { tries: 3 * DISCORD_JS_TRIES, madeFirst: true });
      return answer;
    });
    await target.final([end([]), more(images(1, 1024, 2), 2)]);

    const [, told, ...others] = s.discord.channelMessages(s.discord.dmChannelOf(ix.user.id));
    expect(others).toEqual([]);
    expect(notesOf(told!.content)).toEqual(['discord.job.reply_not_delivered']);
    expect(s.followUpsOf(ix)).toEqual([]);
    clearedWith(s, ix, 'discord.job.end_not_delivered');
  });

  it('leaves the reply as it is when its edit may have landed (Discord failed on it, then the reply could not be read)', async () => {
    const { s, ix } = await deferredJob();
    const target = s.targetOf(ix, { fallback: 'dm', finalAttempts: 2, retryDelaysMs: [0] });
    failsEachTry(s, replyEdits(ix), { tries: 2 * DISCORD_JS_TRIES, madeFirst: true });
    failsEachTry(s, { route: 'webhook-message', method: 'GET', token: ix.token });
    s.discord.failNext(DM_OPENS, DM_REFUSED);
    await target.final([end([])]);

    expect(s.discord.original(ix)!.content).toBe(end([]).content);
  });

  it('tries nothing with the token once Discord said it is spent (50027): the refusal is logged', async () => {
    const { s, ix } = await deferredJob();
    const target = s.targetOf(ix, { fallback: 'dm', retryDelaysMs: [0] });
    await target.progress(running());
    s.discord.expireToken(ix.token);
    s.discord.failNext(DM_OPENS, DM_REFUSED);
    await target.final([end([])]);

    expect(s.discord.requests.filter((r) => r.token === ix.token && r.code === INVALID_WEBHOOK_TOKEN)).toHaveLength(1);
    expect(s.logger.entries.filter((e) => e.msg?.startsWith('could not deliver a job result to Discord')).map((e) => e.obj)).toEqual([
      expect.objectContaining({ what: 'final', where: 'dm', status: 403, code: CANNOT_DM }),
    ]);
  });
});
