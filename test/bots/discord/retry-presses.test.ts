import { afterEach, describe, expect, it, vi } from 'vitest';
import { keyOf } from '../../helpers/message-keys.js';
import { jobStoreOf, runnerOf, spyOnInstance } from '../../helpers/instance-spy.js';
import type { FakeInteraction, FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import { JobRecordStore } from '../../../bots/discord/JobRecordStore.js';
import { decodeCustomId } from '../../../bots/discord/custom-ids.js';
import { JobRunner } from '../../../bots/runner/index.js';
import { silentLogger } from '../../../src/internal.js';
import { makeImage } from '../../helpers/images.js';
import { answerOf, buttonId, buttonsOf, DiscordHarness, EPHEMERAL, passTheAnswerBudget, privateNoteOf, takeTheTimers, type HarnessOptions } from './harness.js';

/**
 * A job's Retry runs it once: its member's presses take over the job's record in one write, so a double click (the button stays
 * shown after the first press) or two presses racing send and charge it once, and every image it was paid for stays
 * shown. Another member's Retry runs in a new reply of theirs, leaving the job's message and its Delete to its member;
 * it is their own new job, as their Reroll is, and takes nothing over, so the member's own Retry is still theirs.
 */
describe('a job’s Retry', () => {
  let h: DiscordHarness;
  afterEach(async () => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    await h?.close();
  });

  /** The service's answers, held from `hold()` until `release()`: a job stays running for as long as the test needs. */
  let service: { held: Promise<void>; release: () => void };
  const hold = () => {
    let release!: () => void;
    service = { held: new Promise<void>((resolve) => (release = resolve)), release };
  };
  /** A bot whose service answers each job only while `service` lets it (let through until `hold()`). */
  async function start(options: HarnessOptions = {}): Promise<DiscordHarness> {
    service = { held: Promise.resolve(), release: () => undefined };
    return DiscordHarness.start({ partialImages: 0, ...options, holdEvent: (_, index) => (index === 0 ? service.held : Promise.resolve()) });
  }

  /** The job's record as the bots' state keeps it, read by a second store over that state. */
  const recordOf = (message: FakeMessage) => new JobRecordStore({ state: h.state, logger: silentLogger() }).get(decodeCustomId(buttonId(message, 'Retry'))!.key);
  const told = (note: FakeMessage) => keyOf(note.content.replace(/^✋ /, ''));

  /** A job of `user` that failed before reaching the service's answer (nothing made, nothing charged): its message offering Retry. */
  async function failed(user?: FakeInteraction['user']): Promise<FakeMessage> {
    h.emulator.injectFault('server_error', { count: 1 });
    const ix = h.discord.slashCommand('imagine', { prompt: 'a resilient bridge', quality: 'low' }, user && { user });
    const message = await h.finalReply(ix);
    expect(buttonsOf(message).map((b) => b.label)).toEqual(['Retry']);
    // As a client shows it, not as later edits change it.
    return { ...message, components: structuredClone(message.components) };
  }

  /** An edit that failed so (its images kept for its Retry): its message offering Retry. */
  async function failedEdit(): Promise<FakeMessage> {
    const image1 = h.discord.hostFile({ filename: 'dog.png', bytes: await makeImage('png', 20, 20) });
    h.emulator.injectFault('server_error', { count: 1 });
    const message = await h.finalReply(h.discord.slashCommand('edit', { prompt: 'give the dog a scarf', image1, quality: 'low' }));
    expect(buttonsOf(message).map((b) => b.label)).toEqual(['Retry']);
    return { ...message, components: structuredClone(message.components) };
  }
  const failedJob = { generate: () => failed(), edit: failedEdit };

  const generations = () => h.emulator.requests.filter((r) => r.route === 'generations' && r.status === 200).length;
  /** Requests the service answered, of either kind. */
  const sent = () => h.emulator.requests.filter((r) => (r.route === 'generations' || r.route === 'edits') && r.status === 200).length;
  const charges = async () => (await h.quotaStore.usage({})).length;
  const refusedAsRetried = () => h.logger.entries.filter((e) => (e.obj as { code?: string }).code === 'already_retried');

  it.each([
    ['pressed twice, the second once the first’s job started (a double click)', 'in turn'],
    ['pressed twice at once', 'at once'],
  ] as const)('%s: sent and charged once, its images shown, the other press told privately', async (_name, when) => {
    h = await start();
    const message = await failed();
    const [before, charged] = [generations(), await charges()];
    hold();

    const first = h.discord.clickButton(message, buttonId(message, 'Retry'));
    if (when === 'in turn') await vi.waitFor(async () => expect((await recordOf(message))?.retriedBy).toMatchObject({ press: first.id, started: true }), { timeout: 10_000, interval: 20 });
    const second = h.discord.clickButton(message, buttonId(message, 'Retry'));

    // Which of two presses at once takes the job is the state's to decide: the other is told.
    const refused = await h.discord.waitFor(() => [...h.discord.messages.values()].find((m) => (m.interactionId === first.id || m.interactionId === second.id) && (m.flags & EPHEMERAL) !== 0), 'a press told privately');
    // Once its job started, a second press is told it ran; while the first press is still starting it, to wait for it.
    if (when === 'in turn') expect([refused.interactionId, told(refused)]).toEqual([second.id, 'discord.button.already_retried']);
    else expect(['discord.button.already_retried', 'discord.button.retry_starting']).toContain(told(refused));
    service.release();
    const done = await h.finalReply(refused.interactionId === first.id ? second : first, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).toBe(message.id);
    expect(done.attachments).toHaveLength(1);
    expect(generations() - before).toBe(1);
    expect((await charges()) - charged).toBe(1);
    expect(refusedAsRetried()).toHaveLength(told(refused) === 'discord.button.already_retried' ? 1 : 0);
    // Its message shows one run's images, and no other message holds any.
    expect([...h.discord.messages.values()].filter((m) => m.attachments.length > 0).map((m) => m.id)).toEqual([message.id]);
  });

  it('pressed again while its first press is refused by the intake: told the first is still starting it, and once that press is refused, pressed again it runs', async () => {
    h = await start({ limits: { userConcurrentJobs: 1 } });
    const message = await failed();
    hold();
    const other = h.discord.slashCommand('imagine', { prompt: 'a job still drawing', quality: 'low' });
    await h.discord.waitFor(() => (h.discord.original(other)?.content.includes('Drawing') ? true : undefined), 'the other job to start');
    // The Retry's intake waits for the test: its press has taken the job, and is not refused yet.
    let admit!: () => void;
    const intake = new Promise<void>((resolve) => (admit = resolve));
    const request = JobRunner.prototype.request;
    const asked = spyOnInstance(JobRunner.prototype, 'request', runnerOf(h)).mockImplementation(function (this: JobRunner, intent, answers) {
      return intake.then(() => request.call(this, intent, answers));
    });
    const before = generations();

    const first = h.discord.clickButton(message, buttonId(message, 'Retry'));
    await h.discord.waitFor(() => asked.mock.calls.length > 0 || undefined, 'the first press at the intake');
    const second = h.discord.clickButton(message, buttonId(message, 'Retry'));
    expect(told(await privateNoteOf(h, second))).toBe('discord.button.retry_starting');
    admit();
    expect(told(await privateNoteOf(h, first))).not.toBe('discord.button.already_retried');
    await vi.waitFor(async () => expect((await recordOf(message))?.retriedBy).toBeUndefined(), { timeout: 10_000, interval: 20 });
    service.release();
    await h.finalReply(other);

    const third = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const done = await h.finalReply(third, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).toBe(message.id);
    expect(generations() - before).toBe(2);
    expect(refusedAsRetried()).toEqual([]);
  });

  it('taken by a press whose process was killed before its job started: the take lapses, and its member’s press after the restart runs the job', async () => {
    h = await start();
    const message = await failed();
    const key = decodeCustomId(buttonId(message, 'Retry'))!.key;
    // The process that took it (a press a minute ago) died before starting its job: the next start finds the take as left.
    const pressedAt = Date.now() - JobRecordStore.RETRY_START_MS;
    const clock = vi.spyOn(Date, 'now').mockReturnValue(pressedAt);
    await new JobRecordStore({ state: h.state, logger: silentLogger() }).takeRetry(key, 'press-of-a-killed-process');
    clock.mockRestore();
    expect((await recordOf(message))?.retriedBy).toMatchObject({ press: 'press-of-a-killed-process', at: pressedAt });
    await h.restart({ crash: true });
    const before = generations();

    const retry = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const done = await h.finalReply(retry, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).toBe(message.id);
    expect(generations() - before).toBe(1);
    expect(refusedAsRetried()).toEqual([]);
    expect((await recordOf(message))?.retriedBy).toMatchObject({ press: retry.id, started: true });
  });

  it('gives back a Retry whose take answered only after the press’s answer budget (told to press again): the next press runs it', async () => {
    h = await start();
    const message = await failed();
    const before = generations();
    let answer!: () => void;
    const late = new Promise<void>((resolve) => (answer = resolve));
    const takeRetry = JobRecordStore.prototype.takeRetry;
    const take = spyOnInstance(JobRecordStore.prototype, 'takeRetry', jobStoreOf(h)).mockImplementation(function (this: JobRecordStore, ...args) {
      return late.then(() => takeRetry.apply(this, args));
    });
    takeTheTimers();
    const first = h.discord.clickButton(message, buttonId(message, 'Retry'));
    await h.discord.waitFor(() => take.mock.calls.length > 0 || undefined, 'the take asked');
    await passTheAnswerBudget();
    expect(keyOf((await privateNoteOf(h, first)).content.replace(/^⚠️ /, ''))).toBe('error.on_my_side');
    vi.useRealTimers();
    answer();
    // The take lands after its press was answered: it is given back, so that press is not refused as a second one.
    await vi.waitFor(async () => expect(await take.mock.results[0]!.value).toBe('taken'), { timeout: 10_000, interval: 20 });
    await vi.waitFor(async () => expect((await recordOf(message))?.retriedBy).toBeUndefined(), { timeout: 10_000, interval: 20 });
    expect(generations()).toBe(before);

    const again = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const done = await h.finalReply(again, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).toBe(message.id);
    expect(generations()).toBe(before + 1);
    expect(refusedAsRetried()).toEqual([]);
  });

  it('pressed again after its run ended, on a client that did not refresh: told privately, nothing sent, the run’s images still shown', async () => {
    h = await start();
    const message = await failed();
    const first = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const done = await h.finalReply(first, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    const [before, charged, shown] = [generations(), await charges(), done.attachments.map((a) => a.filename)];

    const again = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const note = await privateNoteOf(h, again);
    expect(keyOf(note.content.replace(/^✋ /, ''))).toBe('discord.button.already_retried');
    expect(generations()).toBe(before);
    expect(await charges()).toBe(charged);
    expect(h.discord.messages.get(message.id)!.attachments.map((a) => a.filename)).toEqual(shown);
  });

  it('refused by the intake (a job of theirs still running): nothing ran, so the same Retry pressed again once it may runs the job', async () => {
    h = await start({ limits: { userConcurrentJobs: 1 } });
    const message = await failed();
    hold();
    const other = h.discord.slashCommand('imagine', { prompt: 'a job still drawing', quality: 'low' });
    await h.discord.waitFor(() => (h.discord.original(other)?.content.includes('Drawing') ? true : undefined), 'the other job to start');

    const refused = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const note = await privateNoteOf(h, refused);
    expect(keyOf(note.content.replace(/^✋ /, ''))).not.toBe('discord.button.already_retried');
    service.release();
    await h.finalReply(other);

    const again = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const done = await h.finalReply(again, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).toBe(message.id);
    expect(done.attachments).toHaveLength(1);
    expect(refusedAsRetried()).toEqual([]);
  });

  it('pressed by another member: runs in a new reply of theirs, on their budget; the job’s message and its Delete stay its member’s', async () => {
    h = await start();
    const ada = h.discord.newUser('ada');
    const mal = h.discord.newUser('mal');
    const message = await failed(ada);
    const before = h.discord.messages.get(message.id)!.content;

    const retry = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: mal });
    const done = await h.finalReply(retry, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).not.toBe(message.id);
    expect(done.interactionId).toBe(retry.id);
    expect(done.attachments).toHaveLength(1);
    // Ada's message is as it was: her failed job, its Retry.
    const ada_s = h.discord.messages.get(message.id)!;
    expect(ada_s.content).toBe(before);
    expect(ada_s.attachments).toEqual([]);
    // The run is Mal's: charged to him, and its Delete is his.
    expect((await h.quotaStore.usage({})).map((u) => u.userKey)).toEqual([`discord:${mal.id}`]);
    const byAda = h.discord.clickButton(done, buttonId(done, 'Delete'), { user: ada });
    const note = await privateNoteOf(h, byAda);
    expect(keyOf(note.content.replace(/^✋ /, ''))).toBe('discord.button.only_requester');
    expect(note.content).toContain(`<@${mal.id}>`);
  });

  it('pressed by another member first: its member’s own Retry still runs her job in her message, once; his runs in his reply', async () => {
    h = await start();
    const ada = h.discord.newUser('ada');
    const mal = h.discord.newUser('mal');
    const message = await failed(ada);

    const byMal = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: mal });
    const his = await h.finalReply(byMal, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(his.id).not.toBe(message.id);
    const before = generations();

    const byAda = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: ada });
    const hers = await h.finalReply(byAda, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(hers.id).toBe(message.id);
    expect(hers.attachments).toHaveLength(1);
    expect(generations() - before).toBe(1);
    expect(refusedAsRetried()).toEqual([]);
    // Each run is charged to the member who pressed, and Mal's reply still shows his.
    expect((await h.quotaStore.usage({})).map((u) => u.userKey).sort()).toEqual([`discord:${ada.id}`, `discord:${mal.id}`].sort());
    expect(h.discord.messages.get(his.id)!.attachments).toHaveLength(1);
  });

  it('pressed by another member whose own default is private results: their run is private, as their own jobs are; the job’s member’s stays public', async () => {
    h = await start();
    const ada = h.discord.newUser('ada');
    const mal = h.discord.newUser('mal');
    await answerOf(h, h.discord.slashCommand('imagine-settings', { private: true }, { user: mal }));
    const message = await failed(ada);
    expect(message.flags & EPHEMERAL).toBe(0);

    const byMal = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: mal });
    const his = await h.finalReply(byMal, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(his.id).not.toBe(message.id);
    expect(his.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(h.discord.messages.get(message.id)!.flags & EPHEMERAL).toBe(0);

    const byAda = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: ada });
    const hers = await h.finalReply(byAda, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(hers.id).toBe(message.id);
    expect(hers.flags & EPHEMERAL).toBe(0);
  });

  it('pressed twice by another member (a double click): runs twice, each in a new reply of theirs, as a double Reroll does', async () => {
    h = await start();
    const ada = h.discord.newUser('ada');
    const mal = h.discord.newUser('mal');
    const message = await failed(ada);
    const before = generations();
    hold();

    const first = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: mal });
    await h.discord.waitFor(() => first.ack, 'the first press answered');
    const second = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: mal });
    await h.discord.waitFor(() => second.ack, 'the second press answered');
    service.release();
    const [a, b] = await Promise.all([first, second].map((press) => h.finalReply(press, (m) => buttonsOf(m).some((x) => x.label === 'Reroll'))));
    expect(new Set([a!.id, b!.id, message.id]).size).toBe(3);
    expect(generations() - before).toBe(2);
    expect(refusedAsRetried()).toEqual([]);
    // Ada's Retry is still hers.
    const byAda = h.discord.clickButton(message, buttonId(message, 'Retry'), { user: ada });
    const hers = await h.finalReply(byAda, (m) => buttonsOf(m).some((x) => x.label === 'Reroll'));
    expect(hers.id).toBe(message.id);
  });

  it('spent once its job was handed to the runner, though writing its record then fails: the press after runs nothing again', async () => {
    h = await start();
    const message = await failed();
    const [before, charged] = [generations(), await charges()];
    // The record of the started job (written once the runner has it) cannot be written.
    const add = JobRecordStore.prototype.add;
    spyOnInstance(JobRecordStore.prototype, 'add', jobStoreOf(h)).mockImplementation(function (this: JobRecordStore, init, inputs) {
      return init.createdAt !== undefined ? Promise.reject(new Error('state write failed')) : add.call(this, init, inputs);
    });
    h.discord.clickButton(message, buttonId(message, 'Retry'));
    await vi.waitFor(async () => expect((await charges()) - charged).toBe(1), { timeout: 10_000, interval: 20 });
    expect((await recordOf(message))?.retriedBy).toMatchObject({ started: true });
    vi.restoreAllMocks();

    const again = h.discord.clickButton(message, buttonId(message, 'Retry'));
    expect(told(await privateNoteOf(h, again))).toBe('discord.button.already_retried');
    expect(generations() - before).toBe(1);
    expect((await charges()) - charged).toBe(1);
  });

  it.each(['generate', 'edit'] as const)('refused privately when its take cannot be marked started, nothing sent; given back, so a press later (past the take’s lapse) runs it once (%s)', async (kind) => {
    h = await start();
    const message = await failedJob[kind]();
    const [before, charged] = [sent(), await charges()];
    spyOnInstance(JobRecordStore.prototype, 'retryStarted', jobStoreOf(h)).mockRejectedValue(new Error('state write failed'));
    const first = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const note = await privateNoteOf(h, first);
    expect(keyOf(note.content.replace(/^✋ /, ''))).toBe('failure.internal_error');
    await vi.waitFor(async () => expect((await recordOf(message))?.retriedBy).toBeUndefined(), { timeout: 10_000, interval: 20 });
    expect(sent()).toBe(before);
    expect(await charges()).toBe(charged);
    // Either kind is refused by one route, the runner's start of an admitted job: one line, the same, with its job's id.
    const notStarted = h.logger.entries.filter((e) => /admitted job|last step before the runner/.test(e.msg ?? ''));
    expect(notStarted.map((e) => [e.level, e.msg])).toEqual([['error', 'an admitted job could not start']]);
    expect(notStarted[0]!.obj).toMatchObject({ jobId: expect.any(String), userId: expect.any(String) });
    vi.restoreAllMocks();

    // A client that did not refresh, pressing more than a take's lapse later.
    const realNow = Date.now;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + JobRecordStore.RETRY_START_MS + 1_000);
    const again = h.discord.clickButton(message, buttonId(message, 'Retry'));
    await h.finalReply(again, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(sent() - before).toBe(1);
    expect((await charges()) - charged).toBe(1);
  });

  it('told to press again, not that it ran, when its take was given back before its mark (it lapsed; another press took it and was refused): the next press runs it once', async () => {
    h = await start();
    const message = await failed();
    const [before, charged] = [generations(), await charges()];
    const mark = JobRecordStore.prototype.retryStarted;
    // As a press that took the lapsed take and was refused does: it gives it back before this press marks it.
    spyOnInstance(JobRecordStore.prototype, 'retryStarted', jobStoreOf(h)).mockImplementation(async function (this: JobRecordStore, k: string, p: string) {
      await this.giveBackRetry(k, p);
      return mark.call(this, k, p);
    });
    const first = h.discord.clickButton(message, buttonId(message, 'Retry'));
    expect(told(await privateNoteOf(h, first))).toBe('discord.button.retry_starting');
    expect(generations()).toBe(before);
    expect(refusedAsRetried()).toHaveLength(0);
    vi.restoreAllMocks();

    const again = h.discord.clickButton(message, buttonId(message, 'Retry'));
    await h.finalReply(again, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(generations() - before).toBe(1);
    expect((await charges()) - charged).toBe(1);
  });

  it('given back through a failed write when its mark was written but answered as failed: nothing ran, and the next press runs the job once', async () => {
    h = await start();
    const message = await failed();
    const [before, charged] = [generations(), await charges()];
    const mark = JobRecordStore.prototype.retryStarted;
    // The mark lands, its answer is lost (a state timing out after it wrote); the give-back's first write then fails.
    spyOnInstance(JobRecordStore.prototype, 'retryStarted', jobStoreOf(h)).mockImplementation(async function (this: JobRecordStore, k: string, p: string) {
      await mark.call(this, k, p);
      vi.spyOn(this.records, 'update').mockRejectedValueOnce(new Error('state write failed'));
      throw new Error('state write timed out');
    });
    const first = h.discord.clickButton(message, buttonId(message, 'Retry'));
    expect(told(await privateNoteOf(h, first))).toBe('failure.internal_error');
    await vi.waitFor(async () => expect((await recordOf(message))?.retriedBy).toBeUndefined(), { timeout: 10_000, interval: 20 });
    expect(generations()).toBe(before);
    vi.restoreAllMocks();

    const again = h.discord.clickButton(message, buttonId(message, 'Retry'));
    await h.finalReply(again, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(generations() - before).toBe(1);
    expect((await charges()) - charged).toBe(1);
  });

  it.each(['generate', 'edit'] as const)('marks its take started before anything of its job reaches the service (%s)', async (kind) => {
    // What the job's record says of its Retry as the service answers each request of the test's press.
    const seen: unknown[] = [];
    let tellSeen: () => void = () => {};
    const hadSeen = new Promise<void>((resolve) => (tellSeen = resolve));
    const watched: { message?: FakeMessage } = {};
    h = await DiscordHarness.start({
      partialImages: 0,
      holdEvent: async (_, index) => {
        if (index === 0 && watched.message) seen.push((await recordOf(watched.message))?.retriedBy);
        if (seen.length > 0) tellSeen();
      },
    });
    const message = (watched.message = await failedJob[kind]());
    // The record of the started job is written only once the service has the request (a slow state, as it may be).
    const add = JobRecordStore.prototype.add;
    spyOnInstance(JobRecordStore.prototype, 'add', jobStoreOf(h)).mockImplementation(async function (this: JobRecordStore, init, inputs) {
      if (init.createdAt !== undefined) await hadSeen;
      return add.call(this, init, inputs);
    });
    const retry = h.discord.clickButton(message, buttonId(message, 'Retry'));
    await h.finalReply(retry, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(seen).toEqual([{ press: retry.id, at: expect.any(Number), started: true }]);
  });

  it('gives its Retry back when the press’s first answer fails (Discord refuses the deferral): nothing ran, and the next press runs it', async () => {
    h = await start();
    const message = await failed();
    const before = generations();
    h.discord.failNext({ route: 'interaction-callback' }, { status: 400, code: 50035, message: 'Invalid Form Body' });
    const first = h.discord.clickButton(message, buttonId(message, 'Retry'));
    await h.discord.waitFor(() => h.discord.requests.some((r) => r.route === 'interaction-callback' && r.token === first.token && r.code === 50035), 'the refused deferral');
    await h.discord.waitFor(() => (h.logger.entries.some((e) => /Invalid Form Body|50035/.test(JSON.stringify(e))) ? true : undefined), 'the failure logged');
    expect(generations()).toBe(before);

    const again = h.discord.clickButton(message, buttonId(message, 'Retry'));
    const done = await h.finalReply(again, (m) => buttonsOf(m).some((b) => b.label === 'Reroll'));
    expect(done.id).toBe(message.id);
    expect(generations()).toBe(before + 1);
    expect(refusedAsRetried()).toHaveLength(0);
  });
});
