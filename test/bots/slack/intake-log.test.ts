import { afterEach, describe, expect, it } from 'vitest';
import { SHORTCUT_EDIT_IMAGE } from '../../../bots/slack/bot-context.js';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { buttonsOf, type FakeMessage } from '../../fakes/slack/slack-objects.js';
import { editBeingFetched } from '../../helpers/runner-harness.js';
import { RecordingLogger } from '../discord/harness.js';
import type { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import type { FakeFile } from '../../fakes/slack/slack-objects.js';
import type { ViewInputs } from '../../fakes/slack/view-state.js';
import { finishedActions, jobMessages, png, startHarness, statusOf, type Harness } from './harness.js';

/**
 * What an edit asked by a mention did not start is one line in the operator's log, by the one rule: the runner's for
 * what its intake refused or could not start (with the job's id), the bot's for the images it refused itself before
 * asking the runner — never both. (Every entry point's refusal by a rule or a budget: intake.test.ts.)
 */
describe('an edit asked by a mention that did not start, in the operator’s log', () => {
  const MEMBER = 'U0ALICE';
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** Mentions the bot with `file`, and answers the lines with `code` once the member was told privately why nothing started. */
  async function linesOnceTold(harness: Harness, logger: RecordingLogger, file: { name: string; bytes: Buffer; size?: number }, code: string) {
    const { fake } = harness;
    await fake.userMessage({ channel: 'C0TEAM', user: MEMBER, text: `<@${fake.botUserId}> make the sky purple --quality low`, files: [fake.addFile(file)] });
    await fake.waitFor(() => fake.ephemerals.find((e) => e.user === MEMBER), 'the private note');
    return logger.entries.filter((e) => (e.obj as { code?: string }).code === code);
  }

  it('refused by a full queue: one warn line, with its id', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ maxQueuedInputBytes: 50_000, logger });
    // Another edit's images hold 40 KB of the queue's 50 KB while they download.
    const other = editBeingFetched(h.runner, { platform: 'slack', userId: 'U0OTHER', channelId: 'C0TEAM', scopeId: h.fake.teamId }, 40_000);
    expect(await other.admitted).toBeUndefined();
    const lines = await linesOnceTold(h, logger, { name: 'sky.png', bytes: await png(20, 20), size: 20_000 }, 'queue_full');
    other.giveUp();
    await other.handle;
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', obj: expect.objectContaining({ jobId: expect.any(String), limit: 50_000 }) })]);
  });

  it('with an image the bot refused itself (larger than the service takes, as Slack says): one info line, the member’s, naming who asked', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ logger });
    const lines = await linesOnceTold(h, logger, { name: 'sky.png', bytes: await png(20, 20), size: 60_000_000 }, 'file_too_large');
    expect(lines).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'slack', scopeId: h.fake.teamId, userId: MEMBER }) })]);
  });

  it('admitted, then its image turned out not to be one: one info line, with the job’s id', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ logger });
    const lines = await linesOnceTold(h, logger, { name: 'notes.png', bytes: Buffer.from('these are my notes, not a picture') }, 'file_not_image');
    expect(lines).toEqual([expect.objectContaining({ level: 'info', obj: expect.objectContaining({ jobId: expect.any(String), userId: MEMBER }) })]);
  });
});

/**
 * What a member gave an entry point that the bot refused itself, before the runner's intake was asked (a flag, an
 * image), is told to them privately and is one line in the operator's log, by the runner's one rule: the member's,
 * info, with the input's own code, naming who asked as the runner's lines do.
 */
describe('a request the bot refused itself before asking the runner, in the operator’s log', () => {
  const MEMBER = 'U0ALICE';
  const CHANNEL = 'C0TEAM';
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** An edit asked by a mention, finished; its saved request then names no image (saved so by an older version). */
  async function editWithoutItsImages(harness: Harness) {
    const { fake } = harness;
    await fake.userMessage({ channel: CHANNEL, user: MEMBER, text: `<@${fake.botUserId}> make the sky purple --quality low`, files: [fake.addFile({ name: 'sky.png', bytes: await png(20, 20) })] });
    const actions = await finishedActions(fake, CHANNEL);
    const requestId = buttonsOf(actions).find((b) => b.actionId === 'pictor_reroll')!.value!;
    const { space } = new RequestStore(harness.state);
    const saved = (await space.get(requestId))!;
    expect(saved).toMatchObject({ kind: 'edit', inputFiles: [expect.anything()] });
    await space.put(requestId, { ...saved, inputFiles: [] });
    return actions;
  }

  /** A finished job asked by `/imagine` (by `user`: the member's own by default), with its buttons and its saved request's space and id. */
  async function finishedImagine(harness: Harness, user = MEMBER) {
    const { fake } = harness;
    await fake.command({ command: '/imagine', text: 'a red kite', channel: CHANNEL, user });
    const actions = await finishedActions(fake, CHANNEL);
    const requestId = buttonsOf(actions).find((b) => b.actionId === 'pictor_reroll')!.value!;
    const { space } = new RequestStore(harness.state);
    return { actions, requestId, space, saved: (await space.get(requestId))! };
  }

  /** The member pressing `action` on a finished job of theirs whose saved request is gone. */
  const pressOnGoneJob = (action: string) => async (harness: Harness) => {
    const { actions, requestId, space } = await finishedImagine(harness);
    await space.delete(requestId);
    return () => harness.fake.clickButton(actions, action, MEMBER);
  };

  /** The member pressing `action` on another member's finished job. */
  const pressOnOthersJob = (action: string) => async (harness: Harness) => {
    const { actions } = await finishedImagine(harness, 'U0BOB');
    return () => harness.fake.clickButton(actions, action, MEMBER);
  };

  // A mention's images the bot refused itself: above, with the other ways an edit asked by a mention does not start.
  const ENTRY_POINTS: [name: string, code: string, prepare: (h: Harness) => Promise<() => Promise<unknown>>][] = [
    ['/imagine with a flag it does not know', 'unknown_flag', async ({ fake }) => () => fake.command({ command: '/imagine', text: 'a kite --colour red', channel: CHANNEL, user: MEMBER })],
    ['a mention with a flag it does not know', 'unknown_flag', async ({ fake }) => () => fake.userMessage({ channel: CHANNEL, user: MEMBER, text: `<@${fake.botUserId}> a kite --colour red` })],
    [
      'the “Edit image” shortcut on a file larger than the service takes',
      'file_too_large',
      async ({ fake }) => {
        const post = await fake.userMessage({ channel: CHANNEL, user: 'U0BOB', text: 'our trip', files: [fake.addFile({ name: 'beach.png', bytes: await png(20, 20), size: 60_000_000 })] });
        return () => fake.messageShortcut(post, SHORTCUT_EDIT_IMAGE, MEMBER);
      },
    ],
    [
      'the Reroll of an edit whose saved request names no image',
      'no_images',
      async (harness) => {
        const actions = await editWithoutItsImages(harness);
        return () => harness.fake.clickButton(actions, 'pictor_reroll', MEMBER);
      },
    ],
    [
      'the Reroll of a job whose prompt its member erased',
      'prompt_erased',
      async (harness) => {
        const { actions, requestId, space, saved } = await finishedImagine(harness);
        await space.put(requestId, { ...saved, prompt: '' });
        return () => harness.fake.clickButton(actions, 'pictor_reroll', MEMBER);
      },
    ],
    ['the Reroll of a job whose saved request is gone', 'job_gone', pressOnGoneJob('pictor_reroll')],
    ['the Edit of a job whose saved request is gone', 'job_gone', pressOnGoneJob('pictor_edit')],
    ['the Edit of another member’s job', 'not_requester', pressOnOthersJob('pictor_edit')],
    ['the Delete of a job whose saved request is gone', 'job_gone', pressOnGoneJob('pictor_delete')],
    ['the Delete of another member’s job', 'not_requester', pressOnOthersJob('pictor_delete')],
  ];

  it.each(ENTRY_POINTS)('%s: told privately, and one info line, the member’s, with its code (%s) and who asked', async (_name, code, prepare) => {
    const logger = new RecordingLogger();
    h = await startHarness({ logger });
    const { fake } = h;
    const use = await prepare(h);
    const [responses, ephemerals, sent] = [fake.responses.length, fake.ephemerals.length, h.emulator.requests.length];
    const delivery = (await use()) as { body?: { response_type?: string; text?: string } };
    // Told in the acknowledgement itself (a command's bad flag), through the response URL, or in an ephemeral message.
    const said = await fake.waitFor(
      () =>
        (delivery.body?.response_type === 'ephemeral' ? delivery.body.text : undefined) ??
        fake.responses.slice(responses).find((r) => r.body.response_type === 'ephemeral')?.body.text ??
        fake.ephemerals.slice(ephemerals).find((e) => e.user === MEMBER)?.text,
      'the private note',
    );
    expect(said).not.toBe('');
    expect(logger.entries.filter((e) => (e.obj as { code?: string }).code === code)).toEqual([
      expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'slack', scopeId: fake.teamId, userId: MEMBER }) }),
    ]);
    expect(h.emulator.requests).toHaveLength(sent);
  });
});

/**
 * A Cancel the bot refused (pressed by a member who neither asked for the job nor is an admin; on a job no longer
 * running, or finished while its message still showed Cancel) is told to its presser privately and is one line in the
 * operator's log by the runner's one rule, with Discord's code for the same: the member's, info, naming who pressed it.
 */
describe('a Cancel the bot refused, in the operator’s log', () => {
  const MEMBER = 'U0ALICE';
  const CHANNEL = 'C0TEAM';
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** A message showing Cancel for `value`'s job, as a screen not yet brought up to date shows it. */
  const staleCancel = (message: FakeMessage, value: string): FakeMessage => ({
    ...message,
    ts: '1700000000.000001',
    blocks: [{ type: 'actions', block_id: 'job_actions', elements: [{ type: 'button', action_id: 'pictor_cancel', value, text: { type: 'plain_text', text: 'Cancel' } }] }],
  });
  const cancelOf = (message: FakeMessage) => buttonsOf(message).find((b) => b.actionId === 'pictor_cancel')!.value!;

  const CANCELS: [name: string, code: string, latencyMs: number, prepare: (h: Harness) => Promise<FakeMessage>][] = [
    [
      'another member’s, on a job running here',
      'not_requester',
      20_000,
      async ({ fake }) => {
        await fake.command({ command: '/imagine', text: 'a very slow painting', channel: CHANNEL, user: 'U0BOB' });
        return fake.waitFor(() => jobMessages(fake, CHANNEL).find((m) => statusOf(m).includes('Drawing')), 'the job to start');
      },
    ],
    [
      'its member’s, from a message naming a job this process does not run (a stale screen)',
      'job_finished',
      20_000,
      async ({ fake }) => {
        await fake.command({ command: '/imagine', text: 'a very slow painting', channel: CHANNEL, user: MEMBER });
        const running = await fake.waitFor(() => jobMessages(fake, CHANNEL).find((m) => statusOf(m).includes('Drawing')), 'the job to start');
        return staleCancel(running, `gonejob12345:${cancelOf(running).split(':')[1]}`);
      },
    ],
    [
      'its member’s, on a job that finished while its message still showed Cancel',
      'job_finished',
      150,
      async (harness) => {
        const { fake } = harness;
        await fake.command({ command: '/imagine', text: 'a red kite', channel: CHANNEL, user: MEMBER });
        const running = await fake.waitFor(() => jobMessages(fake, CHANNEL).find((m) => statusOf(m).includes('Drawing')), 'the job to start');
        const value = cancelOf(running);
        await finishedActions(fake, CHANNEL);
        return staleCancel(running, value);
      },
    ],
  ];

  it.each(CANCELS)('%s: told privately, and one info line, the member’s, with its code (%s) and who pressed it', async (_name, code, latencyMs, prepare) => {
    const logger = new RecordingLogger();
    h = await startHarness({ logger, emulator: { latencyMs } });
    const { fake } = h;
    const message = await prepare(h);
    const active = h.runner.activeJobs().length;
    const click = await fake.clickButton(message, 'pictor_cancel', MEMBER);
    const answer = await fake.waitFor(() => fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
    expect(answer.body.response_type).toBe('ephemeral');
    expect(logger.entries.filter((e) => (e.obj as { code?: string }).code === code)).toEqual([
      expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'slack', scopeId: fake.teamId, userId: MEMBER }) }),
    ]);
    expect(h.runner.activeJobs()).toHaveLength(active);
  });
});

/**
 * A press of a job's button from another workspace sharing the channel (Slack Connect) — Reroll, Edit, Delete on a
 * finished job, Cancel on a running one — is told to its presser privately that the job is that workspace's, and is one
 * line in the operator's log by the runner's one rule, with Discord's code for a job of another scope
 * (`job_other_scope`): the member's, info, naming who pressed it and in which workspace.
 */
describe('a press of a job’s button from another workspace, in the operator’s log', () => {
  const CHANNEL = 'C0SHARED';
  const EVE = 'U0EVE';
  const OTHER = 'T0OTHER';
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it.each(['pictor_reroll', 'pictor_edit', 'pictor_delete', 'pictor_cancel'])('%s: told privately, and one info line, the presser’s, with its code (job_other_scope) and their workspace', async (action) => {
    const logger = new RecordingLogger();
    const running = action === 'pictor_cancel';
    h = await startHarness({ logger, emulator: running ? { latencyMs: 20_000 } : {} });
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a red kite', channel: CHANNEL, user: 'U0ALICE' });
    const message = running
      ? await fake.waitFor(() => jobMessages(fake, CHANNEL).find((m) => statusOf(m).includes('Drawing')), 'the job to start')
      : await finishedActions(fake, CHANNEL);
    // "Drawing" can show before the request reaches the service: counted once it has, so the press is measured alone.
    if (running) await fake.waitFor(() => h!.emulator.requests.length === 1 || undefined, 'the request to reach the service');
    const [sent, active] = [h.emulator.requests.length, h.runner.activeJobs().length];
    const click = await fake.clickButton(message, action, EVE, OTHER);
    const answer = await fake.waitFor(() => fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
    expect(answer.body.response_type).toBe('ephemeral');
    expect(logger.entries.filter((e) => (e.obj as { code?: string }).code === 'job_other_scope')).toEqual([
      expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'slack', scopeId: OTHER, userId: EVE }) }),
    ]);
    expect(h.emulator.requests).toHaveLength(sent);
    expect(h.runner.activeJobs()).toHaveLength(active);
  });
});

/**
 * The files the edit form refuses itself (`/imagine-edit`'s file input: none, one larger than the service takes as
 * Slack says, one of a type it cannot edit, one that is not an image) are shown next to the field, and are one line in
 * the operator's log by the runner's one rule, as every entry point's: the member's, info, with the file's own code,
 * naming who asked.
 */
describe('the files the edit form refuses, in the operator’s log', () => {
  const MEMBER = 'U0ALICE';
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const FILES: [name: string, code: string, files: (fake: FakeSlack) => Promise<FakeFile[]>][] = [
    ['no file', 'no_images', async () => []],
    ['a file larger than the service takes, as Slack says', 'file_too_large', async (fake) => [fake.addFile({ name: 'sky.png', bytes: await png(20, 20), size: 60_000_000 })]],
    ['an image of a type it cannot edit', 'file_not_image', async (fake) => [fake.addFile({ name: 'sky.gif', bytes: Buffer.from('GIF89a'), mimetype: 'image/gif' })]],
    ['a file that is not an image', 'file_not_image', async (fake) => [fake.addFile({ name: 'notes.txt', bytes: Buffer.from('my notes'), mimetype: 'text/plain' })]],
  ];

  it.each(FILES)('%s: shown next to the field, and one info line, the member’s, with its code (%s) and who asked', async (_name, code, files) => {
    const logger = new RecordingLogger();
    h = await startHarness({ logger });
    const { fake } = h;
    await fake.command({ command: '/imagine-edit', text: 'add a hat', channel: 'C0TEAM', user: MEMBER });
    const view = await fake.waitFor(() => fake.views[0], 'the edit form');
    const submitted = await fake.submitView(view, { files: await files(fake) }, MEMBER);
    expect(submitted.body).toMatchObject({ response_action: 'errors', errors: { files: expect.any(String) } });
    expect(logger.entries.filter((e) => (e.obj as { code?: string }).code === code)).toEqual([
      expect.objectContaining({ level: 'info', obj: expect.objectContaining({ platform: 'slack', scopeId: fake.teamId, userId: MEMBER }) }),
    ]);
    expect(fake.downloads).toEqual([]);
    expect(h.emulator.requests).toEqual([]);
  });

});

/**
 * The prompt and options the edit form refuses (no prompt; a choice this version does not offer, from a form an older
 * one opened) are shown next to their fields, and a submission refused is one line in the operator's log by the
 * runner's one rule, as every entry point's: the member's, info, naming who asked, with the code of the first field
 * refused in the form's order (its prompt, its options top to bottom, its files) — one line however many fields it
 * refused.
 */
describe('the prompt and options the edit form refuses, in the operator’s log', () => {
  const MEMBER = 'U0ALICE';
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** The lines naming who asked on Slack: every line the submission left, refusal or not. */
  const slackLines = (logger: RecordingLogger) => logger.entries.filter((e) => (e.obj as { platform?: string }).platform === 'slack');

  /** `/imagine-edit`'s form, opened; `older` adds a size this version does not offer, as a form an older version opened would. */
  async function editForm(harness: Harness, older = false) {
    const { fake } = harness;
    await fake.command({ command: '/imagine-edit', text: '', channel: 'C0TEAM', user: MEMBER });
    const view = await fake.waitFor(() => fake.views[0], 'the edit form');
    if (older) {
      const size = (view.view.blocks as { block_id?: string; element: { options: { value: string }[] } }[]).find((b) => b.block_id === 'size')!;
      size.element.options.push({ ...size.element.options[1]!, value: '4096x4096' });
    }
    return view;
  }

  const FORMS: [name: string, code: string, fields: string[], older: boolean, inputs: (fake: FakeSlack) => Promise<ViewInputs>][] = [
    ['no prompt', 'missing_prompt', ['prompt'], false, async (fake) => ({ prompt: '', files: [fake.addFile({ name: 'sky.png', bytes: await png(20, 20) })] })],
    ['a size this version does not offer', 'invalid_option', ['size'], true, async (fake) => ({ prompt: 'add a hat', size: '4096x4096', files: [fake.addFile({ name: 'sky.png', bytes: await png(20, 20) })] })],
    ['no prompt, a size this version does not offer and no file: the first, its prompt', 'missing_prompt', ['prompt', 'size', 'files'], true, async () => ({ prompt: '', size: '4096x4096', files: [] })],
  ];

  it.each(FORMS)('%s: shown next to its fields, and one info line, the member’s, with its code (%s) and who asked', async (_name, code, fields, older, inputs) => {
    const logger = new RecordingLogger();
    h = await startHarness({ logger });
    const { fake } = h;
    const view = await editForm(h, older);
    const submitted = await fake.submitView(view, await inputs(fake), MEMBER);
    expect(submitted.body).toMatchObject({ response_action: 'errors' });
    expect(Object.keys((submitted.body as { errors: object }).errors).sort()).toEqual([...fields].sort());
    expect(slackLines(logger)).toEqual([expect.objectContaining({ level: 'info', obj: { platform: 'slack', scopeId: fake.teamId, userId: MEMBER, code } })]);
    expect(fake.downloads).toEqual([]);
    expect(h.emulator.requests).toEqual([]);
  });

  it('a form whose hidden data this version cannot read (out of date): shown next to its prompt, and one info line, the member’s, with its code (form_out_of_date) and who asked', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ logger });
    const { fake } = h;
    const view = await editForm(h);
    view.view.private_metadata = '{"channel":"C0TEAM"}';
    const submitted = await fake.submitView(view, { prompt: 'add a hat', files: [fake.addFile({ name: 'sky.png', bytes: await png(20, 20) })] }, MEMBER);
    expect(submitted.body).toMatchObject({ response_action: 'errors', errors: { prompt: expect.any(String) } });
    expect(slackLines(logger)).toEqual([expect.objectContaining({ level: 'info', obj: { platform: 'slack', scopeId: fake.teamId, userId: MEMBER, code: 'form_out_of_date' } })]);
    expect(fake.downloads).toEqual([]);
    expect(h.emulator.requests).toEqual([]);
  });
});
