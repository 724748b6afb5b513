import { afterEach, describe, expect, it, vi } from 'vitest';
import { describeFailure, say, type Requester } from '../../../bots/runner/index.js';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { SHORTCUT_EDIT_IMAGE } from '../../../bots/slack/bot-context.js';
import { BLOCKED_WORD, intakeCases } from '../../helpers/intake-cases.js';
import type { FakeFunctionRun, FakeSlack } from '../../fakes/slack/FakeSlack.js';
import { WORKFLOW_STEP_ID } from '../../../bots/slack/listeners/workflow-step.js';
import { RecordingLogger } from '../discord/harness.js';
import { finishedActions, png, startHarness, settledOnHeldClock, type Harness, userContext, waitOnHeldClock } from './harness.js';
import { requestStoreOf, spyOnInstance } from '../../helpers/instance-spy.js';

/**
 * Every entry point of the Slack bot goes through the runner's one intake:
 * whatever refuses a job — the member's budget, a rule of the workspace — is
 * told privately (the response URL, or an ephemeral message), no job message is
 * posted, no form opens, no file is downloaded and nothing reaches the image
 * service. On main's code the "Edit image" shortcut, `/imagine-edit` and the
 * Edit button checked neither the rules nor the budget before their form.
 */

const CHANNEL = 'C0TEAM';
const MEMBER = 'U0ALICE';
const WORD = BLOCKED_WORD;

interface EntryPoint {
  name: string;
  /** Does it carry a prompt (a blocked word can refuse it)? A form gets its prompt when it is sent. */
  prompted: boolean;
  /** What it needs, made while nothing refuses (a job's message, a message with an image, an open form); answers how to use it. */
  prepare(h: Harness): Promise<() => Promise<unknown>>;
  /** How the refusal is told: privately (the response URL or an ephemeral message), or as the workflow step's failure. */
  toldAs?: 'private' | 'step failure';
  /** false: it takes none of the member's own defaults (the workflow step takes the workspace's). */
  memberDefaults?: false;
  /** It opens a form (`openForm`): no job yet, so its refusal's line names none. */
  opensForm?: true;
}

/** A finished job's buttons (Reroll, Edit, Delete) in the channel. */
async function jobMessage(fake: FakeSlack) {
  await fake.command({ command: '/imagine', text: `a ${WORD} at sea --quality low`, channel: CHANNEL, user: MEMBER });
  return finishedActions(fake, CHANNEL);
}

const ENTRY_POINTS: EntryPoint[] = [
  { name: '/imagine', prompted: true, prepare: async ({ fake }) => () => fake.command({ command: '/imagine', text: `a ${WORD} --quality high`, channel: CHANNEL, user: MEMBER }) },
  { name: 'a mention', prompted: true, prepare: async ({ fake }) => () => fake.userMessage({ channel: CHANNEL, user: MEMBER, text: `<@${fake.botUserId}> a ${WORD}` }) },
  {
    name: 'a mention with an image',
    prompted: true,
    prepare: async ({ fake }) => {
      const photo = fake.addFile({ name: 'sea.png', bytes: await png() });
      return () => fake.userMessage({ channel: CHANNEL, user: MEMBER, text: `<@${fake.botUserId}> add a ${WORD}`, files: [photo] });
    },
  },
  {
    name: 'the Reroll button',
    prompted: true,
    prepare: async ({ fake }) => {
      const job = await jobMessage(fake);
      return () => fake.clickButton(job, 'pictor_reroll', MEMBER);
    },
  },
  {
    name: 'the “Edit image” shortcut',
    prompted: false,
    opensForm: true,
    prepare: async ({ fake }) => {
      const post = await fake.userMessage({ channel: CHANNEL, user: 'U0BOB', text: 'look', files: [fake.addFile({ name: 'sea.png', bytes: await png() })] });
      return () => fake.messageShortcut(post, 'pictor_edit_image', MEMBER);
    },
  },
  { name: '/imagine-edit', prompted: false, opensForm: true, prepare: async ({ fake }) => () => fake.command({ command: '/imagine-edit', text: '', channel: CHANNEL, user: MEMBER }) },
  {
    name: 'the Edit button',
    prompted: false,
    opensForm: true,
    prepare: async ({ fake }) => {
      const job = await jobMessage(fake);
      return () => fake.clickButton(job, 'pictor_edit', MEMBER);
    },
  },
  { name: 'a direct message', prompted: true, prepare: async ({ fake }) => () => fake.userMessage({ channel: 'D0ALICE', channelType: 'im', user: MEMBER, text: `a ${WORD}` }) },
  {
    name: 'the workflow step',
    prompted: true,
    toldAs: 'step failure',
    memberDefaults: false,
    prepare: async ({ fake }) => () => fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { prompt: `a ${WORD}`, channel: CHANNEL, user: userContext(MEMBER), quality: 'low' } }),
  },
  {
    name: 'the edit form',
    prompted: true,
    prepare: async ({ fake }) => {
      await fake.command({ command: '/imagine-edit', text: '', channel: CHANNEL, user: MEMBER });
      const view = await fake.waitFor(() => fake.views[0], 'the edit modal');
      const photo = fake.addFile({ name: 'sea.png', bytes: await png() });
      return () => fake.submitView(view, { files: [photo], prompt: `add a ${WORD}`, quality: 'low' }, MEMBER);
    },
  },
];

// Fake timers a test left on (it timed out before putting them back) go before anything else of this worker runs.
afterEach(() => vi.useRealTimers());

describe('every entry point of the Slack bot refuses privately, before anything is sent', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it.each(intakeCases(ENTRY_POINTS))('%s, refused with %s', async (_name, code, { entry, refusal }) => {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 5, defaultPartialImages: 0 }, logger });
    const { fake } = h;
    const use = await entry.prepare(h);
    const admin: Requester = { platform: 'slack', userId: 'U0ADMIN', channelId: CHANNEL, scopeId: fake.teamId, isAdmin: true };
    await refusal.apply(h.runner, admin, 'C0ART', h.state, { platform: 'slack', userId: MEMBER });
    const [sent, downloads, views, posted] = [h.emulator.requests.length, fake.downloads.length, fake.views.length, fake.botMessages(CHANNEL).length];
    const [responses, ephemerals] = [fake.responses.length, fake.ephemerals.length];

    const used = await use();
    if (entry.toldAs === 'step failure') {
      // A workflow has no one to tell privately: the step fails with the refusal's words, and its run goes no further.
      const run = used as FakeFunctionRun;
      const outcome = await fake.waitFor(() => run.outcome, 'the step’s failure');
      expect(outcome).toMatchObject({ ok: false, error: expect.stringMatching(/\S/) as unknown });
    } else {
      const note = await fake.waitFor(
        () => fake.responses.slice(responses).find((r) => r.body.response_type === 'ephemeral') ?? fake.ephemerals.slice(ephemerals).find((e) => e.user === MEMBER),
        'the private refusal',
      );
      expect('text' in note ? note.text : note.body.text).not.toBe('');
    }
    // One line in the operator's log, the runner's: a job's with the id the intake gave it.
    expect(logger.entries.filter((e) => (e.obj as { code?: string }).code === code)).toEqual([
      expect.objectContaining({ obj: entry.opensForm ? expect.not.objectContaining({ jobId: expect.anything() }) : expect.objectContaining({ jobId: expect.any(String) }) }),
    ]);
    // Nothing public, no form, no download, nothing sent to the image service.
    expect(fake.botMessages(CHANNEL)).toHaveLength(posted);
    expect(fake.views).toHaveLength(views);
    expect(fake.downloads).toHaveLength(downloads);
    expect(h.emulator.requests).toHaveLength(sent);
  });
});

describe('a form’s intake while the bots’ state is slow', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    vi.restoreAllMocks();
    await h?.close();
    h = undefined;
  });

  /** Its rules' read held until the test lets it through (a stalled state); the clock the test's to move. */
  async function stalledRules(harness: Harness) {
    let release: () => void = () => {};
    const asked = vi.spyOn(harness.runner.policy, 'whoWhereRefusal').mockImplementation(() => new Promise((resolve) => (release = () => resolve(undefined))));
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    return { asked, release: () => release() };
  }

  it.each([
    ['/imagine-edit', (harness: Harness) => harness.fake.command({ command: '/imagine-edit', text: '', channel: CHANNEL, user: MEMBER })],
    ['the Edit image shortcut', async (harness: Harness) => {
      const photo = harness.fake.addFile({ name: 'sea.png', bytes: await png() });
      const message = await harness.fake.userMessage({ channel: CHANNEL, user: MEMBER, text: 'a photo', files: [photo] });
      return harness.fake.messageShortcut(message, SHORTCUT_EDIT_IMAGE, MEMBER);
    }],
  ] as const)('%s is refused privately once the trigger’s 3 s (less the form’s trip) are over, and no form opens however late the state answers', async (_name, enter) => {
    h = await startHarness();
    const { asked, release } = await stalledRules(h);
    // Its acknowledgement waits for the intake, which the 3 s end: delivered while the clock is moved on.
    const entered = enter(h);
    await waitOnHeldClock(h.fake, () => asked.mock.calls.length > 0, 'the intake to read the rules');
    vi.advanceTimersByTime(3_000);
    const answer = await waitOnHeldClock(h.fake, () => h!.fake.responses.find((r) => r.body.response_type === 'ephemeral'), 'the private refusal');
    await settledOnHeldClock(h.fake, entered, 'its acknowledgement');
    // Told as the bot's own trouble (`internal_error`), privately, in time: the form's trigger would have expired.
    expect(answer.body.text).toBe(describeFailure(new Error('too late'), 'en', '/imagine').message);
    release();
    await vi.advanceTimersByTimeAsync(100);
    expect(h.fake.views).toHaveLength(0);
  });

  it('over Socket Mode too, counts the 3 s from when the request arrived, not from when the member’s language was looked up', async () => {
    h = await startHarness({ mode: 'socket' });
    // The clock is the test's from before the command: the bot's every reading of it is the test's to move.
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    // Slack does not answer the look-up of the member's language (a middleware, which gives up after 1.5 s).
    const lookup = h.fake.holdOpen('users.info');
    try {
      const delivered = h.fake.command({ command: '/imagine-edit', text: '', channel: CHANNEL, user: MEMBER });
      await waitOnHeldClock(h.fake, () => lookup.arrived() > 0 || undefined, 'the look-up of the member’s language');
      vi.advanceTimersByTime(2_700);
      await settledOnHeldClock(h.fake, delivered, 'the command’s acknowledgement');
      // The private refusal, or the form opened (with a trigger Slack would no longer take).
      const answer = await waitOnHeldClock(
        h.fake,
        () => h!.fake.responses.find((r) => r.body.response_type === 'ephemeral')?.body.text ?? (h!.fake.callsOf('views.open').length > 0 ? 'a form opened' : undefined),
        'the private refusal',
      );

      expect(answer).toBe(describeFailure(new Error('too late'), 'en', '/imagine').message);
      expect(h.fake.callsOf('views.open')).toHaveLength(0);
    } finally {
      lookup.release();
    }
  });

  it('the Edit button is answered privately, as trouble on our side, once the trigger’s 3 s (less the form’s trip) are over while its saved request is still being read, and no form opens nor intake runs however late the state answers', async () => {
    h = await startHarness();
    const job = await jobMessage(h.fake);
    const intake = vi.spyOn(h.runner, 'requestForm');
    // The saved request's read held until the test lets it through (a stalled state); the clock the test's to move.
    let release: () => void = () => {};
    const read = RequestStore.prototype.get;
    const asked = spyOnInstance(RequestStore.prototype, 'get', requestStoreOf(h)).mockImplementation(function (this: RequestStore, id: string) {
      return new Promise((resolve) => (release = () => resolve(read.call(this, id))));
    });
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const click = await h.fake.clickButton(job, 'pictor_edit', MEMBER);
    await waitOnHeldClock(h.fake, () => asked.mock.calls.length > 0, 'the saved request to be read');
    vi.advanceTimersByTime(3_000);
    const answer = await waitOnHeldClock(h.fake, () => h!.fake.responses.find((r) => click.responseUrl.endsWith(r.id)), 'the private answer');
    expect(answer.body).toMatchObject({ response_type: 'ephemeral', text: `:warning: ${say('en', 'error.on_my_side')}` });
    release();
    await vi.advanceTimersByTimeAsync(100);
    expect(h.fake.views).toHaveLength(0);
    expect(intake).not.toHaveBeenCalled();
  });
});
