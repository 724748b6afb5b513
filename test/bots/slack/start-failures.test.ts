import { afterEach, describe, expect, it, vi } from 'vitest';
import { say } from '../../../bots/runner/index.js';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { SlackJobs } from '../../../bots/slack/SlackJobs.js';
import { buttonsOf } from '../../fakes/slack/slack-objects.js';
import { RecordingLogger } from '../discord/harness.js';
import { finishedActions, startHarness, type Harness } from './harness.js';
import { requestStoreOf, spyOnInstance } from '../../helpers/instance-spy.js';

let h: Harness | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

describe('a job that fails after its request was taken and before the runner had it is told to its member', () => {
  it('/imagine whose request cannot be saved (the data folder refusing writes): the member is told privately that something went wrong on our side; nothing reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    spyOnInstance(RequestStore.prototype, 'create', requestStoreOf(h!)).mockRejectedValueOnce(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    const ack = await fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    const note = await fake.waitFor(() => fake.responses.find((r) => ack.responseUrl.endsWith(r.id)), 'the private answer');
    expect(note.body).toMatchObject({ response_type: 'ephemeral', text: `:warning: ${say('en', 'error.on_my_side')}` });
    expect(fake.messages.filter((m) => m.channel === 'C0KITES')).toEqual([]);
    expect(h.emulator.requests).toHaveLength(0);
    expect(h.runner.activeJobs()).toEqual([]);
  });

  it('/imagine whose request cannot be saved: one error line, naming who asked by the fields every line of the runner’s names them by', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ logger });
    const { fake } = h;
    spyOnInstance(RequestStore.prototype, 'create', requestStoreOf(h!)).mockRejectedValueOnce(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    const ack = await fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    await fake.waitFor(() => fake.responses.find((r) => ack.responseUrl.endsWith(r.id)), 'the private answer');
    const lines = logger.entries.filter((e) => e.level === 'error');
    expect(lines).toEqual([expect.objectContaining({ obj: expect.objectContaining({ platform: 'slack', scopeId: fake.teamId, userId: 'U0ALICE' }) })]);
    expect(lines[0]!.obj).not.toHaveProperty('user');
  });

  // Regression guards: these pass with the listeners' former catch-alls around the start too (the start never rejected,
  // so those never ran); they keep the start the only one telling a start failure, and telling it once.
  it('(regression guard) a mention whose request cannot be saved: the member is told privately once, by the job’s start itself, that something went wrong on our side; nothing reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    const start = spyOnInstance(SlackJobs.prototype, 'start', (_jobs, input) => input.prompt === 'a kite whose mention cannot be saved');
    spyOnInstance(RequestStore.prototype, 'create', requestStoreOf(h!)).mockRejectedValueOnce(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    await fake.userMessage({ channel: 'C0KITES', user: 'U0ALICE', text: `<@${fake.botUserId}> a kite whose mention cannot be saved --quality low` });
    await fake.waitFor(() => start.mock.results[0], 'the job asked for');
    // The start answers (it never rejects): the member was told by then, and nothing after it tells them again.
    await expect(start.mock.results[0]!.value).resolves.toBeUndefined();
    expect(fake.ephemerals.filter((e) => e.user === 'U0ALICE').map((e) => e.text)).toEqual([`:warning: ${say('en', 'error.on_my_side')}`]);
    expect(fake.responses).toEqual([]);
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('(regression guard) a Reroll whose request cannot be saved anew: the presser is told privately once, by the job’s start itself; nothing more reaches the service', async () => {
    h = await startHarness();
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a kite whose reroll cannot be saved --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    const actions = await finishedActions(fake, 'C0KITES');
    const start = spyOnInstance(SlackJobs.prototype, 'start', (_jobs, input) => input.prompt === 'a kite whose reroll cannot be saved');
    spyOnInstance(RequestStore.prototype, 'create', requestStoreOf(h!)).mockRejectedValueOnce(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
    const click = await fake.clickButton(actions, 'pictor_reroll', 'U0BOB');
    await fake.waitFor(() => start.mock.results[0], 'the job asked for');
    await expect(start.mock.results[0]!.value).resolves.toBeUndefined();
    expect(fake.responses.filter((r) => click.responseUrl.endsWith(r.id)).map((r) => r.body.text)).toEqual([`:warning: ${say('en', 'error.on_my_side')}`]);
    expect(fake.messages.filter((m) => m.channel === 'U0BOB' || m.channel === fake.dmOf('U0BOB'))).toEqual([]);
    expect(h.emulator.requests).toHaveLength(1);
  });

  it('a Reroll whose saved request cannot be read: the presser is told privately once that something went wrong on our side; no job is asked for', async () => {
    h = await startHarness();
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a kite whose request cannot be read --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    const actions = await finishedActions(fake, 'C0KITES');
    const start = spyOnInstance(SlackJobs.prototype, 'start', (_jobs, input) => input.prompt === 'a kite whose request cannot be read');
    // The read of this job's saved request fails (the data folder failing); every other read is as usual.
    const requestId = buttonsOf(actions).find((b) => b.actionId === 'pictor_reroll')!.value;
    const read = RequestStore.prototype.get;
    spyOnInstance(RequestStore.prototype, 'get', requestStoreOf(h!)).mockImplementation(function (this: RequestStore, id: string) {
      return id === requestId ? Promise.reject(Object.assign(new Error('input/output error'), { code: 'EIO' })) : read.call(this, id);
    });
    const click = await fake.clickButton(actions, 'pictor_reroll', 'U0BOB');
    const note = await fake.waitFor(() => fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
    expect(note.body.text).toBe(`:warning: ${say('en', 'error.on_my_side')}`);
    expect(start).not.toHaveBeenCalled();
    expect(h.emulator.requests).toHaveLength(1);
  });
});

describe('a press of a finished job’s Cancel, Delete or Edit whose saved request cannot be read is answered privately, as Reroll’s is', () => {
  /** The read of `requestId`'s saved request fails (the data folder failing); every other read is as usual. */
  function failReadOf(requestId: string | undefined): void {
    const read = RequestStore.prototype.get;
    spyOnInstance(RequestStore.prototype, 'get', requestStoreOf(h!)).mockImplementation(function (this: RequestStore, id: string) {
      return id === requestId ? Promise.reject(Object.assign(new Error('input/output error'), { code: 'EIO' })) : read.call(this, id);
    });
  }

  it('a Cancel still shown on a finished job’s message: the presser is told privately that something went wrong on our side', async () => {
    h = await startHarness();
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    const actions = await finishedActions(fake, 'C0KITES');
    const requestId = buttonsOf(actions).find((b) => b.actionId === 'pictor_reroll')!.value!;
    // A screen that still shows the job running: its Cancel names a job this process no longer runs, and its saved request.
    const stale = { channel: 'C0KITES', ts: '1700000000.000001', text: '', postedAt: 0, edits: [], user: fake.botUserId, blocks: [
      { type: 'actions', block_id: 'job_actions', elements: [{ type: 'button', action_id: 'pictor_cancel', value: `gonejob12345:${requestId}`, text: { type: 'plain_text', text: 'Cancel' } }] },
    ] };
    failReadOf(requestId);
    const click = await fake.clickButton(stale, 'pictor_cancel', 'U0ALICE');
    const note = await fake.waitFor(() => fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
    expect(note.body).toMatchObject({ response_type: 'ephemeral', text: `:warning: ${say('en', 'error.on_my_side')}` });
  });

  it('a Delete: the presser is told privately that something went wrong on our side; nothing is deleted', async () => {
    h = await startHarness();
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    const actions = await finishedActions(fake, 'C0KITES');
    failReadOf(buttonsOf(actions).find((b) => b.actionId === 'pictor_delete')!.value);
    const click = await fake.clickButton(actions, 'pictor_delete', 'U0ALICE');
    const note = await fake.waitFor(() => fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
    expect(note.body).toMatchObject({ response_type: 'ephemeral', text: `:warning: ${say('en', 'error.on_my_side')}` });
    expect(fake.callsOf('files.delete')).toEqual([]);
    expect(fake.callsOf('chat.delete')).toEqual([]);
  });

  it('an Edit: the presser is told privately that something went wrong on our side; no form opens', async () => {
    h = await startHarness();
    const { fake } = h;
    await fake.command({ command: '/imagine', text: 'a kite --quality low', channel: 'C0KITES', user: 'U0ALICE' });
    const actions = await finishedActions(fake, 'C0KITES');
    failReadOf(buttonsOf(actions).find((b) => b.actionId === 'pictor_edit')!.value);
    const click = await fake.clickButton(actions, 'pictor_edit', 'U0ALICE');
    const note = await fake.waitFor(() => fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
    expect(note.body).toMatchObject({ response_type: 'ephemeral', text: `:warning: ${say('en', 'error.on_my_side')}` });
    expect(fake.callsOf('views.open')).toEqual([]);
  });
});
