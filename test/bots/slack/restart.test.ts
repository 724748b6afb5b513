import { readFileSync } from 'node:fs';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileQuotaStore, JobHistory, JobRunner, say, usd, userKeyOf } from '../../../bots/runner/index.js';
import { FORGET_CLOCK_MARGIN_MS } from '../../../bots/runner/job-history.js';
import { openBotState, stateKeyOf } from '../../../bots/state/index.js';
import { silentLogger } from '../../../src/internal.js';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { SlackJobs } from '../../../bots/slack/SlackJobs.js';
import { messageLinkOf } from '../../../bots/slack/slack-text.js';
import { buttonsOf, type FakeMessage } from '../../fakes/slack/slack-objects.js';
import {
  ADMIN,
  actionMessages,
  finishedActions,
  finishedJob,
  hasButton,
  imageShares,
  isFinished,
  jobMessages,
  png,
  privately,
  startHarness,
  startWithAdmin,
  statusOf,
  type Harness,
} from './harness.js';
import { jobPrompted, requestStoreIn, seenCalling, spyOnInstance } from '../../helpers/instance-spy.js';
import { slackKeyOf } from '../../helpers/message-keys.js';

const open: Harness[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const h of open.splice(0).reverse()) await h.close();
});

/** The saved request of the only job run in a data folder: read, and rewritten as a process that stopped would leave it. */
async function savedRequest(dataDir: string) {
  const dir = join(dataDir, 'slack', 'requests');
  const [file] = (await readdir(dir)).filter((name) => name.endsWith('.json'));
  const path = join(dir, file!);
  return {
    read: () => JSON.parse(readFileSync(path, 'utf8')) as { holder?: string; value: Record<string, unknown> },
    write: (envelope: unknown) => writeFile(path, JSON.stringify(envelope)),
  };
}

const AUDIT = 'C0AUDIT';

/** The audit channel's entries (a post's sections) mentioning `text`. */
function auditEntries(h: Pick<Harness, 'fake'>, text: string): string[] {
  const sections = (m: FakeMessage) => ((m.blocks ?? []) as { type: string; text?: { text: string } }[]).filter((b) => b.type === 'section').map((b) => b.text!.text);
  return h.fake.botMessages(AUDIT).flatMap(sections).filter((t) => t.includes(text));
}

describe('buttons after a restart', () => {
  it('rerolls a finished job from its message on a new bot process that shares the data folder', async () => {
    // Without previews: the emulator draws the job's two 1024x1536 images in this process, and on a loaded machine their
    // four previews besides (with their uploads) took the first job past 15 s and the test past its 30 s.
    const before = await startHarness({ partialImages: 0 });
    const { fake, dataDir } = before;
    await fake.command({ command: '/imagine', text: 'a paper boat --size 1024x1536 --quality low --n 2', channel: 'C0BOATS' });
    await finishedJob(fake, 'C0BOATS');
    const done = await finishedActions(fake, 'C0BOATS');
    await before.close({ fake: true, dataDir: true });

    const after = await startHarness({ fake, dataDir, partialImages: 0 });
    open.push(after);
    const click = await fake.clickButton(done, 'pictor_reroll', 'U0BOB');
    expect(click.status).toBe(200);
    const reroll = await finishedJob(fake, 'C0BOATS', 1);
    expect(statusOf(reroll)).toContain('Done · 1024x1536 · low');
    expect(JSON.stringify(reroll.blocks)).toContain('<@U0BOB> asked for: “a paper boat”');
    const [sent] = after.emulator.requests;
    expect(sent!.fields).toMatchObject({ prompt: 'a paper boat', size: '1024x1536', quality: 'low', n: 2 });
    expect(imageShares(fake, 'C0BOATS').at(-1)!.files).toHaveLength(2);
  });

  it('marks a job stopped by a restart, and its Reroll on the new process downloads the input images again', async () => {
    const before = await startHarness({ emulator: { latencyMs: 20_000 } });
    const { fake, dataDir } = before;
    const bytes = await png(24, 24);
    const photo = fake.addFile({ name: 'room.png', bytes });
    await fake.userMessage({ channel: 'C0ROOMS', text: `<@${fake.botUserId}> add plants`, files: [photo] });
    await fake.waitFor(() => jobMessages(fake, 'C0ROOMS').find((m) => statusOf(m).includes('Drawing')), 'the edit to start');
    await before.close({ fake: true, dataDir: true });
    const stopped = jobMessages(fake, 'C0ROOMS')[0]!;
    expect(statusOf(stopped)).toContain('Stopped because the bot restarted');
    expect(buttonsOf(stopped).map((b) => b.actionId)).toEqual(['pictor_reroll']);

    const after = await startHarness({ fake, dataDir });
    open.push(after);
    const downloadsBefore = fake.downloads.length;
    await fake.clickButton(stopped, 'pictor_reroll');
    const reroll = await finishedJob(fake, 'C0ROOMS', 1);
    expect(statusOf(reroll)).toContain('Done');
    expect(fake.downloads.length).toBe(downloadsBefore + 1);
    const edit = after.emulator.requests.find((r) => r.path === '/v1/images/edits')!;
    expect(edit.fields).toMatchObject({ prompt: 'add plants' });
    expect(Buffer.from(edit.images[0]!.bytes!).equals(bytes)).toBe(true);
  });

  it('says what the ledger charged a job a crash cut off after its request reached the service, and records it failed (interrupted) with that cost, as Discord does', async () => {
    const before = await startHarness({ emulator: { latencyMs: 20_000 } });
    const { fake, dataDir } = before;
    await fake.command({ command: '/imagine', text: 'a kite in the rain --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    await fake.waitFor(() => jobMessages(fake, 'C0KITES').find((m) => statusOf(m).includes('Drawing')), 'the job to start');
    await fake.waitFor(() => before.emulator.requests.length > 0 || undefined, 'its request to reach the service');
    const saved = await savedRequest(dataDir);
    const runnerJobId = saved.read().value.runnerJobId;
    expect(runnerJobId).toEqual(expect.any(String));
    // Its stop settles what it sent (the ledger's verdict); the crash leaves its request active, held by the dead process.
    await before.close({ fake: true, dataDir: true });
    await saved.write({ ...saved.read(), holder: 'a-crashed-process', value: { ...saved.read().value, status: 'active' } });
    const recorded = spyOnInstance(JobRunner.prototype, 'recordEnded', jobPrompted('a kite in the rain'));

    const after = await startHarness({ fake, dataDir });
    open.push(after);
    const [charged] = (await after.store.usage({})).filter((r) => r.jobId === runnerJobId);
    expect(charged!.costUsd).toBeGreaterThan(0);
    await vi.waitFor(() => expect(saved.read().value).toMatchObject({ status: 'ended', endRecorded: true }), { timeout: 15_000 });
    const stopped = jobMessages(fake, 'C0KITES')[0]!;
    expect(statusOf(stopped)).toContain(say('en', 'slack.job.charged', { usd: usd(charged!.costUsd) }).replace(/^:dollar: /, ''));
    expect(recorded.mock.calls.map((call) => call[2])).toStrictEqual([{ type: 'failed', code: 'interrupted', cost: { totalUsd: charged!.costUsd } }]);
    const [entry] = await after.runner.history!.mine({ platform: 'slack', userId: 'U0ALICE', channelId: '', scopeId: 'T0PICTOR' });
    expect(entry).toMatchObject({ status: 'failed', costUsd: charged!.costUsd });
  });

  it('reads what a swept job was charged at the bot’s own clock: the ledger’s reconcile is at its time', async () => {
    const before = await startHarness({ emulator: { latencyMs: 20_000 } });
    const { fake, dataDir } = before;
    await fake.command({ command: '/imagine', text: 'a kite in the rain --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    await fake.waitFor(() => before.emulator.requests.length > 0 || undefined, 'its request to reach the service');
    await before.close({ fake: true, dataDir: true });
    const saved = await savedRequest(dataDir);
    await saved.write({ ...saved.read(), holder: 'a-crashed-process', value: { ...saved.read().value, status: 'active' } });
    // The bot's clock runs an hour ahead of the machine's.
    const aheadMs = 3_600_000;
    const store = new FileQuotaStore({ dir: dataDir });
    const reconcile = vi.spyOn(store, 'reconcile');
    const after = await startHarness({ fake, dataDir, store, bot: { now: () => Date.now() + aheadMs } });
    open.push(after);
    await vi.waitFor(() => expect(saved.read().value).toMatchObject({ status: 'ended', endRecorded: true }), { timeout: 15_000 });
    expect(reconcile.mock.calls.some(([at]) => at >= Date.now() + aheadMs / 2)).toBe(true);
  });

  it('shows Done, without buttons, for a finished job whose message’s last update a stop shed (its buttons are beside its images)', async () => {
    // A budget of updates spent by the first progress update: the job's "Done" is still waiting for it when the bot stops.
    const before = await startHarness({ emulator: { latencyMs: 600 }, bot: { progressWritesPerMinute: 0.001, progressWritesBurst: 1 } });
    const { fake, dataDir } = before;
    await fake.command({ command: '/imagine', text: 'a lantern --quality low', channel: 'C0LAMPS' });
    const actions = await finishedActions(fake, 'C0LAMPS');
    const job = jobMessages(fake, 'C0LAMPS')[0]!;
    expect(hasButton(job, 'pictor_cancel')).toBe(true);
    await before.close({ fake: true, dataDir: true });
    // The stop did not wait for the budget: the message still shows the job running.
    expect(isFinished(job)).toBe(false);

    const after = await startHarness({ fake, dataDir });
    open.push(after);
    const done = await finishedJob(fake, 'C0LAMPS');
    expect(done).toBe(job);
    expect(statusOf(done)).toMatch(/Done · 1024x1024 · low · .* · the image is posted below, with Reroll, Edit and Delete$/);
    expect(buttonsOf(done)).toEqual([]);
    expect(actionMessages(fake, 'C0LAMPS')).toEqual([actions]);
  });

  it('shows Done, with its buttons, for a job whose stop came after its images were posted and before their buttons were', async () => {
    const before = await startHarness();
    const { fake, dataDir } = before;
    await fake.command({ command: '/imagine', text: 'a lantern --quality low', channel: 'C0LAMPS' });
    const done = await finishedJob(fake, 'C0LAMPS');
    const actions = await finishedActions(fake, 'C0LAMPS');
    const dir = join(dataDir, 'slack', 'requests');
    const [file] = (await readdir(dir)).filter((name) => name.endsWith('.json'));
    const saved = () => JSON.parse(readFileSync(join(dir, file!), 'utf8'));
    await fake.waitFor(() => saved().value.status === 'ended', 'the request to be saved as ended');
    await before.close({ fake: true, dataDir: true });
    // As if the process had stopped after posting the images, before their buttons.
    const envelope = saved();
    expect(envelope.value.actionsMessage).toEqual({ channelId: 'C0LAMPS', ts: actions.ts });
    const { actionsMessage: _, ...value } = envelope.value;
    await writeFile(join(dir, file!), JSON.stringify({ ...envelope, holder: 'a-stopped-process', value: { ...value, status: 'active' } }));
    fake.messages.splice(fake.messages.indexOf(actions), 1);
    done.blocks = [];

    const after = await startHarness({ fake, dataDir });
    open.push(after);
    await fake.waitFor(() => buttonsOf(done).length > 0, 'the start-up sweep to update the message');
    expect(statusOf(done)).toContain('Done · 1024x1024 · low');
    expect(buttonsOf(done).map((b) => b.actionId)).toEqual(['pictor_reroll', 'pictor_edit', 'pictor_delete']);
  });

  it('answers a Cancel click for a job the new process does not know privately', async () => {
    const h = await startHarness();
    open.push(h);
    const { fake } = h;
    const ghost = { channel: 'C0OLD', ts: '1700000000.000001', text: '', postedAt: 0, edits: [], user: fake.botUserId, blocks: [
      { type: 'actions', block_id: 'job_actions', elements: [{ type: 'button', action_id: 'pictor_cancel', value: 'oldjob123456', text: { type: 'plain_text', text: 'Cancel' } }] },
    ] };
    await fake.clickButton(ghost, 'pictor_cancel');
    const note = await fake.waitFor(() => fake.responses[0], 'the private answer');
    expect(slackKeyOf(String(note.body.text))).toBe('slack.button.not_running');
  });
});

describe('the end of a finished job a stop cut off, in the history and the audit channel', () => {
  const alice = { platform: 'slack' as const, userId: 'U0ALICE', channelId: '', scopeId: 'T0PICTOR' };

  it('records the end of a job whose images were posted before a crash (its request not marked as recorded) once, when the sweep shows it done: the history with its cost and link, and the audit channel', async () => {
    const before = await startWithAdmin();
    const { fake, dataDir } = before;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN, 'C0ADMIN');
    // The process dies before its job's end is recorded: nothing in the history or the audit channel.
    vi.spyOn(before.runner, 'recordEnded').mockResolvedValue(undefined);
    await fake.command({ command: '/imagine', text: 'a lantern in a storm --quality low', channel: 'C0LAMPS', user: 'U0ALICE' });
    const job = await finishedJob(fake, 'C0LAMPS');
    await finishedActions(fake, 'C0LAMPS');
    const saved = await savedRequest(dataDir);
    await fake.waitFor(() => saved.read().value.status === 'ended', 'the request to be saved as ended');
    await before.close({ fake: true, dataDir: true });
    // As a crash leaves it: active, held by the process that died, its end not recorded.
    const { endRecorded: _, ...value } = saved.read().value;
    await saved.write({ ...saved.read(), holder: 'a-crashed-process', value: { ...value, status: 'active' } });
    const recorded = spyOnInstance(JobRunner.prototype, 'recordEnded', jobPrompted('a lantern in a storm'));

    const after = await startWithAdmin({ fake, dataDir });
    open.push(after);
    await vi.waitFor(async () => expect(await after.runner.history!.mine(alice)).toHaveLength(1), { timeout: 15_000 });
    const [entry] = await after.runner.history!.mine(alice);
    expect(entry).toMatchObject({ prompt: 'a lantern in a storm', status: 'completed', quality: 'low', link: messageLinkOf('C0LAMPS', job.ts) });
    expect(entry!.costUsd).toBeGreaterThan(0);
    const [audit] = await fake.waitFor(() => (auditEntries(after, 'a lantern in a storm').length > 0 ? auditEntries(after, 'a lantern in a storm') : undefined), 'the audit entry');
    expect(audit).toMatch(/\$0\.0\d+/);
    expect(audit).toContain(messageLinkOf('C0LAMPS', job.ts));
    // Marked once its audit entry was posted, never before.
    await vi.waitFor(() => expect(saved.read().value).toMatchObject({ status: 'ended', endRecorded: true }), { timeout: 15_000 });
    expect(await after.runner.history!.mine(alice)).toHaveLength(1);
    // The sweep is over once the bot has stopped: the end was recorded once where it shows — one history entry, one
    // audit post. (A sweep that passes again before the mark lands records it again, which changes nothing: the history
    // merges by the job's key and the audit channel enters a job's end once.)
    await after.close({ fake: true });
    open.splice(open.indexOf(after), 1);
    expect(recorded).toHaveBeenCalled();
    // Only the facts of its end the runner records: its total cost, not the price of each image.
    expect(recorded.mock.calls[0]![2]).toStrictEqual({ type: 'completed', size: expect.any(String), quality: 'low', cost: { totalUsd: expect.any(Number) } });
    expect(auditEntries(after, 'a lantern in a storm')).toHaveLength(1);
    await fake.close();
  });

  /** A bot whose job's images were posted, then crashed before its end was recorded: its request as the crash left it. */
  async function crashedBeforeItsEnd(prompt: string, around: { beforeJob?: (h: Harness) => Promise<void> } = {}) {
    const before = await startWithAdmin();
    const { fake, dataDir } = before;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN, 'C0ADMIN');
    vi.spyOn(before.runner, 'recordEnded').mockResolvedValue(undefined);
    await around.beforeJob?.(before);
    await fake.command({ command: '/imagine', text: `${prompt} --quality low`, channel: 'C0LAMPS', user: 'U0ALICE' });
    await finishedJob(fake, 'C0LAMPS');
    await finishedActions(fake, 'C0LAMPS');
    const saved = await savedRequest(dataDir);
    await fake.waitFor(() => saved.read().value.status === 'ended', 'the request to be saved as ended');
    await before.close({ fake: true, dataDir: true });
    const crashed = async () => {
      const { endRecorded: _, ...value } = saved.read().value;
      await saved.write({ ...saved.read(), holder: 'a-crashed-process', value: { ...value, status: 'active' } });
    };
    await crashed();
    return { fake, dataDir, saved, crashed };
  }

  it('records a swept job’s end before it marks the request: a sweep whose mark fails has recorded it, and the next sweep’s record of it again changes nothing — one history entry, one audit post', async () => {
    const { fake, dataDir, saved, crashed } = await crashedBeforeItsEnd('a lantern whose sweep could not mark it');
    // Every write of this job's request fails in the next process's sweep, as storage that is down would.
    const id = saved.read().value.id;
    const update = spyOnInstance(RequestStore.prototype, 'update', (_store, requestId) => requestId === id).mockRejectedValue(new Error('storage unavailable'));
    const recorded = spyOnInstance(JobRunner.prototype, 'recordEnded', jobPrompted('a lantern whose sweep could not mark it'));
    let after = await startWithAdmin({ fake, dataDir });
    await vi.waitFor(async () => expect(await after.runner.history!.mine(alice)).toHaveLength(1), { timeout: 15_000 });
    await fake.waitFor(() => auditEntries(after, 'a lantern whose sweep could not mark it').length > 0 || undefined, 'the audit entry');
    await after.close({ fake: true, dataDir: true });
    update.mockRestore();
    expect(saved.read().value.status).toBe('active');
    await crashed();

    after = await startWithAdmin({ fake, dataDir });
    open.push(after);
    await fake.waitFor(() => saved.read().value.status === 'ended' || undefined, 'the next sweep to end the request');
    expect(saved.read().value).toMatchObject({ status: 'ended', endRecorded: true });
    expect(await after.runner.history!.mine(alice)).toHaveLength(1);
    await after.close({ fake: true });
    open.splice(open.indexOf(after), 1);
    expect(recorded).toHaveBeenCalledTimes(2);
    expect(auditEntries(after, 'a lantern whose sweep could not mark it')).toHaveLength(1);
    await fake.close();
  });

  /** Alice's forget mark, as her `forget` leaves it (`at`: when she asked). */
  const aliceMark = stateKeyOf(userKeyOf(alice));

  it('keeps the prompt of a swept job accepted after its member’s forget, while the forget’s mark lives', async () => {
    // Alice asked forget well before this job (more than the replicas' clock margin): her mark is still kept.
    const { fake, dataDir } = await crashedBeforeItsEnd('a lantern asked after a forget', {
      beforeJob: (h) => h.state.store.space<number>(h.state.spaces.forgotten).put(aliceMark, Date.now() - 2 * FORGET_CLOCK_MARGIN_MS),
    });
    const after = await startWithAdmin({ fake, dataDir });
    open.push(after);
    await vi.waitFor(async () => expect(await after.runner.history!.mine(alice)).toHaveLength(1), { timeout: 15_000 });
    expect(await after.runner.history!.mine(alice)).toMatchObject([{ prompt: 'a lantern asked after a forget', status: 'completed' }]);
    await fake.waitFor(() => auditEntries(after, 'a lantern asked after a forget').length > 0 || undefined, 'the audit entry with its prompt');
    await fake.close();
  });

  it('records a swept job running at its member’s forget with no prompt even once the mark is gone: the forget erased it from the request', async () => {
    const { fake, dataDir, saved } = await crashedBeforeItsEnd('a lantern running at the forget');
    // Alice forgets (on another replica) while her job's end waits to be recorded; then the mark is gone (its TTL or
    // its count bound passed).
    const elsewhere = await openBotState({ dataDir, logger: silentLogger() });
    await new JobHistory({ state: elsewhere }).forgetEverywhere(alice);
    await elsewhere.store.space(elsewhere.spaces.forgotten).delete(aliceMark);
    await elsewhere.close();
    expect(saved.read().value).toMatchObject({ status: 'active', prompt: '' });
    const after = await startWithAdmin({ fake, dataDir });
    open.push(after);
    await vi.waitFor(async () => expect(await after.runner.history!.mine(alice)).toHaveLength(1), { timeout: 15_000 });
    expect(await after.runner.history!.mine(alice)).toMatchObject([{ prompt: '', status: 'completed' }]);
    await fake.waitFor(() => auditEntries(after, 'U0ALICE').length > 0 || undefined, 'the audit entry');
    expect(auditEntries(after, 'a lantern running at the forget')).toEqual([]);
    await fake.close();
  });

  it('leaves a job whose end a crash cut off while the sweep recorded it to the next sweep, which records it: nothing is marked before its end is recorded', async () => {
    const prompt = 'a lantern whose sweep died recording it';
    const { fake, dataDir, saved } = await crashedBeforeItsEnd(prompt);
    // The next process dies while its sweep records the job's end: that record never resolves. Its runner is made inside
    // its start, which sweeps at once: the fake is told by this job, which no runner of another test records.
    const recorded = spyOnInstance(JobRunner.prototype, 'recordEnded', (_runner, _requester, job) => job.prompt === prompt).mockImplementationOnce(() => new Promise<void>(() => {}));
    let after = await startWithAdmin({ fake, dataDir });
    await fake.waitFor(() => recorded.mock.calls.length > 0 || undefined, 'the sweep recording the job’s end');
    expect(saved.read().value.status).toBe('active');
    expect(saved.read().value.endRecorded).toBeUndefined();
    await after.close({ fake: true, dataDir: true });
    await saved.write({ ...saved.read(), holder: 'a-crashed-process' });

    after = await startWithAdmin({ fake, dataDir });
    open.push(after);
    await vi.waitFor(async () => expect(await after.runner.history!.mine(alice)).toHaveLength(1), { timeout: 15_000 });
    await fake.waitFor(() => auditEntries(after, prompt).length > 0 || undefined, 'the audit entry');
    await fake.waitFor(() => saved.read().value.endRecorded === true || undefined, 'the request marked as recorded');
    await after.close({ fake: true });
    open.splice(open.indexOf(after), 1);
    await fake.close();
  });

  it('marks nothing for a swept job whose end could not be recorded (its history entry not written): the next start’s sweep records it, then marks it', async () => {
    const prompt = 'a lantern whose history could not be written';
    const { fake, dataDir, saved } = await crashedBeforeItsEnd(prompt);
    const recorded = spyOnInstance(JobRunner.prototype, 'recordEnded', (_runner, _requester, job) => job.prompt === prompt).mockRejectedValueOnce(new Error('storage unavailable'));
    let after = await startWithAdmin({ fake, dataDir });
    await fake.waitFor(() => recorded.mock.calls.length > 0 || undefined, 'the sweep recording the job’s end');
    await expect(recorded.mock.results[0]!.value).rejects.toThrow('storage unavailable');
    await after.close({ fake: true, dataDir: true });
    expect(saved.read().value.status).toBe('active');
    expect(saved.read().value.endRecorded).toBeUndefined();
    await saved.write({ ...saved.read(), holder: 'a-crashed-process' });

    after = await startWithAdmin({ fake, dataDir });
    open.push(after);
    await vi.waitFor(async () => expect(await after.runner.history!.mine(alice)).toHaveLength(1), { timeout: 15_000 });
    await fake.waitFor(() => saved.read().value.endRecorded === true || undefined, 'the request marked as recorded');
    expect(saved.read().value.status).toBe('ended');
    await after.close({ fake: true });
    open.splice(open.indexOf(after), 1);
    expect(auditEntries(after, prompt)).toHaveLength(1);
    await fake.close();
  });

  it('records nothing more for a job whose end the runner recorded before a stop shed its “Done” (its request marked as recorded)', async () => {
    // A budget of updates spent by the first progress update: the job's "Done" is still waiting for it when the bot stops.
    const before = await startWithAdmin({ emulator: { latencyMs: 600 }, bot: { progressWritesPerMinute: 0.001, progressWritesBurst: 1 } });
    const { fake, dataDir } = before;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN, 'C0ADMIN');
    await fake.command({ command: '/imagine', text: 'a lantern recorded once --quality low', channel: 'C0LAMPS', user: 'U0ALICE' });
    await finishedActions(fake, 'C0LAMPS');
    await vi.waitFor(async () => expect(await before.runner.history!.mine(alice)).toHaveLength(1), { timeout: 15_000 });
    await fake.waitFor(() => auditEntries(before, 'a lantern recorded once').length > 0 || undefined, 'the audit entry');
    const saved = await savedRequest(dataDir);
    await fake.waitFor(() => saved.read().value.endRecorded === true || undefined, 'the request marked as recorded');
    await before.close({ fake: true, dataDir: true });
    expect(saved.read().value.status).toBe('active');
    const recorded = spyOnInstance(JobRunner.prototype, 'recordEnded', jobPrompted('a lantern recorded once'));

    const after = await startWithAdmin({ fake, dataDir });
    open.push(after);
    await finishedJob(fake, 'C0LAMPS');
    await fake.waitFor(() => saved.read().value.status === 'ended' || undefined, 'the sweep to end the request');
    expect(await after.runner.history!.mine(alice)).toHaveLength(1);
    await after.close({ fake: true });
    open.splice(open.indexOf(after), 1);
    expect(recorded).not.toHaveBeenCalled();
    expect(auditEntries(after, 'a lantern recorded once')).toHaveLength(1);
    await fake.close();
  });
});

describe('the end of a job its message showed before a stop, recorded by the next start', () => {
  const alice = { platform: 'slack' as const, userId: 'U0ALICE', channelId: '', scopeId: 'T0PICTOR' };
  /** What the bot asked Slack to do in a channel (a message posted or updated, a file shared). */
  const writesIn = (h: Pick<Harness, 'fake'>, channel: string) => h.fake.calls.filter((c) => c.args.channel === channel || c.args.channel_id === channel);

  it('records the end of a job whose message showed it before the process stopped, ahead of its runner’s record, once: one history entry with its link, one audit post, and no message updated', async () => {
    const before = await startWithAdmin();
    const { fake, dataDir } = before;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN, 'C0ADMIN');
    // The process stops at this step: the view has marked the request ended, the runner's record of its end never ends
    // (failed as the stop begins, so the stop does not wait out its drain for it: nothing of it is written either way).
    let stop: ((error: Error) => void) | undefined;
    vi.spyOn(before.runner, 'recordEnded').mockImplementation(() => new Promise<void>((_, reject) => (stop = reject)));
    await fake.command({ command: '/imagine', text: 'a lantern shown before a stop --quality low', channel: 'C0LAMPS', user: 'U0ALICE' });
    const job = await finishedJob(fake, 'C0LAMPS');
    await finishedActions(fake, 'C0LAMPS');
    const saved = await savedRequest(dataDir);
    await fake.waitFor(() => saved.read().value.status === 'ended' || undefined, 'the view to mark the request ended');
    stop!(new Error('the process stopped'));
    await before.close({ fake: true, dataDir: true });
    // Held, with the end the runner was to record.
    expect(saved.read().holder ?? undefined).toBeDefined();
    expect(saved.read().value).toMatchObject({ status: 'ended', end: { type: 'completed', quality: 'low' } });
    expect(saved.read().value.endRecorded).toBeUndefined();
    await saved.write({ ...saved.read(), holder: 'a-stopped-process' });
    const writes = writesIn(before, 'C0LAMPS').length;
    const edits = job.edits.length;
    const recorded = spyOnInstance(JobRunner.prototype, 'recordEnded', jobPrompted('a lantern shown before a stop'));

    const after = await startWithAdmin({ fake, dataDir });
    open.push(after);
    await vi.waitFor(async () => expect(await after.runner.history!.mine(alice)).toHaveLength(1), { timeout: 15_000 });
    const [entry] = await after.runner.history!.mine(alice);
    expect(entry).toMatchObject({ prompt: 'a lantern shown before a stop', status: 'completed', quality: 'low', link: messageLinkOf('C0LAMPS', job.ts) });
    expect(entry!.costUsd).toBeGreaterThan(0);
    await fake.waitFor(() => auditEntries(after, 'a lantern shown before a stop').length > 0 || undefined, 'the audit entry');
    await fake.waitFor(() => saved.read().value.endRecorded === true || undefined, 'the request marked as recorded');
    expect(saved.read().holder ?? undefined).toBeUndefined();
    await after.close({ fake: true });
    open.splice(open.indexOf(after), 1);
    expect(recorded).toHaveBeenCalledTimes(1);
    expect(auditEntries(after, 'a lantern shown before a stop')).toHaveLength(1);
    expect(writesIn(after, 'C0LAMPS')).toHaveLength(writes);
    expect(job.edits).toHaveLength(edits);
    await fake.close();
  });

  it('shows every swept job without waiting for the recorded ends before it (each waits for its audit post), and a stop still waits for those records', async () => {
    const before = await startWithAdmin();
    const { fake, dataDir } = before;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN, 'C0ADMIN');
    // Two jobs whose images were posted, then a crash before either end was recorded.
    vi.spyOn(before.runner, 'recordEnded').mockResolvedValue(undefined);
    for (const prompt of ['a lantern', 'a lighthouse']) await fake.command({ command: '/imagine', text: `${prompt} --quality low`, channel: 'C0LAMPS', user: 'U0ALICE' });
    const jobs = [await finishedJob(fake, 'C0LAMPS', 0), await finishedJob(fake, 'C0LAMPS', 1)];
    await finishedActions(fake, 'C0LAMPS', 1);
    const dir = join(dataDir, 'slack', 'requests');
    const files = (await readdir(dir)).filter((name) => name.endsWith('.json')).map((name) => join(dir, name));
    await fake.waitFor(() => files.every((path) => JSON.parse(readFileSync(path, 'utf8')).value.status === 'ended'), 'both requests to be saved as ended');
    await before.close({ fake: true, dataDir: true });
    for (const path of files) {
      const envelope = JSON.parse(readFileSync(path, 'utf8')) as { value: Record<string, unknown> };
      const { endRecorded: _, ...value } = envelope.value;
      await writeFile(path, JSON.stringify({ ...envelope, holder: 'a-crashed-process', value: { ...value, status: 'active' } }));
    }
    // Each record of an end waits (for its audit post): held here until both jobs are shown.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const recorded = spyOnInstance(JobRunner.prototype, 'recordEnded', (_runner, _requester, job) => ['a lantern', 'a lighthouse'].includes(job.prompt)).mockImplementation(() => held);
    const updatesBefore = fake.callsOf('chat.update').length;
    // The next start's Slack jobs: told by the requests of the channel its sweep records.
    const jobsOfAfter = seenCalling(SlackJobs.prototype, 'requester', (actor) => actor.channelId === 'C0LAMPS');

    const after = await startWithAdmin({ fake, dataDir });
    const shown = () => new Set(fake.callsOf('chat.update').slice(updatesBefore).map((c) => c.args.ts));
    await fake.waitFor(() => jobs.every((job) => shown().has(job.ts)), 'both swept jobs to be shown');
    await fake.waitFor(() => recorded.mock.calls.length === 2, 'both ends to be recorded');
    // The stop waits for the records under way: they finish only once it waits for its jobs to settle, and that wait
    // ends with both requests marked.
    const settle = SlackJobs.prototype.settle;
    const markedWhenSettled: unknown[] = [];
    spyOnInstance(SlackJobs.prototype, 'settle', jobsOfAfter).mockImplementation(async function (this: SlackJobs) {
      const waiting = settle.call(this);
      release();
      await waiting;
      markedWhenSettled.push(...files.map((path) => JSON.parse(readFileSync(path, 'utf8')).value));
    });
    await after.close({ fake: true, dataDir: true });
    expect(markedWhenSettled).toEqual(files.map(() => expect.objectContaining({ status: 'ended', endRecorded: true })));
    await fake.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('writes a job’s end once on the usual path, and lets go of its request: the next start claims nothing and records nothing', async () => {
    const before = await startWithAdmin();
    const { fake, dataDir } = before;
    await privately(fake, `admin audit <#${AUDIT}|audit>`, ADMIN, 'C0ADMIN');
    await fake.command({ command: '/imagine', text: 'a lantern ended as usual --quality low', channel: 'C0LAMPS', user: 'U0ALICE' });
    const job = await finishedJob(fake, 'C0LAMPS');
    await finishedActions(fake, 'C0LAMPS');
    const saved = await savedRequest(dataDir);
    await fake.waitFor(() => (saved.read().value.status === 'ended' && saved.read().value.endRecorded === true) || undefined, 'the request ended and marked as recorded');
    await fake.waitFor(() => auditEntries(before, 'a lantern ended as usual').length > 0 || undefined, 'the audit entry');
    await before.close({ fake: true, dataDir: true });
    expect(saved.read().holder ?? undefined).toBeUndefined();
    const edits = job.edits.length;
    const claimed = spyOnInstance(RequestStore.prototype, 'claimInterrupted', requestStoreIn(dataDir));
    const recorded = spyOnInstance(JobRunner.prototype, 'recordEnded', jobPrompted('a lantern ended as usual'));

    const after = await startWithAdmin({ fake, dataDir });
    open.push(after);
    await vi.waitFor(() => expect(claimed).toHaveBeenCalled(), { timeout: 15_000 });
    expect(await after.runner.history!.mine(alice)).toHaveLength(1);
    await after.close({ fake: true });
    open.splice(open.indexOf(after), 1);
    for (const result of claimed.mock.results) expect(await result.value).toEqual([]);
    expect(recorded).not.toHaveBeenCalled();
    expect(auditEntries(after, 'a lantern ended as usual')).toHaveLength(1);
    expect(job.edits).toHaveLength(edits);
    await fake.close();
  });
});
