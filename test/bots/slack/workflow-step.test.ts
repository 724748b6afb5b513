import { readFileSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { say, usd } from '../../../bots/runner/index.js';
import { STEP_RETAKE_MS, stepStoppedWords, WORKFLOW_STEP_ID } from '../../../bots/slack/listeners/workflow-step.js';
import { RequestStore } from '../../../bots/slack/RequestStore.js';
import { SlackJobs } from '../../../bots/slack/SlackJobs.js';
import { digestKeyOf, openBotState } from '../../../bots/state/index.js';
import type { Space } from '../../../bots/state/StateStore.js';
import { CLAIM_WAIT_MS, silentLogger } from '../../../src/internal.js';
import type { FakeFunctionRun, FakeSlack } from '../../fakes/slack/FakeSlack.js';
import { signedHeaders } from '../../fakes/slack/sign-request.js';
import { withSpace } from '../../helpers/runner-harness.js';
import { testTempDir } from '../../helpers/temp-dir.js';
import { RecordingLogger } from '../discord/harness.js';
import { ADMIN, imageShares, jobMessages, privately, settledCosts, settledOnHeldClock, startHarness, startWithAdmin, statusOf, type Harness, userContext, waitOnHeldClock } from './harness.js';
import { spyOnInstance } from '../../helpers/instance-spy.js';
import { slackKeyOf } from '../../helpers/message-keys.js';

let h: Harness | undefined;
afterEach(async () => {
  // Fake timers a test left on (it timed out before putting them back) go before anything else of this worker runs.
  vi.useRealTimers();
  vi.restoreAllMocks();
  await h?.close();
  h = undefined;
});

function outcomeOf(harness: Harness, run: FakeFunctionRun): Promise<NonNullable<FakeFunctionRun['outcome']>> {
  return harness.fake.waitFor(() => run.outcome, `the step ${run.executionId} to complete`);
}

const generationRequests = (harness: Harness) => harness.emulator.requests.filter((r) => r.path === '/v1/images/generations').length;

describe('the Workflow Builder step “Generate image” (a Bolt custom function)', () => {
  it('posts the images in the step’s channel and completes with their file ids, permalinks, the message’s link and the cost the ledger charged', async () => {
    h = await startHarness({ bot: { adminUserIds: ['U0ADMIN'] } });
    // The style is saved once its private answer is there (the command is acknowledged before).
    await privately(h.fake, 'admin style watercolor {prompt}, watercolor', 'U0ADMIN');
    const run = await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { prompt: 'a lighthouse at dusk', channel: 'C0FLOW', user: userContext('U0ALICE'), quality: 'low', size: '1536x1024', count: 2, style: 'watercolor' } });
    const outcome = await outcomeOf(h, run);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const shares = imageShares(h.fake, 'C0FLOW');
    expect(shares).toHaveLength(1);
    const posted = shares[0]!.files!.map((f) => f.id);
    expect(outcome.outputs.file_ids).toEqual(posted);
    expect(outcome.outputs.permalinks).toEqual(posted.map((id) => h!.fake.files.get(id)!.url_private + '?permalink=1'));
    expect(outcome.outputs.message_link).toMatch(/^https:\/\/.+\/archives\/C0FLOW\/p\d+$/);
    const charged = (await h.store.usage({})).filter((r) => r.userKey === 'slack:U0ALICE');
    expect(charged).toHaveLength(1);
    expect(outcome.outputs.cost_usd).toBeCloseTo(charged[0]!.costUsd, 9);
    // The same job as /imagine: its message names who it is for, the house style's text is around the prompt, the options are the step's.
    expect((jobMessages(h.fake, 'C0FLOW')[0]!.blocks![0] as { text: { text: string } }).text.text).toBe('<@U0ALICE> asked for: “a lighthouse at dusk, watercolor”  `--size 1536x1024` `--quality low` `--n 2`');
    // Kept in the history once the job has ended (a write of its own, which may still be under way when the step completes).
    await h.runner.history!.settled();
    expect(await h.runner.history!.mine({ platform: 'slack', userId: 'U0ALICE', channelId: 'C0FLOW', scopeId: h.fake.teamId })).toHaveLength(1);
  });

  it('sends and charges the workspace’s defaults where its inputs are empty, never the member’s own (images, size, quality, format, previews)', async () => {
    h = await startHarness({ bot: { adminUserIds: ['U0ADMIN'] } });
    await privately(h.fake, 'admin set default-quality low', 'U0ADMIN');
    await privately(h.fake, 'settings --n 4 --quality high --size 1536x1024 --format webp --previews off --private on', 'U0BOB', 'C0ART');
    // The same step for a member with no defaults of their own: what the workspace's defaults send.
    const plain = await outcomeOf(h, await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { prompt: 'the weekly team banner', channel: 'C0FLOW', user: userContext('U0ALICE') } }));
    const withDefaults = await outcomeOf(h, await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { prompt: 'the weekly team banner', channel: 'C0FLOW', user: userContext('U0BOB') } }));
    expect(plain.ok && withDefaults.ok).toBe(true);
    const [forAlice, forBob] = h.emulator.requests.filter((r) => r.path === '/v1/images/generations').map((r) => r.parsed!);
    expect(forBob).toMatchObject({ n: 1, quality: 'low', size: forAlice!.size, output_format: 'png', partial_images: forAlice!.partial_images });
    expect(forAlice!.partial_images).toBeGreaterThan(0);
    // Posted in the step's channel, not in the member's direct messages.
    expect(imageShares(h.fake, 'C0FLOW')).toHaveLength(2);
    const costs = await settledCosts(h);
    expect(costs.get('slack:U0BOB')).toBeCloseTo(costs.get('slack:U0ALICE')!, 9);
    if (withDefaults.ok) expect(withDefaults.outputs.cost_usd).toBeCloseTo(costs.get('slack:U0BOB')!, 9);
  });

  it('fails over budget with the refusal’s words, in the member’s language, and sends nothing', async () => {
    h = await startHarness({ limits: { userDailyUsd: 0.001 } });
    h.fake.setLocale('U0HANS', 'de-DE');
    const english = await outcomeOf(h, await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { prompt: 'a fox', channel: 'C0FLOW', user: userContext('U0ALICE'), quality: 'low' } }));
    expect(english).toMatchObject({ ok: false, error: expect.stringContaining('$0.0010') as unknown });
    expect(slackKeyOf((english as { error: string }).error)).toBe('refusal.budget_would_pass');
    const german = await outcomeOf(h, await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { prompt: 'ein Fuchs', channel: 'C0FLOW', user: userContext('U0HANS'), quality: 'low' } }));
    expect(german).toMatchObject({ ok: false, error: expect.stringMatching(/^Dieser Auftrag könnte bis zu 0,\d+\s\$ kosten/) as unknown });
    expect(h.fake.messagesIn('C0FLOW')).toHaveLength(0);
    expect(generationRequests(h)).toBe(0);
    expect(await h.store.usage({})).toHaveLength(0);
  });

  it('holds a step to the workspace’s rules and blocked words as /imagine is held, and names what a bad input lacks', async () => {
    h = await startHarness({ controls: { blockedWords: ['kraken'] } });
    const blocked = await outcomeOf(h, await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { prompt: 'a Kraken attacks', channel: 'C0FLOW', user: userContext('U0ALICE') } }));
    expect(blocked).toEqual({ ok: false, error: expect.stringContaining('“kraken”') as unknown, at: expect.any(Number) as unknown });
    expect(slackKeyOf((blocked as { error: string }).error)).toBe('refusal.blocked_word');
    const bad = await outcomeOf(h, await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { prompt: 'a fox', channel: 'C0FLOW', user: userContext('U0ALICE'), size: '999x999' } }));
    const unknownStyle = await outcomeOf(h, await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { prompt: 'a fox', channel: 'C0FLOW', user: userContext('U0ALICE'), style: 'watercolor' } }));
    expect(unknownStyle).toMatchObject({ ok: false, error: expect.stringContaining('“watercolor”') as unknown });
    expect(bad).toMatchObject({ ok: false, error: say('en', 'slack.step.bad_input', { input: 'size', given: '999x999', allowed: '1024x1024, 1024x1536, 1536x1024' }) });
    expect(h.fake.messagesIn('C0FLOW')).toHaveLength(0);
    expect(generationRequests(h)).toBe(0);
  });

  it('fails a step with a bad size, quality or image count (by the range and words of /imagine --n) naming that input and what it takes, in the member’s language, before anything is sent', async () => {
    h = await startHarness();
    h.fake.setLocale('U0HANS', 'de-DE');
    const run = async (inputs: Record<string, unknown>) =>
      outcomeOf(h!, await h!.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { prompt: 'ein Fuchs', channel: 'C0FLOW', user: userContext('U0HANS'), ...inputs } }));
    const images = say('de', 'slack.flag.integer_range', { min: 1, max: 10 });
    expect(await run({ size: '999x1' })).toMatchObject({ ok: false, error: say('de', 'slack.step.bad_input', { input: 'size', given: '999x1', allowed: '1024x1024, 1024x1536, 1536x1024' }) });
    expect(await run({ quality: 'ultra' })).toMatchObject({ ok: false, error: say('de', 'slack.step.bad_input', { input: 'quality', given: 'ultra', allowed: 'low, medium, high, auto' }) });
    expect(await run({ count: 11 })).toMatchObject({ ok: false, error: say('de', 'slack.step.bad_input', { input: 'count', given: '11', allowed: images }) });
    expect(await run({ count: 0 })).toMatchObject({ ok: false, error: say('de', 'slack.step.bad_input', { input: 'count', given: '0', allowed: images }) });
    // What `/imagine --n` refuses, a step refuses too: a count is a whole number, not another way to write one.
    for (const count of ['0x3', '3.0', '1e1', 2.5]) {
      expect(await run({ count })).toMatchObject({ ok: false, error: say('de', 'slack.step.bad_input', { input: 'count', given: String(count), allowed: images }) });
    }
    expect(h.fake.messagesIn('C0FLOW')).toHaveLength(0);
    expect(generationRequests(h)).toBe(0);
  });

  it('refuses a step whose For is a member’s id a builder picked, not the user context Slack sets: a named error, nothing sent or charged to anyone', async () => {
    h = await startHarness({ bot: { adminUserIds: ['U0ADMIN'] } });
    await privately(h.fake, 'admin set blocked <@U0MALLORY>', 'U0ADMIN');
    await privately(h.fake, 'admin set high-quality <@U0PATRON>', 'U0ADMIN');
    // A blocked member's workflow whose For names a patron allowed quality high, as a `user_id` input would carry it.
    const forged = { prompt: 'whatever Mallory wants', channel: 'C0FLOW', quality: 'high', count: 4 };
    for (const user of ['U0PATRON', { id: 'U0PATRON' }, { id: 'U0PATRON', secret: '' }, ['U0PATRON']]) {
      const outcome = await outcomeOf(h, await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { ...forged, user } }));
      expect(outcome).toMatchObject({ ok: false, error: say('en', 'slack.step.not_user_context').replace(/[*`]/g, '') });
    }
    expect(h.fake.messagesIn('C0FLOW')).toHaveLength(0);
    expect(generationRequests(h)).toBe(0);
    expect(await h.store.usage({})).toHaveLength(0);
    // The same step as Slack runs it for the blocked member who used it: refused as /imagine refuses them.
    const asMallory = await outcomeOf(h, await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { ...forged, user: userContext('U0MALLORY') } }));
    expect(asMallory).toMatchObject({ ok: false, error: expect.stringMatching(/blocked/i) as unknown });
    expect(generationRequests(h)).toBe(0);
  });
});

/** Runs a step, keeping the `function_executed` envelope Slack sent, to send it again as Slack would. */
async function runKeepingEnvelope(fake: FakeSlack, inputs: Record<string, unknown>): Promise<{ run: FakeFunctionRun; envelope: Record<string, unknown> }> {
  let envelope: Record<string, unknown> | undefined;
  const deliver = fake.deliver.bind(fake);
  fake.deliver = (kind, payload, sign) => {
    if ((payload as { event?: { type?: string } }).event?.type === 'function_executed') envelope = payload;
    return deliver(kind, payload, sign);
  };
  try {
    const run = await fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs });
    return { run, envelope: envelope! };
  } finally {
    fake.deliver = deliver;
  }
}

/** Slack's retry of an event whose 200 came late: the same body, signed again (a later timestamp), with `X-Slack-Retry-Num`. */
async function retryOverHttp(fake: FakeSlack, url: string, envelope: object): Promise<number> {
  const body = JSON.stringify(envelope);
  const headers = { ...signedHeaders(fake.signingSecret, body, Math.floor(Date.now() / 1000) + 3), 'content-type': 'application/json', 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' };
  const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  await response.arrayBuffer();
  return response.status;
}

const alreadyTaken = 'a workflow step already taken: not run again';
const takenUpHere = 'a workflow step this process took up already: not run again';
const inputs = { prompt: 'a lighthouse at dusk', channel: 'C0FLOW', user: userContext('U0ALICE'), quality: 'low' };

describe('a “Generate image” step delivered again', () => {
  it.each([
    ['http', 'Slack’s retry, signed again'],
    ['socket', 'Socket Mode’s redelivery'],
  ] as const)('runs once and completes once when its function_executed comes again (%s: %s)', async (mode, _how) => {
    const logger = new RecordingLogger();
    h = await startHarness({ mode, emulator: { latencyMs: 200 }, bot: { logger } });
    const { run, envelope } = await runKeepingEnvelope(h.fake, inputs);
    // Again while the first runs: a retry over HTTP (signed anew), or Socket Mode's redelivery of the same event.
    if (mode === 'http') expect(await retryOverHttp(h.fake, h.bot.url!, envelope)).toBe(200);
    else await h.fake.deliver('event', envelope);
    // Dropped as taken up here already, or (were it not) a second job's message posted.
    await vi.waitFor(() => expect(logger.entries.some((e) => e.msg === takenUpHere || e.msg === alreadyTaken) || jobMessages(h!.fake, 'C0FLOW').length > 1).toBe(true), { timeout: 15_000 });
    expect((await outcomeOf(h, run)).ok).toBe(true);
    await h.runner.shutdown({ graceMs: 2_000 });
    expect(generationRequests(h)).toBe(1);
    expect(jobMessages(h.fake, 'C0FLOW')).toHaveLength(1);
    expect(h.fake.callsOf('functions.completeSuccess')).toHaveLength(1);
    expect(h.fake.callsOf('functions.completeError')).toHaveLength(0);
  });

  it('fails on our side, runs nothing and logs it when the bots’ state cannot take the step', async () => {
    const state = await openBotState({ dataDir: await testTempDir('pictor-step-down-'), logger: silentLogger() });
    const logger = new RecordingLogger();
    h = await startHarness({ bot: { logger, state: withSpace(state, state.spaces.slackMessages, () => ({ claimOnce: () => Promise.reject(new Error('the state does not answer')) })) } });
    try {
      const outcome = await outcomeOf(h, await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs }));
      expect(outcome).toMatchObject({ ok: false, error: say(undefined, 'error.on_my_side') });
      expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.msg)).toEqual(['could not check a workflow step against the ones taken lately: not run, the step fails']);
      expect(generationRequests(h)).toBe(0);
      expect(h.fake.messagesIn('C0FLOW')).toHaveLength(0);
    } finally {
      await h.close();
      h = undefined;
      await state.close();
    }
  });

  it('asks Slack nothing of a step delivered again after a restart: it is dropped as taken before the member’s language is looked up', async () => {
    const before = await startHarness({ emulator: { latencyMs: 10 } });
    const { run, envelope } = await runKeepingEnvelope(before.fake, inputs);
    expect((await outcomeOf(before, run)).ok).toBe(true);
    await before.close({ fake: true, dataDir: true });

    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 10 }, fake: before.fake, dataDir: before.dataDir, bot: { logger } });
    const lookups = h.fake.callsOf('users.info').length;
    expect(await retryOverHttp(h.fake, h.bot.url!, envelope)).toBe(200);
    await vi.waitFor(() => expect(logger.entries.map((e) => e.msg)).toContain(alreadyTaken), { timeout: 15_000 });
    expect(h.fake.callsOf('users.info')).toHaveLength(lookups);
    expect(generationRequests(h)).toBe(0);
  });
});

const onMySide = say(undefined, 'error.on_my_side');
const listenerFailed = 'a Slack listener failed';

/** The step's outcome, or (when the app never completes it) the listener's failure that Bolt logged instead. */
async function outcomeOrListenerFailure(harness: Harness, run: FakeFunctionRun, logger: RecordingLogger): Promise<FakeFunctionRun['outcome'] | 'never completed'> {
  await vi.waitFor(() => expect(run.outcome !== undefined || logger.entries.some((e) => e.msg === listenerFailed)).toBe(true), { timeout: 15_000 });
  return run.outcome ?? 'never completed';
}

describe('a “Generate image” step that fails on our side', () => {
  it('fails with “failed on my side”, logged, when its job cannot be started (the request cannot be saved): the workflow does not hang', async () => {
    const state = await openBotState({ dataDir: await testTempDir('pictor-step-nosave-'), logger: silentLogger() });
    const logger = new RecordingLogger();
    h = await startHarness({ bot: { logger, state: withSpace(state, state.spaces.slackRequests, () => ({ put: () => Promise.reject(new Error('the disk is full')) })) } });
    try {
      const run = await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs });
      expect(await outcomeOrListenerFailure(h, run, logger)).toMatchObject({ ok: false, error: onMySide });
      expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.msg)).toEqual(['a Slack job failed before the runner had it: its member is told']);
      await h.runner.shutdown({ graceMs: 500 });
      expect(generationRequests(h)).toBe(0);
      expect(h.fake.messagesIn('C0FLOW')).toHaveLength(0);
    } finally {
      await h.close();
      h = undefined;
      await state.close();
    }
  });

  it('fails with “failed on my side”, logged, when Slack refuses its outputs after the job ran: the images stay posted', async () => {
    const logger = new RecordingLogger();
    h = await startHarness({ emulator: { latencyMs: 10 }, bot: { logger } });
    h.fake.failNext('functions.completeSuccess', { status: 200, error: 'invalid_arguments' });
    const run = await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs });
    expect(await outcomeOrListenerFailure(h, run, logger)).toMatchObject({ ok: false, error: onMySide });
    expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.msg)).toEqual(['a workflow step failed on our side: it fails, the member told it failed on my side']);
    expect(imageShares(h.fake, 'C0FLOW')).toHaveLength(1);
    expect(generationRequests(h)).toBe(1);
  });
});

/** A bot whose `slack-messages` space is the data folder's own, seen through `wrap` (a Redis slow, gone); its log kept. */
async function withMessages(name: string, wrap: (space: Space<unknown>) => Partial<Space<unknown>>, emulator = { latencyMs: 10 }) {
  const state = await openBotState({ dataDir: await testTempDir(`pictor-step-${name}-`), logger: silentLogger() });
  const logger = new RecordingLogger();
  const harness = await startHarness({ emulator, bot: { logger, state: withSpace(state, state.spaces.slackMessages, wrap) } });
  return { harness, logger, state };
}

const lateClaim = 'a workflow step whose claim is late: not run, its claim decides whether it fails';
const droppedHere = (logger: RecordingLogger) => logger.entries.some((e) => e.msg === takenUpHere || e.msg === alreadyTaken);

describe('a “Generate image” step whose claim the state answers late', () => {
  it.each([
    ['after the late claim lands', 'after'],
    ['while the claim is still late', 'during'],
  ] as const)('runs no job when Slack sends it again %s: the step fails once, on our side, and its key is never given back', async (_when, when) => {
    let answer: () => void = () => {};
    let claims = 0;
    let released = 0;
    const { harness, logger, state } = await withMessages('late', (space) => ({
      claimOnce: (key, token) => (++claims === 1 ? new Promise<void>((resolve) => (answer = resolve)).then(() => space.claimOnce(key, token)) : space.claimOnce(key, token)),
      releaseClaim: (key, token) => space.releaseClaim(key, token).then(() => void released++),
    }));
    h = harness;
    try {
      const { run, envelope } = await runKeepingEnvelope(h.fake, inputs);
      // The claim's wait runs out.
      await vi.waitFor(() => expect(run.outcome !== undefined || logger.entries.some((e) => e.msg === lateClaim)).toBe(true), { timeout: 15_000 });
      if (when === 'during') expect(await retryOverHttp(h.fake, h.bot.url!, envelope)).toBe(200);
      // The state answers at last: the claim took the step.
      answer();
      expect(await outcomeOf(h, run)).toMatchObject({ ok: false, error: onMySide });
      if (when === 'after') expect(await retryOverHttp(h.fake, h.bot.url!, envelope)).toBe(200);
      await vi.waitFor(() => expect(droppedHere(logger) || generationRequests(h!) > 0).toBe(true), { timeout: 15_000 });
      await h.runner.shutdown({ graceMs: 500 });
      expect(generationRequests(h)).toBe(0);
      expect(h.fake.messagesIn('C0FLOW')).toHaveLength(0);
      expect(h.fake.callsOf('functions.completeSuccess')).toHaveLength(0);
      expect(h.fake.callsOf('functions.completeError')).toHaveLength(1);
      expect(released).toBe(0);
    } finally {
      answer();
      await h.close();
      h = undefined;
      await state.close();
    }
  });

  it('does not fail a step another replica took while its own claim was late: the late answer says taken, and the step is left to that replica', async () => {
    let answer: () => void = () => {};
    let claims = 0;
    let messages: Space<unknown> | undefined;
    const { harness, logger, state } = await withMessages('elsewhere', (space) => {
      messages = space;
      return { claimOnce: (key, token) => (++claims === 1 ? new Promise<void>((resolve) => (answer = resolve)).then(() => space.claimOnce(key, token)) : space.claimOnce(key, token)) };
    });
    h = harness;
    try {
      const run = await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs });
      await vi.waitFor(() => expect(run.outcome !== undefined || logger.entries.some((e) => e.msg === lateClaim)).toBe(true), { timeout: 15_000 });
      // Another replica takes the step meanwhile (its claim answered in time), and runs it.
      expect(await messages!.claimOnce(digestKeyOf(`step:${run.team}:${run.executionId}`))).toBe(true);
      answer();
      await vi.waitFor(() => expect(run.outcome !== undefined || logger.entries.some((e) => e.msg === 'a workflow step whose claim came late was taken elsewhere: not run here')).toBe(true), { timeout: 15_000 });
      await h.runner.shutdown({ graceMs: 500 });
      expect(run.outcome).toBeUndefined();
      expect(h.fake.callsOf('functions.completeError')).toHaveLength(0);
      expect(generationRequests(h)).toBe(0);
    } finally {
      answer();
      await h.close();
      h = undefined;
      await state.close();
    }
  });

  it('does not fail a step this process runs when Slack sends it again during a slow spell: the delivery is dropped before any claim', async () => {
    let claims = 0;
    const { harness, logger, state } = await withMessages(
      'running',
      (space) => ({ claimOnce: (key, token) => (++claims === 1 ? space.claimOnce(key, token) : new Promise<boolean>(() => {})) }),
      { latencyMs: 2_500 },
    );
    h = harness;
    try {
      const { run, envelope } = await runKeepingEnvelope(h.fake, inputs);
      // The job runs (its request is at the image service); the state turns slow; Slack sends the step again.
      await vi.waitFor(() => expect(generationRequests(h!)).toBe(1), { timeout: 15_000 });
      expect(await retryOverHttp(h.fake, h.bot.url!, envelope)).toBe(200);
      expect(await outcomeOf(h, run)).toMatchObject({ ok: true });
      expect(logger.entries.map((e) => e.msg)).toContain(takenUpHere);
      expect(h.fake.callsOf('functions.completeError')).toHaveLength(0);
      expect(claims).toBe(1);
    } finally {
      await h.close();
      h = undefined;
      await state.close();
    }
  });
});

const retaken = 'a workflow step failed on our side is taken now: no later delivery runs it';
const mayRunAgain = 'could not take a workflow step failed on our side: this step may run again on another process';

describe('a “Generate image” step failed because the bots’ state could not answer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is taken as soon as the state answers again: Slack’s retry after a restart (or on another replica) runs no job', async () => {
    const state = await openBotState({ dataDir: await testTempDir('pictor-step-retake-'), logger: silentLogger() });
    let claims = 0;
    const firstLogger = new RecordingLogger();
    // The state fails the step's claim, and once more the first time it is asked again; then it answers.
    const before = await startHarness({
      emulator: { latencyMs: 10 },
      bot: { logger: firstLogger, state: withSpace(state, state.spaces.slackMessages, (space) => ({ claimOnce: (key, token) => (++claims <= 2 ? Promise.reject(new Error('ECONNRESET')) : space.claimOnce(key, token)) })) },
    });
    try {
      // The clock is the test's from the step on: it stands still but where the test moves it (two retakes).
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const { run, envelope } = await settledOnHeldClock(before.fake, runKeepingEnvelope(before.fake, inputs), 'the step’s delivery');
      expect(await waitOnHeldClock(before.fake, () => run.outcome, 'the step to fail')).toMatchObject({ ok: false, error: onMySide });
      await vi.advanceTimersByTimeAsync(STEP_RETAKE_MS);
      await vi.advanceTimersByTimeAsync(STEP_RETAKE_MS);
      await waitOnHeldClock(before.fake, () => firstLogger.entries.some((e) => e.msg === retaken), 'the step to be taken');
      vi.useRealTimers();
      await before.close({ fake: true, dataDir: true });

      const logger = new RecordingLogger();
      h = await startHarness({ emulator: { latencyMs: 10 }, fake: before.fake, dataDir: before.dataDir, bot: { logger, state } });
      expect(await retryOverHttp(h.fake, h.bot.url!, envelope)).toBe(200);
      await vi.waitFor(() => expect(logger.entries.some((e) => e.msg === alreadyTaken) || generationRequests(h!) > 0).toBe(true), { timeout: 15_000 });
      await h.runner.shutdown({ graceMs: 500 });
      expect(generationRequests(h)).toBe(0);
      expect(jobMessages(h.fake, 'C0FLOW')).toHaveLength(0);
      expect(h.fake.callsOf('functions.completeSuccess')).toHaveLength(0);
      expect(h.fake.callsOf('functions.completeError')).toHaveLength(1);
      expect(firstLogger.entries.map((e) => e.msg)).not.toContain(mayRunAgain);
    } finally {
      await h?.close();
      h = undefined;
      await state.close();
    }
  });

  it('is taken once the late claim’s error is past, when that late answer was an error', async () => {
    let answer: (error: Error) => void = () => {};
    let claims = 0;
    const { harness, logger, state } = await withMessages('late-error', (space) => ({
      claimOnce: (key, token) => (++claims === 1 ? new Promise<boolean>((_resolve, reject) => (answer = reject)) : space.claimOnce(key, token)),
    }));
    h = harness;
    try {
      // The clock is the test's from the step on: it stands still but where the test moves it (the claim's wait, a
      // retake).
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const fake = h.fake;
      const run = await settledOnHeldClock(fake, fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs }), 'the step’s delivery');
      await waitOnHeldClock(fake, () => claims > 0, 'the step’s claim');
      // The claim's wait is over: the claim is late.
      await vi.advanceTimersByTimeAsync(CLAIM_WAIT_MS);
      await waitOnHeldClock(fake, () => logger.entries.some((e) => e.msg === lateClaim), 'the claim to be late');
      answer(new Error('ECONNRESET'));
      expect(await waitOnHeldClock(fake, () => run.outcome, 'the step to fail')).toMatchObject({ ok: false, error: onMySide });
      await vi.advanceTimersByTimeAsync(STEP_RETAKE_MS);
      await waitOnHeldClock(fake, () => logger.entries.some((e) => e.msg === retaken), 'the step to be taken');
      expect(await state.store.space(state.spaces.slackMessages).claimOnce(digestKeyOf(`step:${run.team}:${run.executionId}`))).toBe(false);
    } finally {
      vi.useRealTimers();
      answer(new Error('ECONNRESET'));
      await h.close();
      h = undefined;
      await state.close();
    }
  });

  // How often, and until when, a step's key is asked for again: workflow-step-retakes.test.ts, by the clock.
  it('stops asking when the bot stops, saying once that the step may run again elsewhere', async () => {
    const { harness, logger, state } = await withMessages('stop', () => ({ claimOnce: () => Promise.reject(new Error('ECONNRESET')) }));
    h = harness;
    try {
      const run = await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs });
      expect(await outcomeOf(h, run)).toMatchObject({ ok: false, error: onMySide });
      expect(logger.entries.filter((e) => e.msg === mayRunAgain)).toHaveLength(0);
      await h.close();
      h = undefined;
      expect(logger.entries.filter((e) => e.msg === mayRunAgain)).toHaveLength(1);
    } finally {
      await h?.close();
      h = undefined;
      await state.close();
    }
  });
});

describe('a “Generate image” step a graceful stop cut off', () => {
  it('fails a step whose paid job a graceful stop cut off with the stop’s words and what the ledger charged it, as the crash’s sweep says them, in the member’s language', async () => {
    h = await startHarness({ emulator: { latencyMs: 20_000 } });
    h.fake.setLocale('U0HANS', 'de-DE');
    const run = await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { ...inputs, user: userContext('U0HANS') } });
    await h.fake.waitFor(() => generationRequests(h!) > 0 || undefined, 'its request to reach the service');
    await h.runner.shutdown({ graceMs: 0 });
    const [charged] = (await h.store.usage({})).filter((r) => r.userKey === 'slack:U0HANS');
    expect(charged!.costUsd).toBeGreaterThan(0);
    expect(await outcomeOf(h, run)).toStrictEqual({ ok: false, error: stepStoppedWords('de-DE', { type: 'charged', cost: { totalUsd: charged!.costUsd } }), at: expect.any(Number) as unknown });
  });
});

describe('a “Generate image” step whose paid job failed', () => {
  it('fails with the failure’s words and what the ledger charged the job, as its message says them under its failure, in the member’s language', async () => {
    h = await startHarness();
    h.fake.setLocale('U0HANS', 'de-DE');
    h.emulator.injectFault('reset_mid_stream');
    const run = await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { ...inputs, user: userContext('U0HANS') } });
    const outcome = await outcomeOf(h, run);
    const [charged] = (await h.store.usage({})).filter((r) => r.userKey === 'slack:U0HANS');
    expect(charged!.costUsd).toBeGreaterThan(0);
    const chargedWords = say('de-DE', 'slack.job.charged', { usd: usd(charged!.costUsd) }).replace(/^:dollar: /, '');
    expect(outcome.ok).toBe(false);
    const lines = !outcome.ok ? outcome.error.split('\n') : [];
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe(chargedWords);
    // The message's status says the same two things.
    const status = statusOf(jobMessages(h.fake, 'C0FLOW')[0]!);
    expect(status).toContain(chargedWords);
    expect(status).toContain(lines[0]!);
  });
});

describe('a “Generate image” step whose job failed after some of its images were made', () => {
  it('fails with the failure’s words and the charge, and its job shows its failure and posts the images made before it (charged), not among the step’s outputs', async () => {
    h = await startWithAdmin({ emulator: { defaultPartialImages: 0 } });
    // No previews (the step takes the workspace's): image 1 of 2 arrives first, then the service's error event.
    await privately(h.fake, 'admin set default-previews 0', ADMIN);
    h.emulator.injectFault('stream_error_event');
    const run = await h.fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { ...inputs, count: 2 } });
    const outcome = await outcomeOf(h, run);
    expect(outcome.ok).toBe(false);
    const [charged] = (await h.store.usage({})).filter((r) => r.userKey === 'slack:U0ALICE');
    expect(charged!.costUsd).toBeGreaterThan(0);
    const lines = !outcome.ok ? outcome.error.split('\n') : [];
    expect(lines[1]).toBe(say('en', 'slack.job.charged', { usd: usd(charged!.costUsd) }).replace(/^:dollar: /, ''));
    // Its message stays in the channel, showing the failure; the image made before it is posted in its thread.
    const [message] = jobMessages(h.fake, 'C0FLOW');
    expect(statusOf(message!)).toContain(lines[0]!);
    const kept = await h.fake.waitFor(() => h!.fake.replies('C0FLOW', message!.ts).find((m) => (m.files ?? []).length > 0), 'the image made before the failure, in its thread');
    expect(kept.files).toHaveLength(1);
  });
});

describe('a “Generate image” step a crash cut off', () => {
  /** The saved request of the only job run in a data folder: read, and rewritten as a process that crashed would leave it. */
  /**
   * The process of `harness` dies with the step's job: its end never comes, so the step is never ended there (restored
   * by `mockRestore`). Its jobs alone: those whose writes go to its fake Slack.
   */
  function stepNeverEnded(harness: Harness) {
    const start = SlackJobs.prototype.start;
    spyOnInstance(SlackJobs.prototype, 'start', (_jobs, input) => input.client.slackApiUrl.startsWith(harness.fake.url)).mockImplementation(async function (this: SlackJobs, input) {
      const started = await start.call(this, input);
      return started && { ...started, done: new Promise<never>(() => {}) };
    });
  }

  async function savedRequest(dataDir: string) {
    const dir = join(dataDir, 'slack', 'requests');
    const [file] = (await readdir(dir)).filter((name) => name.endsWith('.json'));
    const path = join(dir, file!);
    const read = () => JSON.parse(readFileSync(path, 'utf8')) as { holder?: string; value: Record<string, unknown> };
    return { read, crashed: () => writeFile(path, JSON.stringify({ ...read(), holder: 'a-crashed-process', value: { ...read().value, status: 'active' } })) };
  }

  /** A step whose job was drawing when its process died: the step never ended, its request left active. */
  async function stepCutOffByACrash() {
    const before = await startHarness({ emulator: { latencyMs: 20_000 } });
    const { fake, dataDir } = before;
    fake.setLocale('U0HANS', 'de-DE');
    // The process dies with the job: its step is never ended there (a graceful stop would end it).
    stepNeverEnded(before);
    const run = await fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs: { ...inputs, user: userContext('U0HANS') } });
    await fake.waitFor(() => before.emulator.requests.length > 0 || undefined, 'its request to reach the service');
    await before.close({ fake: true, dataDir: true });
    vi.mocked(SlackJobs.prototype.start).mockRestore();
    const saved = await savedRequest(dataDir);
    await saved.crashed();
    expect(run.outcome).toBeUndefined();
    return { fake, dataDir, run, saved };
  }

  it('is ended by the next start’s sweep with the words a graceful stop uses and what the ledger charged its job, as its message says them, in the member’s language, and its token is gone from the request and never logged', async () => {
    const { fake, dataDir, run, saved } = await stepCutOffByACrash();
    expect(JSON.stringify(saved.read())).toContain(run.token);
    const logger = new RecordingLogger();
    h = await startHarness({ fake, dataDir, bot: { logger } });
    // Its request had reached the service: the stop settled what it sent, and its message says so.
    const [charged] = (await h.store.usage({})).filter((r) => r.jobId === saved.read().value.runnerJobId);
    expect(charged!.costUsd).toBeGreaterThan(0);
    const chargedWords = say('de-DE', 'slack.job.charged', { usd: usd(charged!.costUsd) }).replace(/^:dollar: /, '');
    expect(await outcomeOf(h, run)).toStrictEqual({ ok: false, error: `${say('de-DE', 'slack.step.cancelled')}\n${chargedWords}`, at: expect.any(Number) as unknown });
    await h.fake.waitFor(() => (statusOf(jobMessages(h!.fake, 'C0FLOW')[0]!).includes(chargedWords) ? true : undefined), 'the job’s message to say its charge');
    await vi.waitFor(() => expect(saved.read().value.status).toBe('ended'), { timeout: 15_000 });
    expect(JSON.stringify(saved.read())).not.toContain(run.token);
    expect(logger.text()).not.toContain(run.token);
    expect(h.fake.callsOf('functions.completeError')).toHaveLength(1);
  });

  it('is completed by the next start with the images its job made, once, when the crash came after they were posted and before the step’s end', async () => {
    const before = await startHarness({ emulator: { latencyMs: 10 } });
    const { fake, dataDir } = before;
    // The job finishes and its images are posted; the process dies before the step's end (`functions.completeSuccess`).
    stepNeverEnded(before);
    const run = await fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs });
    await fake.waitFor(() => imageShares(fake, 'C0FLOW').length > 0 || undefined, 'its images to be posted');
    const saved = await savedRequest(dataDir);
    await vi.waitFor(() => expect(saved.read().value).toMatchObject({ outputFiles: [expect.anything()], result: expect.anything() }), { timeout: 15_000 });
    await before.close({ fake: true, dataDir: true });
    vi.mocked(SlackJobs.prototype.start).mockRestore();
    await saved.crashed();
    expect(run.outcome).toBeUndefined();
    expect(JSON.stringify(saved.read())).toContain(run.token);

    const logger = new RecordingLogger();
    h = await startHarness({ fake, dataDir, bot: { logger } });
    const outcome = await outcomeOf(h, run);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    // The outputs of the step's end where it runs: the images posted, their permalinks, the message's link, the cost charged.
    const posted = imageShares(h.fake, 'C0FLOW')[0]!.files!.map((f) => f.id);
    expect(outcome.outputs.file_ids).toEqual(posted);
    expect(outcome.outputs.permalinks).toEqual(posted.map((id) => h!.fake.files.get(id)!.url_private + '?permalink=1'));
    expect(outcome.outputs.message_link).toMatch(/^https:\/\/.+\/archives\/C0FLOW\/p\d+$/);
    const charged = (await h.store.usage({})).filter((r) => r.userKey === 'slack:U0ALICE');
    expect(charged).toHaveLength(1);
    expect(outcome.outputs.cost_usd).toBeCloseTo(charged[0]!.costUsd, 9);
    await vi.waitFor(() => expect(saved.read().value.status).toBe('ended'), { timeout: 15_000 });
    expect(JSON.stringify(saved.read())).not.toContain(run.token);
    expect(logger.text()).not.toContain(run.token);

    // Swept again (a crash before its mark): the step is ended no more.
    await h.close({ fake: true, dataDir: true });
    await saved.crashed();
    h = await startHarness({ fake, dataDir });
    await vi.waitFor(() => expect(saved.read().value.status).toBe('ended'), { timeout: 15_000 });
    expect(h.fake.callsOf('functions.completeSuccess')).toHaveLength(1);
    expect(h.fake.callsOf('functions.completeError')).toHaveLength(0);
  });

  it('keeps a request held while its step is open though its job is done and recorded, so a crash before the step’s end leaves it to the next start, which completes the step with its images once', async () => {
    const before = await startHarness({ emulator: { latencyMs: 10 } });
    const { fake, dataDir } = before;
    // The job's end is shown and recorded; the process dies before the step's end (`functions.completeSuccess`).
    stepNeverEnded(before);
    const run = await fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs });
    await fake.waitFor(() => imageShares(fake, 'C0FLOW').length > 0 || undefined, 'its images to be posted');
    const saved = await savedRequest(dataDir);
    await vi.waitFor(() => expect(saved.read().value).toMatchObject({ status: 'ended', endRecorded: true }), { timeout: 15_000 });
    expect(saved.read().holder).toBeTruthy();
    await before.close({ fake: true, dataDir: true });
    vi.mocked(SlackJobs.prototype.start).mockRestore();
    await writeFile(join(dataDir, 'slack', 'requests', `${String(saved.read().value.id)}.json`), JSON.stringify({ ...saved.read(), holder: 'a-crashed-process' }));
    expect(run.outcome).toBeUndefined();

    h = await startHarness({ fake, dataDir });
    const outcome = await outcomeOf(h, run);
    expect(outcome.ok).toBe(true);
    await vi.waitFor(() => expect(JSON.stringify(saved.read())).not.toContain(run.token), { timeout: 15_000 });
    expect(h.fake.callsOf('functions.completeSuccess')).toHaveLength(1);
    expect(h.fake.callsOf('functions.completeError')).toHaveLength(0);
    // Its end was shown and recorded already: nothing is shown or recorded again.
    expect(saved.read().value).toMatchObject({ status: 'ended', endRecorded: true });
  });

  it('keeps no token once the step is ended where it ran: a stop, or a crash after it, ends nothing more', async () => {
    const before = await startHarness({ emulator: { latencyMs: 10 } });
    const { fake, dataDir } = before;
    const run = await fake.runFunction({ callbackId: WORKFLOW_STEP_ID, inputs });
    expect((await outcomeOf(before, run)).ok).toBe(true);
    const saved = await savedRequest(dataDir);
    // Let go of right after the step's end.
    await vi.waitFor(() => expect(JSON.stringify(saved.read())).not.toContain(run.token), { timeout: 15_000 });
    await before.close({ fake: true, dataDir: true });
    await saved.crashed();

    h = await startHarness({ fake, dataDir });
    await vi.waitFor(() => expect(saved.read().value.status).toBe('ended'), { timeout: 15_000 });
    expect(h.fake.callsOf('functions.completeError')).toHaveLength(0);
  });

  it('is ended once when the request is swept twice (the first sweep could not mark it)', async () => {
    const { fake, dataDir, run, saved } = await stepCutOffByACrash();
    const id = saved.read().value.id;
    const update = spyOnInstance(RequestStore.prototype, 'update', (_store, requestId) => requestId === id).mockRejectedValue(new Error('storage unavailable'));
    const first = await startHarness({ fake, dataDir });
    expect((await outcomeOf(first, run)).ok).toBe(false);
    await first.close({ fake: true, dataDir: true });
    update.mockRestore();
    expect(saved.read().value.status).toBe('active');
    await saved.crashed();

    h = await startHarness({ fake, dataDir });
    await vi.waitFor(() => expect(saved.read().value.status).toBe('ended'), { timeout: 15_000 });
    expect(h.fake.callsOf('functions.completeError')).toHaveLength(1);
  });

  it('is left to the next start when the sweep cannot take it out of its request: that start ends it', async () => {
    const { fake, dataDir, run, saved } = await stepCutOffByACrash();
    const id = saved.read().value.id;
    const take = spyOnInstance(RequestStore.prototype, 'takeStep', (_store, requestId) => requestId === id).mockRejectedValue(new Error('storage unavailable'));
    const first = await startHarness({ fake, dataDir });
    await vi.waitFor(() => expect(take).toHaveBeenCalled(), { timeout: 15_000 });
    await first.close({ fake: true, dataDir: true });
    take.mockRestore();
    expect(saved.read().value.status).toBe('active');
    expect(run.outcome).toBeUndefined();
    await saved.crashed();

    h = await startHarness({ fake, dataDir });
    const outcome = await outcomeOf(h, run);
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error.split('\n')[0]).toBe(say('de-DE', 'slack.step.cancelled'));
    expect(h.fake.callsOf('functions.completeError')).toHaveLength(1);
  });

  it('is logged and dropped when its token has expired, the token never logged', async () => {
    const { fake, dataDir, run, saved } = await stepCutOffByACrash();
    fake.failNext('functions.completeError', { status: 200, error: 'token_expired' });
    const logger = new RecordingLogger();
    h = await startHarness({ fake, dataDir, bot: { logger } });
    await vi.waitFor(() => expect(saved.read().value.status).toBe('ended'), { timeout: 15_000 });
    expect(logger.entries.filter((e) => e.msg?.includes('could no longer be ended'))).toMatchObject([{ obj: { code: 'token_expired', execution: run.executionId } }]);
    expect(logger.text()).not.toContain(run.token);
    expect(JSON.stringify(saved.read())).not.toContain(run.token);
    expect(run.outcome).toBeUndefined();
  });
});
