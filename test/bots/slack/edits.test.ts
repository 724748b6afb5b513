import { afterEach, describe, expect, it } from 'vitest';
import { say } from '../../../bots/runner/index.js';
import { RecordingServer } from '../../fakes/slack/RecordingServer.js';
import { RecordingLogger } from '../discord/harness.js';
import { editBeingFetched } from '../../helpers/runner-harness.js';
import { DEFAULT_CHOICE } from '../../../bots/slack/edit-modal.js';
import { ADMIN, finishedActions, finishedJob, imageShares, jobMessages, png, privately, startHarness, startWithAdmin, statusOf, type Harness } from './harness.js';

let h: Harness | undefined;
let foreign: RecordingServer | undefined;
afterEach(async () => {
  await h?.close();
  await foreign?.close();
  h = undefined;
  foreign = undefined;
});

const edits = (harness: Harness) => harness.emulator.requests.filter((r) => r.path === '/v1/images/edits');

describe('the Edit of a job asked in another member’s direct messages, in Slack', () => {
  it('opens its form before Slack is asked for the presser’s own direct messages, which are opened as it is submitted and where the edit runs', async () => {
    h = await startWithAdmin();
    const { fake } = h;
    const bobDm = fake.dmOf('U0BOB');
    await fake.userMessage({ channel: bobDm, channelType: 'im', user: 'U0BOB', text: 'my diary page --quality low' });
    await finishedJob(fake, bobDm);
    const bobsMessages = fake.botMessages(bobDm).length;

    // Slack is slow to open a conversation: the form's trigger (3 s) must not wait on it.
    const slow = fake.holdOpen('conversations.open');
    await fake.clickButton(await finishedActions(fake, bobDm), 'pictor_edit', ADMIN);
    const form = await fake.waitFor(() => fake.views[0], 'the edit form, while conversations.open is held');
    expect(slow.arrived()).toBe(0);

    const submitted = await fake.submitView(form, { prompt: 'add a margin' }, ADMIN);
    expect(submitted.status).toBe(200);
    await fake.waitFor(() => slow.arrived() === 1 || undefined, 'the presser’s direct messages asked for as the form is submitted');
    slow.release();
    const done = await finishedJob(fake, fake.dmOf(ADMIN));
    expect(statusOf(done)).toContain('Done');
    expect(edits(h)).toHaveLength(1);
    expect(edits(h)[0]!.fields).toMatchObject({ prompt: 'add a margin' });
    expect(fake.botMessages(bobDm)).toHaveLength(bobsMessages);
  });

  it('refuses privately the Edit of a job asked in another member’s direct messages under the presser’s private default where private results are off: the edit runs in their own direct messages, where their default applies as anywhere', async () => {
    h = await startWithAdmin();
    const { fake } = h;
    const bobDm = fake.dmOf('U0BOB');
    await fake.userMessage({ channel: bobDm, channelType: 'im', user: 'U0BOB', text: 'my diary page --quality low' });
    await finishedJob(fake, bobDm);
    await privately(fake, 'settings --private on', ADMIN, 'C0ADM');
    await privately(fake, 'admin set private-results off', ADMIN, 'C0ADM');
    const responses = fake.responses.length;

    await fake.clickButton(await finishedActions(fake, bobDm), 'pictor_edit', ADMIN);
    const refusal = await fake.waitFor(() => fake.responses[responses] ?? fake.ephemerals[0], 'the private refusal');
    expect((refusal as { body?: { response_type?: string } }).body?.response_type ?? 'ephemeral').toBe('ephemeral');
    expect(fake.views).toHaveLength(0);
    expect(edits(h)).toHaveLength(0);
  });

  it('tells the presser privately that it failed on our side, and runs nothing, when Slack will not open their direct messages as the form is submitted', async () => {
    h = await startWithAdmin();
    const { fake } = h;
    const bobDm = fake.dmOf('U0BOB');
    await fake.userMessage({ channel: bobDm, channelType: 'im', user: 'U0BOB', text: 'my diary page --quality low' });
    await finishedJob(fake, bobDm);
    await fake.clickButton(await finishedActions(fake, bobDm), 'pictor_edit', ADMIN);
    const form = await fake.waitFor(() => fake.views[0], 'the edit form');
    fake.failNext('conversations.open', { status: 200, error: 'fatal_error' });
    await fake.submitView(form, { prompt: 'add a margin' }, ADMIN);
    const told = await fake.waitFor(() => fake.responses.find((r) => String(r.body.text).includes(say('en', 'error.on_my_side'))), 'the presser told');
    expect(told).toBeDefined();
    expect(edits(h)).toHaveLength(0);
    expect(fake.botMessages(fake.dmOf(ADMIN))).toHaveLength(0);
  });
});

describe('editing images in Slack', () => {
  it('edits the images of a message through the Edit image shortcut and its modal, in that message’s thread', async () => {
    h = await startHarness();
    const { fake } = h;
    const bytes = await png(48, 32);
    const photo = fake.addFile({ name: 'beach.png', bytes });
    const post = await fake.userMessage({ channel: 'C0PHOTOS', text: 'our trip', files: [photo] });

    const shortcut = await fake.messageShortcut(post, 'pictor_edit_image');
    expect(shortcut.status).toBe(200);
    const view = await fake.waitFor(() => fake.views[0], 'the edit modal');
    expect(JSON.stringify(view.view.blocks)).toContain('beach.png');

    const submitted = await fake.submitView(view, { prompt: 'make the sky purple', size: '1536x1024' });
    expect(submitted.status).toBe(200);
    expect(submitted.body).toBeUndefined();

    const message = await finishedJob(fake, 'C0PHOTOS');
    expect(message.thread_ts).toBe(post.ts);
    expect(statusOf(message)).toContain('Done · 1536x1024');
    const [edit] = edits(h);
    expect(edit!.fields).toMatchObject({ prompt: 'make the sky purple', size: '1536x1024' });
    expect(edit!.images).toHaveLength(1);
    expect(Buffer.from(edit!.images[0]!.bytes!).equals(bytes)).toBe(true);
    expect(fake.downloads.every((d) => d.authorized)).toBe(true);
    // In that thread, the image with its caption, then its buttons.
    const [final, actions] = fake.replies('C0PHOTOS', post.ts).slice(-2);
    expect(final!.files).toHaveLength(1);
    expect(actions).toBe(await finishedActions(fake, 'C0PHOTOS'));
  });

  it('fills in what the edit form is left at with the member’s own defaults, as /imagine does where they choose nothing', async () => {
    h = await startHarness();
    const { fake } = h;
    await privately(fake, 'settings --quality low --size 1536x1024 --format webp', 'U0BOB');
    const post = await fake.userMessage({ channel: 'C0PHOTOS', user: 'U0CAROL', text: 'look', files: [fake.addFile({ name: 'c.png', bytes: await png() })] });
    await fake.messageShortcut(post, 'pictor_edit_image', 'U0BOB');
    const view = await fake.waitFor(() => fake.views[0], 'the edit modal');
    const initial = (view.view.blocks as { block_id?: string; element?: { initial_option?: { value?: string } } }[]).filter((b) => b.element?.initial_option);
    expect(initial.map((b) => [b.block_id, b.element!.initial_option!.value])).toEqual(['size', 'quality', 'background', 'format', 'n'].map((block) => [block, DEFAULT_CHOICE]));

    const submitted = await fake.submitView(view, { prompt: 'make it red' }, 'U0BOB');
    expect(submitted.body).toBeUndefined();
    await finishedJob(fake, 'C0PHOTOS');
    expect(edits(h)[0]!.fields).toMatchObject({ quality: 'low', size: '1536x1024', output_format: 'webp' });
  });

  it('takes an edit form left as it opened within the workspace’s allowed qualities and its default size, and a choice made in it as asked', async () => {
    h = await startWithAdmin();
    const { fake } = h;
    await privately(fake, 'admin set qualities low medium', ADMIN);
    await privately(fake, 'admin set default-size 1024x1536', ADMIN);
    const post = await fake.userMessage({ channel: 'C0PHOTOS', user: 'U0CAROL', text: 'look', files: [fake.addFile({ name: 'c.png', bytes: await png() })] });

    await fake.messageShortcut(post, 'pictor_edit_image', 'U0BOB');
    const unchanged = await fake.waitFor(() => fake.views[0], 'the edit modal');
    expect((await fake.submitView(unchanged, { prompt: 'make it red' }, 'U0BOB')).body).toBeUndefined();
    await finishedJob(fake, 'C0PHOTOS');
    expect(edits(h)[0]!.fields).toMatchObject({ quality: 'low', size: '1024x1536' });

    await fake.messageShortcut(post, 'pictor_edit_image', 'U0BOB');
    const chosen = await fake.waitFor(() => fake.views[1], 'the second edit modal');
    await fake.submitView(chosen, { prompt: 'make it blue', quality: 'medium', size: '1024x1024' }, 'U0BOB');
    await finishedJob(fake, 'C0PHOTOS', 1);
    expect(edits(h)[1]!.fields).toMatchObject({ quality: 'medium', size: '1024x1024' });
  });

  it('refuses the shortcut privately on a message without images, without opening a modal', async () => {
    h = await startHarness();
    const post = await h.fake.userMessage({ channel: 'C0PHOTOS', text: 'no pictures here' });
    await h.fake.messageShortcut(post, 'pictor_edit_image');
    const note = await h.fake.waitFor(() => h!.fake.responses[0], 'the private note');
    expect(String(note.body.text)).toContain('no PNG, JPEG or WebP image');
    expect(h.fake.views).toEqual([]);
  });

  it('opens a modal with a file input for /imagine-edit, shows errors next to the fields, and edits the uploaded images', async () => {
    h = await startHarness();
    const { fake } = h;
    await fake.command({ command: '/imagine-edit', text: 'add a hat', channel: 'C0EDIT' });
    const view = await fake.waitFor(() => fake.views[0], 'the edit modal');
    const blocks = view.view.blocks as { block_id?: string; element?: { type?: string; max_files?: number; initial_value?: string } }[];
    expect(blocks.find((b) => b.block_id === 'files')?.element).toMatchObject({ type: 'file_input', max_files: 10 });
    expect(blocks.find((b) => b.block_id === 'prompt')?.element?.initial_value).toBe('add a hat');

    const empty = await fake.submitView(view, { files: [], prompt: '' });
    expect(empty.body).toMatchObject({ response_action: 'errors' });
    const errors = (empty.body as { errors: Record<string, string> }).errors;
    expect(Object.keys(errors).sort()).toEqual(['files', 'prompt']);


    const first = fake.addFile({ name: 'cat.png', bytes: await png(16, 16) });
    const second = fake.addFile({ name: 'dog.png', bytes: await png(24, 24, { r: 200, g: 10, b: 10 }) });
    const ok = await fake.submitView(view, { files: [first, second] });
    expect(ok.body).toBeUndefined();
    const message = await finishedJob(fake, 'C0EDIT');
    expect(message.thread_ts).toBeUndefined();
    expect(statusOf(message)).toContain('Done');
    expect(edits(h)[0]!.images.map((i) => i.filename)).toEqual(['cat.png', 'dog.png']);
    expect(edits(h)[0]!.fields).toMatchObject({ prompt: 'add a hat' });

    // The spec's rules are the runner's: a clash of options is refused privately once the modal has closed; nothing is downloaded or sent.
    await fake.command({ command: '/imagine-edit', text: 'add a hat', channel: 'C0EDIT' });
    const again = await fake.waitFor(() => fake.views[1], 'a second edit modal');
    const [answered, downloaded] = [fake.responses.length, fake.downloads.length];
    const clash = await fake.submitView(again, { files: [fake.addFile({ name: 'a.png', bytes: await png() })], background: 'transparent', format: 'jpeg' });
    expect(clash.body).toBeUndefined();
    const note = await fake.waitFor(() => fake.responses[answered], 'the private refusal');
    expect(note.body.response_type).toBe('ephemeral');
    expect(String(note.body.text)).toContain('format must be png or webp when background is transparent');
    expect(fake.downloads).toHaveLength(downloaded);
    expect(edits(h)).toHaveLength(1);
  });

  it('refuses a file that is not an image by its content before anything is spent', async () => {
    h = await startHarness();
    const { fake } = h;
    await fake.command({ command: '/imagine-edit', text: '', channel: 'C0EDIT' });
    const view = await fake.waitFor(() => fake.views[0], 'the edit modal');
    const fakePng = fake.addFile({ name: 'notes.png', bytes: Buffer.from('these are my notes, not a picture'), mimetype: 'image/png' });
    await fake.submitView(view, { files: [fakePng], prompt: 'make it nicer' });
    const note = await fake.waitFor(() => fake.responses[0], 'the private refusal');
    expect(String(note.body.text)).toContain('*notes.png* is not a PNG, JPEG or WebP image (checked by its content)');
    expect(h.emulator.requests).toEqual([]);
    expect(fake.messages.filter((m) => m.user === fake.botUserId)).toEqual([]);
  });

  it('refuses an edit at once, before downloading its images, when their size would take the queue past its bound for input images', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ maxQueuedInputBytes: 50_000, logger });
    const { fake } = h;
    // Another edit's images hold 40 KB of the queue's 50 KB while they download.
    const other = editBeingFetched(h.runner, { platform: 'slack', userId: 'U0OTHER', channelId: 'C0TEAM', scopeId: fake.teamId }, 40_000);
    expect(await other.admitted).toBeUndefined();
    const photo = fake.addFile({ name: 'sky.png', bytes: await png(20, 20), size: 20_000 });
    await fake.userMessage({ channel: 'C0TEAM', text: `<@${fake.botUserId}> make the sky purple --quality low`, files: [photo] });
    const note = await fake.waitFor(() => fake.ephemerals[0] ?? fake.responses[0], 'the private refusal');
    other.giveUp();
    await other.handle;

    expect(JSON.stringify(note)).toContain('The bot is busy');
    // Logged once, by the runner that refused it (at warn: the operator's capacity); the bot that told it only renders it.
    expect(logger.entries.filter((e) => (e.obj as { code?: string }).code === 'queue_full').map((e) => e.level)).toEqual(['warn']);
    expect(fake.downloads).toEqual([]);
    expect(h.emulator.requests).toEqual([]);
  });

  it('edits the files of a message that mentions the bot, although app_mention carries no files, and only once', async () => {
    h = await startHarness();
    const { fake } = h;
    const bytes = await png(20, 20);
    const photo = fake.addFile({ name: 'sky.png', bytes });
    const post = await fake.userMessage({ channel: 'C0TEAM', text: `<@${fake.botUserId}> make the sky purple --quality low`, files: [photo] });
    const message = await finishedJob(fake, 'C0TEAM');
    expect(message.thread_ts).toBe(post.ts);
    expect(edits(h)).toHaveLength(1);
    expect(edits(h)[0]!.fields).toMatchObject({ prompt: 'make the sky purple', quality: 'low' });
    expect(Buffer.from(edits(h)[0]!.images[0]!.bytes!).equals(bytes)).toBe(true);
    expect(jobMessages(fake, 'C0TEAM')).toHaveLength(1);
  });

  it('edits the latest image of a thread when mentioned there, such as a result it posted', async () => {
    h = await startHarness();
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a red door --quality low', channel: 'C0THREAD' });
    const first = await finishedJob(fake, 'C0THREAD');
    // The result is shared beside the job's message; its thread holds the previews.
    const result = imageShares(fake, 'C0THREAD').at(-1)!.files![0]!;

    await fake.userMessage({ channel: 'C0THREAD', text: `<@${fake.botUserId}> paint it blue`, threadTs: first.ts });
    await finishedJob(fake, 'C0THREAD', 1);
    const [edit] = edits(h);
    expect(edit!.fields).toMatchObject({ prompt: 'paint it blue' });
    expect(Buffer.from(edit!.images[0]!.bytes!).equals(result.bytes!)).toBe(true);
  });

  it('edits the result of a job mentioned in its thread when the job posted no preview there', async () => {
    // Previews are best-effort: none when the workspace turned them off, none whose turn comes after the job ended.
    // (A request asking none omits partial_images; this service then sends none either.)
    h = await startWithAdmin({ emulator: { defaultPartialImages: 0 } });
    const { fake } = h;
    const set = await fake.command({ command: '/imagine', text: 'admin set default-previews 0', user: ADMIN, channel: 'C0ADMIN' });
    await fake.waitFor(() => (set.body as { text?: string } | undefined)?.text ?? fake.responses.find((r) => set.responseUrl.endsWith(r.id)), 'the admin’s answer');
    expect((await h.runner.policy.effective({ platform: 'slack', scopeId: fake.teamId })).defaultPreviews.value).toBe(0);
    await fake.command({ command: '/imagine', text: 'a red door --quality low', channel: 'C0NOPREVIEW' });
    const first = await finishedJob(fake, 'C0NOPREVIEW');
    const result = imageShares(fake, 'C0NOPREVIEW').at(-1)!.files![0]!;
    expect(fake.replies('C0NOPREVIEW', first.ts).flatMap((m) => m.files ?? [])).toEqual([]);

    await fake.userMessage({ channel: 'C0NOPREVIEW', text: `<@${fake.botUserId}> paint it blue`, threadTs: first.ts });
    await finishedJob(fake, 'C0NOPREVIEW', 1);
    expect(h.emulator.requests.filter((r) => r.path === '/v1/images/generations')).toHaveLength(1);
    const [edit] = edits(h);
    expect(edit!.fields).toMatchObject({ prompt: 'paint it blue' });
    expect(Buffer.from(edit!.images[0]!.bytes!).equals(result.bytes!)).toBe(true);
  });

  it('opens the edit modal on a job’s own images from its Edit button, for an admin as for whoever asked', async () => {
    h = await startWithAdmin();
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a green hill --quality low', channel: 'C0BUTTON' });
    const done = await finishedJob(fake, 'C0BUTTON');
    const result = imageShares(fake, 'C0BUTTON').at(-1)!.files![0]!;
    await fake.clickButton(await finishedActions(fake, 'C0BUTTON'), 'pictor_edit', ADMIN);
    const view = await fake.waitFor(() => fake.views[0], 'the edit modal');
    await fake.submitView(view, { prompt: 'add sheep' }, ADMIN);
    const edited = await finishedJob(fake, 'C0BUTTON', 1);
    expect(edited.thread_ts).toBe(done.ts);
    expect(edited.blocks && JSON.stringify(edited.blocks)).toContain(`<@${ADMIN}> asked to edit an image`);
    expect(Buffer.from(edits(h)[0]!.images[0]!.bytes!).equals(result.bytes!)).toBe(true);
  });

  it('refuses another member’s press of a job’s Edit button privately, in their language: no form opens, nothing is sent or charged', async () => {
    h = await startHarness();
    const { fake } = h;
    fake.setLocale('U0BOB', 'de-DE');
    await fake.command({ command: '/imagine', text: 'a green hill --quality low', channel: 'C0BUTTON' });
    await finishedJob(fake, 'C0BUTTON');
    const before = h.emulator.requests.length;
    const press = await fake.clickButton(await finishedActions(fake, 'C0BUTTON'), 'pictor_edit', 'U0BOB');
    const told = await fake.waitFor(() => fake.responses.find((r) => press.responseUrl.endsWith(r.id)), 'the private refusal');
    expect(told.body).toMatchObject({ response_type: 'ephemeral', text: say('de', 'slack.button.only_requester_edit', { user: '<@U0ALICE>' }) });
    expect(fake.callsOf('views.open')).toEqual([]);
    expect(h.emulator.requests).toHaveLength(before);
  });

  it('refuses a file stored on a host that is not Slack’s and never sends the bot token there', async () => {
    h = await startHarness();
    foreign = await new RecordingServer().start();
    const { fake } = h;
    const planted = fake.addFile({ name: 'innocent.png', bytes: await png(), urlPrivate: `${foreign.url}/files-pri/T0PICTOR-F1/innocent.png` });
    await fake.userMessage({ channel: 'C0SAFE', text: `<@${fake.botUserId}> make it pop`, files: [planted] });
    const note = await fake.waitFor(() => fake.ephemerals[0], 'the private refusal');
    expect(note.text).toContain("not one of Slack’s file hosts");
    expect(note.user).toBe('U0ALICE');
    expect(foreign.requests).toEqual([]);
    expect(h.emulator.requests).toEqual([]);
    expect(jobMessages(fake, 'C0SAFE')).toEqual([]);
  });
});
